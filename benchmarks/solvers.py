"""Benchmark of the classical CLRP solvers (a script, not a test).

Prints, per data set and method: mean objective, mean per-instance gap (%) to the reference,
seconds per instance (wall clock, measured in the worker), number of instances, proven optima
(exact), processes, threads and the machine.
Reference: for generated sets the best objective over the methods run (a proven optimum when the
exact solver closed the instance); for Prins the current BKS and the DRLHQ-table BKS.

Generated sets ``clrpN``: the package's :class:`CLRPGenerator` preset of that name (the DRLHQ
paper's distribution: clrp10 / clrp20 5 depots, capacity U[100, 300), opening U[1, 5); clrp50 10
depots, capacity U[130, 450), opening U[1, 5); clrp100 20 depots, capacity U[500, 900), opening
U[5, 15); demand 10..19, vehicle capacity 70, fixed cost 1), drawn as one data set by
``generate_dataset(CLRPGenerator(preset), num, seed0)``.

Methods (``--methods``, default all that apply): ``pyvrp`` (the plain one-model PyVRP run),
``pyvrp+ds`` (the solver's default: a first run on the best-estimated depot set, then the
depot-set search) and ``exact``
(HiGHS MIP, only for ``--exact-sizes``).

Examples (2 cores):
    python benchmarks/solvers.py --sets clrp50,clrp100 --num 10 \
        --pyvrp-time-by-size 50:5,100:10 --methods pyvrp,pyvrp+ds
    CLRP_BENCHMARKS_DIR=path/to/benchmarks python benchmarks/solvers.py \
        --sets prins --prins-time 60 --methods pyvrp+ds --verbose
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from clrp_rl4co.data import (
    CLRPInstance,
    prins_bks,
    prins_files,
    read_prodhon,
    tensordict_to_instances,
)
from clrp_rl4co.envs.clrp import PRESETS, CLRPGenerator, generate_dataset
from clrp_rl4co.reporting import provenance
from clrp_rl4co.solvers import SolverResult, solve


def generate(num_customers: int, num: int, seed: int) -> list[CLRPInstance]:
    """``num`` instances of the ``clrp{num_customers}`` preset, one seeded data set."""
    preset = f"clrp{num_customers}"
    if preset not in PRESETS:
        raise ValueError(f"no generator preset {preset!r}; choose from {list(PRESETS)}")
    td = generate_dataset(CLRPGenerator(preset=preset), num, seed)
    names = [f"{preset}_s{seed}_{k}" for k in range(num)]
    return tensordict_to_instances(td, names=names)


def run_method(
    instances: list[CLRPInstance], method: str, args: argparse.Namespace
) -> list[SolverResult]:
    """Run one method; returns the results in input order (runtime measured per instance, s)."""
    if method == "exact":
        return solve(
            instances,
            solver="exact",
            seconds=args.exact_time,
            num_procs=1,
            threads=args.threads,
            seed=args.seed,
            progress=args.progress,
        )
    depot_search = {"pyvrp": False, "pyvrp+ds": True}[method]
    return solve(
        instances,
        solver="pyvrp",
        seconds=args.time_for(instances),
        num_procs=args.num_procs,
        seed=args.seed,
        depot_search=depot_search,
        progress=args.progress,
    )


def gap(value: float | None, ref: float) -> float:
    """Gap of ``value`` to ``ref`` in percent (NaN when no solution)."""
    return float("nan") if value is None else 100.0 * (value - ref) / ref


def report(
    title: str,
    instances: list[CLRPInstance],
    results: dict[str, list[SolverResult]],
    refs: dict[str, list[float]],
    args: argparse.Namespace,
) -> None:
    """Print one table: a row per method, a gap column per reference (mean of per-instance %)."""
    print(f"\n== {title}: {len(instances)} instances ==")
    head = f"{'method':<10} {'mean obj':>12} " + " ".join(f"{'gap% ' + k:>14}" for k in refs)
    print(head + f" {'s/inst':>8} {'n':>4} {'solved':>6} {'proven':>6} {'procs':>5} {'thr':>4}")
    for method, res in results.items():
        objs = [r.objective for r in res]
        ok = [o for o in objs if o is not None]
        gaps = []
        for ref in refs.values():
            g = [gap(o, r) for o, r in zip(objs, ref) if o is not None]
            gaps.append(statistics.mean(g) if g else float("nan"))
        mean_obj = statistics.mean(ok) if ok else float("nan")
        per = statistics.mean(r.runtime for r in res)
        proven = sum(r.proven_optimal for r in res) if method == "exact" else "-"
        procs = 1 if method == "exact" else args.num_procs
        threads = args.threads if method == "exact" else 1
        print(
            f"{method:<10} {mean_obj:>12.4f} "
            + " ".join(f"{g:>14.3f}" for g in gaps)
            + f" {per:>8.2f} {len(res):>4} {len(ok):>6} {proven!s:>6} {procs:>5} {threads:>4}"
        )
    if "exact" in results:
        times = [r.runtime for r in results["exact"] if r.proven_optimal]
        if times:
            print(f"exact: median time of proven instances {statistics.median(times):.2f} s")


def generated_set(n: int, args: argparse.Namespace) -> None:
    """Run and report the methods on ``args.num`` instances of the ``clrp{n}`` preset."""
    num = args.num_by_size.get(n, args.num)
    instances = generate(n, num, args.seed0)
    methods = ["pyvrp"] + (["pyvrp+ds"] if n >= args.ds_from else [])
    if n in args.exact_sizes:
        methods.append("exact")
    if args.methods:
        methods = [m for m in methods if m in args.methods]
    results: dict[str, list[SolverResult]] = {}
    for method in methods:
        pool = instances
        if method == "exact" and args.exact_num is not None:
            pool = instances[: args.exact_num]
        results[method] = run_method(pool, method, args)
    size = min(len(r) for r in results.values())
    if size < len(instances):
        full = {m: r for m, r in results.items() if len(r) == len(instances)}
        best_all = [
            min(r[k].objective for r in full.values() if r[k].objective is not None)
            for k in range(len(instances))
        ]
        report(
            f"clrp{n}, all instances, heuristics only", instances, full, {"best": best_all}, args
        )
    results = {m: r[:size] for m, r in results.items()}
    best = []
    for k in range(size):
        vals = [r[k].objective for r in results.values() if r[k].objective is not None]
        best.append(min(vals))
    title = f"clrp{n} (CLRPGenerator preset, dataset seed {args.seed0})"
    report(title, instances[:size], results, {"best": best}, args)
    if "exact" in results:
        proven = [k for k in range(size) if results["exact"][k].proven_optimal]
        for m in results:
            if m == "exact" or not proven:
                continue
            hit = sum(
                results[m][k].objective is not None
                and results[m][k].objective <= results["exact"][k].objective + 1e-6
                for k in proven
            )
            print(f"{m}: hit the proven optimum on {hit}/{len(proven)} proven instances")


def prins_set(args: argparse.Namespace) -> None:
    """Run and report the PyVRP methods on the Prins files (gaps to both BKS columns)."""
    files = prins_files(args.benchmarks)
    if args.prins_max_n is not None:
        files = [
            f for f in files if int(f.stem.replace("coord", "").split("-")[0]) <= args.prins_max_n
        ]
    instances = [read_prodhon(f) for f in files]
    bks = prins_bks()
    refs = {
        "current": [float(bks[f.stem].current) for f in files],
        "drlhq": [float(bks[f.stem].drlhq) for f in files],
    }
    methods = [m for m in ("pyvrp", "pyvrp+ds") if not args.methods or m in args.methods]
    results = {m: run_method(instances, m, args) for m in methods}
    report("Prins", instances, results, refs, args)
    if args.verbose:
        for k, f in enumerate(files):
            row = " ".join(
                f"{m}={r[k].objective:.0f}({gap(r[k].objective, refs['current'][k]):+.2f}%)"
                for m, r in results.items()
            )
            print(f"  {f.stem:<16} bks={refs['current'][k]:.0f} {row}")


def main(argv: list[str] | None = None) -> None:
    """Command line entry point (see the module docstring)."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--sets", default="clrp10,clrp20,clrp50,clrp100,prins")
    p.add_argument("--num", type=int, default=10, help="instances per generated set")
    p.add_argument("--num-by-size", default="", help="e.g. 10:100,20:10")
    p.add_argument("--seed0", type=int, default=1000, help="seed of the generated data sets")
    p.add_argument("--seed", type=int, default=0, help="solver seed")
    p.add_argument("--methods", default="", help="subset of pyvrp,pyvrp+ds,exact (default all)")
    p.add_argument("--pyvrp-time", type=float, default=1.0, help="PyVRP s per instance")
    p.add_argument("--pyvrp-time-by-size", default="", help="e.g. 50:5,100:10")
    p.add_argument("--prins-time", type=float, default=10.0, help="PyVRP s per Prins instance")
    p.add_argument("--prins-max-n", type=int, default=None)
    p.add_argument("--exact-time", type=float, default=60.0, help="HiGHS s per instance")
    p.add_argument("--exact-sizes", default="10,20")
    p.add_argument("--exact-num", type=int, default=None, help="exact on the first K only")
    p.add_argument("--ds-from", type=int, default=10, help="also run pyvrp+ds from this size")
    p.add_argument("--threads", type=int, default=2, help="HiGHS threads")
    p.add_argument("--num-procs", type=int, default=2, help="PyVRP processes")
    p.add_argument("--benchmarks", default=os.environ.get("CLRP_BENCHMARKS_DIR"))
    p.add_argument("--progress", action="store_true")
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)

    def pairs(text: str, cast: type) -> dict:
        return {int(k): cast(v) for k, v in (x.split(":") for x in text.split(",") if x)}

    args.num_by_size = pairs(args.num_by_size, int)
    time_by_size = pairs(args.pyvrp_time_by_size, float)
    args.exact_sizes = {int(x) for x in args.exact_sizes.split(",") if x}
    args.methods = {m for m in args.methods.split(",") if m}
    unknown = args.methods - {"pyvrp", "pyvrp+ds", "exact"}
    if unknown:
        p.error(f"unknown methods {sorted(unknown)}")

    def time_for(instances: list[CLRPInstance]) -> float:
        n = instances[0].num_customers
        if instances[0].rounded_costs:  # Prins
            return args.prins_time
        return time_by_size.get(n, args.pyvrp_time)

    args.time_for = time_for
    print(f"machine: {provenance.machine()}; {provenance.software()}")
    print(
        f"PyVRP: {args.num_procs} processes x 1 thread; exact: HiGHS {args.threads} threads, "
        f"{args.exact_time:g} s limit, one instance at a time"
    )
    t0 = time.perf_counter()
    for name in args.sets.split(","):
        if name == "prins":
            if not args.benchmarks:
                print("\n== Prins: skipped (set CLRP_BENCHMARKS_DIR or --benchmarks) ==")
                continue
            prins_set(args)
        else:
            generated_set(int(name.replace("clrp", "")), args)
    print(f"\ntotal wall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
