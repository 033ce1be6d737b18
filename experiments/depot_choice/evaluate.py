"""``evaluate``: the routed-cost estimates on held-out instances, side by side.

Every example is a depot set of an instance routed by PyVRP (:mod:`.collect`). A method
predicts each set's routed cost (``F`` x routes + lengths); its prediction of the set's total
is that plus the opening costs of the set's depots that serve customers (SetEstimate ranks by
its own value, which charges every depot of the set). Per instance with at least
:data:`MIN_SETS` routed sets:

* ``rho_total``: Spearman's rank correlation between predicted and routed totals over the
  instance's sets (what ranking the sets needs);
* ``rho_routed``: the same on the routed costs alone (the part that is estimated);
* ``rel_err``: mean ``|predicted - routed| / routed`` of the routed costs, in %;
* ``regret``: ``100 (total of the set the method ranks first - best total) / best total``.

Means over the instances of a subset (dev ``e`` / ``c``, generated heterogeneous / nearly free).
Learned and fitted methods never see a test instance: ``cv`` is a :data:`FOLDS`-fold
cross-validation grouped by instance over all instances (each instance predicted by the model
fitted on the other folds, both sources), ``transfer`` fits on the generated instances only and
tests on the 44 files. ``label noise`` ranks by the second seed's routing (instances routed
twice), against the first: the ceiling a perfect predictor of one run could reach.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from clrp_rl4co.reporting.markdown import markdown_table

from .collect import FIELDS, load, routed
from .model import (
    DAGANZO_K,
    approximation,
    fit_k,
    fit_ridge,
    opening_used,
    select,
    set_estimate_routed,
)

#: Folds of the grouped cross-validation.
FOLDS = 5
#: Fewest routed sets an instance needs to be scored.
MIN_SETS = 3
#: Subsets of the scored instances: name -> test on an example's (source, kind).
SUBSETS: dict[str, Callable[[str, str, int], bool]] = {
    "dev e (all)": lambda s, k, n: s == "dev" and k == "e",
    "dev e, 300-600": lambda s, k, n: s == "dev" and k == "e" and n >= 300,
    "dev c (all)": lambda s, k, n: s == "dev" and k == "c",
    "generated hetero*": lambda s, k, n: s == "generated" and k.startswith("hetero"),
    "generated free*": lambda s, k, n: s == "generated" and k.startswith("free"),
}
METRICS = ("rho_total", "rho_routed", "rel_err", "regret")


def load_examples(folder: Path) -> dict[str, np.ndarray]:
    """The examples of ``<folder>/dev.npz`` and ``generated.npz`` (those present) with a routed
    solution, concatenated."""
    parts = [load(Path(folder) / f"{s}.npz") for s in ("dev", "generated")]
    parts = [p for p in parts if p]
    if not parts:
        raise SystemExit(f"{folder}: no dev.npz or generated.npz (run collect first)")
    data = {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}
    return select(data, np.isfinite(data["cost"]))


def grouped_folds(groups: np.ndarray, folds: int = FOLDS, seed: int = 0) -> np.ndarray:
    """``[E]`` the fold of each example: the instances (``groups``) dealt in a seeded random
    order, round robin, so that an instance's examples share one fold."""
    names = np.random.default_rng(seed).permutation(np.unique(groups))
    fold_of = {g: k % folds for k, g in enumerate(names)}
    return np.array([fold_of[g] for g in groups], np.int64)


