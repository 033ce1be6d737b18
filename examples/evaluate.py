"""Evaluate a policy under several decode specs on one dataset and print a table.

This compares decode specs on a dataset (means with 95% CIs, resumable): a thin front end to
:mod:`clrp_rl4co.evaluation`. To *solve* instance files within a time budget use the
``clrp-rl4co solve`` command (``docs/formats.md``); instance files given here are read by that
command's reader, so both take the same files.

Datasets (``--data``, see :mod:`clrp_rl4co.evaluation.data`): ``clrp20:1000[:seed]``
(generated), ``path/to/file.npz``, or ``prins[:GLOB]`` (files in $CLRP_BENCHMARKS_DIR, gap to
the BKS); or instance files, folders or globs as ``clrp-rl4co solve`` takes them (Prodhon
``.dat``, ``.json``; gap to the best-known values it knows). Examples::

    python examples/evaluate.py --checkpoint drlhq_clrp20 --data clrp20:1000 \
        --decode greedy multistart_greedy multistart_greedy+aug8
    python examples/evaluate.py --checkpoint runs/x/checkpoints/best.ckpt \
        --data prins:coord100-* --decode multistart_greedy+rot8 sgbs:4x4+rot8

Columns: mean objective with its 95% CI (instance units), mean gap to the best row on each
instance, time per instance, and the gap to the reference (Prins BKS or ``--reference``).
Every solution is re-checked by the numpy checker; ``--cache DIR`` keeps the per-instance
results (a rerun computes only what is missing) and ``--out STEM`` writes ``.md`` / ``.csv``.
"""

from __future__ import annotations

import argparse
import csv
import glob
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import torch

from clrp_rl4co.cli.inputs import expand, read_jobs
from clrp_rl4co.cli.outputs import BestKnown
from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.evaluation import (
    EvalData,
    Method,
    ResultCache,
    run_method,
    summarize,
    to_csv,
    to_markdown,
)
from clrp_rl4co.evaluation.data import load_eval_data
from clrp_rl4co.policies import load_policy


def load_data(spec: str) -> tuple[EvalData, dict[int, float] | None]:
    """A dataset spec of :func:`load_eval_data`, else instance files read as ``clrp-rl4co
    solve`` reads them (an unreadable file stops the evaluation, naming it)."""
    try:
        return load_eval_data(spec)
    except (ValueError, FileNotFoundError):
        if spec.startswith("prins") or spec.endswith(".npz") or not spec_is_path(spec):
            raise
    files, errors = expand([spec])
    jobs = [job for path in files for job in read_jobs(path)] + errors
    failed = [job.error for job in jobs if job.error is not None]
    if failed:
        raise ValueError("; ".join(failed))
    best = BestKnown.read(None)
    reference = {i: v for i, job in enumerate(jobs) if (v := best.lookup(job)) is not None}
    names = [job.label for job in jobs]
    return EvalData([job.instance for job in jobs], names), reference or None


def spec_is_path(spec: str) -> bool:
    """Whether ``spec`` names files (a path that exists, or a glob) rather than a preset."""
    return Path(spec).exists() or glob.has_magic(spec)


def main(argv: list[str] | None = None) -> list:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--checkpoint", required=True, help=".ckpt, .pt (+ .json) or a shipped name")
    p.add_argument("--data", default="clrp20:1000")
    p.add_argument("--decode", nargs="+", default=["greedy", "multistart_greedy"])
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--reference", default=None, help="CSV with a 'cost' column, one row each")
    p.add_argument("--cache", default=None, help="folder of per-instance results (resumable)")
    p.add_argument("--out", default=None, help="stem of the .md / .csv tables")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    data, reference = load_data(args.data)
    if data.td is not None:
        data.td = data.td.to(args.device)
    if args.reference:
        with open(args.reference) as f:
            reference = {i: float(r["cost"]) for i, r in enumerate(csv.DictReader(f))}
    policy = load_policy(args.checkpoint, map_location=args.device).eval()
    env = CLRPEnv(check_actions=False, device=args.device)
    methods = [
        Method("policy", args.checkpoint, d, batch_size=args.batch_size) for d in args.decode
    ]
    with tempfile.TemporaryDirectory() as scratch:
        cache = ResultCache(args.cache or scratch)
        results = []
        for method in methods:
            results += run_method(method, data, cache, env, lambda _: policy, progress=False)
    decode = {m.key: m.decode for m in methods}
    shown = [replace(r, method=decode[r.method]) for r in results]
    summaries = summarize(shown, args.decode, reference)
    columns = ["method", "instances", "objective", "gap", "seconds"]
    table = to_markdown(summaries, columns=columns + (["ref_gap"] if reference else []))
    print(table)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".md").write_text(table)
        to_csv(summaries, out.with_suffix(".csv"))
    return summaries


if __name__ == "__main__":
    main(sys.argv[1:])
