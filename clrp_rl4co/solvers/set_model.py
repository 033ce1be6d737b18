"""A learned model of a depot set's routed cost, and the ranking of depot sets it gives.

A set's *routed cost* is ``F`` per route plus the route lengths (:mod:`.set_features`). The
model is a linear regression of ``routed / base`` on :func:`unit_free` features of the set, with
``base`` Daganzo's continuous approximation (local areas, ``k =`` :data:`.set_features.DAGANZO_K`,
:func:`daganzo_base`); its prediction is ``base x (intercept + (x - mean) scale . coef)``.
Because every feature is a ratio, the model does not depend on the instance's cost unit.

:class:`SetCostModel` holds the fitted numbers and reads / writes them as JSON (the shipped
one: :data:`SHIPPED_SET_MODEL` in ``clrp_rl4co/pretrained/``, fitted by
``python -m experiments.depot_choice ship``, its provenance inside). :class:`LearnedRanking`
prices an instance's depot sets by it: the opening costs of the depots that serve customers
under :class:`.set_estimate.SetEstimate`'s greedy assignment, plus the predicted routed cost.
The depot-set search uses it when :class:`.set_search.SetSearchParams` ``set_ranker`` is
``"learned"``; without it the solve path does not read the file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..data import CLRPInstance
from ..pretrained import PRETRAINED_DIR
from .set_estimate import SetEstimate
from .set_features import (
    CONTEXT_FEATURES,
    DAGANZO_K,
    DEPOT_FEATURES,
    SET_FEATURES,
    SetFeaturizer,
    column,
)

#: The shipped model's name: ``clrp_rl4co/pretrained/<name>.json``.
SHIPPED_SET_MODEL = "set_cost_ridge"

#: The columns of :func:`unit_free`: :data:`.set_features.SET_FEATURES`, then the base's parts.
FEATURE_NAMES: tuple[str, ...] = (*SET_FEATURES, "fixed_share", "line_haul_share",
                                  "hull_tour_share")  # fmt: skip

_UNITS = {name: doc.split(":")[0] for name, doc in (*DEPOT_FEATURES, *CONTEXT_FEATURES)}


def _unit(name: str) -> str:
    """The unit of a :data:`.set_features.SET_FEATURES` entry (``cost``, ``cost^2``,
    ``demand``, ``count``, ``1``)."""
    return _UNITS[name] if name in _UNITS else _UNITS[name.split("_", 1)[1]]


def _entry(vector: np.ndarray, name: str) -> np.ndarray:
    return vector[:, SET_FEATURES.index(name)]


def daganzo_base(vector: np.ndarray, k: float = DAGANZO_K, area: str = "local") -> np.ndarray:
    """``[E]`` Daganzo's routed cost from set vectors ``[E, V]``
    (:func:`.set_features.set_vector`): ``F routes + line haul + k tour``, in cost units, the
    tour over local areas (``area="local"``, the model's base) or convex hulls (``"hull"``), as
    :func:`.set_features.continuous_approximation` prices one set's rows.

    Raises:
        ValueError: ``area`` is neither ``"hull"`` nor ``"local"``.
    """
    if area not in ("hull", "local"):
        raise ValueError(f"area: expected 'hull' or 'local', got {area!r}")
    vector = np.atleast_2d(np.asarray(vector, np.float64))
    fixed = _entry(vector, "vehicle_fixed_cost") * _entry(vector, "sum_routes")
    tour = _entry(vector, "sum_local_tour" if area == "local" else "sum_hull_tour")
    return fixed + _entry(vector, "sum_line_haul") + k * tour


def unit_free(vector: np.ndarray, per_depot: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """``[E, W]`` the set vectors without units, and the columns' names.

    Args:
        vector: ``[E, V]`` :func:`.set_features.set_vector` of each set.
        per_depot: ``[E, K, P]`` :func:`.set_features.depot_features` of each set (rows of
            depots without customers are ignored).

    Sums of costs are divided by :func:`daganzo_base`, means and maxima of costs by ``ell``
    (the customers' mean arc cost to their depot), areas become ``sqrt(area) / ell``, demands
    are divided by the vehicle capacity ``q``, counts become ``log(1 + x)``, ratios stay; then
    the base's three parts over the base (``fixed_share``, ``line_haul_share``,
    ``hull_tour_share``).
    """
    vector = np.atleast_2d(np.asarray(vector, np.float64))
    per_depot = np.asarray(per_depot, np.float64).reshape(len(vector), -1, len(DEPOT_FEATURES))
    base = np.maximum(daganzo_base(vector), 1e-300)
    customers = np.maximum(_entry(vector, "num_customers"), 1.0)
    on_depot = per_depot[..., column("customers")] * per_depot[..., column("dist_mean")]
    ell = np.maximum(on_depot.sum(axis=1) / customers, 1e-9)
    q = _entry(vector, "vehicle_capacity")
    cols = []
    for k, name in enumerate(SET_FEATURES):
        x, unit = vector[:, k], _unit(name)
        if unit == "cost":
            x = x / base if name.startswith("sum_") else x / ell
        elif unit == "cost^2":
            x = np.sqrt(np.maximum(x, 0.0)) / ell
        elif unit == "demand":
            x = x / q
        elif unit == "count":
            x = np.log1p(x)
        cols.append(x)
    fixed = _entry(vector, "vehicle_fixed_cost") * _entry(vector, "sum_routes")
    cols += [
        fixed / base,
        _entry(vector, "sum_line_haul") / base,
        DAGANZO_K * _entry(vector, "sum_hull_tour") / base,
    ]
    return np.stack(cols, axis=1), list(FEATURE_NAMES)


@dataclass(frozen=True)
class SetCostModel:
    """A fitted linear model of ``routed / base`` on :func:`unit_free` features.

    Attributes:
        names: ``[W]`` the feature names, :func:`unit_free`'s (checked when read).
        mean: ``[W]`` the features' training means.
        scale: ``[W]`` one over their training standard deviations (0: a constant column).
        coef: ``[W]`` the coefficients on standardised features.
        intercept: the mean of ``routed / base`` over the training data.
        provenance: where the numbers come from (data, command, commit, CPU time, seed).
    """

    names: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    provenance: dict = field(default_factory=dict)

    def predict_routed(self, vector: np.ndarray, per_depot: np.ndarray) -> np.ndarray:
        """``[E]`` the predicted routed costs, in cost units, of sets given as in
        :func:`unit_free`."""
        x, _ = unit_free(vector, per_depot)
        ratio = self.intercept + ((x - self.mean) * self.scale) @ self.coef
        return ratio * daganzo_base(vector)

    def save(self, path: str | Path) -> Path:
        """Write the model as JSON to ``path`` (refuses an existing file)."""
        path = Path(path)
        if path.exists():
            raise FileExistsError(f"{path}: exists; remove it to write the set model there")
        fields = {"names": list(self.names), "mean": self.mean.tolist(),
                  "scale": self.scale.tolist(), "coef": self.coef.tolist(),
                  "intercept": float(self.intercept), "provenance": self.provenance}  # fmt: skip
        path.write_text(json.dumps(fields, indent=1) + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> SetCostModel:
        """Read a model written by :meth:`save`.

        Raises:
            FileNotFoundError: no such file.
            ValueError: naming the file and the field that is missing or does not fit
                :func:`unit_free`'s features.
        """
        path = Path(path)
        try:
            text = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not a JSON file ({exc})") from None
        if not isinstance(text, dict):
            raise ValueError(f"{path}: expected a JSON object of the model's fields")
        names = list(FEATURE_NAMES)
        for key in ("names", "mean", "scale", "coef", "intercept"):
            if key not in text:
                raise ValueError(f"{path}: field {key!r} is missing")
        if text["names"] != names:
            raise ValueError(f"{path}: field 'names' does not list this version's "
                             f"{len(names)} set features")  # fmt: skip
        arrays = {k: np.asarray(text[k], np.float64) for k in ("mean", "scale", "coef")}
        for key, values in arrays.items():
            if values.shape != (len(names),) or not np.isfinite(values).all():
                raise ValueError(f"{path}: field {key!r} needs {len(names)} finite numbers")
        return cls(tuple(names), arrays["mean"], arrays["scale"], arrays["coef"],
                   float(text["intercept"]), dict(text.get("provenance", {})))  # fmt: skip


def load_set_model(path: str | Path | None = None) -> SetCostModel:
    """The set model at ``path`` (None: the shipped :data:`SHIPPED_SET_MODEL`).

    Raises:
        FileNotFoundError: naming the file.
    """
    path = PRETRAINED_DIR / f"{SHIPPED_SET_MODEL}.json" if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no set model there")
    return SetCostModel.load(path)


class LearnedRanking:
    """The predicted total cost of an instance's depot sets (memoised per set).

    Args:
        instance: the instance.
        model: the set model.
        estimate: the instance's :class:`.set_estimate.SetEstimate` (its greedy assignment
            gives the features; a new one when None).
    """

    def __init__(
        self, instance: CLRPInstance, model: SetCostModel, estimate: SetEstimate | None = None
    ) -> None:
        self.model = model
        self.featurizer = SetFeaturizer(instance, estimate)
        self.memo: dict[tuple[int, ...], float] = {}

    def __call__(self, depots: Sequence[int]) -> float:
        """The opening costs of the depots of ``depots`` that serve customers under the
        greedy assignment plus the predicted routed cost."""
        key = tuple(sorted(int(d) for d in depots))
        if key not in self.memo:
            per_depot = self.featurizer.per_depot(key)
            vector = self.featurizer.vector(per_depot)[None]
            routed = float(self.model.predict_routed(vector, per_depot[None])[0])
            self.memo[key] = self.featurizer.opening(per_depot) + routed
        return self.memo[key]

    def rerank(self, sets: list[tuple[int, ...]], count: int) -> list[tuple[int, ...]]:
        """``sets`` with its first ``count`` in increasing order of :meth:`__call__` (stable on
        ties), the rest after them as they were."""
        return sorted(sets[:count], key=self) + sets[count:]
