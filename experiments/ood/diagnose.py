"""OOD diagnosis: shipped DRLHQ models against PyVRP on the synthetic OOD families.

For every family of ``datasets/ood/manifest.json`` (built by ``families.py``):

* the family's shipped model (``drlhq_clrp100`` or ``drlhq_clrp50``, or ``--model``) decodes
  every instance with ``multistart_greedy+aug8`` (:func:`clrp_rl4co.models.decode_batch`);
* PyVRP solves every instance with ``--pyvrp-seconds`` (default 10) per instance, one process;
* each solution is re-checked by ``CLRPSolution.check`` and its routes and open depots counted.

Per-instance results are cached as JSON lines in ``results/ood/cache/<family>/<method>.jsonl``
(an interrupted run resumes; a rerun only computes what is missing). The summary goes to
``results/ood/diagnosis_table.{md,csv}`` and every instance to
``results/ood/diagnosis_per_instance.csv`` (``diagnosis_<model>_*`` with ``--model``, or
``--stem``).

It also records, per ``c100_*`` family, whether the policy's input differs from the control
``c100_base`` at all (the init embedding's output on the same instances, up to float
rounding): an input change that leaves it unchanged is invisible to the policy.

Run as a file::

    OMP_NUM_THREADS=1 nice -n 10 python experiments/ood/diagnose.py
    python experiments/ood/diagnose.py --families tb100_d10 bar50 --pyvrp-seconds 10
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

from clrp_rl4co.data import CLRPSolution, tensordict_to_instances
from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp.dataset import load_dataset
from clrp_rl4co.models import decode_batch
from clrp_rl4co.policies import load_policy
from clrp_rl4co.reporting import provenance
from clrp_rl4co.reporting.markdown import markdown_table
from clrp_rl4co.solvers import solve_pyvrp

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "datasets" / "ood"
OUT = ROOT / "results" / "ood"
DECODE = "multistart_greedy+aug8"


def _record(instance, solution: CLRPSolution, seconds: float) -> dict:
    """One cached result: the checked solution's cost parts, routes, open depots, time."""
    solution.check(instance)
    cost = solution.cost(instance)
    return {
        "name": instance.name,
        "total": cost.total,
        "opening": cost.opening,
        "vehicles": cost.vehicles,
        "routing": cost.routing,
        "routes": solution.num_routes,
        "depots": len(solution.open_depots),
        "seconds": seconds,
        "solution": solution.to_dict(),
    }


