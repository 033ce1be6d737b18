"""Command line of the hybrid benchmark (see :mod:`benchmarks.hybrid`)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

from clrp_rl4co.reporting import provenance

from .runs import (
    ABLATION_METHODS,
    DEFAULT_METHODS,
    HYBRID_VARIANTS,
    X8,
    Decode,
    RowFile,
    Solve,
    load_now,
)
from .sets import PAPER_SETS, SETS, load_set, set_size
from .summary import PAPER_ROW, Report, to_markdown

PROG = "python -m benchmarks.hybrid"
#: x8 rows are decoded and saved in chunks of this many instances.
X8_CHUNK = 50


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Hybrid against PyVRP alone at equal "
                                "time per instance, interleaved, resumable.")  # fmt: skip
    p.add_argument("--set", required=True, choices=SETS, help="instance set")
    p.add_argument("--num", type=int, default=None, help="first instances (default: all)")
    p.add_argument("--seconds", type=float, required=True, help="wall time per instance")
    p.add_argument("--model", default=None, help="policy of the hybrid and x8 (default: "
                   "the paper's model of the size where shipped, else the generalist)")  # fmt: skip
    p.add_argument("--out", default="results/hybrid", help="folder of the CSV and Markdown")
    p.add_argument("--seed", type=int, default=0, help="seed of every time-limited run")
    p.add_argument("--x8-all", type=int, default=None, help="paper sets: instances of the "
                   "whole-set x8 mean (default: all)")  # fmt: skip
    p.add_argument("--ablation", nargs="*", default=None, metavar="VARIANT",
                   help="also the hybrid's variants (default: all of "
                   f"{', '.join(v for v in HYBRID_VARIANTS if v != 'hybrid')})")  # fmt: skip
    return p


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parsed and checked arguments (a bad value exits with a message naming it)."""
    p = parser()
    args = p.parse_args(argv)
    total = set_size(args.set)
    if args.num is None:
        args.num = total
    if not 1 <= args.num <= total:
        p.error(f"--num: must be in [1, {total}] for --set {args.set}, got {args.num}")
    if not (math.isfinite(args.seconds) and args.seconds > 0):
        p.error(f"--seconds: must be a positive number, got {args.seconds:g}")
    if args.x8_all is not None:
        if args.set not in PAPER_SETS:
            p.error(f"--x8-all: only for the paper sets {list(PAPER_SETS)}, got --set {args.set}")
        if not 1 <= args.x8_all <= total:
            p.error(f"--x8-all: must be in [1, {total}] for --set {args.set}, got {args.x8_all}")
    elif args.set in PAPER_SETS:
        args.x8_all = total
    if args.ablation is not None:
        unknown = [v for v in args.ablation if v not in HYBRID_VARIANTS or v == "hybrid"]
        if unknown:
            p.error(f"--ablation: unknown variant(s) {unknown}; choose from "
                    f"{[v for v in HYBRID_VARIANTS if v != 'hybrid']}")  # fmt: skip
    return args


def methods_of(args: argparse.Namespace) -> tuple[str, ...]:
    """The time-limited methods of a run: the default hybrid and PyVRP alone, with
    ``--ablation`` every variant of the hybrid between them (or the variants named)."""
    if args.ablation is None:
        return DEFAULT_METHODS
    if not args.ablation:
        return ABLATION_METHODS
    return ("hybrid", *dict.fromkeys(args.ablation), "pyvrp")


