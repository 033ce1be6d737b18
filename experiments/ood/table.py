"""The evaluation table of the variant: x8 and x8 + refinement against PyVRP at equal time.

One command evaluates, for each model (default: the paper-faithful shipped DRLHQ model of the
matching size, ``paper``, the generalist ``drlhqcf_mixed`` and the DRLHQ-CF model it started
from, ``drlhqcf_mixed50_cpu``), on

* every synthetic family of ``datasets/ood/manifest.json`` (``families.py``; the matching
  DRLHQ model is the family's manifest model),
* the 30 Prins instances (``$CLRP_BENCHMARKS_DIR/prins``; gaps also to both best-known columns;
  the matching DRLHQ model is ``drlhq_clrp50``, as in the Prins table),
* the first ``--paper-limit`` instances of the DRLHQ paper's own test sets
  (``experiments/paper_sets.py``, clrp20 and clrp50; the model of that size),

the methods

* ``x8``: ``multistart_greedy+aug8``,
* ``x8 + refine``: the x8 solution refined by PyVRP (:func:`clrp_rl4co.solvers.refine_solution`)
  for the time left of ``--seconds`` per instance (decode time included: equal time),
* ``PyVRP``: PyVRP alone for ``--seconds`` per instance, one process, seed 0,

and writes ``<out>/<stem>.{md,csv}`` (one row per dataset, model and method: mean objective,
mean per-instance gap to PyVRP on the same instances, to the best-known values on Prins, routes,
open depots, seconds, the issue's targets where they apply with met / not met, the command,
commit, hardware and load) and ``<stem>_per_instance.csv``.

Nothing computed before is recomputed: results are cached per instance with the evaluation
core's :class:`clrp_rl4co.evaluation.ResultCache` in ``<cache>/<dataset>/eval/`` (keyed by
method, guarded by the model weights' fingerprint), and the x8 and PyVRP results that
``diagnose.py`` cached for a family (``<cache>/<family>/<model>.jsonl``,
``pyvrp<seconds>s.jsonl``) are imported (re-validated) instead of being run again (that cache
records no weights' fingerprint: it is trusted to come from the shipped model of that name).

Run as a file from the repository's root (one process; PyVRP and refinement are time-limited,
so the machine's load matters a little)::

    OMP_NUM_THREADS=1 nice -n 15 python experiments/ood/table.py
    python experiments/ood/table.py --parts families --families bar50 --refine-limit 2
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):  # run as a file: make the harness importable
    sys.path.insert(0, str(ROOT))

from clrp_rl4co.data import CLRPSolution, tensordict_to_instances  # noqa: E402
from clrp_rl4co.envs.clrp.dataset import load_dataset  # noqa: E402
from clrp_rl4co.evaluation import (  # noqa: E402
    EvalData,
    InstanceResult,
    Method,
    ResultCache,
    policy_fingerprint,
    run_method,
    validated,
)
from clrp_rl4co.policies import load_policy  # noqa: E402
from clrp_rl4co.reporting.markdown import markdown_table  # noqa: E402
from experiments.ood.diagnose import write_csv  # noqa: E402

DATA = ROOT / "datasets" / "ood"
OUT = ROOT / "results" / "ood"
X8 = "multistart_greedy+aug8"
SGBS = "sgbs:4x4+aug8"

#: The paper-faithful shipped DRLHQ model of the matching size (a ``--models`` token).
PAPER = "paper"
#: The DRLHQ-CF model trained on this CPU (``clrp_rl4co/pretrained/drlhqcf_mixed50_cpu.json``).
VARIANT = "drlhqcf_mixed50_cpu"
#: The generalist: DRLHQ-CF on the mixed preset at 20-200 customers (``experiments/generalist``).
GENERALIST = "drlhqcf_mixed"
DEFAULT_MODELS = (PAPER, GENERALIST, VARIANT)
PARTS = ("families", "prins", "paper")
PAPER_PRESETS = ("clrp20", "clrp50")
#: The paper-faithful DRLHQ model of the Prins table (``experiments/specs.py``).
PRINS_MODEL = "drlhq_clrp50"

#: The issue's targets: each family within 15% of PyVRP at 10 s; on Prins x8 (SGBS) within
#: 11.85% (8.46%) of the best-known values (the DRLHQ paper's figures, against its BKS column).
FAMILY_TARGET = 15.0
PRINS_X8_TARGET = 11.85
PRINS_SGBS_TARGET = 8.46


@dataclass
class Dataset:
    """One evaluated dataset: its instances, which rows run on how many of them, references."""

    name: str
    part: str  # families / prins / paper
    data: EvalData
    paper_model: str
    slow_limit: int | None = None  # PyVRP and refinement on the first ... (None: all)
    bks: dict[int, float] = field(default_factory=dict)  # current best-known values (Prins)
    bks_paper: dict[int, float] = field(default_factory=dict)  # the DRLHQ paper's BKS column
    batch_size: int = 4
    diagnose_dir: Path | None = None  # diagnose.py's cache folder of the family
    paper_csv: Path | None = None  # committed per-instance paper-sets results


def family_datasets(names, diagnose_root: Path, limit: int | None = None) -> list[Dataset]:
    manifest = json.loads((DATA / "manifest.json").read_text())
    unknown = set(names or []) - {f["name"] for f in manifest}
    if unknown:
        raise ValueError(f"--families: unknown {sorted(unknown)}")
    out = []
    for fam in manifest:
        if names and fam["name"] not in names:
            continue
        td = load_dataset(DATA / f"{fam['name']}.npz")[:limit]
        labels = [f"{fam['name']}_{b}" for b in range(len(td))]  # diagnose.py's names
        data = EvalData(tensordict_to_instances(td, labels), labels, td)
        batch = max(1, 4 * 100 // max(fam["customers"], 100))  # diagnose.py's batches
        out.append(Dataset(fam["name"], "families", data, fam["model"], None, batch_size=batch,
                           diagnose_dir=diagnose_root / fam["name"]))  # fmt: skip
    return out


def prins_dataset(pattern: str | None, limit: int | None = None) -> Dataset:
    from clrp_rl4co.data import prins_bks
    from clrp_rl4co.evaluation.data import load_eval_data

    data, current = load_eval_data(f"prins:{pattern}" if pattern else "prins")
    if limit is not None:
        data = EvalData(data.instances[:limit], data.names[:limit])
    bks = prins_bks()
    paper = {i: float(bks[n].drlhq) for i, n in enumerate(data.names) if n in bks}
    return Dataset("prins", "prins", data, PRINS_MODEL, None, current or {}, paper, batch_size=1)


def paper_dataset(preset: str, limit: int) -> Dataset:
    from experiments.paper_sets import load_drlhq_test_set
    from experiments.specs import default_model

    td = load_drlhq_test_set(preset, write=False)[:limit]  # the pinned checksum is checked
    names = [f"paper-{preset}-{i}" for i in range(len(td))]  # the paper-sets table's names
    data = EvalData(tensordict_to_instances(td, names), names, td)
    csv_path = ROOT / "results" / "paper-sets" / f"paper-{preset}_per_instance.csv"
    model = default_model("drlhq", preset)
    known = csv_path if csv_path.is_file() else None
    return Dataset(f"paper-{preset}", "paper", data, model, None, batch_size=limit, paper_csv=known)


def methods_of(ds: Dataset, models: list[str], seconds: float, refine_limit, sgbs: bool):
    """(role, model, method) triples of a dataset, PyVRP first; a policy's x8 row runs on every
    instance, PyVRP and refinement on the first ``slow_limit`` / ``refine_limit``."""
    out = [("", None, Method("pyvrp", seconds=seconds, limit=ds.slow_limit))]
    for token in models:
        role = "DRLHQ (paper)" if token == PAPER else token
        model = ds.paper_model if token == PAPER else token
        out.append((role, model, Method("policy", model, X8, batch_size=ds.batch_size)))
        if sgbs and ds.part == "prins":
            out.append((role, model, Method("policy", model, SGBS, batch_size=1)))
        limit = refine_limit if ds.part == "families" else ds.slow_limit
        out.append((role, model, Method("refine", model, X8, seconds, limit, ds.batch_size)))
    return out


def import_diagnose(ds: Dataset, cache: ResultCache, method: Method) -> int:
    """Copy ``diagnose.py``'s cached x8 / PyVRP results of the family into ``cache`` (each
    solution re-validated by the numpy checker); returns how many were imported."""
    if ds.diagnose_dir is None or method.kind == "refine":
        return 0
    if method.kind == "policy" and method.decode != X8:
        return 0
    tag = f"pyvrp{method.seconds:g}s" if method.kind == "pyvrp" else method.model.replace("/", "__")
    path = ds.diagnose_dir / f"{tag}.jsonl"
    if not path.is_file():
        return 0
    have = cache.load(method.key)
    index = {name: i for i, name in enumerate(ds.data.names)}
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        i = index.get(rec["name"])
        if i is None or i in have:
            continue
        num_depots = ds.data.instances[i].num_depots
        actions = CLRPSolution.from_dict(rec["solution"]).to_actions(num_depots)
        row = validated(method.key, i, ds.data, actions, rec["seconds"])
        row.extra["imported_from"] = str(path.relative_to(ROOT) if path.is_relative_to(ROOT)
                                         else path)  # fmt: skip
        rows.append(row)
        have[i] = row
    cache.add(rows)
    return len(rows)


def run_dataset(ds: Dataset, pairs, cache_root: Path, progress: bool) -> list[InstanceResult]:
    cache = ResultCache(cache_root / ds.name / "eval")
    policies: dict[str, torch.nn.Module] = {}

    def loader(name: str) -> torch.nn.Module:
        if name not in policies:
            policies[name] = load_policy(name).eval()
        return policies[name]

    fingerprints = {m.key: policy_fingerprint(loader(m.model)) for _, _, m in pairs
                    if m.kind in ("policy", "refine")}  # fmt: skip
    for key in cache.guard_models(fingerprints):
        print(f"{ds.name}: {key!r} was cached for other weights; recomputing", flush=True)
    results = []
    for _, _, method in pairs:
        imported = import_diagnose(ds, cache, method)
        if imported:
            print(f"{ds.name}: {method.key}: {imported} results from diagnose.py's cache")
        results += run_method(method, ds.data, cache, policy_loader=loader, progress=progress)
        print(f"{ds.name}: {method.key} done", flush=True)
    return results


def _mean(values) -> float:
    values = list(values)
    return float(np.mean(values)) if values else math.nan


def _label(method: Method) -> str:
    if method.kind == "pyvrp":
        return f"PyVRP {method.seconds:g}s"
    name = "x8" if method.decode == X8 else "SGBS(4,4) x8"
    return name + (f" + refine ({method.seconds:g}s total)" if method.kind == "refine" else "")


def _paper_costs(path: Path | None) -> dict[str, float]:
    if path is None:
        return {}
    with path.open() as f:
        return {r["name"]: float(r["DRLHQ x8"]) for r in csv.DictReader(f) if r.get("DRLHQ x8")}


def per_instance_rows(ds: Dataset, pairs, results) -> list[dict]:
    by_key = {}
    for r in results:
        by_key.setdefault(r.method, {})[r.instance] = r
    pyvrp = by_key.get(pairs[0][2].key, {})
    rows = []
    for role, model, method in pairs:
        base = by_key.get(method.base.key, {}) if method.base else {}
        for i, r in sorted(by_key.get(method.key, {}).items()):
            inst = ds.data.instances[i]
            sol = CLRPSolution.from_actions(r.actions, inst.num_depots) if r.valid else None
            ref = pyvrp.get(i)
            rows.append({
                "dataset": ds.name,
                "part": ds.part,
                "instance": i,
                "name": r.name,
                "role": role,
                "model": model or "",
                "method": _label(method),
                "key": method.key,
                "valid": r.valid,
                "cost": r.cost,
                "pyvrp": ref.cost if ref is not None and ref.valid else math.nan,
                "bks": ds.bks.get(i, math.nan),
                "bks_paper": ds.bks_paper.get(i, math.nan),
                "routes": sol.num_routes if sol else math.nan,
                "depots": len(sol.open_depots) if sol else math.nan,
                "seconds": r.seconds,
                # refinement's time: the total minus the x8 decode time it started from
                "refine_seconds": r.seconds - base[i].seconds if i in base else math.nan,
            })  # fmt: skip
    return rows


def summary_rows(ds: Dataset, pairs, per: list[dict]) -> list[dict]:
    paper_costs = _paper_costs(ds.paper_csv)
    out = []
    for role, model, method in pairs:
        mine = [p for p in per if p["key"] == method.key and p["valid"]]
        invalid = sum(1 for p in per if p["key"] == method.key and not p["valid"])
        with_ref = [p for p in mine if math.isfinite(p["pyvrp"])]
        row = {
            "dataset": ds.name,
            "part": ds.part,
            "role": role,
            "model": model or "",
            "method": _label(method),
            "n": len(mine),
            "invalid": invalid,
            "objective": _mean(p["cost"] for p in mine),
            "pyvrp_same_instances": _mean(p["pyvrp"] for p in with_ref),
            "n_vs_pyvrp": len(with_ref),
            "gap_pyvrp_pct": _mean(100.0 * (p["cost"] / p["pyvrp"] - 1.0) for p in with_ref),
            "gap_bks_pct": _mean(
                100.0 * (p["cost"] / p["bks"] - 1.0) for p in mine if math.isfinite(p["bks"])
            ),
            "gap_bks_paper_pct": _mean(
                100.0 * (p["cost"] / p["bks_paper"] - 1.0)
                for p in mine
                if math.isfinite(p["bks_paper"])
            ),
            "routes": _mean(p["routes"] for p in mine),
            "depots": _mean(p["depots"] for p in mine),
            "seconds": _mean(p["seconds"] for p in mine),
            # instances whose x8 decode took the whole budget (no refinement ran)
            "no_refine_time": sum(p["refine_seconds"] <= 0.01 for p in mine),
            "target": "",
            "met": "",
        }
        if ds.part == "families" and method.kind != "pyvrp":
            row["target"] = f"gap to PyVRP {pairs[0][2].seconds:g}s <= {FAMILY_TARGET:g}%"
            row["met"] = _met(row["gap_pyvrp_pct"], FAMILY_TARGET)
        elif ds.part == "prins" and method.kind == "policy":
            target = PRINS_X8_TARGET if method.decode == X8 else PRINS_SGBS_TARGET
            row["target"] = f"gap to BKS (DRLHQ paper's column) <= {target:g}%"
            row["met"] = _met(row["gap_bks_paper_pct"], target)
        elif paper_costs and method.kind == "policy" and model == ds.paper_model:
            same = [abs(p["cost"] - paper_costs[p["name"]]) <= 1e-6 * abs(p["cost"])
                    for p in mine if p["name"] in paper_costs]  # fmt: skip
            row["target"] = "paper model's x8 unchanged (results/paper-sets, per instance)"
            row["met"] = f"{'met' if same and all(same) else 'not met'} ({sum(same)}/{len(same)})"
        out.append(row)
    return out


def _met(value: float, target: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    return "met" if value <= target else "not met"


def _fmt(v, digits: int = 4) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:.1f}"
    return str(v)


def _gap(v: float) -> str:
    return "" if math.isnan(v) else f"{v:+.2f}"


def write_outputs(rows, per, out: Path, stem: str, meta: dict, notes: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for row in rows:
        row.update(meta)
    write_csv(out / f"{stem}.csv", rows)
    write_csv(out / f"{stem}_per_instance.csv", per)
    lines = [
        "# The variant's evaluation table (x8 and x8 + refinement vs PyVRP at equal time)",
        "",
        f"- command: `{meta['command']}`",
        f"- commit: {meta['commit']}; date: {meta['date']}; this run's wall time: "
        f"{meta['wall_s']:.0f} s (cached results are only read)",
        f"- hardware: {meta['hardware']}; 1-minute load average at the end: {meta['load']}",
        *[f"- {n}" for n in notes],
        "",
    ]
    table = []
    for r in rows:
        bks = ""
        if not math.isnan(r["gap_bks_pct"]):
            bks = f"{_gap(r['gap_bks_pct'])} / {_gap(r['gap_bks_paper_pct'])}"
        n = f"{r['n']}" + (f" ({r['invalid']} invalid)" if r["invalid"] else "")
        if r["no_refine_time"]:
            n += f" ({r['no_refine_time']} without refinement time)"
        table.append([r["dataset"], r["model"], r["method"], n, _fmt(r["objective"]),
                      _fmt(r["pyvrp_same_instances"]), _gap(r["gap_pyvrp_pct"]), bks,
                      _fmt(r["routes"], 3), _fmt(r["depots"], 3), _fmt(r["seconds"], 3),
                      r["target"], r["met"]])  # fmt: skip
    header = ["dataset", "model", "method", "n", "objective", "PyVRP (same inst.)",
              "gap to PyVRP %", "gap to BKS % (current / paper's)", "routes", "open depots",
              "s / inst", "target", "met"]  # fmt: skip
    lines.append(markdown_table(header, table))
    lines += ["", "## Targets met, per model and method", ""]
    targets = []
    keys = sorted({(r["role"], r["method"]) for r in rows if r["role"]})
    for role, method in keys:
        mine = [r for r in rows if r["role"] == role and r["method"] == method]
        models = sorted({r["model"] for r in mine})
        model = role if models == [role] else f"{role}: {', '.join(models)}"
        fam = [r for r in mine if r["part"] == "families"]
        met = sum(r["met"] == "met" for r in fam)
        prins = [f"{_gap(r['gap_bks_paper_pct'])}% ({r['met'] or 'no target'})"
                 for r in mine if r["part"] == "prins"]  # fmt: skip
        paper = [
            f"{r['dataset']} {_gap(r['gap_pyvrp_pct'])}%"
            + (f" (unchanged: {r['met']})" if r["met"] else "")
            for r in mine
            if r["part"] == "paper"
        ]
        targets.append([model, method, f"{met} of {len(fam)}", "; ".join(prins),
                        "; ".join(paper)])  # fmt: skip
    header = ["model", "method", "families within target", "Prins: gap to BKS (paper's)",
              "paper sets: gap to PyVRP"]  # fmt: skip
    lines.append(markdown_table(header, targets))
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    from clrp_rl4co.reporting import provenance
    from experiments.tables import code_commit, hardware

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--families", nargs="*", help="default: every family of the manifest")
    parser.add_argument("--prins", default=None, help="a file-name glob (default: all 30)")
    parser.add_argument("--paper-presets", nargs="+", default=list(PAPER_PRESETS))
    parser.add_argument("--paper-limit", type=int, default=20, help="first N of each paper set")
    parser.add_argument(
        "--max-instances", type=int, default=None, help="every dataset's first N (smoke runs)"
    )
    parser.add_argument(
        "--refine-limit", type=int, default=4, help="refinement on the first N of each family"
    )
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS),
                        help=f"'{PAPER}' (the shipped DRLHQ of the matching size) and/or shipped "
                        "names or paths")  # fmt: skip
    parser.add_argument("--seconds", type=float, default=10.0, help="PyVRP / total time per inst.")
    parser.add_argument("--sgbs", action="store_true", help="also SGBS(4,4) x8 on Prins")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--stem", default="variant_table")
    parser.add_argument("--cache", default=None, help="default: <out>/cache")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    out = Path(args.out)
    cache_root = Path(args.cache) if args.cache else out / "cache"
    datasets: list[Dataset] = []
    if "families" in args.parts:
        datasets += family_datasets(args.families, cache_root, args.max_instances)
    if "prins" in args.parts:
        datasets.append(prins_dataset(args.prins, args.max_instances))
    if "paper" in args.parts:
        limit = min(args.paper_limit, args.max_instances or args.paper_limit)
        datasets += [paper_dataset(p, limit) for p in args.paper_presets]
    rows, per = [], []
    for ds in datasets:
        pairs = methods_of(ds, args.models, args.seconds, args.refine_limit, args.sgbs)
        results = run_dataset(ds, pairs, cache_root, not args.no_progress)
        mine = per_instance_rows(ds, pairs, results)
        rows += summary_rows(ds, pairs, mine)
        per += mine
    command = provenance.command_line(argv, prog="python experiments/ood/table.py")
    notes = [
        f"x8 = `{X8}`; x8 + refine: the x8 solution refined by PyVRP "
        f"(`clrp_rl4co.solvers.refine_solution`) for {args.seconds:g} s minus the decode time "
        f"per instance (equal time); PyVRP {args.seconds:g} s per instance, one process, seed 0",
        "gap: per instance (method / reference - 1) in percent, then averaged over the row's "
        "instances that have the reference (PyVRP on the same instances; Prins: the current "
        "best-known values and the DRLHQ paper's BKS column)",
        f"models: `{PAPER}` = the paper-faithful shipped DRLHQ model of the matching size "
        f"(families: the manifest's; Prins: {PRINS_MODEL}; paper sets: the preset's); "
        f"`{VARIANT}` = DRLHQ-CF, 64-d / 2 layers, trained 78 min on this CPU on the mixed "
        "preset with 20-50 customers (its .json has the provenance); "
        f"`{GENERALIST}` = its continuation by the generalist run on 20-200 customers "
        "(results/generalist)",
        f"subsets: families: x8 and PyVRP on every instance, refinement on the first "
        f"{args.refine_limit}; Prins: all {'30' if not args.prins else 'matching'} instances; "
        f"paper sets: the first {args.paper_limit} of {', '.join(args.paper_presets)}"
        + (f"; every dataset cut to its first {args.max_instances}" if args.max_instances else ""),
        "targets: each family within 15% of PyVRP at 10 s; Prins x8 <= 11.85% and "
        "SGBS <= 8.46% to the BKS (the DRLHQ paper's figures, so against its BKS column); paper "
        "sets: the paper-faithful model's x8 equals the committed per-instance results of "
        "`results/paper-sets` where they exist",
    ]
    meta = {
        "command": command.strip(),
        "commit": code_commit(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "hardware": hardware("cpu", 1),
        "load": provenance.load_average(),
        "wall_s": time.perf_counter() - start,
    }
    write_outputs(rows, per, out, args.stem, meta, notes)
    print(f"wrote {out / args.stem}.md / .csv / _per_instance.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
