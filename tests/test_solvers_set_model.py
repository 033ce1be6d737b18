"""The learned set model (:mod:`clrp_rl4co.solvers.set_model`) from its definition: unit-free
features, a prediction of ``base x (intercept + standardised features . coef)``, the JSON
file's checks, the ranking it gives, and the depot-set search's use of it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from instances import random_instance

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.solvers import set_model, set_search
from clrp_rl4co.solvers.set_features import SetFeaturizer, column, continuous_approximation
from clrp_rl4co.solvers.set_model import (
    FEATURE_NAMES,
    LearnedRanking,
    SetCostModel,
    load_set_model,
    unit_free,
)
from clrp_rl4co.solvers.set_search import SetSearch, SetSearchParams
from clrp_rl4co.solvers.stopping import Deadline

ROOT = Path(__file__).resolve().parents[1]
WIDTH = len(FEATURE_NAMES)


def scaled(instance: CLRPInstance, factor: float) -> CLRPInstance:
    """``instance`` in a cost unit ``factor`` times smaller: coordinates, opening costs and the
    vehicle's fixed cost times ``factor``."""
    return dataclasses.replace(
        instance,
        depot_locs=instance.depot_locs * factor,
        customer_locs=instance.customer_locs * factor,
        opening_cost=instance.opening_cost * factor,
        vehicle_fixed_cost=instance.vehicle_fixed_cost * factor,
    )


def features(instance: CLRPInstance, depots) -> tuple[np.ndarray, np.ndarray]:
    featurizer = SetFeaturizer(instance)
    per_depot = featurizer.per_depot(depots)
    return featurizer.vector(per_depot)[None], per_depot[None]


def model(coef=None, intercept: float = 1.0, mean=None, scale=None) -> SetCostModel:
    rng = np.random.default_rng(3)
    return SetCostModel(
        tuple(FEATURE_NAMES),
        np.zeros(WIDTH) if mean is None else mean,
        np.ones(WIDTH) if scale is None else scale,
        rng.normal(0.0, 0.01, WIDTH) if coef is None else coef,
        intercept,
    )


@pytest.mark.parametrize("factor", [10.0, 1e-4])
def test_the_features_and_the_ratio_do_not_depend_on_the_cost_unit(factor):
    instance = random_instance(40, seed=2, num_depots=4)
    depots = (0, 2, 3)
    x, names = unit_free(*features(instance, depots))
    x_scaled, _ = unit_free(*features(scaled(instance, factor), depots))
    assert names == list(FEATURE_NAMES) and x.shape == (1, WIDTH)
    np.testing.assert_allclose(x_scaled, x, rtol=1e-9, atol=1e-12)
    m = model()
    routed = m.predict_routed(*features(instance, depots))
    routed_scaled = m.predict_routed(*features(scaled(instance, factor), depots))
    np.testing.assert_allclose(routed_scaled, factor * routed, rtol=1e-9)


def test_one_customers_mean_arc_cost_is_the_unit_of_the_mean_costs():
    # ell, the customers' mean arc cost to their depot, is the one customer's distance (5)
    instance = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0]]),
        customer_locs=np.array([[3.0, 4.0]]),
        depot_capacity=np.array([10.0]),
        opening_cost=np.array([1.0]),
        demand=np.array([2.0]),
        vehicle_capacity=5.0,
        vehicle_fixed_cost=1.0,
    )
    x, names = unit_free(*features(instance, (0,)))
    assert x[0, names.index("mean_dist_mean")] == pytest.approx(1.0)
    assert x[0, names.index("max_dist_max")] == pytest.approx(1.0)


def test_without_coefficients_the_prediction_is_the_intercept_times_daganzos_local_cost():
    instance = random_instance(30, seed=5, num_depots=4)
    vector, per_depot = features(instance, (1, 3))
    by_rows = continuous_approximation(per_depot[0], instance.vehicle_fixed_cost, area="local")
    predicted = model(coef=np.zeros(WIDTH), intercept=1.3).predict_routed(vector, per_depot)
    assert predicted[0] == pytest.approx(1.3 * by_rows, rel=1e-12)


def test_one_coefficient_adds_its_standardised_feature_times_the_base():
    # fixed_share = F x routes / base, standardised by mean 0.25 and scale 2:
    # routed = base (1 + 0.5 x 2 (fixed_share - 0.25)) = base (0.75) + F routes
    instance = random_instance(30, seed=6, num_depots=4)
    vector, per_depot = features(instance, (0, 1, 2))
    k = FEATURE_NAMES.index("fixed_share")
    coef, mean, scale = np.zeros(WIDTH), np.zeros(WIDTH), np.ones(WIDTH)
    coef[k], mean[k], scale[k] = 0.5, 0.25, 2.0
    base = continuous_approximation(per_depot[0], instance.vehicle_fixed_cost, area="local")
    fixed = instance.vehicle_fixed_cost * per_depot[0][:, column("routes")].sum()
    predicted = model(coef, 1.0, mean, scale).predict_routed(vector, per_depot)
    assert predicted[0] == pytest.approx(0.75 * base + fixed, rel=1e-12)


