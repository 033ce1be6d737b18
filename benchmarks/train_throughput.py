"""POMO training time per decoding step: DRLHQ on CLRP20 next to RL4CO's stock POMO on CVRP20.

The CLRP model is the one ``run.py`` trains (``configs/``: env, ``model=drlhq``, built by
``clrp_rl4co.models.build_model``); the CVRP model is RL4CO's ``POMO`` with its default policy
of the same size. One process, same batch, interleaved repetitions. One *training iteration*
is RL4CO POMO's ``shared_step`` on a batch (multistart sampling with N starts, the
shared-baseline loss), backward and an Adam step. Its time is divided by the number of decoding
steps of that batch (CLRP20 has more nodes and steps than CVRP20, so the comparison is per step).

    python benchmarks/train_throughput.py --embed-dim 128 --layers 6 --heads 8 --batch-size 64

Prints a Markdown table and the ratio (target <= 1.3).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

import torch
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from lightning.pytorch import LightningModule
from rl4co.envs import CVRPEnv
from rl4co.models import POMO
from rl4co.models.zoo.am import AttentionModelPolicy

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"


def train_iteration(model: LightningModule, td, optimizer) -> tuple[float, int]:
    """(seconds, decoding steps) of one POMO training iteration on the batch ``td``."""
    steps: list[int] = []
    hook = model.policy.register_forward_hook(lambda m, i, o: steps.append(o["actions"].shape[1]))
    start = time.perf_counter()
    loss = model.shared_step(td, 0, phase="train")["loss"]
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    seconds = time.perf_counter() - start
    hook.remove()
    return seconds, steps[0]


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--embed-dim", type=int, default=128)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--ff", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--repeats", type=int, default=6)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    warnings.filterwarnings("ignore", message=".*self.log.*")  # shared_step outside a Trainer
    overrides = [
        "model=drlhq",
        "env.generator_params.preset=clrp20",
        f"model.policy.embed_dim={args.embed_dim}",
        f"model.policy.num_encoder_layers={args.layers}",
        f"model.policy.num_heads={args.heads}",
        f"model.policy.feedforward_hidden={args.ff}",
    ]
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("main", overrides)
    clrp_env = instantiate(cfg.env, device=args.device)
    clrp_model = instantiate(cfg.model, env=clrp_env, _convert_="all")
    size = dict(clrp_model.policy.config)
    cvrp_env = CVRPEnv(generator_params={"num_loc": 20}, check_solution=False, device=args.device)
    # RL4CO's stock POMO policy (what POMO builds without a policy), same size and settings
    cvrp_model = POMO(cvrp_env, policy_kwargs=size)
    assert type(cvrp_model.policy) is AttentionModelPolicy
    cases = {
        "DRLHQ / CLRP20": (clrp_model, clrp_env),
        "RL4CO POMO / CVRP20": (cvrp_model, cvrp_env),
    }
    for model, _ in cases.values():
        model.to(args.device).train()
    optimizers = {k: torch.optim.Adam(m.parameters(), lr=1e-4) for k, (m, _) in cases.items()}
    times: dict[str, list[float]] = {k: [] for k in cases}
    steps: dict[str, list[int]] = {k: [] for k in cases}
    for rep in range(args.warmup + args.repeats):
        for name, (model, env) in cases.items():
            td = env.generator(args.batch_size).to(args.device)
            seconds, num_steps = train_iteration(model, td, optimizers[name])
            if rep >= args.warmup:
                times[name].append(seconds)
                steps[name].append(num_steps)
    rows = {}
    print(
        f"policy {size}, batch {args.batch_size} x N starts, {args.repeats} iterations, "
        f"{args.threads} thread(s), device {args.device}"
    )
    print("| case | s / iteration (median) | decoding steps (mean) | ms / decoding step |")
    print("|---|---|---|---|")
    for name in cases:
        per_step = [t / s for t, s in zip(times[name], steps[name])]
        rows[name] = statistics.median(per_step)
        print(
            f"| {name} | {statistics.median(times[name]):.3f} | "
            f"{statistics.mean(steps[name]):.1f} | {1000 * rows[name]:.2f} |"
        )
    names = list(cases)
    ratio = rows[names[0]] / rows[names[1]]
    print(f"ratio per decoding step (DRLHQ/CLRP20 : POMO/CVRP20) = {ratio:.3f} (target <= 1.3)")
    return {"per_step": rows, "ratio": ratio}


if __name__ == "__main__":
    main()