def _cached(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_policy(family: str, model: str, batch: int, cache: Path) -> list[dict]:
    """Decode the family with ``model`` (x8 multistart greedy); cached per instance."""
    td = load_dataset(DATA / f"{family}.npz")
    instances = tensordict_to_instances(td, names=[f"{family}_{b}" for b in range(len(td))])
    done = _cached(cache)
    if len(done) >= len(instances):
        return done[: len(instances)]
    policy = load_policy(model).eval()
    env = CLRPEnv(check_actions=False)
    num_depots = instances[0].num_depots
    with cache.open("a") as out:
        for start in range(len(done), len(instances), batch):
            rows = slice(start, min(start + batch, len(instances)))
            actions, _, seconds = decode_batch(policy, env, td[rows], DECODE)
            per = seconds / actions.shape[0]
            for inst, row in zip(instances[rows], actions.tolist()):
                rec = _record(inst, CLRPSolution.from_actions(row, num_depots), per)
                out.write(json.dumps(rec) + "\n")
                out.flush()
                done.append(rec)
    return done


def run_pyvrp(family: str, seconds: float, cache: Path) -> list[dict]:
    """PyVRP with ``seconds`` per instance, one process, seed 0; cached per instance."""
    td = load_dataset(DATA / f"{family}.npz")
    instances = tensordict_to_instances(td, names=[f"{family}_{b}" for b in range(len(td))])
    done = _cached(cache)
    with cache.open("a") as out:
        for inst in instances[len(done) :]:
            result = solve_pyvrp(inst, seconds=seconds)
            if result.solution is None:
                raise RuntimeError(f"{inst.name}: PyVRP found no solution in {seconds} s")
            rec = _record(inst, result.solution, result.runtime)
            out.write(json.dumps(rec) + "\n")
            out.flush()
            done.append(rec)
    return done[: len(instances)]


def input_identical_to_base(family: str, model: str) -> bool | None:
    """Whether ``model``'s init embedding gives the same output on ``family`` as on
    ``c100_base``, up to float rounding (``1e-6``; only for the ``c100_*`` families, which
    share their instances)."""
    if not family.startswith("c100_") or family == "c100_base":
        return None
    policy = load_policy(model).eval()
    embed = policy.encoder.init_embedding
    with torch.no_grad():
        a = embed(load_dataset(DATA / "c100_base.npz"))
        b = embed(load_dataset(DATA / f"{family}.npz"))
    return bool(torch.allclose(a, b, rtol=0.0, atol=1e-6))


def _mean(values) -> float:
    values = list(values)
    return float(np.mean(values)) if values else math.nan


def summarise(family: dict, pol: list[dict], ref: list[dict], identical) -> dict:
    gaps = [100.0 * (p["total"] / r["total"] - 1.0) for p, r in zip(pol, ref)]
    routing = [p["routing"] / r["routing"] for p, r in zip(pol, ref) if r["routing"] > 0]
    return {
        "family": family["name"],
        "factor": family["factor"],
        "model": family["model"],
        "n": len(gaps),
        "N": family["customers"],
        "D": family["depots"],
        "pyvrp": _mean(r["total"] for r in ref),
        "policy": _mean(p["total"] for p in pol),
        "gap_mean": _mean(gaps),
        "gap_min": float(np.min(gaps)),
        "gap_max": float(np.max(gaps)),
        "routes_policy": _mean(p["routes"] for p in pol),
        "routes_pyvrp": _mean(r["routes"] for r in ref),
        "depots_policy": _mean(p["depots"] for p in pol),
        "depots_pyvrp": _mean(r["depots"] for r in ref),
        "routing_ratio": _mean(routing),
        "policy_s": _mean(p["seconds"] for p in pol),
        "input_identical_to_base": identical,
    }


def write_csv(path: Path, rows: list[dict]) -> None:
    """``rows`` (dicts with the same keys, the first row's order) as a CSV file."""
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_outputs(
    rows: list[dict], per_instance: list[dict], command: str, stem: str = "diagnosis"
) -> None:
    """``results/ood/<stem>_table.{md,csv}`` and ``<stem>_per_instance.csv``."""
    OUT.mkdir(parents=True, exist_ok=True)
    write_csv(OUT / f"{stem}_table.csv", rows)
    write_csv(OUT / f"{stem}_per_instance.csv", per_instance)

    def fmt(v) -> str:
        if v is None:
            return ""
        if isinstance(v, bool):
            return "yes" if v else "no"
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = [
        "# OOD diagnosis: shipped DRLHQ x8 vs PyVRP on the synthetic families",
        "",
        f"- command: `{command}`",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; hardware: "
        f"{provenance.machine()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} torch thread(s)",
        f"- policy decode: `{DECODE}`; PyVRP: 10 s per instance, one process, seed 0 "
        "(time-limited, so the machine's load matters a little)",
        "- gap: per instance (policy / PyVRP - 1), then averaged; routing: ratio of the "
        "routing (distance) parts; input = base: the policy's init embedding equals the "
        "one of `c100_base` on the same instances up to float rounding (1e-6)",
        "",
    ]
    header = ["family", "factor changed", "model", "n", "N", "D", "PyVRP 10s", "policy x8",
              "gap % mean", "gap % min..max", "routes policy / PyVRP", "depots policy / PyVRP",
              "routing policy / PyVRP", "input = base?"]  # fmt: skip
    table = [
        [r["family"], r["factor"], r["model"], r["n"], r["N"], r["D"], fmt(r["pyvrp"]),
         fmt(r["policy"]), f"{r['gap_mean']:+.1f}", f"{r['gap_min']:+.1f}..{r['gap_max']:+.1f}",
         f"{r['routes_policy']:.1f} / {r['routes_pyvrp']:.1f}",
         f"{r['depots_policy']:.1f} / {r['depots_pyvrp']:.1f}", f"{r['routing_ratio']:.2f}",
         fmt(r["input_identical_to_base"])]
        for r in rows
    ]  # fmt: skip
    lines.append(markdown_table(header, table))
    (OUT / f"{stem}_table.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="*", help="default: every family of the manifest")
    parser.add_argument(
        "--model", help="a shipped name or a saved policy for every family (default: manifest)"
    )
    parser.add_argument("--pyvrp-seconds", type=float, default=10.0)
    parser.add_argument(
        "--stem", default=None, help="output file stem (default: diagnosis, or diagnosis_<model>)"
    )
    parser.add_argument("--batch", type=int, default=4, help="instances per decode batch")
    parser.add_argument("--policy-only", action="store_true", help="skip PyVRP and the table")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    manifest = json.loads((DATA / "manifest.json").read_text())
    chosen = [f for f in manifest if not args.families or f["name"] in args.families]
    unknown = set(args.families or []) - {f["name"] for f in manifest}
    if unknown:
        raise ValueError(f"--families: unknown {sorted(unknown)}")
    results = {}
    for fam in chosen:  # policies first (minutes), then the solver (10 s an instance)
        model = args.model or fam["model"]
        fam["model"] = model
        tag = model.replace("/", "__")  # a shipped name or a path (e.g. a run's policy_best.pt)
        cache = OUT / "cache" / fam["name"] / f"{tag}.jsonl"
        cache.parent.mkdir(parents=True, exist_ok=True)
        batch = max(1, args.batch * 100 // max(fam["customers"], 100))
        results[fam["name"]] = {"policy": run_policy(fam["name"], model, batch, cache)}
        print(f"{fam['name']}: policy done", flush=True)
    if args.policy_only:
        return 0
    rows, per_instance = [], []
    tag = f"pyvrp{args.pyvrp_seconds:g}s"
    for fam in chosen:
        cache = OUT / "cache" / fam["name"] / f"{tag}.jsonl"
        ref = run_pyvrp(fam["name"], args.pyvrp_seconds, cache)
        pol = results[fam["name"]]["policy"]
        identical = input_identical_to_base(fam["name"], fam["model"])
        rows.append(summarise(fam, pol, ref, identical))
        for p, r in zip(pol, ref):
            per_instance.append(
                {
                    "family": fam["name"],
                    "instance": p["name"],
                    "policy": p["total"],
                    "pyvrp": r["total"],
                    "gap_pct": 100.0 * (p["total"] / r["total"] - 1.0),
                    "policy_routes": p["routes"],
                    "pyvrp_routes": r["routes"],
                    "policy_depots": p["depots"],
                    "pyvrp_depots": r["depots"],
                    "policy_routing": p["routing"],
                    "pyvrp_routing": r["routing"],
                }
            )
        print(f"{fam['name']}: gap {rows[-1]['gap_mean']:+.1f}%", flush=True)
    command = provenance.command_line(argv or None, prog="python experiments/ood/diagnose.py")
    stem = args.stem or ("diagnosis" if not args.model else f"diagnosis_{Path(args.model).stem}")
    write_outputs(rows, per_instance, command.strip(), stem)
    return 0


if __name__ == "__main__":
    sys.exit(main())