def test_the_json_file_round_trips_and_is_never_overwritten(tmp_path):
    m = dataclasses.replace(model(intercept=0.9), provenance={"seed": 0})
    path = m.save(tmp_path / "m.json")
    again = SetCostModel.load(path)
    assert again.names == m.names and again.intercept == 0.9 and again.provenance == {"seed": 0}
    np.testing.assert_array_equal(again.coef, m.coef)
    with pytest.raises(FileExistsError, match="m.json: exists"):
        m.save(path)
    text = json.loads(path.read_text())
    del text["provenance"]
    path.write_text(json.dumps(text))
    assert SetCostModel.load(path).provenance == {}  # a file without one reads as none


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("coef"), "field 'coef' is missing"),
        (lambda d: d.update(scale=[1.0] * 3), "field 'scale' needs"),
        (lambda d: d.update(mean=[float("nan")] * WIDTH), "field 'mean' needs"),
        (lambda d: d.update(names=d["names"][::-1]), "field 'names' does not list"),
    ],
)
def test_a_malformed_file_names_itself_and_the_field(tmp_path, change, message):
    path = model().save(tmp_path / "bad.json")
    text = json.loads(path.read_text())
    change(text)
    path.write_text(json.dumps(text))
    with pytest.raises(ValueError, match=f"bad.json: {message}"):
        SetCostModel.load(path)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="bad.json: expected a JSON object"):
        SetCostModel.load(path)
    path.write_text("{")
    with pytest.raises(ValueError, match="bad.json: not a JSON file"):
        SetCostModel.load(path)
    with pytest.raises(FileNotFoundError, match="none.json: no set model there"):
        load_set_model(tmp_path / "none.json")


def test_the_shipped_model_says_where_it_comes_from_and_beats_its_base_on_its_data():
    shipped = load_set_model()
    for key in ("data", "examples", "command", "commit", "label_cpu_seconds", "penalty"):
        assert key in shipped.provenance, key
    assert shipped.provenance["data"].endswith("generated.npz")  # the 44 files stay unseen
    with np.load(ROOT / shipped.provenance["data"]) as data:
        vector, per_depot = data["vector"], data["per_depot"]
        routed = data["cost"] - data["opening_paid"]
    error = np.abs(shipped.predict_routed(vector, per_depot) / routed - 1.0).mean()
    base_error = np.abs(set_model.daganzo_base(vector) / routed - 1.0).mean()
    assert error < 0.8 * base_error


def test_the_ranking_adds_the_used_depots_opening_and_reorders_only_the_first_sets():
    instance = random_instance(30, seed=7, num_depots=5)
    m = model(coef=np.zeros(WIDTH), intercept=1.0)
    ranking = LearnedRanking(instance, m)
    featurizer = SetFeaturizer(instance)
    sets = [(0, 1, 2, 3, 4), (0, 1), (2, 4), (1, 3), (0, 4)]
    for depots in sets:
        per_depot = featurizer.per_depot(depots)
        used = per_depot[:, column("customers")] > 0
        expected = per_depot[used, column("opening")].sum() + continuous_approximation(
            per_depot, instance.vehicle_fixed_cost, area="local"
        )
        assert ranking(depots) == pytest.approx(expected, rel=1e-12)
    first_three = sorted(sets[:3], key=ranking)
    assert ranking.rerank(sets, 3) == [*first_three, *sets[3:]]
    assert ranking.rerank(sets, 0) == sets


def test_the_search_orders_its_sets_by_the_model_only_when_asked(monkeypatch):
    instance = random_instance(30, seed=8, num_depots=5)
    with pytest.raises(ValueError, match="set_ranker: 'model' is not one of"):
        SetSearchParams(set_ranker="model")
    sets = [(0, 1, 2, 3, 4), (0, 1), (2, 4), (1, 3), (0, 4)]
    plain = SetSearch(instance, Deadline(None), 100, 0, None, SetSearchParams())
    assert plain.order(sets) == sets
    # a model that prefers fewer used depots' line haul: its order, on the first two only
    m = model(coef=np.zeros(WIDTH), intercept=1.0)
    monkeypatch.setattr(set_search, "load_set_model", lambda: m)
    params = SetSearchParams(set_ranker="learned", learned_rerank=2)
    learned = SetSearch(instance, Deadline(None), 100, 0, None, params)
    ranking = LearnedRanking(instance, m)
    assert learned.order(sets) == [*sorted(sets[:2], key=ranking), *sets[2:]]
    learned.runs = learned.max_candidates  # no candidate left: one set is still ordered
    assert learned.order(sets[::-1]) == sets[::-1]


def test_a_search_with_the_shipped_model_finds_a_valid_solution():
    from clrp_rl4co.solvers.pyvrp_solver import route_on_set

    instance = random_instance(30, seed=9, num_depots=5)
    params = SetSearchParams(set_ranker="learned")
    found = set_search.search_sets(instance, Deadline(None), 300, 0, None, route_on_set, params)
    found.check(instance)


def test_daganzos_cost_from_the_set_vector_equals_the_one_from_the_depots_rows():
    instance = random_instance(30, seed=4, num_depots=4)
    vector, per_depot = features(instance, (0, 2))
    for area, k in (("local", 0.57), ("hull", 0.8)):
        by_rows = continuous_approximation(per_depot[0], instance.vehicle_fixed_cost, k, area)
        assert set_model.daganzo_base(vector, k, area)[0] == pytest.approx(by_rows, rel=1e-12)
    with pytest.raises(ValueError, match="area: expected 'hull' or 'local', got 'disc'"):
        set_model.daganzo_base(vector, area="disc")
