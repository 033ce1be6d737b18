"""Routing on a fixed depot set from one start: PyVRP's search parameters side by side.

    python -m benchmarks.hard.routing_phase --only free-600-0 hetero-600-0 \\
        --variants default neighbours=20,perturbations=10 --seeds 0 1

For each instance: a start (:func:`~clrp_rl4co.solvers.pyvrp_solver.solve_pyvrp`,
``--start-seconds``, seed 0), then for each seed and variant one
:func:`~clrp_rl4co.solvers.pyvrp_solver.route_on_set` run of ``--seconds`` on the start's
depot set, warm-started from it, with PyVRP's search parameters replaced by the variant's:
``default`` (PyVRP's own), or comma-separated ``neighbours=K`` (the granular neighbourhood)
and ``perturbations=M`` (the most perturbations per iteration of its iterated local search).
The table gives each run's change from the start (%) and per variant the mean, over instances
and seeds, of its difference to the first variant on the same instance and seed.

This measures one phase of the solver (the last one, the longest), not the solver: a variant
that wins here is checked with ``python -m benchmarks.hard run`` before it is adopted.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyvrp
import torch
from pyvrp.search import NeighbourhoodParams, PerturbationParams

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.reporting.markdown import markdown_table
from clrp_rl4co.reporting.provenance import command_line, commit_line, load_average, machine
from clrp_rl4co.solvers import pyvrp_solver

from .runs import benchmark, select

#: Parameters a variant may set, and PyVRP's defaults for them.
SETTINGS = {"neighbours": 50, "perturbations": 25}


@dataclass(frozen=True)
class Variant:
    """PyVRP's search parameters of one column: ``neighbours`` nearest clients in the
    granular neighbourhood, at most ``perturbations`` perturbations per iteration."""

    name: str
    neighbours: int = SETTINGS["neighbours"]
    perturbations: int = SETTINGS["perturbations"]

    @classmethod
    def parse(cls, text: str) -> Variant:
        """``default`` or ``neighbours=K,perturbations=M`` (either or both, positive integers).

        Raises:
            ValueError: an unknown setting or a value that is not a positive integer (naming
                it and the variant).
        """
        if text == "default":
            return cls(text)
        values: dict[str, int] = {}
        for part in text.split(","):
            setting, _, value = part.partition("=")
            if setting not in SETTINGS:
                raise ValueError(
                    f"--variants {text!r}: unknown setting {setting!r} (known: default, "
                    f"{', '.join(f'{s}=K' for s in SETTINGS)})"
                )
            if not value.isdigit() or int(value) < 1:
                raise ValueError(f"--variants {text!r}: {setting} must be a positive integer, "
                                 f"got {value!r}")  # fmt: skip
            values[setting] = int(value)
        return cls(text, **values)

    def params(self) -> pyvrp.SolveParams:
        """The variant as PyVRP's :class:`~pyvrp.SolveParams` (its defaults elsewhere)."""
        return pyvrp.SolveParams(
            neighbourhood=NeighbourhoodParams(num_neighbours=self.neighbours),
            perturbation=PerturbationParams(max_perturbations=self.perturbations),
        )


@contextlib.contextmanager
def search_params(variant: Variant) -> Iterator[None]:
    """Every ``pyvrp.solve`` the solver makes inside the block runs with ``variant``'s
    parameters (the solver has no such option: this harness swaps the function it calls)."""
    real = pyvrp_solver.pyvrp.solve
    params = variant.params()

    def solve(*args, **kwargs):
        return real(*args, **{**kwargs, "params": params})

    pyvrp_solver.pyvrp.solve = solve
    try:
        yield
    finally:
        pyvrp_solver.pyvrp.solve = real


