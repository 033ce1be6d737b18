"""Command-line arguments of ``clrp-rl4co solve``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from ..auto import METHODS

DESCRIPTION = """\
Solve CLRP instance files and write each solution (JSON and Prodhon .sol), a summary.csv and
a table with the gap to the best-known value where one is known.

Instances: Prodhon-format files (Prins, Tuzun-Burke, Barreto: any other extension), JSON
instances (.json) and datasets of the package (.npz); PATH may be a file, a folder (every
such file in it) or a glob pattern. The formats are described in docs/formats.md.
"""

EPILOG = """\
methods:
  auto    exact on tiny instances (a proof is in reach), pyvrp on nearly free depots
          (their opening costs <= 5% of the cost) and from 400 customers with --time <= 30,
          else hybrid; the model is picked from the instance (the paper's models only on
          instances like their training data)
  hybrid  learned starts (x8 or fewer starts, SGBS when time allows) + PyVRP refinement
  x8      the policy alone: every customer as first move x 8 transforms (fewer if --time
          is short); sgbs: simulation-guided beam search when it fits in --time, else x8
  pyvrp   PyVRP with a depot-set search (one run on the depots nearest to some customer
          when depots are nearly free);  exact: the MIP (HiGHS), proven optimal or not

examples:
  clrp-rl4co solve coord100-10-1.dat --time 30
  clrp-rl4co solve instances/ --method pyvrp --time 10 --workers 2 --out solutions
"""


@dataclass(frozen=True)
class SolveOptions:
    """The parsed options of ``clrp-rl4co solve`` (see ``--help``)."""

    paths: tuple[str, ...]
    seconds: float
    method: str
    model: str | None
    workers: int
    seed: int
    bks: Path | None
    out: Path
    plot: bool
    quiet: bool
    overwrite: bool = False
    iterations: int | None = None


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return int(text)


def parser() -> argparse.ArgumentParser:
    """The parser of ``clrp-rl4co`` (one verb: ``solve``)."""
    main = argparse.ArgumentParser(prog="clrp-rl4co", description="CLRP tools.")
    verbs = main.add_subparsers(dest="verb", required=True, metavar="solve")
    p = verbs.add_parser(
        "solve",
        help="solve instance files",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_run_options(p)
    _add_output_options(p)
    return main


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """What to solve and how: paths, budget (--time or --iterations), method, model, workers,
    seed."""
    p.add_argument("paths", nargs="+", metavar="PATH", help="instance files, folders or globs")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument(
        "--time",
        type=_positive_float,
        default=10.0,
        metavar="S",
        help="wall-clock seconds per instance (default 10), model loading and decoding included",
    )
    budget.add_argument(
        "--iterations",
        type=_positive_int,
        default=None,
        metavar="N",
        help="repeatable mode instead of --time: PyVRP iterations per instance, the same "
        "solution for the same file and seed on any load (methods auto, pyvrp, exact, x8)",
    )
    p.add_argument(
        "--method",
        choices=METHODS,
        default="auto",
        help="auto (default), hybrid, x8, sgbs, pyvrp or exact",
    )
    p.add_argument(
        "--model",
        default=None,
        metavar="NAME",
        help="the policy of hybrid / x8 / sgbs: a shipped model name (drlhq_clrp50, "
        "drlhqcf_mixed50_cpu, ...) or a .pt / .ckpt path; default: chosen by auto",
    )
    p.add_argument(
        "--workers",
        type=_positive_int,
        default=1,
        metavar="N",
        help="instances solved in parallel, one process and one CPU thread each (default 1)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="K",
        help="random seed (PyVRP, the order of decoded starts on large instances)",
    )


def _add_output_options(p: argparse.ArgumentParser) -> None:
    """What is written and shown: --bks, --out, --overwrite, --plot, --quiet."""
    p.add_argument(
        "--bks",
        type=Path,
        default=None,
        metavar="CSV",
        help="best-known values, a CSV with columns file,bks (file: a file name such as "
        "coordP111112.dat, a stem, or an instance label such as data.npz[3]); without it, "
        "Prins files get the current best-known values shipped with the package",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("solutions"),
        metavar="DIR",
        help="output folder (default solutions); never an input's folder where an output would "
        "replace the input, and an earlier run's outputs only with --overwrite",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier run's outputs in --out (without it the run refuses to start); "
        "an input file is never overwritten",
    )
    p.add_argument("--plot", action="store_true", help="also write a PNG of each solution")
    p.add_argument("--quiet", action="store_true", help="no progress bars and no printed table")


def parse_args(argv: list[str] | None = None) -> SolveOptions:
    """Parse ``argv`` (default ``sys.argv[1:]``); exits with status 2 on bad options."""
    args = parser().parse_args(argv)
    return SolveOptions(
        paths=tuple(args.paths),
        seconds=args.time,
        method=args.method,
        model=args.model,
        workers=args.workers,
        seed=args.seed,
        bks=args.bks,
        out=args.out,
        plot=args.plot,
        quiet=args.quiet,
        overwrite=args.overwrite,
        iterations=args.iterations,
    )
