"""``python -m benchmarks.parity``: the stages (train, eval, report) for each seed and side."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from . import __doc__ as PARITY_DOC
from .config import CONFIG, IMPLEMENTATIONS, ROOT
from .fetch import official_checkout
from .official import eval_official, train_official
from .ours import eval_ours, train_ours
from .report import report


def parse_args(argv: list[str] | None = None):
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.parity",
        description=PARITY_DOC,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    p.add_argument(
        "--official",
        type=Path,
        default=None,
        help="a checkout of the official code (default: cloned into --work)",
    )
    work = ROOT / "runs" / "parity"
    p.add_argument("--work", type=Path, default=work, help="runs and the official code")
    p.add_argument("--out", type=Path, default=ROOT / "results" / "parity")
    p.add_argument("--pythonpath", default="", help="extra PYTHONPATH of the official code")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--instances", type=int, default=20_480, help="training instances per run")
    p.add_argument("--chunk", type=int, default=2_560, help="instances per epoch / checkpoint")
    p.add_argument("--eval-size", type=int, default=500, help="first N of the paper's test set")
    p.add_argument("--eval-batch", type=int, default=100)
    p.add_argument("--ours-val-size", type=int, default=100, help="our in-training validation")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--impl", nargs="+", default=list(IMPLEMENTATIONS), choices=IMPLEMENTATIONS)
    stages = ["train", "eval", "report"]
    p.add_argument("--stages", nargs="+", default=stages, choices=stages)
    args = p.parse_args(argv)
    if args.instances % args.chunk or args.chunk % CONFIG["batch_size"]:
        p.error("--instances must be a multiple of --chunk, --chunk of the batch size")
    args.work = args.work.resolve()
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if "official" in args.impl and {"train", "eval"} & set(args.stages):
        args.official = official_checkout(args.work, args.official)
    rows: list[dict] = []
    for seed in args.seeds:
        for impl in args.impl:
            start = time.time()
            if "train" in args.stages:
                (train_official if impl == "official" else train_ours)(args, seed)
            if "eval" in args.stages:
                rows += (eval_official if impl == "official" else eval_ours)(args, seed)
            print(f"[{impl} seed {seed}] {time.time() - start:.0f} s", flush=True)
            if "report" in args.stages and rows:
                report(args, rows)
    return report(args, rows) if "report" in args.stages else {}
