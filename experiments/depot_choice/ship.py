"""``ship``: fit the ridge model of a depot set's routed cost on the generated instances and
write it as the package's set model (:mod:`clrp_rl4co.solvers.set_model`), with its provenance.

Only the generated instances train it (the ``transfer`` protocol of :mod:`.evaluate`), so that
the 44 development files of Schneider & Löffler's set, on which the depot-set search is
benchmarked with it, stay unseen by the model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .collect import load, routed
from .model import fit_ridge, select


def ship(data_dir: Path, out: Path, meta: dict[str, str], overwrite: bool = False) -> Path:
    """Fit on ``<data_dir>/generated.npz`` and write the model to ``out``.

    Raises:
        SystemExit: no generated examples; ``out`` exists and ``overwrite`` is not set.
    """
    path = Path(data_dir) / "generated.npz"
    raw = load(path)
    if not raw:
        raise SystemExit(f"{path}: no examples (run collect first)")
    data = select(raw, np.isfinite(raw["cost"]))
    if Path(out).exists():
        if not overwrite:
            raise SystemExit(f"{out}: exists (--overwrite replaces it)")
        Path(out).unlink()
    model = fit_ridge(data, routed(data), data["instance"])
    provenance = {
        "method": "ridge regression of routed / Daganzo base on unit-free set features, "
        "penalty by a 3-fold cross-validation grouped by instance (fold seed 0)",
        "penalty": model.penalty,
        "data": path.as_posix(),
        "examples": int(len(data["cost"])),
        "instances": int(len(np.unique(data["instance"]))),
        "labels": f"PyVRP, {int(raw['iterations'])} iterations per set, seed {int(raw['seed'])}",
        "label_cpu_seconds": round(float(data["cpu_seconds"].sum()), 1),
        "data_command": str(raw.get("command", "")),
        "data_commit": str(raw.get("commit", "")),
        **meta,
    }
    return model.set_model(provenance).save(out)
