"""A depot-set ranking or search rule side by side: ``solve(..., method)`` (``auto`` unless
``--method``) at one budget on seeded draws of a preset (or on instance files, ``--files``),
with the package's value of one knob and with a candidate value, interleaved instance by
instance (each pair under the same machine load), paired.

The knobs (``--rule``): ``model-first-depots`` (``RankingParams.model_first_depots``),
``served-pairs`` (``location_model.SERVED_PAIRS``; 0 is the rule before it: every customer
served from its ``NEAREST`` nearest depots) and ``local-customers``
(``SetSearchParams.local_customers``: from how many customers the set search prices a
candidate by re-routing its region; a value above the instance's customers is the search
before it).

    python benchmarks/set_ranking.py --preset clrp100 --count 20 --seconds 10 --candidate 15
    python benchmarks/set_ranking.py --preset clrp500 --count 8 --rule served-pairs --candidate 0
    python benchmarks/set_ranking.py --files FILE ... --seconds 60 --method pyvrp \
        --rule local-customers --candidate 1000000

Prints one row per instance and the paired difference (candidate minus current, in cost and
in % of the current cost) with its 95% t interval and how often the candidate is lower /
equal / higher; the load average before and after.
"""

from __future__ import annotations

import argparse
import dataclasses
import os

import torch

from clrp_rl4co.data import tensordict_to_instances
from clrp_rl4co.data.files import read_instance
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
from clrp_rl4co.evaluation.report import mean_ci95
from clrp_rl4co.solvers import location_model, set_estimate, set_search
from clrp_rl4co.solving import solve

#: The knobs ``--rule`` may vary.
RULES = ("model-first-depots", "served-pairs", "local-customers")


def current_value(rule: str) -> int:
    """The package's value of ``rule``."""
    if rule == "model-first-depots":
        return set_estimate.PARAMS.model_first_depots
    if rule == "local-customers":
        return set_search.PARAMS.local_customers
    return location_model.SERVED_PAIRS


def objective_with(
    instance, seconds: float, rule: str, value: int, seed: int, method: str = "auto"
) -> float:
    """``solve``'s objective by ``method`` with the knob ``rule`` at ``value``."""
    params, pairs, search = set_estimate.PARAMS, location_model.SERVED_PAIRS, set_search.PARAMS
    if rule == "model-first-depots":
        set_estimate.PARAMS = dataclasses.replace(params, model_first_depots=value)
    elif rule == "local-customers":
        set_search.PARAMS = dataclasses.replace(search, local_customers=value)
    else:
        location_model.SERVED_PAIRS = value
    try:
        return solve(instance, method, seconds=seconds, seed=seed).objective
    finally:
        set_estimate.PARAMS, location_model.SERVED_PAIRS = params, pairs
        set_search.PARAMS = search


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="clrp100")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rule", default="model-first-depots", choices=RULES)
    parser.add_argument("--candidate", type=int, default=15, help="the knob's value to try")
    parser.add_argument("--data-seed", type=int, default=2026)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--method", default="auto", help="solve's method")
    parser.add_argument("--files", nargs="+", help="instance files instead of preset draws")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    current = current_value(args.rule)
    if args.files:
        instances = [read_instance(path) for path in args.files]
        what = f"{len(instances)} files"
    else:
        td = generate_dataset(CLRPGenerator(preset=args.preset), args.count, args.data_seed)
        instances = tensordict_to_instances(td)
        what = f"{args.preset}, {args.count} draws (seed {args.data_seed})"
    load_before = os.getloadavg()
    diffs, percents = [], []
    for k, instance in enumerate(instances):
        run = (args.seconds, args.rule)
        now = objective_with(instance, *run, current, args.seed, args.method)
        new = objective_with(instance, *run, args.candidate, args.seed, args.method)
        diffs.append(new - now)
        percents.append(100.0 * (new - now) / now)
        print(f"{k} {instance.name}: current ({current}) {now:.4f}, candidate "
              f"({args.candidate}) {new:.4f} ({percents[-1]:+.3f}%)", flush=True)  # fmt: skip
    mean, half = mean_ci95(diffs)
    mean_pct, half_pct = mean_ci95(percents)
    lower = sum(d < -1e-9 for d in diffs)
    higher = sum(d > 1e-9 for d in diffs)
    print(
        f"{what}, {args.method} at {args.seconds:g} s, one thread, {args.rule} {current} "
        f"(current) against {args.candidate} (candidate); candidate minus current: "
        f"{mean:+.4f} +- {half:.4f} ({mean_pct:+.3f}% +- {half_pct:.3f}%); lower / equal / "
        f"higher {lower} / {len(diffs) - lower - higher} / {higher}; load average "
        f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    )


if __name__ == "__main__":
    main()