def predict_all(
    data: dict[str, np.ndarray], train: np.ndarray, test: np.ndarray
) -> dict[str, np.ndarray]:
    """Each method's predicted routed cost ``[sum(test)]`` on the examples ``test``, the fitted
    ones fitted on the examples ``train`` (boolean masks)."""
    y = routed(data)
    tr, te = select(data, train), select(data, test)
    k_fit = fit_k(tr, y[train], "local")
    ridge = fit_ridge(tr, y[train], tr["instance"])
    within = fit_ridge(tr, y[train], tr["instance"], within=True)
    return {
        "SetEstimate (radial + F routes)": set_estimate_routed(te),
        f"Daganzo, hull area, k={DAGANZO_K}": approximation(te, DAGANZO_K, "hull"),
        f"Daganzo, local areas, k={DAGANZO_K}": approximation(te, DAGANZO_K, "local"),
        "Daganzo, local areas, k fitted": approximation(te, k_fit, "local"),
        "ridge on the set vector (learned)": ridge.predict(te),
        "ridge, within instances (learned)": within.predict(te),
    } | {"_k": np.full(int(test.sum()), k_fit), "_penalty": np.full(int(test.sum()),
                                                                    ridge.penalty)}  # fmt: skip


def instance_metrics(
    total: np.ndarray, routed_cost: np.ndarray, pred_total: np.ndarray, pred_routed: np.ndarray
) -> dict[str, float]:
    """:data:`METRICS` of one instance's sets (arrays over its sets)."""
    rho_t = spearmanr(pred_total, total).statistic if np.ptp(total) > 0 else math.nan
    rho_r = spearmanr(pred_routed, routed_cost).statistic if np.ptp(routed_cost) > 0 else math.nan
    first = int(np.argmin(pred_total))
    return {
        "rho_total": float(rho_t),
        "rho_routed": float(rho_r),
        "rel_err": float(100 * np.mean(np.abs(pred_routed - routed_cost) / routed_cost)),
        "regret": float(100 * (total[first] - total.min()) / total.min()),
    }


def score(
    data: dict[str, np.ndarray], preds: dict[str, np.ndarray], rows: np.ndarray
) -> dict[str, dict[str, list]]:
    """Per method, the per-instance metrics over the examples ``rows`` (``preds`` aligned to
    them): ``{method: {metric: [values], "instance": [names]}}``."""
    total, y = data["cost"][rows], routed(data)[rows]
    names = data["instance"][rows]
    out: dict[str, dict[str, list]] = {}
    for method, pred in preds.items():
        if method.startswith("_"):
            continue
        if method.startswith("SetEstimate"):
            pred_total = data["estimate"][rows]
        else:
            pred_total = opening_used(select(data, rows)) + pred
        rec = out.setdefault(method, {m: [] for m in (*METRICS, "instance")})
        for name in np.unique(names):
            at = names == name
            if at.sum() < MIN_SETS:
                continue
            for key, val in instance_metrics(total[at], y[at], pred_total[at], pred[at]).items():
                rec[key].append(val)
            rec["instance"].append(str(name))
    return out


def noise_scores(data: dict[str, np.ndarray]) -> dict[str, list]:
    """The label-noise row: the replicate's totals ranking the first run's sets."""
    rows = np.isfinite(data["cost_replicate"])
    pred_routed = routed(data, replicate=True)[rows]
    preds = {"label noise (2nd seed)": pred_routed}
    # the replicate's own opening costs paid, not the estimate's assignment
    total2 = data["cost_replicate"][rows]
    out = {m: [] for m in (*METRICS, "instance")}
    names = data["instance"][rows]
    total, y = data["cost"][rows], routed(data)[rows]
    for name in np.unique(names):
        at = names == name
        if at.sum() < MIN_SETS:
            continue
        m = instance_metrics(total[at], y[at], total2[at], preds["label noise (2nd seed)"][at])
        for key, val in m.items():
            out[key].append(val)
        out["instance"].append(str(name))
    return out


