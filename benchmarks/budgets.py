"""Budgets kept at every size: seconds used and peak memory of ``solve`` against ``--time``.

Each run solves one instance of the generator's size rule (``CLRPGenerator(num_loc=N)``, drawn
with ``--seed``) with :func:`clrp_rl4co.solving.solve` in a fresh process (one CPU thread), so
that its peak resident memory is its own: the time is the call's wall time (model loading and
decoding included, process start-up and imports not), the memory the process's peak RSS
(imports included). A run is one JSON line in ``results/budgets/runs.jsonl``, with the machine,
the commit and the load average; a rerun computes only the (size, method, budget, seed) not
yet there. ``table`` writes ``results/budgets/table.md`` and ``budgets.png`` from that file.

    python -m benchmarks.budgets run --sizes 10 100 1000 2000 5000 10000 --methods hybrid pyvrp
    python -m benchmarks.budgets table

The target (issue 36): every method returns within 105% of its budget and stays under 4 GB
at 10,000 customers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from clrp_rl4co.reporting import provenance
from clrp_rl4co.reporting.markdown import markdown_table

OUT = Path("results/budgets")
SIZES = (10, 100, 1000, 2000, 5000, 10000)
METHODS = ("hybrid", "pyvrp")
#: A run may take this multiple of its budget before it counts as over.
TIME_LIMIT = 1.05
#: Peak memory target at 10,000 customers, GB.
MEMORY_LIMIT_GB = 4.0
#: A run is a long-run reference for runs with at most this fraction of its budget.
REFERENCE_MULTIPLE = 10


def draw(size: int, seed: int):
    """The instance of ``size`` customers drawn by the size rule with ``seed``."""
    from clrp_rl4co.data import tensordict_to_instances
    from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset

    data = generate_dataset(CLRPGenerator(num_loc=size), 1, seed)
    return tensordict_to_instances(data, [f"size-rule-{size}-seed{seed}"])[0]


def one(size: int, method: str, seconds: float, seed: int) -> dict:
    """Solve one drawn instance in this process; the row of :func:`run`."""
    from clrp_rl4co.solving import solve

    instance = draw(size, seed)
    result = solve(instance, method=method, seconds=seconds, seed=seed)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    return {
        "size": size,
        "depots": instance.num_depots,
        "method": method,
        "ran": result.method,
        "budget": seconds,
        "seed": seed,
        "seconds": round(result.seconds, 3),
        "ratio": round(result.seconds / seconds, 4),
        "peak_gb": round(peak_kb / 2**20, 3),
        "objective": result.objective,
        "status": result.status,
        "machine": provenance.machine(),
        "commit": provenance.commit_line(),
        "load": provenance.load_average(),
    }


def _key(row: dict) -> tuple:
    return (int(row["size"]), row["method"], float(row["budget"]), int(row["seed"]))


def load(out: Path) -> list[dict]:
    """The rows of ``out/runs.jsonl`` (none when it does not exist)."""
    path = out / "runs.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run(sizes, methods, budgets, seed: int, out: Path) -> int:
    """Run every missing (size, method, budget) in its own process; 1 if one failed."""
    out.mkdir(parents=True, exist_ok=True)
    done = {_key(row) for row in load(out)}
    failed = 0
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for size in sizes:
        for seconds in budgets:
            for method in methods:
                if (size, method, float(seconds), seed) in done:
                    continue
                cmd = [sys.executable, "-m", "benchmarks.budgets", "one", str(size), method,
                       str(seconds), str(seed)]  # fmt: skip
                begin = time.perf_counter()
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
                lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
                if proc.returncode != 0 or not lines:
                    failed = 1
                    tail = proc.stderr.strip().splitlines()[-3:]
                    print(f"  {size} {method} {seconds} s: FAILED ({proc.returncode}): {tail}")
                    continue
                row = json.loads(lines[-1])
                row["process_seconds"] = round(time.perf_counter() - begin, 3)
                with open(out / "runs.jsonl", "a") as f:
                    f.write(json.dumps(row) + "\n")
                print(f"  {size} customers, {method} ({row['ran']}) {seconds} s: "
                      f"{row['seconds']:.1f} s ({row['ratio']:.3f}), {row['peak_gb']:.2f} GB, "
                      f"{row['objective']}", flush=True)  # fmt: skip
    return failed


def table(out: Path) -> str:
    """The Markdown table of every row (and the plot ``budgets.png``)."""
    rows = sorted(load(out), key=lambda r: (r["budget"], r["method"], r["size"]))
    body = [
        (r["size"], r["depots"], r["method"], r["ran"], f"{r['budget']:g}", f"{r['seconds']:.1f}",
         f"{r['ratio']:.3f}", "yes" if r["ratio"] > TIME_LIMIT else "", f"{r['peak_gb']:.2f}",
         "" if r["objective"] is None else f"{r['objective']:.2f}", r["status"], r["load"])
        for r in rows
    ]  # fmt: skip
    header = ("customers", "depots", "method", "ran", "budget s", "seconds", "ratio",
              f"over {TIME_LIMIT:g}x", "peak GB", "objective", "status", "load")  # fmt: skip
    machines = sorted({r["machine"] for r in rows})
    commits = sorted({r["commit"] for r in rows})
    text = "\n".join([
        "# Seconds used and peak memory against the budget",
        "",
        "`python -m benchmarks.budgets table` (the runs: `python -m benchmarks.budgets run`); "
        "ratio = seconds / budget; peak GB = the solving process's peak resident memory.",
        "",
        markdown_table(header, body, "rrllrrrlrrll"),
        "",
        f"Machines: {'; '.join(machines)}. Commits: {'; '.join(commits)}.",
        "",
    ])  # fmt: skip
    reference = reference_table(rows)
    if reference:
        text += "\n" + reference
    (out / "table.md").write_text(text)
    _plot(rows, out / "budgets.png")
    return text


def reference_table(rows: list[dict]) -> str:
    """Every run against its long-run reference, in Markdown ("" when no run has one).

    The reference of an instance (size and seed) is the lowest objective among its runs of
    the longest budget there; it applies to the runs of at most ``1 / REFERENCE_MULTIPLE`` of
    that budget. Gaps are ``100 (objective - reference) / reference`` in %; the second table
    gives the hybrid against PyVRP alone at the same size, seed and budget,
    ``100 (hybrid - pyvrp) / pyvrp``.
    """
    by_instance: dict[tuple[int, int], list[dict]] = {}
    for r in rows:
        if r["objective"] is not None:
            by_instance.setdefault((int(r["size"]), int(r["seed"])), []).append(r)
    gap_rows, versus_rows = [], []
    for (size, seed), runs in sorted(by_instance.items()):
        longest = max(float(r["budget"]) for r in runs)
        best = min((r for r in runs if float(r["budget"]) == longest),
                   key=lambda r: r["objective"])  # fmt: skip
        shorter = [r for r in runs if REFERENCE_MULTIPLE * float(r["budget"]) <= longest]
        if not shorter:
            continue
        reference = best["objective"]
        for r in sorted(shorter, key=lambda r: (float(r["budget"]), r["method"])):
            gap = 100.0 * (r["objective"] - reference) / reference
            gap_rows.append((size, seed, f"{r['budget']:g}", r["method"], r["ran"],
                             f"{r['objective']:.2f}", f"{gap:+.2f}"))  # fmt: skip
        for budget in sorted({float(r["budget"]) for r in runs}):
            of = {r["method"]: r["objective"] for r in runs if float(r["budget"]) == budget}
            if "hybrid" in of and "pyvrp" in of:
                diff = 100.0 * (of["hybrid"] - of["pyvrp"]) / of["pyvrp"]
                versus_rows.append((size, seed, f"{budget:g}", f"{of['pyvrp']:.2f}",
                                    f"{of['hybrid']:.2f}", f"{diff:+.3f}"))  # fmt: skip
        gap_rows.append((size, seed, f"{longest:g}", best["method"], best["ran"],
                         f"{reference:.2f}", "reference"))  # fmt: skip
    if not gap_rows:
        return ""
    gap_header = ("customers", "seed", "budget s", "method", "ran", "objective",
                  "gap to reference %")  # fmt: skip
    versus_header = ("customers", "seed", "budget s", "PyVRP alone", "hybrid",
                     "hybrid against PyVRP %")  # fmt: skip
    return "\n".join([
        "## Against a long-run reference",
        "",
        f"The reference of an instance: its best run of the longest budget (at least "
        f"{REFERENCE_MULTIPLE}x the budget of the runs it is compared with).",
        "",
        markdown_table(gap_header, gap_rows, "rrrllrr"),
        "",
        markdown_table(versus_header, versus_rows, "rrrrrr"),
        "",
    ])  # fmt: skip


def _plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(10, 4))
    for (method, budget), group in _groups(rows).items():
        sizes = [r["size"] for r in group]
        label = f"{method}, {budget:g} s"
        ax_t.plot(sizes, [r["ratio"] for r in group], "o-", label=label)
        ax_m.plot(sizes, [r["peak_gb"] for r in group], "o-", label=label)
    ax_t.axhline(TIME_LIMIT, color="red", linestyle="--", linewidth=1)
    ax_m.axhline(MEMORY_LIMIT_GB, color="red", linestyle="--", linewidth=1)
    for ax, title in ((ax_t, "seconds / budget"), (ax_m, "peak memory, GB")):
        ax.set_xscale("log")
        ax.set_xlabel("customers")
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _groups(rows: list[dict]) -> dict[tuple[str, float], list[dict]]:
    out: dict[tuple[str, float], list[dict]] = {}
    for r in sorted(rows, key=lambda r: r["size"]):
        out.setdefault((r["method"], float(r["budget"])), []).append(r)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.budgets",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="run what is missing, then write the table")
    p_run.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    p_run.add_argument("--methods", nargs="+", default=list(METHODS))
    p_run.add_argument("--seconds", type=float, nargs="+", default=[60.0])
    p_run.add_argument("--seed", type=int, default=0)
    p_run.add_argument("--out", type=Path, default=OUT)
    p_one = sub.add_parser("one", help="one run in this process (prints its JSON row)")
    p_one.add_argument("size", type=int)
    p_one.add_argument("method")
    p_one.add_argument("seconds", type=float)
    p_one.add_argument("seed", type=int)
    p_table = sub.add_parser("table", help="write the table and the plot from the runs")
    p_table.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.command == "one":
        print(json.dumps(one(args.size, args.method, args.seconds, args.seed)))
        return 0
    if args.command == "run":
        status = run(args.sizes, args.methods, args.seconds, args.seed, args.out)
        print(table(args.out))
        return status
    print(table(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
