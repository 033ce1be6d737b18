"""Learning curves of both implementations: the ``curves.csv`` file, per-seed summaries, the
plot and the verdict at equal instances seen."""

from __future__ import annotations

import csv
from pathlib import Path

from .config import CSV_FIELDS, IMPLEMENTATIONS


def read_curves(path: Path) -> list[dict]:
    """Rows of a ``curves.csv`` (typed), [] if the file does not exist."""
    if not path.is_file():
        return []
    with path.open() as f:
        return [
            {
                "implementation": r["implementation"],
                "seed": int(r["seed"]),
                "instances_seen": int(r["instances_seen"]),
                "val_objective": float(r["val_objective"]),
                "eval_instances": int(r["eval_instances"]),
            }
            for r in csv.DictReader(f)
        ]


def merge_curves(old: list[dict], new: list[dict]) -> list[dict]:
    """``old`` rows updated by ``new`` ones with the same (implementation, seed,
    instances_seen), sorted by those keys."""
    keyed = {(r["implementation"], r["seed"], r["instances_seen"]): r for r in old}
    keyed.update({(r["implementation"], r["seed"], r["instances_seen"]): r for r in new})
    return [keyed[k] for k in sorted(keyed)]


def write_curves(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({**r, "val_objective": f"{r['val_objective']:.6f}"})


def summarize(rows: list[dict]) -> dict:
    """Per implementation and instances seen: the mean over seeds (only points that every seed
    of that implementation reached), and per seed the final point."""
    out: dict = {}
    for impl in sorted({r["implementation"] for r in rows}):
        mine = [r for r in rows if r["implementation"] == impl]
        seeds = sorted({r["seed"] for r in mine})
        by_n: dict[int, dict[int, float]] = {}
        for r in mine:
            by_n.setdefault(r["instances_seen"], {})[r["seed"]] = r["val_objective"]
        mean = {
            n: sum(v.values()) / len(v) for n, v in sorted(by_n.items()) if len(v) == len(seeds)
        }
        final = {
            s: max((r for r in mine if r["seed"] == s), key=lambda r: r["instances_seen"])
            for s in seeds
        }
        out[impl] = {
            "seeds": seeds,
            "mean_over_seeds": mean,
            "final": {s: (r["instances_seen"], r["val_objective"]) for s, r in final.items()},
        }
    return out


def plot_curves(rows: list[dict], path: Path, title: str = "") -> Path:
    """``curves.png``: validation objective against training instances, one line per
    implementation and seed (solid seed 0, dashed the others; the untrained points, instances
    0, stay in the table only), drawn by the package's learning-curve plotter."""
    from clrp_rl4co.models import curves as learning_curves

    colors = {"official": "tab:orange", "ours": "tab:blue"}
    lines, styles = {}, {}
    for impl in sorted({r["implementation"] for r in rows}):
        for seed in sorted({r["seed"] for r in rows if r["implementation"] == impl}):
            points = sorted(
                (r["instances_seen"], r["val_objective"])
                for r in rows
                if r["implementation"] == impl and r["seed"] == seed and r["instances_seen"] > 0
            )
            label = f"{impl} seed {seed}"
            lines[label] = ([x for x, _ in points], [y for _, y in points])
            dash = "-" if seed == 0 else "--"
            styles[label] = {"marker": "o", "color": colors.get(impl), "ls": dash}
    return learning_curves.plot_curves(
        lines,
        path,
        "training instances seen",
        "multistart greedy objective (lower is better)",
        title=title,
        styles=styles,
    )


def curve_rows(implementation: str, seed: int, ckpts: dict, cache: dict, args) -> list[dict]:
    """Curve rows (one per evaluated checkpoint, in order of instances seen) of one run."""
    return [
        {
            "implementation": implementation,
            "seed": seed,
            "instances_seen": e * args.chunk,
            "val_objective": cache[str(p)],
            "eval_instances": args.eval_size,
        }
        for e, p in sorted(ckpts.items())
        if str(p) in cache
    ]


def verdict(rows: list[dict]) -> dict | None:
    """Ours against the official at equal instances seen (None before both have a point).

    Seeds compared: those both implementations have (``pending`` when their seed sets
    differ, e.g. a run still training). Points: the instances seen (> 0) every compared run
    reached. Per point, ours' mean over those seeds minus the official's; the statistic is the
    mean of these differences over the points, the difference at the last point is reported
    too. Seed noise: per point the larger of the two implementations' seed ranges (each over
    all its seeds there), averaged over the points. ``no_worse``: mean difference <= noise."""
    seeds = {
        impl: {r["seed"] for r in rows if r["implementation"] == impl} for impl in IMPLEMENTATIONS
    }
    common_seeds = seeds["official"] & seeds["ours"]
    if not common_seeds:
        return None

    def values(impl: str, n: int, among: set[int]) -> list[float]:
        return [
            r["val_objective"]
            for r in rows
            if r["implementation"] == impl and r["instances_seen"] == n and r["seed"] in among
        ]

    reached = [
        {r["instances_seen"] for r in rows if (r["implementation"], r["seed"]) == (impl, seed)}
        for impl in IMPLEMENTATIONS
        for seed in common_seeds
    ]
    points = sorted(n for n in set.intersection(*reached) if n > 0)
    if not points:
        return None
    diffs, ranges = [], []
    for n in points:
        mean = {i: sum(values(i, n, common_seeds)) / len(common_seeds) for i in IMPLEMENTATIONS}
        diffs.append(mean["ours"] - mean["official"])
        spread = [max(v) - min(v) for i in IMPLEMENTATIONS if len(v := values(i, n, seeds[i])) > 1]
        ranges.append(max(spread) if spread else 0.0)
    n = points[-1]
    mean_diff = sum(diffs) / len(diffs)
    noise = sum(ranges) / len(ranges)
    return {
        "seeds_compared": sorted(common_seeds),
        "pending": seeds["official"] != seeds["ours"],
        "points": len(points),
        "instances_seen": n,
        "official_mean": sum(values("official", n, common_seeds)) / len(common_seeds),
        "ours_mean": sum(values("ours", n, common_seeds)) / len(common_seeds),
        "ours_minus_official_last": diffs[-1],
        "mean_difference_over_points": mean_diff,
        "seed_noise": noise,
        "no_worse": mean_diff <= noise,
    }
