"""``python -m experiments.depot_choice collect|evaluate`` (run from the repository root).

    CLRP_BENCHMARKS_DIR=/path/to/benchmarks OMP_NUM_THREADS=1 nice python -m \\
        experiments.depot_choice collect --generated 30 --max-minutes 9
    python -m experiments.depot_choice evaluate
    python -m experiments.depot_choice ship     # the set model, fitted on the generated data

``collect`` writes ``datasets/depot_choice/dev.npz`` (the 44 development files of Schneider &
Löffler's set, read from ``$CLRP_BENCHMARKS_DIR/schneider/``) and ``generated.npz`` (seeded
generated instances, :mod:`.instances`), resuming what is there; ``evaluate`` writes
``results/depot_choice/metrics.csv`` and ``tables.md``; ``ship`` writes the package's set
model ``clrp_rl4co/pretrained/set_cost_ridge.json`` (:mod:`.ship`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

DATA = Path("datasets/depot_choice")
RESULTS = Path("results/depot_choice")


def jobs(sources: list[str], generated: int, only: list[str] | None):
    """``(source, name, kind, make_instance)`` in collecting order: the 44 files and the
    generated instances each in a seeded random order, interleaved (a run stopped early keeps
    a mix of sizes and of both sources)."""
    from .instances import dev_file, dev_kind, dev_names, generated_kind
    from .instances import generated as make_generated

    dev, gen = [], []
    if "dev" in sources:
        for name in np.random.default_rng(0).permutation(dev_names()).tolist():
            dev.append(("dev", name, dev_kind(name), lambda name=name: dev_file(name)))
    if "generated" in sources:
        for i in np.random.default_rng(1).permutation(generated).tolist():
            name = make_generated(i).name
            gen.append(("generated", name, generated_kind(name),
                        lambda i=i: make_generated(i)))  # fmt: skip
    out = []
    for k in range(max(len(dev), len(gen))):
        out += [j for j in (dev[k] if k < len(dev) else None,
                            gen[k] if k < len(gen) else None) if j is not None]  # fmt: skip
    if only:
        out = [j for j in out if j[1] in only]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m experiments.depot_choice",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="route depot sets and record them as examples")
    c.add_argument("--sources", nargs="+", choices=["dev", "generated"],
                   default=["dev", "generated"])  # fmt: skip
    c.add_argument("--generated", type=int, default=30, help="generated instances (0..G-1)")
    c.add_argument("--only", nargs="+", default=None, help="only these instance names")
    c.add_argument("--iterations", type=int, default=150, help="PyVRP iterations per set")
    c.add_argument("--sets", type=int, default=6, help="most sets per instance")
    c.add_argument("--rank-seconds", type=float, default=1.0, help="SetEstimate's ranking time")
    c.add_argument("--replicate-customers", type=int, default=200,
                   help="route every set twice up to this many customers")  # fmt: skip
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--max-minutes", type=float, default=None,
                   help="start no instance after this many minutes of wall time")  # fmt: skip
    c.add_argument("--located-seconds", type=float, default=None,
                   help="add the facility-location model's set (HiGHS within this time) to "
                   "the instances already collected")  # fmt: skip
    c.add_argument("--out", type=Path, default=DATA)
    e = sub.add_parser("evaluate", help="compare the estimates on held-out instances")
    e.add_argument("--data", type=Path, default=DATA)
    e.add_argument("--out", type=Path, default=RESULTS)
    s = sub.add_parser("ship", help="fit the set model on the generated data and ship it")
    s.add_argument("--data", type=Path, default=DATA)
    s.add_argument("--out", type=Path, default=None, help="default: the package's set model")
    s.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    args = parser.parse_args(argv)
    if args.command == "collect":
        return _collect(args, argv)
    if args.command == "ship":
        return _ship(args, argv)
    return _evaluate(args)


def _ship(args, argv) -> int:
    from clrp_rl4co.reporting import provenance
    from clrp_rl4co.solvers.set_model import PRETRAINED_DIR, SHIPPED_SET_MODEL

    from .ship import ship

    out = args.out or PRETRAINED_DIR / f"{SHIPPED_SET_MODEL}.json"
    meta = {
        "commit": provenance.commit_line(),
        "command": provenance.command_line(argv, prog="python -m experiments.depot_choice"),
    }
    written = ship(args.data, out, meta, overwrite=args.overwrite)
    print(f"wrote {written}")
    return 0


def _collect(args, argv) -> int:
    from clrp_rl4co.reporting import provenance

    from .collect import CollectParams, collect

    params = CollectParams(iterations=args.iterations, seed=args.seed,
                           rank_seconds=args.rank_seconds, sets=args.sets,
                           replicate_customers=args.replicate_customers)  # fmt: skip
    meta = {
        "commit": provenance.commit_line(),
        "command": provenance.command_line(argv, prog="python -m experiments.depot_choice"),
    }
    limit = None if args.max_minutes is None else 60.0 * args.max_minutes
    added = collect(jobs(args.sources, args.generated, args.only), args.out, params, limit, meta,
                    log=lambda line: print(line, flush=True),
                    located_seconds=args.located_seconds)  # fmt: skip
    print(f"added: {added or 'nothing'}")
    return 0


def _evaluate(args) -> int:
    from .evaluate import SUBSETS, evaluate, load_examples, table, write_csv

    data = load_examples(args.data)
    rows = evaluate(data)
    write_csv(rows, args.out / "metrics.csv")
    lines = [
        "# Depot choice: routed-cost estimates on held-out instances",
        "",
        "Written by `python -m experiments.depot_choice evaluate`.",
        "",
        _sizes(data),
        "",
    ]
    for subset in SUBSETS:
        if any(r["subset"] == subset for r in rows):
            lines += [f"## {subset}", "", table(rows, subset), ""]
    fitted = {r["protocol"]: r["method"] for r in rows if r["subset"] == "_fitted"}
    lines += [f"Fitted k per fold (cv folds, then transfer): {fitted.get('k', '')}; ridge "
              f"penalties: {fitted.get('penalty', '')}.", ""]  # fmt: skip
    (args.out / "tables.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


def _sizes(data) -> str:
    """The data's sizes in one paragraph."""
    parts = []
    for source in ("dev", "generated"):
        at = data["source"] == source
        if at.any():
            count = len(np.unique(data["instance"][at]))
            cpu = float(data["cpu_seconds"][at].sum())
            parts.append(f"{source}: {int(at.sum())} routed sets on {count} instances, "
                         f"{cpu:.0f} CPU s of routing")  # fmt: skip
    twice = int(np.isfinite(data["cost_replicate"]).sum())
    return "Data: " + "; ".join(parts) + f"; {twice} sets routed twice (label noise)."


if __name__ == "__main__":
    sys.exit(main())
