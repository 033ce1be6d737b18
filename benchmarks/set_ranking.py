"""A depot-set ranking rule side by side: ``solve(..., method="auto")`` at one budget on seeded
draws of a preset, with the package's ``RankingParams.model_first_depots`` and with a candidate
value, interleaved instance by instance (each pair under the same machine load), paired.

    python benchmarks/set_ranking.py --preset clrp100 --count 20 --seconds 10 --candidate 15

Prints one row per instance and the paired difference (candidate minus current) with its 95%
t interval and how often the candidate is lower / equal / higher; the load average before and
after.
"""

from __future__ import annotations

import argparse
import dataclasses
import os

import torch

from clrp_rl4co.data import tensordict_to_instances
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
from clrp_rl4co.evaluation.report import mean_ci95
from clrp_rl4co.solvers import set_estimate
from clrp_rl4co.solving import solve


def objective_with(instance, seconds: float, model_first_depots: int, seed: int) -> float:
    """``solve``'s objective with the ranking rule ``model_first_depots``."""
    current = set_estimate.PARAMS
    set_estimate.PARAMS = dataclasses.replace(current, model_first_depots=model_first_depots)
    try:
        return solve(instance, "auto", seconds=seconds, seed=seed).objective
    finally:
        set_estimate.PARAMS = current


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="clrp100")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--candidate", type=int, default=15, help="model_first_depots to try")
    parser.add_argument("--data-seed", type=int, default=2026)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    current = set_estimate.PARAMS.model_first_depots
    td = generate_dataset(CLRPGenerator(preset=args.preset), args.count, args.data_seed)
    instances = tensordict_to_instances(td)
    load_before = os.getloadavg()
    diffs = []
    for k, instance in enumerate(instances):
        now = objective_with(instance, args.seconds, current, args.seed)
        new = objective_with(instance, args.seconds, args.candidate, args.seed)
        diffs.append(new - now)
        print(f"{k}: current ({current}) {now:.4f}, candidate ({args.candidate}) {new:.4f}",
              flush=True)  # fmt: skip
    mean, half = mean_ci95(diffs)
    lower = sum(d < -1e-9 for d in diffs)
    higher = sum(d > 1e-9 for d in diffs)
    print(
        f"{args.preset}, {args.count} draws (seed {args.data_seed}), auto at {args.seconds:g} s, "
        f"one thread; candidate minus current: {mean:+.4f} +- {half:.4f}; lower / equal / higher "
        f"{lower} / {len(diffs) - lower - higher} / {higher}; load average "
        f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    )


if __name__ == "__main__":
    main()
