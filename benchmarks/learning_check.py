"""Learning check: train DRLHQ on CLRP10 for a fixed time, evaluate before and after.

Trains with ``examples/train.py`` (POMO, the paper's optimiser) for ``--minutes``, then
evaluates the untrained initialisation (same seed and config) and the best checkpoint on
``--instances`` fresh instances (a seed the training never uses) with single greedy,
multistart greedy (N starts, the paper's "greedy") and multistart greedy with x8 augmentation
(RL4CO dihedral and the paper's 45-degree rotations). The paper reports 8.6988 (greedy) and
8.6480 (augmented) on CLRP10 after full training.

    python benchmarks/learning_check.py --minutes 20 --out runs/learning_check
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import lightning as L
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import evaluate  # noqa: E402
import train  # noqa: E402

from clrp_rl4co.envs import CLRPEnv  # noqa: E402
from clrp_rl4co.envs.clrp.generator import CLRPGenerator, generate_dataset  # noqa: E402
from clrp_rl4co.models import build_policy, load_policy  # noqa: E402

PAPER = {"multistart_greedy": 8.6988, "multistart_greedy+rot8": 8.6480}
DECODES = ["greedy", "multistart_greedy", "multistart_greedy+aug8", "multistart_greedy+rot8"]


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--minutes", type=float, default=20.0)
    p.add_argument("--instances", type=int, default=1000)
    p.add_argument("--test-seed", type=int, default=777_000)
    p.add_argument("--out", default="runs/learning_check")
    p.add_argument("--embed-dim", type=int, default=128)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--ff", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-train", action="store_true", help="only evaluate --out's checkpoint")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    size = [
        "--embed-dim",
        str(args.embed_dim),
        "--layers",
        str(args.layers),
        "--heads",
        str(args.heads),
        "--ff",
        str(args.ff),
    ]

    instances = generate_dataset(CLRPGenerator(preset="clrp10"), args.instances, args.test_seed)
    batches = [("test", instances[i : i + 250]) for i in range(0, args.instances, 250)]
    env = CLRPEnv(check_actions=False)

    L.seed_everything(args.seed)
    initial = build_policy(
        "drlhq",
        embed_dim=args.embed_dim,
        num_encoder_layers=args.layers,
        num_heads=args.heads,
        feedforward_hidden=args.ff,
    ).eval()
    before = evaluate.evaluate(initial, env, batches, DECODES, None)
    print("before training:\n" + evaluate.format_table(before), flush=True)

    if not args.skip_train:
        train.main(
            [
                "--preset",
                "clrp10",
                "--model",
                "drlhq",
                *size,
                "--batch-size",
                str(args.batch_size),
                "--epochs",
                "1000",
                "--train-size",
                "3200",
                "--val-size",
                "500",
                "--val-batch-size",
                "250",
                "--max-time",
                str(args.minutes),
                "--seed",
                str(args.seed),
                "--threads",
                str(args.threads),
                "--no-progress-bar",
                "--out",
                str(out),
            ]
        )
    trained = load_policy(out / "policy_best.pt").eval()
    after = evaluate.evaluate(trained, env, batches, DECODES, None)
    print("after training:\n" + evaluate.format_table(after), flush=True)
    print("paper (full training): multistart greedy 8.6988, x8 augmented 8.6480")
    result = {"before": before, "after": after, "paper": PAPER, "args": vars(args)}
    (out / "learning_check.json").write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