def file_stem(args: argparse.Namespace, explicit_model: bool) -> str:
    """``<set>_<seconds>s`` and, where they differ from the defaults, ``_ablation`` (with
    ``-<variant>`` per variant named), ``_<model>`` and ``_seed<k>``: one results file per
    run configuration."""
    stem = f"{args.set}_{args.seconds:g}s"
    if args.ablation is not None:
        stem += "_ablation"
        names = [v.removeprefix("hybrid-") for v in dict.fromkeys(args.ablation)]
        stem += "".join(f"-{name}" for name in names)
    if explicit_model:
        stem += f"_{Path(args.model).stem}"
    if args.seed != 0:
        stem += f"_seed{args.seed}"
    return stem


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def main(
    argv: Sequence[str] | None = None, solve: Solve | None = None, decode: Decode | None = None
) -> int:
    """Run the benchmark; ``solve`` / ``decode`` replace the real solvers and the x8 decode
    (tests). Returns the exit status."""
    import torch

    args = parse(argv)
    torch.set_num_threads(1)
    explicit_model = args.explicit_model = args.model is not None
    need = max(args.num, args.x8_all or 0)
    bench = load_set(args.set, need)
    model = args.model or bench.default_model
    args.model = model
    out = Path(args.out)
    stem = file_stem(args, explicit_model)
    methods = methods_of(args)
    policy, weights = None, ""
    if solve is None or decode is None:
        from clrp_rl4co.evaluation import policy_fingerprint
        from clrp_rl4co.models import load_policy

        policy = load_policy(model).eval()
        weights = policy_fingerprint(policy)
    timed = RowFile(out / f"{stem}.csv", model, args.seed, weights)
    x8_file = RowFile(out / f"{args.set}_x8_{Path(model).stem}.csv", model, None, weights)
    if solve is None:
        from .runs import real_solver

        solve = real_solver(policy)
    if decode is None:
        from .runs import x8_decoder

        decode = x8_decoder(policy, bench.instances, bench.data)

    x8_done = {i for i, _ in x8_file.done()}
    todo = [i for i in range(need) if i not in x8_done] if bench.x8 else []
    if todo:
        print(f"x8 of {model} on {len(todo)} instances (untimed) -> {x8_file.path}", flush=True)
    for k in range(0, len(todo), X8_CHUNK):
        chunk = todo[k : k + X8_CHUNK]
        load = load_now()
        for i, run in zip(chunk, decode(chunk)):
            x8_file.add(i, bench.names[i], X8, None, run, load)

    done = timed.done()
    for i in range(args.num):
        order = methods if i % 2 == 0 else tuple(reversed(methods))
        missing = [m for m in order if (i, m) not in done]
        if not missing:
            continue
        load = load_now()
        cells = []
        for method in missing:
            run = solve(method, bench.instances[i], args.seconds, args.seed)
            timed.add(i, bench.names[i], method, args.seconds, run, load)
            cells.append(f"{method} {run.objective:.4f} ({run.seconds:.1f} s)")
        print(f"{i:4d} {bench.names[i]}: " + ", ".join(cells) + f"; load {load}", flush=True)

    report = build_report(args, bench, timed, x8_file, methods)
    text = to_markdown(report)
    target = out / f"{stem}.md"
    target.write_text(text)
    print("\n" + text + f"\nwritten: {target}")
    return 0


def build_report(args, bench, timed: RowFile, x8_file: RowFile, methods) -> Report:
    """The :class:`.summary.Report` of the rows in ``timed`` / ``x8_file`` within ``--num``."""
    per = {m: timed.objectives(m) for m in methods}
    complete = sorted(set.intersection(*(set(v) for v in per.values())) & set(range(args.num)))
    x8 = x8_file.objectives(X8)
    costs = {m: {i: per[m][i] for i in complete} for m in methods}
    costs[X8] = {i: x8[i] for i in complete if i in x8}
    seconds = {}
    for m in methods:
        values = [float(r["seconds"]) for r in timed.rows
                  if r["method"] == m and int(r["index"]) in complete]  # fmt: skip
        seconds[m] = sum(values) / len(values) if values else math.nan
    x8_seconds = [float(r["seconds"]) for r in x8_file.rows if int(r["index"]) in complete]
    seconds[X8] = sum(x8_seconds) / len(x8_seconds) if x8_seconds else math.nan
    loads = {}
    for r in timed.rows:
        value = _float(r["load_avg"])
        if int(r["index"]) in complete and value is not None:
            loads.setdefault(int(r["index"]), value)
    paper = x8_all = None
    lines = []
    if bench.paper_preset is not None:
        from experiments.headline import PAPER, PAPER_SECONDS, PAPER_SOURCE

        paper = (PAPER[bench.paper_preset][PAPER_ROW], PAPER_SECONDS[bench.paper_preset][PAPER_ROW])
        x8_all = ([x8[i] for i in range(args.x8_all) if i in x8], bench.total)
        lines.append(f"- paper figure: {PAPER_SOURCE}.")
    if bench.bks:
        lines.append("- BKS: the current best-known values (`clrp_rl4co.data.prins_bks`).")
    kind = "hybrid variants" if args.ablation is not None else "hybrid"
    title = (
        f"{args.set}: {kind} and PyVRP alone at "
        f"{args.seconds:g} s per instance, first {args.num} of {bench.total} instances"
    )
    lines += [
        f"- model: {args.model}; seed {args.seed}; one torch thread, one instance at a time, "
        "methods interleaved (order reversed on odd instances); "
        + ("x8 untimed, decoded in batches" if bench.x8 else "no x8 on this set"),
        f"- machine: {provenance.machine()}; {provenance.software()}",
        f"- commit: {provenance.commit_line()}",
        f"- command: `{provenance.command_line(prog=PROG, argv=_argv(args))}`",
    ]
    return Report(title, methods, costs, seconds, dict(enumerate(bench.names)), bench.bks,
                  paper, x8_all, list(loads.values()), lines)  # fmt: skip


def _argv(args: argparse.Namespace) -> list[str]:
    """The command line that reruns this configuration (every option spelled out)."""
    argv = ["--set", args.set, "--num", str(args.num), "--seconds", f"{args.seconds:g}"]
    if args.explicit_model:  # a default model is not named: the same results file
        argv += ["--model", args.model]
    argv += ["--out", str(args.out), "--seed", str(args.seed)]
    if args.x8_all is not None:
        argv += ["--x8-all", str(args.x8_all)]
    if args.ablation is not None:
        argv += ["--ablation", *args.ablation]
    return argv
