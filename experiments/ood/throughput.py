"""Training throughput of a small DRLHQ-CF on the mixed preset (CPU, RL4CO POMO).

Trains ``DRLHQCostPolicy`` (default 64-d, 2 layers, 4 heads, feed-forward 128) with RL4CO's
POMO (x1 augmentation, no validation) on ``CLRPGenerator(preset="mixed")`` for ``--minutes``
and reports optimizer steps per minute. RL4CO draws an epoch's data in one generator call, so
the number of customers ``N`` is drawn once per epoch (``--steps-per-epoch`` steps); steps are
timed one by one and reported per ``N``. ``--num-loc`` fixes ``N`` instead.

Run as a file::

    OMP_NUM_THREADS=1 nice -n 10 python experiments/ood/throughput.py --minutes 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from lightning.pytorch.callbacks import Callback
from rl4co.utils.trainer import RL4COTrainer

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp.generator import CLRPGenerator
from clrp_rl4co.models import build_model
from clrp_rl4co.policies import build_policy
from clrp_rl4co.reporting import provenance

ROOT = Path(__file__).resolve().parents[2]


class StepTimer(Callback):
    """Wall time and number of customers of every training step."""

    def __init__(self):
        self.steps: list[tuple[float, int]] = []
        self._start = 0.0

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        self._start = time.perf_counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.steps.append((time.perf_counter() - self._start, int(batch["demand"].shape[-1])))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--model", default="drlhqcf")
    parser.add_argument("--embed-dim", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--ff", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps-per-epoch", type=int, default=5)
    parser.add_argument("--num-loc", type=int, default=None, help="fix N (default: drawn)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="JSON summary file")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    generator = CLRPGenerator(preset="mixed", num_loc=args.num_loc)
    env = CLRPEnv(generator=generator, check_actions=False)
    policy = build_policy(
        args.model,
        embed_dim=args.embed_dim,
        num_encoder_layers=args.layers,
        num_heads=args.heads,
        feedforward_hidden=args.ff,
    )
    model = build_model(
        env,
        policy,
        num_augment=1,
        batch_size=args.batch_size,
        train_data_size=args.batch_size * args.steps_per_epoch,
        val_data_size=args.batch_size,
        val_batch_size=args.batch_size,
    )
    timer = StepTimer()
    trainer = RL4COTrainer(
        max_epochs=10_000,
        max_time={"minutes": args.minutes},
        accelerator="cpu",
        devices=1,
        precision="32-true",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        num_sanity_val_steps=0,
        callbacks=[timer],
        default_root_dir="/tmp/clrp_ood_throughput",
    )
    start = time.perf_counter()
    trainer.fit(model)
    wall = time.perf_counter() - start
    by_size: dict[int, list[float]] = {}
    for seconds, n in timer.steps:
        by_size.setdefault(n, []).append(seconds)
    summary = {
        "command": provenance.command_line(
            argv or None, prog="python experiments/ood/throughput.py"
        ),
        "model": args.model,
        "config": dict(embed_dim=args.embed_dim, layers=args.layers, heads=args.heads, ff=args.ff),
        "batch_size": args.batch_size,
        "wall_seconds": wall,
        "steps": len(timer.steps),
        "steps_per_minute_wall": 60.0 * len(timer.steps) / wall,
        "seconds_per_step_by_N": {n: sum(v) / len(v) for n, v in sorted(by_size.items())},
        "steps_by_N": {n: len(v) for n, v in sorted(by_size.items())},
        "threads": torch.get_num_threads(),
        "load_average": provenance.load_average(),
        "machine": provenance.machine(),
    }
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