def baseline_scores(data: dict[str, np.ndarray]) -> dict[str, dict[str, list]]:
    """The choices without a prediction: a set drawn at random (expected regret; Spearman 0)
    and the worst set (the spread of the instance's totals)."""
    out: dict[str, dict[str, list]] = {}
    names = data["instance"]
    for method in ("random set (expected)", "worst set"):
        rec = out[method] = {m: [] for m in (*METRICS, "instance")}
        for name in np.unique(names):
            total = data["cost"][names == name]
            if len(total) < MIN_SETS:
                continue
            excess = 100 * (total - total.min()) / total.min()
            rec["regret"].append(float(excess.mean() if method.startswith("random") else
                                       excess.max()))  # fmt: skip
            rec["rho_total"].append(0.0 if method.startswith("random") else -1.0)
            rec["rho_routed"].append(math.nan)
            rec["rel_err"].append(math.nan)
            rec["instance"].append(str(name))
    return out


def evaluate(data: dict[str, np.ndarray]) -> list[dict]:
    """The rows of the results table: per protocol, subset and method, the mean of each
    metric over the subset's instances and their count."""
    groups = data["instance"]
    fold = grouped_folds(groups)
    cv_scores: dict[str, dict[str, list]] = {}
    ks, penalties = [], []
    for k in range(FOLDS):
        train, test = fold != k, fold == k
        if not train.any() or not test.any():
            continue
        preds = predict_all(data, train, test)
        ks.append(float(preds["_k"][0]))
        penalties.append(float(preds["_penalty"][0]))
        for method, rec in score(data, preds, np.flatnonzero(test)).items():
            agg = cv_scores.setdefault(method, {m: [] for m in rec})
            for key, vals in rec.items():
                agg[key].extend(vals)
    protocols = {"cv": cv_scores}
    dev, gen = data["source"] == "dev", data["source"] == "generated"
    if dev.any() and gen.any():
        preds = predict_all(data, gen, dev)
        transfer = score(data, preds, np.flatnonzero(dev))
        protocols["transfer"] = {m: r for m, r in transfer.items()
                                 if "fitted" in m or "learned" in m}  # fmt: skip
        ks.append(float(preds["_k"][0]))
        penalties.append(float(preds["_penalty"][0]))
    protocols["noise"] = {"label noise (2nd seed)": noise_scores(data)}
    protocols["none"] = baseline_scores(data)
    info = {name: (src, kind, int(n)) for name, src, kind, n in
            zip(data["instance"], data["source"], data["kind"], data["num_customers"])}  # fmt: skip
    rows = []
    for subset, test in SUBSETS.items():
        for protocol, methods in protocols.items():
            for method, rec in methods.items():
                keep = [i for i, name in enumerate(rec["instance"]) if test(*info[name])]
                if not keep:
                    continue
                row = {"subset": subset, "protocol": protocol, "method": method,
                       "instances": len(keep)}  # fmt: skip
                for metric in METRICS:
                    vals = np.array([rec[metric][i] for i in keep], np.float64)
                    row[metric] = float(np.nanmean(vals)) if np.isfinite(vals).any() else math.nan
                rows.append(row)
    rows.append({"subset": "_fitted", "protocol": "k", "method": " ".join(f"{k:.3f}" for k in ks),
                 "instances": 0} | {m: math.nan for m in METRICS})  # fmt: skip
    rows.append({"subset": "_fitted", "protocol": "penalty",
                 "method": " ".join(f"{p:g}" for p in penalties), "instances": 0}
                | {m: math.nan for m in METRICS})  # fmt: skip
    return rows


def write_csv(rows: list[dict], path: Path) -> None:
    """``rows`` as ``metrics.csv``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["subset", "protocol", "method", "instances", *METRICS])
        w.writeheader()
        for row in rows:
            w.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in row.items()})


def table(rows: list[dict], subset: str) -> str:
    """The markdown table of one subset."""
    body = []
    for r in rows:
        if r["subset"] != subset:
            continue
        body.append([r["method"], r["protocol"], str(r["instances"]),
                     *(f"{r[m]:.3f}" if m.startswith("rho") else f"{r[m]:.2f}"
                       for m in METRICS)])  # fmt: skip
    header = ["method", "protocol", "instances", "Spearman total", "Spearman routed",
              "rel. error routed %", "top-1 regret %"]  # fmt: skip
    return markdown_table(header, body)
