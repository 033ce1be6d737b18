"""Command line of the hard benchmark (see :mod:`benchmarks.hard`)."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from clrp_rl4co.execution import interrupt
from clrp_rl4co.reporting import provenance

from . import families as fam
from .runs import (
    BOUND_SECONDS,
    EVALUATION_METHODS,
    EVALUATION_SECONDS,
    REFERENCE_FACTOR,
    REFERENCE_METHODS,
    BoundFn,
    SolveMany,
    benchmark,
    bound_key,
    cache_of,
    load_cached,
    plan,
    run_bounds,
    run_spec,
    select,
)
from .table import Table, provenance_lines, to_markdown

PROG = "python -m benchmarks.hard"
#: The parts of ``run``, in the order they run.
PARTS = ("bound", "evaluation", "reference")
#: The methods a run may name (those of :func:`clrp_rl4co.solving.solve`).
METHODS = ("auto", "x8", "sgbs", "hybrid", "pyvrp", "exact")
TABLE_FILE = "table.md"
#: Exit status of a run stopped by Ctrl-C (what it finished is cached, the table written).
INTERRUPTED_STATUS = 130


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _selection(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--only",
        nargs="+",
        default=[],
        metavar="NAME",
        help=f"families ({', '.join(fam.FAMILIES)}) or instances "
        "(<family>-<N>-<k>) to include (default: all)",
    )
    p.add_argument(
        "--sizes",
        nargs="+",
        type=int,
        default=[],
        choices=fam.SIZES,
        metavar="N",
        help=f"sizes to include, of {list(fam.SIZES)} (default: all)",
    )
    p.add_argument(
        "--seconds",
        nargs="+",
        type=_positive,
        default=list(EVALUATION_SECONDS),
        metavar="S",
        help="evaluation budgets per instance (default: 10 60)",
    )
    p.add_argument(
        "--reference-seconds",
        type=_positive,
        default=None,
        metavar="S",
        help=f"budget of the reference runs (default: {REFERENCE_FACTOR:g} x the "
        "largest --seconds)",
    )
    p.add_argument(
        "--methods",
        nargs="+",
        default=list(EVALUATION_METHODS),
        choices=METHODS,
        help="methods of the evaluation runs (default: auto hybrid pyvrp)",
    )
    p.add_argument(
        "--reference-methods",
        nargs="+",
        default=list(REFERENCE_METHODS),
        choices=METHODS,
        help="methods of the reference runs (default: hybrid pyvrp)",
    )
    p.add_argument(
        "--bound-seconds",
        type=_positive,
        default=BOUND_SECONDS,
        metavar="S",
        help="HiGHS's time limit of each lower bound (default: %(default)g)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of every run (default: 0)")
    p.add_argument(
        "--reference-seed",
        type=int,
        default=None,
        help="seed of the reference runs (default: --seed), e.g. to compare the evaluation runs "
        "of a second seed with the references of the first",
    )
    p.add_argument(
        "--table",
        default=TABLE_FILE,
        metavar="NAME",
        help=f"file name of the table in --out (default: {TABLE_FILE})",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("results/hard"),
        help="folder of the cache and the table (default: results/hard)",
    )


def parser() -> argparse.ArgumentParser:
    text = "Heterogeneous and nearly free depots: families, bounds, references, gap table."
    p = argparse.ArgumentParser(prog=PROG, description=text)
    sub = p.add_subparsers(dest="command", required=True)
    write = sub.add_parser(
        "write", help="write the instance files (checked against the pinned checksums)"
    )
    write.add_argument("--out", type=Path, default=fam.DATA_DIR, help="folder of the files")
    sub.add_parser(
        "check", help="redraw every instance and compare with the files and the pinned checksums"
    )
    run = sub.add_parser("run", help="compute what is missing (resumable), then write the table")
    _selection(run)
    run.add_argument(
        "--parts",
        nargs="+",
        default=list(PARTS),
        choices=PARTS,
        help="what to compute (default: all, in this order)",
    )
    run.add_argument(
        "--workers",
        type=int,
        default=1,
        help="instances solved at once, one process and one thread each",
    )
    table = sub.add_parser("table", help="write the table from the cache only")
    _selection(table)
    return p


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parsed and checked arguments (a bad value exits with a message naming it)."""
    p = parser()
    args = p.parse_args(argv)
    if getattr(args, "workers", 1) < 1:
        p.error(f"--workers: must be at least 1, got {args.workers}")
    if args.command in ("run", "table") and args.reference_seconds is None:
        args.reference_seconds = REFERENCE_FACTOR * max(args.seconds)
    if args.command in ("run", "table") and args.reference_seed is None:
        args.reference_seed = args.seed
    table = getattr(args, "table", TABLE_FILE)
    if Path(table).name != table or not table.endswith(".md"):
        p.error(f"--table: must be a file name ending in .md, got {table!r}")
    return args