def phase_runs(
    instance: CLRPInstance,
    variants: list[Variant],
    seeds: list[int],
    seconds: float,
    start_seconds: float,
) -> tuple[float, list[tuple[int, str, float]]]:
    """The start's cost and ``(seed, variant name, cost)`` of every run (never above the
    start: the start is kept where PyVRP finds nothing cheaper)."""
    start = pyvrp_solver.solve_pyvrp(instance, seconds=start_seconds, seed=0).solution
    if start is None:
        raise RuntimeError(f"{instance.name}: PyVRP found no start in {start_seconds} s")
    start_cost = start.cost(instance).total
    depots = sorted(start.open_depots)
    runs = []
    for seed in seeds:
        for variant in variants:
            with search_params(variant):
                found = pyvrp_solver.route_on_set(instance, depots, seconds, seed=seed,
                                                  initial=start)  # fmt: skip
            cost = start_cost if found is None else min(start_cost, found.cost(instance).total)
            runs.append((seed, variant.name, cost))
    return start_cost, runs


def report(results: dict[str, tuple[float, list[tuple[int, str, float]]]],
           variants: list[Variant]) -> str:  # fmt: skip
    """The per-run table and the per-variant summary, in Markdown."""
    rows = []
    against: dict[str, list[float]] = {v.name: [] for v in variants}
    for name, (start_cost, runs) in results.items():
        by_seed: dict[int, dict[str, float]] = {}
        for seed, variant, cost in runs:
            by_seed.setdefault(seed, {})[variant] = cost
        for seed, costs in by_seed.items():
            first = costs[variants[0].name]
            cells = [f"{100.0 * (costs[v.name] - start_cost) / start_cost:+.2f}" for v in variants]
            rows.append([name, seed, f"{start_cost:,.0f}", *cells])
            for v in variants:
                against[v.name].append(100.0 * (costs[v.name] - first) / first)
    names = [f"`{v.name}` %" for v in variants]
    table = markdown_table(["instance", "seed", "start", *names], rows, "lrr" + "r" * len(names))
    summary_rows = []
    for v in variants:
        diffs = against[v.name]
        lower, higher = sum(x < 0 for x in diffs), sum(x > 0 for x in diffs)
        summary_rows.append([f"`{v.name}`", len(diffs), f"{statistics.fmean(diffs):+.2f}",
                             f"{lower} / {higher}"])  # fmt: skip
    header = ["variant", "runs", f"mean difference to `{variants[0].name}` %", "lower / higher"]
    summary = markdown_table(header, summary_rows, "lrrr")
    return f"{table}\n\n{summary}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", required=True, metavar="NAME",
                        help="instances (<family>-<N>-<k>) or families")  # fmt: skip
    parser.add_argument("--sizes", nargs="+", type=int, default=[],
                        help="only these sizes of the families named")  # fmt: skip
    parser.add_argument("--variants", nargs="+", default=["default"], metavar="V",
                        help="default, or neighbours=K,perturbations=M (the first is the "
                        "yardstick)")  # fmt: skip
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--seconds", type=float, default=21.0, help="each routing run")
    parser.add_argument("--start-seconds", type=float, default=30.0, help="PyVRP alone's start")
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = parser.parse_args(argv)
    if len(set(args.variants)) < len(args.variants):
        parser.error(f"--variants: each variant once, got {args.variants}")
    variants = [Variant.parse(text) for text in args.variants]
    try:
        entries = select(benchmark(), args.only, args.sizes)
    except ValueError as error:
        parser.error(str(error))
    torch.set_num_threads(1)
    results, loads = {}, []
    began = time.perf_counter()
    for entry in entries:
        name = entry.name
        results[name] = phase_runs(entry.instance, variants, args.seeds, args.seconds,
                                   args.start_seconds)  # fmt: skip
        loads.append(load_average())
        print(f"{name}: done ({time.perf_counter() - began:.0f} s)", flush=True)
    text = "\n".join([
        "# Routing on a fixed depot set: PyVRP's search parameters",
        "",
        f"- command: `{command_line(argv, 'python -m benchmarks.hard.routing_phase')}`",
        f"- commit: {commit_line()}; machine: {machine()}; one thread",
        f"- load average (1 min) after each instance: {', '.join(loads)}",
        f"- each run: {args.seconds:g} s of `route_on_set` on the start's depot set, from the "
        f"start (PyVRP alone, {args.start_seconds:g} s, seed 0); cells: change from the start",
        "",
        report(results, variants),
    ])  # fmt: skip
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
