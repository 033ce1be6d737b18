"""``python -m experiments table <name>`` reproduces one evaluation table (run from the
repository's root).

    python -m experiments table clrp20         # the clrp20 table (results/clrp20/clrp20.md)
    python -m experiments table clrp50 --subset 20 --procs 2
    python -m experiments table cross-size
    python -m experiments table prins          # needs $CLRP_BENCHMARKS_DIR
    python -m experiments table paper-sets     # DRLHQ on the paper's own clrp10 ... clrp100 sets
    python -m experiments datasets             # write / verify the published test sets

A rerun with the same ``--out`` resumes: cached per-instance results are read, not recomputed.
"""

from __future__ import annotations

import argparse
import sys


def _models(pairs: list[str]) -> dict[str, str]:
    from clrp_rl4co.policies import POLICIES

    out = {}
    for pair in pairs:
        kind, sep, name = pair.partition("=")
        if not sep or kind not in POLICIES:
            expected = ", ".join(f"{k}=NAME" for k in POLICIES)
            raise SystemExit(f"--model: expected one of {expected}, got {pair!r}")
        out[kind] = name
    return out


def _limits(pairs: list[str]) -> dict[str, int]:
    out = {}
    for pair in pairs:
        text, sep, count = pair.rpartition("=")  # PART:TEXT=N keeps the part prefix in text
        if not sep or not text or not count.isdigit() or int(count) < 1:
            raise SystemExit(f"--limit: expected TEXT=N with N >= 1, got {pair!r}")
        out[text] = int(count)
    return out


def main(argv: list[str] | None = None) -> int:
    from .tables import TABLES

    parser = argparse.ArgumentParser(
        prog="python -m experiments",
        description=__doc__,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("table", help="run one evaluation table")
    t.add_argument("table", choices=TABLES)
    t.add_argument("--out", default="results", help="results folder (default: results)")
    t.add_argument("--model", action="append", default=[], help="drlhq=NAME|PATH (repeatable)")
    t.add_argument("--subset", type=int, default=None, help="size of the slow rows' subset")
    t.add_argument(
        "--limit",
        action="append",
        default=[],
        help="[PART:]LABEL=N: the row LABEL (else rows containing it) on the first N instances",
    )
    t.add_argument("--max-instances", type=int, default=None, help="cap every row (smoke runs)")
    t.add_argument("--only", nargs="+", default=None, help="rows whose label contains any")
    t.add_argument("--procs", type=int, default=1, help="solver / refinement processes")
    t.add_argument("--threads", type=int, default=None, help="torch threads for the policies")
    t.add_argument("--device", default="cpu")
    t.add_argument("--no-progress", action="store_true")
    d = sub.add_parser("datasets", help="write and verify the published test sets")
    d.add_argument("--root", default=None, help="folder (default: datasets/ or $CLRP_DATASETS_DIR)")
    args = parser.parse_args(argv)

    if args.command == "datasets":
        from .paper_sets import drlhq_test_set_filename, load_drlhq_test_set
        from .published_sets import TEST_SET_SIZES, load_test_set, published_test_set
        from .specs import PAPER_SET_PRESETS

        for preset in TEST_SET_SIZES:
            td = load_test_set(preset, args.root)
            name = published_test_set(preset).filename
            print(f"{name}: {td.batch_size[0]} instances, checksum ok")
        for preset in PAPER_SET_PRESETS:  # the DRLHQ paper's sets that the paper-sets table uses
            td = load_drlhq_test_set(preset, args.root)
            print(f"{drlhq_test_set_filename(preset)}: {td.batch_size[0]} instances, checksum ok")
        return 0

    import torch

    from clrp_rl4co.reporting import provenance

    from .tables import RunOptions, run_table

    if args.threads:
        torch.set_num_threads(args.threads)
    options = RunOptions(
        subset=args.subset,
        max_instances=args.max_instances,
        only=tuple(args.only) if args.only else None,
        num_procs=args.procs,
        device=args.device,
        progress=not args.no_progress,
        limits=_limits(args.limit),
    )
    md = run_table(
        args.table,
        out=args.out,
        models=_models(args.model),
        options=options,
        command=provenance.command_line(argv, prog="python -m experiments"),
    )
    print(f"written: {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
