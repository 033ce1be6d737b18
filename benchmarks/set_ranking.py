"""A depot-set ranking rule side by side: ``solve(..., method="auto")`` at one budget on seeded
draws of a preset, with the package's value of one ranking knob and with a candidate value,
interleaved instance by instance (each pair under the same machine load), paired.

The knobs (``--rule``): ``model-first-depots`` (``RankingParams.model_first_depots``) and
``served-pairs`` (``location_model.SERVED_PAIRS``; 0 is the rule before it: every customer
served from its ``NEAREST`` nearest depots).

    python benchmarks/set_ranking.py --preset clrp100 --count 20 --seconds 10 --candidate 15
    python benchmarks/set_ranking.py --preset clrp500 --count 8 --rule served-pairs --candidate 0

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
from clrp_rl4co.solvers import location_model, set_estimate
from clrp_rl4co.solving import solve

#: The knobs ``--rule`` may vary.
RULES = ("model-first-depots", "served-pairs")


def current_value(rule: str) -> int:
    """The package's value of ``rule``."""
    if rule == "model-first-depots":
        return set_estimate.PARAMS.model_first_depots
    return location_model.SERVED_PAIRS


def objective_with(instance, seconds: float, rule: str, value: int, seed: int) -> float:
    """``solve``'s objective with the ranking knob ``rule`` at ``value``."""
    params, pairs = set_estimate.PARAMS, location_model.SERVED_PAIRS
    if rule == "model-first-depots":
        set_estimate.PARAMS = dataclasses.replace(params, model_first_depots=value)
    else:
        location_model.SERVED_PAIRS = value
    try:
        return solve(instance, "auto", seconds=seconds, seed=seed).objective
    finally:
        set_estimate.PARAMS, location_model.SERVED_PAIRS = params, pairs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="clrp100")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rule", default="model-first-depots", choices=RULES)
    parser.add_argument("--candidate", type=int, default=15, help="the knob's value to try")
    parser.add_argument("--data-seed", type=int, default=2026)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    current = current_value(args.rule)
    td = generate_dataset(CLRPGenerator(preset=args.preset), args.count, args.data_seed)
    instances = tensordict_to_instances(td)
    load_before = os.getloadavg()
    diffs = []
    for k, instance in enumerate(instances):
        now = objective_with(instance, args.seconds, args.rule, current, args.seed)
        new = objective_with(instance, args.seconds, args.rule, args.candidate, args.seed)
        diffs.append(new - now)
        print(f"{k}: current ({current}) {now:.4f}, candidate ({args.candidate}) {new:.4f}",
              flush=True)  # fmt: skip
    mean, half = mean_ci95(diffs)
    lower = sum(d < -1e-9 for d in diffs)
    higher = sum(d > 1e-9 for d in diffs)
    print(
        f"{args.preset}, {args.count} draws (seed {args.data_seed}), auto at {args.seconds:g} s, "
        f"one thread, {args.rule} {current} (current) against {args.candidate} (candidate); "
        f"candidate minus current: {mean:+.4f} +- {half:.4f}; lower / equal / higher "
        f"{lower} / {len(diffs) - lower - higher} / {higher}; load average "
        f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    )


if __name__ == "__main__":
    main()
