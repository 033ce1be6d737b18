"""Evaluate a policy under several decode specs on one dataset and print a table.

This compares decode specs on a dataset (means with 95% CIs, resumable): a thin front end to
:mod:`clrp_rl4co.evaluation`. To *solve* instance files within a time budget use the
``clrp-rl4co solve`` command (``docs/formats.md``); instance files given here are read by the
package's reader (:mod:`clrp_rl4co.data.files`), as the command reads them.

Datasets (``--data``, see :mod:`clrp_rl4co.evaluation.data`): ``clrp20:1000[:seed]``
(generated), ``path/to/file.npz``, or ``prins[:GLOB]`` (files in $CLRP_BENCHMARKS_DIR, gap to
the BKS); or instance files, folders or globs as ``clrp-rl4co solve`` takes them (Prodhon
``.dat``, ``.json``; gap to the best-known values it knows). Examples::

    python examples/evaluate.py --checkpoint drlhq_clrp20 --data clrp20:1000 \
        --decode greedy multistart_greedy multistart_greedy+aug8
    python examples/evaluate.py --checkpoint runs/x/checkpoints/best.ckpt \
        --data prins:coord100-* --decode multistart_greedy+rot8 sgbs:4x4+rot8

Classical rows (``--classical pyvrp:10 exact:60``: solver and seconds per instance) are the
expensive part of an evaluation; they run over ``--workers`` local processes, or on a Dask
cluster with ``--scheduler tcp://host:8786`` (``pip install -e ".[dask]"``; ``--scheduler
local:4`` starts a local cluster of 4 worker processes)::

    python examples/evaluate.py --checkpoint drlhq_clrp50 --data clrp50:100 \
        --decode multistart_greedy+aug8 --classical pyvrp:10 --scheduler local:2

Columns: mean objective with its 95% CI (instance units), mean gap to the best row on each
instance, time per instance, and the gap to the reference (Prins BKS or ``--reference``).
Every solution is re-checked by the numpy checker; ``--cache DIR`` keeps the per-instance
results (a rerun computes only what is missing) and ``--out STEM`` writes ``.md`` / ``.csv``.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import glob
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import torch

from clrp_rl4co.data.bks import BestKnown
from clrp_rl4co.data.files import find_instance_files, read_instances
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
    files, errors = find_instance_files([spec])
    if errors:
        raise ValueError("; ".join(error for _, error in errors))
    found = [(path, item) for path in files for item in read_instances(path)]
    best = BestKnown.read(None)
    reference = {
        i: v
        for i, (path, item) in enumerate(found)
        if (v := best.lookup(path, item.label, item.instance)) is not None
    }
    names = [item.label for _, item in found]
    return EvalData([item.instance for _, item in found], names), reference or None


def classical_method(spec: str) -> Method:
    """``pyvrp:10`` -> the PyVRP row at 10 s per instance."""
    kind, _, seconds = spec.partition(":")
    if kind not in ("pyvrp", "exact") or not seconds:
        raise ValueError(f"--classical: expected pyvrp:SECONDS or exact:SECONDS, got {spec!r}")
    return Method(kind, seconds=float(seconds))


@contextlib.contextmanager
def cluster_executor(scheduler: str | None):
    """A Dask cluster's executor for ``--scheduler`` (None: no cluster, yields None)."""
    if scheduler is None:
        yield None
        return
    from distributed import Client, LocalCluster

    if scheduler.startswith("local:"):
        workers = int(scheduler.removeprefix("local:"))
        with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as c:
            with Client(c) as client:
                yield client.get_executor()
        return
    with Client(scheduler) as client:
        yield client.get_executor()


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
    p.add_argument("--classical", nargs="*", default=[], help="rows SOLVER:SECONDS (pyvrp, exact)")
    p.add_argument("--workers", type=int, default=1, help="local processes of --classical rows")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address, or local:N")
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
    methods += [classical_method(spec) for spec in args.classical]
    with tempfile.TemporaryDirectory() as scratch, cluster_executor(args.scheduler) as executor:
        cache = ResultCache(args.cache or scratch)
        results = []
        for method in methods:
            results += run_method(
                method,
                data,
                cache,
                env,
                lambda _: policy,
                num_procs=args.workers,
                progress=False,
                executor=executor,
            )
    label = {m.key: m.decode or m.key for m in methods}
    shown = [replace(r, method=label[r.method]) for r in results]
    summaries = summarize(shown, [label[m.key] for m in methods], reference)
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
