"""The estimates of a set's routed cost compared by ``evaluate``, from a data file's arrays.

* :func:`set_estimate_routed`: :class:`~clrp_rl4co.solvers.set_estimate.SetEstimate`'s routed
  part (``F`` per route plus the radial part, a lower bound on the lengths).
* :func:`approximation`: Daganzo's continuous approximation
  (:func:`~clrp_rl4co.solvers.set_features.continuous_approximation`), ``k`` from the literature
  or fitted (:func:`fit_k`).
* :class:`RidgeModel`: ridge regression (numpy) of the routed cost over the continuous
  approximation (``area="local"``, ``k = 0.57``), ``y / base``, on a unit-free transform of the
  set vector (:func:`unit_free`), its penalty chosen by a grouped cross-validation inside the
  training instances.
"""

from __future__ import annotations

import numpy as np

from clrp_rl4co.solvers import set_model
from clrp_rl4co.solvers.set_features import DAGANZO_K, SET_FEATURES

#: Ridge penalties tried (on standardised features, per example).
PENALTIES = (0.01, 0.1, 1.0, 10.0, 100.0)


def _vec(data: dict[str, np.ndarray], name: str) -> np.ndarray:
    return data["vector"][:, SET_FEATURES.index(name)]


def set_estimate_routed(data: dict[str, np.ndarray]) -> np.ndarray:
    """``[E]`` SetEstimate's routed part: ``F x sum ceil(L_i / q) + sum_i 2 sum_j c_ij D_j / q``."""
    return _vec(data, "vehicle_fixed_cost") * _vec(data, "sum_routes") + _vec(data, "sum_radial")


def approximation(data: dict[str, np.ndarray], k: float = DAGANZO_K, area: str = "hull"):
    """``[E]`` Daganzo's routed cost (``F routes + 2 r routes + k x tour`` summed over the
    depots; ``area`` ``hull`` or ``local``, as
    :func:`~clrp_rl4co.solvers.set_features.continuous_approximation`): the package's
    :func:`~clrp_rl4co.solvers.set_model.daganzo_base` of ``data``'s set vectors."""
    return set_model.daganzo_base(data["vector"], k, area)


def fit_k(data: dict[str, np.ndarray], routed: np.ndarray, area: str = "local") -> float:
    """The ``k`` of :func:`approximation` that minimises the squared relative error on ``data``
    (closed form: ``y ~ a + k s`` weighted by ``1 / y^2``)."""
    a = approximation(data, 0.0, area)
    s = approximation(data, 1.0, area) - a
    w = 1.0 / routed**2
    return float(((routed - a) * s * w).sum() / max((s * s * w).sum(), 1e-300))


def opening_used(data: dict[str, np.ndarray]) -> np.ndarray:
    """``[E]`` the opening costs of the set's depots that serve customers under the estimate's
    assignment (what a prediction of the routed cost is added to)."""
    return _vec(data, "sum_opening")


def unit_free(data: dict[str, np.ndarray]) -> tuple[np.ndarray, list[str]]:
    """``[E, W]`` :func:`clrp_rl4co.solvers.set_model.unit_free` of ``data``'s sets, and the
    columns' names."""
    return set_model.unit_free(data["vector"], data["per_depot"])


class RidgeModel:
    """Ridge regression of ``routed / base`` (``base``: :func:`approximation`, local areas,
    ``k = 0.57``) on :func:`unit_free` features, standardised on the training data.

    Args:
        penalty: the ridge penalty (per example, on standardised features).
        within: fit the differences between the sets of one instance only (targets and
            features centred per instance, a fixed-effects regression: what ranking an
            instance's sets needs), the intercept then from the means; else the values.
    """

    def __init__(self, penalty: float = 1.0, within: bool = False) -> None:
        self.penalty = penalty
        self.within = within

    def fit(self, data: dict[str, np.ndarray], routed: np.ndarray) -> RidgeModel:
        x, self.names = unit_free(data)
        t = routed / approximation(data, DAGANZO_K, "local")
        self.mean, self.std = x.mean(axis=0), x.std(axis=0)
        self.std[self.std < 1e-12] = np.inf  # constant columns drop out
        z = (x - self.mean) / self.std
        zc, tc = z, t - t.mean()
        if self.within:
            zc, tc = z.copy(), t.copy()
            for g in np.unique(data["instance"]):
                at = data["instance"] == g
                zc[at] -= z[at].mean(axis=0)
                tc[at] -= t[at].mean()
        gram = zc.T @ zc + self.penalty * len(z) * np.eye(z.shape[1])
        self.coef = np.linalg.solve(gram, zc.T @ tc)
        self.intercept = float(t.mean())  # z is centred over the data
        return self

    def set_model(self, provenance: dict | None = None) -> set_model.SetCostModel:
        """The fitted numbers as the package's :class:`~clrp_rl4co.solvers.set_model.SetCostModel`
        (``scale``: one over the standard deviations, 0 for the constant columns)."""
        scale = 1.0 / self.std
        extra = dict(provenance or {})
        return set_model.SetCostModel(tuple(self.names), self.mean.copy(), scale,
                                      self.coef.copy(), self.intercept, extra)  # fmt: skip

    def predict(self, data: dict[str, np.ndarray]) -> np.ndarray:
        """``[E]`` the predicted routed costs (:meth:`set_model`'s)."""
        return self.set_model().predict_routed(data["vector"], data["per_depot"])


def select(data: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, np.ndarray]:
    """The examples ``rows`` of ``data`` (per-example arrays only)."""
    size = len(data["cost"])
    return {k: v[rows] for k, v in data.items() if v.ndim and len(v) == size}


def fit_ridge(
    data: dict[str, np.ndarray],
    routed: np.ndarray,
    groups: np.ndarray,
    folds: int = 3,
    within: bool = False,
) -> RidgeModel:
    """:class:`RidgeModel` (``within``: see there) with the penalty of :data:`PENALTIES` of
    least mean squared relative error in a ``folds``-fold cross-validation grouped by instance
    (``groups``), refitted on everything (with ``within``, the error of the predictions
    centred per instance)."""
    names = np.unique(groups)
    fold_of = {g: k % folds for k, g in enumerate(np.random.default_rng(0).permutation(names))}
    fold = np.array([fold_of[g] for g in groups])
    best, best_err = PENALTIES[0], np.inf
    for penalty in PENALTIES:
        err = 0.0
        for k in range(folds):
            train, test = fold != k, fold == k
            if not train.any() or not test.any():
                continue
            model = RidgeModel(penalty, within).fit(select(data, train), routed[train])
            rel = model.predict(select(data, test)) / routed[test] - 1.0
            if within:
                for g in np.unique(groups[test]):
                    at = groups[test] == g
                    rel[at] -= rel[at].mean()
            err += float((rel**2).sum())
        if err < best_err:
            best, best_err = penalty, err
    return RidgeModel(best, within).fit(data, routed)
