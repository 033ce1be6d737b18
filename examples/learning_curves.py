"""Validation curves of training runs side by side (the same-budget comparison of DRLHQ, POMO*
and MTA*), from the ``[epoch E step S M min] ...`` lines that ``examples/train.py`` prints.

    python examples/learning_curves.py --batch-size 64 --out results/training/clrp20 \\
        DRLHQ=runs/drlhq_clrp20_e128/train_part1.log,runs/drlhq_clrp20_e128/train.log \\
        "POMO*=runs/pomo_clrp20_e128/train.log" "MTA*=runs/mta_clrp20_e128/train.log"

Writes ``<out>.csv`` (label, step, training instances = step x batch size, validation cost of
the best start, mean validation cost) and ``<out>.png``. Several logs of one run (resumed
parts) are merged; a step logged twice keeps the later line.
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

LINE = re.compile(r"^\[epoch (\d+) step (\d+) ([\d.]+) min\] (.*)$")


def read_log(paths: list[Path]) -> dict[int, dict[str, float]]:
    """``{step: {metric: value}}`` from one run's logs (later files win)."""
    points: dict[int, dict[str, float]] = {}
    for path in paths:
        for line in path.read_text(errors="replace").splitlines():
            m = LINE.match(line.strip())
            if not m:
                continue
            metrics = dict(kv.split("=", 1) for kv in m.group(4).split() if "=" in kv)
            points[int(m.group(2))] = {k: float(v) for k, v in metrics.items()}
    return points


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", help="LABEL=LOG[,LOG...]")
    p.add_argument("--batch-size", type=int, required=True, help="training batch size")
    p.add_argument("--max-step", type=int, default=None, help="ignore later steps")
    p.add_argument("--out", required=True, help="stem of the .csv and .png")
    args = p.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    fig, ax = plt.subplots(figsize=(7, 4))
    for run in args.runs:
        label, _, logs = run.partition("=")
        points = read_log([Path(x) for x in logs.split(",")])
        steps = sorted(s for s in points if args.max_step is None or s <= args.max_step)
        if not steps:
            raise SystemExit(f"{run}: no '[epoch ... step ...]' lines found")
        costs = [-points[s]["val/max_reward"] for s in steps]
        for s in steps:
            rows.append(
                {
                    "label": label,
                    "step": s,
                    "training_instances": s * args.batch_size,
                    "val_cost_best_start": -points[s]["val/max_reward"],
                    "val_cost_mean": -points[s].get("val/reward", float("nan")),
                }
            )
        ax.plot([s * args.batch_size for s in steps], costs, marker="o", ms=3, label=label)
        best = min(costs)
        print(f"{label}: {len(steps)} validations up to step {steps[-1]}, best {best:.4f}")
    ax.set_xlabel("training instances")
    ax.set_ylabel("validation objective (best start)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out.with_suffix(".png"), dpi=120)
    with out.with_suffix(".csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"written: {out.with_suffix('.csv')} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