def _argv(args: argparse.Namespace) -> list[str]:
    """The command line that reruns this configuration (every option spelled out)."""
    argv = [args.command]
    if args.only:
        argv += ["--only", *args.only]
    if args.sizes:
        argv += ["--sizes", *map(str, args.sizes)]
    argv += ["--seconds", *(f"{s:g}" for s in args.seconds)]
    argv += ["--reference-seconds", f"{args.reference_seconds:g}"]
    argv += ["--methods", *args.methods, "--reference-methods", *args.reference_methods]
    argv += ["--bound-seconds", f"{args.bound_seconds:g}", "--seed", str(args.seed)]
    if args.reference_seed != args.seed:
        argv += ["--reference-seed", str(args.reference_seed)]
    argv += ["--out", str(args.out)]
    if args.table != TABLE_FILE:
        argv += ["--table", args.table]
    if args.command == "run":
        argv += ["--parts", *args.parts, "--workers", str(args.workers)]
    return argv


def write_files(out: Path) -> int:
    paths = fam.write(out)
    print(f"wrote {len(paths)} instance files under {out}")
    return 0


def check_files() -> int:
    """Every (family, size): its draw and its files match the pinned checksum."""
    problems = 0
    for family, n in fam.every():
        for root in (None, fam.DATA_DIR):
            try:
                fam.load(family, n, root=root)
            except ValueError as exc:
                problems += 1
                print(f"error: {exc}")
    print(f"{problems} problem(s) in {len(fam.FAMILIES) * len(fam.SIZES)} (family, size) pairs")
    return 1 if problems else 0


def main(
    argv: Sequence[str] | None = None,
    solve_many: SolveMany | None = None,
    bound: BoundFn | None = None,
) -> int:
    """Run the command; ``solve_many`` / ``bound`` replace the solvers and the lower bound
    (tests). Returns the exit status: 1 when a run or a bound failed, 130 when Ctrl-C stopped
    the runs (each running instance is stopped early and not cached; the table is written)."""
    args = parse(argv)
    if args.command == "write":
        return write_files(args.out)
    if args.command == "check":
        return check_files()
    entries = select(benchmark(), args.only, args.sizes)
    specs = plan(
        args.seconds,
        args.reference_seconds,
        args.methods,
        args.reference_methods,
        args.seed,
        args.reference_seed,
    )
    cache = cache_of(args.out)
    failures = 0
    if args.command == "run":
        import torch

        torch.set_num_threads(1)
        if solve_many is None:
            from clrp_rl4co.solving import solve_many
        interrupt.clear()
        with interrupt.catch_sigint():
            if "bound" in args.parts:
                failures += run_bounds(entries, cache, args.bound_seconds, args.workers, bound)
            for spec in specs:
                part = "reference" if spec.reference else "evaluation"
                if part in args.parts and not interrupt.requested():
                    failures += run_spec(spec, entries, cache, args.workers, solve_many)
    chosen = {e.index for e in entries}
    results = {
        spec.key: {i: r for i, r in load_cached(cache, spec.key, entries).items() if i in chosen}
        for spec in specs
    }
    bound_rows = load_cached(cache, bound_key(args.bound_seconds), entries)
    bound_rows = {i: r for i, r in bound_rows.items() if i in chosen}
    shown = [r for rows in results.values() for r in rows.values()] + list(bound_rows.values())
    lines = [
        f"- instances: {len(entries)} (`benchmarks/hard/families.py`, files in `datasets/hard/`); "
        f"seed {args.seed}"
        + (f" (references: seed {args.reference_seed})" if args.reference_seed != args.seed else "")
        + "; each run one process with one thread",
        f"- lower bound: `benchmarks/hard/bound.py`, HiGHS {args.bound_seconds:g} s at most",
        *provenance_lines(shown),
        f"- table written at commit {provenance.commit_line()} with {provenance.software()}",
        f"- command: `{provenance.command_line(prog=PROG, argv=_argv(args))}`",
    ]
    bounds = {i: r.cost for i, r in bound_rows.items()}
    table = Table(entries, specs, results, bounds, lines)
    title = (
        f"Hard families: {', '.join(s.label for s in specs if not s.reference)} against "
        f"references at {args.reference_seconds:g} s"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / args.table
    target.write_text(to_markdown(table, title))
    print(f"written: {target}")
    if args.command == "run" and interrupt.requested():
        return INTERRUPTED_STATUS
    return 1 if failures else 0


def command(argv: Sequence[str] | None = None) -> int:
    """:func:`main` with bad input (an unknown ``--only``, a changed file, a cache of another
    benchmark) reported as one line ``error: ...`` on stderr and exit status 2."""
    try:
        return main(argv)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
