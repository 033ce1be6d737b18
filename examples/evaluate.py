"""Evaluate a trained CLRP policy and print a table (also written as CSV and Markdown).

Datasets (``--data``):
    ``clrp20:1000[:seed]``   generated instances of a preset (seed default 2024);
    ``path/to/file.npz``     a dataset written by ``clrp_rl4co.envs.clrp.save_dataset``;
    ``prins[:GLOB]``         Prins files in $CLRP_BENCHMARKS_DIR (default: all 30), gap to BKS.

Examples::

    python examples/evaluate.py --checkpoint runs/drlhq_clrp20/checkpoints/best.ckpt \
        --data clrp20:1000 --decode greedy multistart_greedy multistart_greedy+aug8
    python examples/evaluate.py --checkpoint drlhq_clrp20 --data prins:coord100-* \
        --decode multistart_greedy+rot8
    python examples/evaluate.py --checkpoint drlhq_clrp10 --data clrp10:100 \
        --decode multistart_greedy+aug8 sgbs:4x4+aug8 sgbs:4x3+aug8

Columns: objective (mean total cost), depot / vehicle / routing parts and dead-end penalty
(means, instance units), time per instance (ms, decoding only) and the mean gap (%) to the
reference (``--reference`` CSV with a ``cost`` column, one row per instance; BKS for Prins).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import torch

from clrp_rl4co.data import instances_to_tensordict, prins_bks, prins_files, read_prodhon
from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp.generator import CLRPGenerator, generate_dataset, load_dataset
from clrp_rl4co.models import load_policy
from clrp_rl4co.models.evaluation import DecodeSpec, decode_batch

COLUMNS = [
    "decode",
    "instances",
    "objective",
    "opening",
    "vehicles",
    "routing",
    "penalty",
    "ms_per_instance",
    "gap_%",
]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--checkpoint", required=True, help=".ckpt, .pt (+ .json) or a shipped name")
    p.add_argument("--data", default="clrp20:1000")
    p.add_argument("--decode", nargs="+", default=["greedy", "multistart_greedy"])
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--reference", default=None, help="CSV with a 'cost' column")
    p.add_argument("--out", default=None, help="stem of the .csv / .md tables")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--device", default="cpu")
    return p.parse_args(argv)


def load_batches(spec: str, batch_size: int) -> tuple[list, list[float] | None]:
    """``[(label, instance TensorDict)]`` and the Prins reference costs (or None)."""
    if spec.startswith("prins"):
        _, _, pattern = spec.partition(":")
        files = prins_files()
        if pattern:
            files = [f for f in files if f.match(pattern) or f.stem == pattern]
        bks = prins_bks()
        batches = [(f.stem, instances_to_tensordict([read_prodhon(f)])) for f in files]
        return batches, [float(bks[f.stem].current) for f in files]
    if spec.endswith(".npz"):
        td = load_dataset(spec)
    else:
        preset, size, *seed = spec.split(":")
        td = generate_dataset(
            CLRPGenerator(preset=preset), int(size), int(seed[0]) if seed else 2024
        )
    return [(f"{i}", td[i : i + batch_size]) for i in range(0, td.batch_size[0], batch_size)], None


def evaluate(policy, env, batches, specs: list[str], reference: list[float] | None) -> list[dict]:
    rows = []
    for text in specs:
        spec = DecodeSpec.parse(text)
        parts, seconds = [], 0.0
        for _, td in batches:
            _, p, s = decode_batch(policy, env, td, spec)
            parts.append(p)
            seconds += s
        merged = {k: torch.cat([p[k] for p in parts]) for k in parts[0]}
        n = merged["total"].numel()
        row = {
            "decode": text,
            "instances": n,
            **{k: float(merged[k].mean()) for k in ("opening", "vehicles", "routing", "penalty")},
            "objective": float(merged["total"].mean()),
            "ms_per_instance": 1000 * seconds / n,
            "gap_%": float("nan"),
        }
        if reference is not None:
            ref = torch.tensor(reference, dtype=torch.float64)
            row["gap_%"] = float(((merged["total"] - ref) / ref).mean() * 100)
        rows.append(row)
    return rows


def format_table(rows: list[dict]) -> str:
    def fmt(v):
        return f"{v:.4f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(fmt(r[c]) for c in COLUMNS) + " |" for r in rows]
    return "\n".join(lines)


def main(argv=None) -> list[dict]:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    policy = load_policy(args.checkpoint, map_location=args.device).eval()
    env = CLRPEnv(check_actions=False, device=args.device)
    batches, reference = load_batches(args.data, args.batch_size)
    batches = [(label, td.to(args.device)) for label, td in batches]
    if args.reference:
        with open(args.reference) as f:
            reference = [float(r["cost"]) for r in csv.DictReader(f)]
    rows = evaluate(policy, env, batches, args.decode, reference)
    table = format_table(rows)
    print(table)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".md").write_text(table + "\n")
        with out.with_suffix(".csv").open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
