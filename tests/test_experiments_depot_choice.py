"""The depot-choice harness (``experiments/depot_choice/``): collecting on a tiny instance with a
tiny budget, the grouped split, the evaluation's rows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from instances import random_instance

from clrp_rl4co.solvers.set_features import DEPOT_NAMES, SET_FEATURES
from experiments.depot_choice import instances
from experiments.depot_choice.collect import (
    FIELDS,
    MAX_DEPOTS,
    CollectParams,
    collect,
    estimate_routed,
    load,
    routed,
)
from experiments.depot_choice.evaluate import (
    METRICS,
    evaluate,
    grouped_folds,
    instance_metrics,
    load_examples,
)

TINY = CollectParams(iterations=20, rank_seconds=0.2, sets=4, replicate_customers=15)


def job(source: str, seed: int, customers: int = 12):
    inst = random_instance(customers, seed=seed, num_depots=4)
    return source, inst.name, "e" if source == "dev" else "hetero", lambda: inst


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    out = tmp_path_factory.mktemp("depot_choice")
    jobs = [job("generated", 1), job("dev", 2), job("generated", 3, customers=20)]
    added = collect(jobs, out, TINY, None, {"commit": "c", "command": "x"}, log=lambda _: None)
    return out, jobs, added


def test_collect_on_tiny_instances(collected):
    out, jobs, added = collected
    gen, dev = load(out / "generated.npz"), load(out / "dev.npz")
    assert added == {"generated": len(gen["cost"]), "dev": len(dev["cost"])}
    assert set(gen["instance"]) == {jobs[0][1], jobs[2][1]} and set(dev["instance"]) == {jobs[1][1]}
    assert set(gen["source"]) == {"generated"} and set(dev["source"]) == {"dev"}
    size = len(gen["cost"])
    assert size <= 2 * TINY.sets
    assert gen["set_mask"].shape == (size, MAX_DEPOTS)
    assert gen["per_depot"].shape == (size, MAX_DEPOTS, len(DEPOT_NAMES))
    assert gen["vector"].shape == (size, len(SET_FEATURES))
    assert np.isfinite(gen["cost"]).all()
    assert (routed(gen) > 0).all()
    # per-depot rows only on the set's depots; the estimate's routed part is below its value
    assert (np.abs(gen["per_depot"]).sum(-1)[~gen["set_mask"]] == 0).all()
    assert (estimate_routed(gen) < gen["estimate"]).all()
    # sets are distinct within an instance
    for name in set(gen["instance"]):
        masks = gen["set_mask"][gen["instance"] == name]
        assert len({m.tobytes() for m in masks}) == len(masks)
    # 12 customers: routed twice; 20: once
    small = gen["instance"] == jobs[0][1]
    assert np.isfinite(gen["cost_replicate"][small]).all()
    assert np.isnan(gen["cost_replicate"][~small]).all()
    assert int(gen["iterations"]) == TINY.iterations and str(gen["command"]) == "x"
    assert set(FIELDS) <= set(gen)


def test_collect_resumes_without_rerouting(collected):
    out, jobs, _ = collected
    before = load(out / "generated.npz")
    again = collect(jobs, out, TINY, None, {}, log=lambda _: None)
    assert again == {}
    after = load(out / "generated.npz")
    assert (after["cost"] == before["cost"]).all()


def test_collect_stops_starting_instances_after_its_time(tmp_path):
    lines = []
    added = collect([job("generated", 5)], tmp_path, TINY, -1.0, {}, log=lines.append)
    assert added == {} and lines and "stopped" in lines[0]


def test_grouped_folds_never_share_an_instance():
    rng = np.random.default_rng(0)
    groups = rng.choice([f"inst{k}" for k in range(23)], size=300)
    fold = grouped_folds(groups, folds=5)
    for name in np.unique(groups):
        assert len(set(fold[groups == name])) == 1
    for k in range(5):
        assert not set(groups[fold == k]) & set(groups[fold != k])
    assert set(fold) == set(range(5))
    assert (grouped_folds(groups, folds=5) == fold).all()  # seeded


def test_evaluate_rows(collected):
    out, _, _ = collected
    data = load_examples(out)
    rows = evaluate(data)
    assert rows and {"cv", "transfer"} <= {r["protocol"] for r in rows}
    methods = {r["method"] for r in rows if r["protocol"] == "cv"}
    assert any(m.startswith("SetEstimate") for m in methods)
    assert any("learned" in m for m in methods)
    for r in rows:
        if r["subset"].startswith("_"):
            continue
        assert r["instances"] >= 1
        assert math.isnan(r["rho_total"]) or -1 <= r["rho_total"] <= 1
        assert r["regret"] >= 0 or math.isnan(r["regret"])


def test_instance_metrics_by_hand():
    total = np.array([10.0, 12.0, 11.0])
    routed_cost = np.array([5.0, 6.0, 4.0])
    m = instance_metrics(total, routed_cost, np.array([12.0, 11.0, 13.0]), routed_cost * 1.1)
    assert set(m) == set(METRICS)
    assert m["rho_routed"] == pytest.approx(1.0)
    assert m["rho_total"] == pytest.approx(-0.5)
    assert m["rel_err"] == pytest.approx(10.0)
    assert m["regret"] == pytest.approx(20.0)  # ranks the set of total 12 first


def test_generated_instances_are_seeded_and_named():
    a, b = instances.generated(7), instances.generated(7)
    assert a.name == b.name == "gen007-hetero-tight-200"
    assert (a.customer_locs == b.customer_locs).all() and (a.opening_cost == b.opening_cost).all()
    assert instances.generated_kind(a.name) == "hetero-tight"
    assert instances.generated(1).num_customers == 100
    assert instances.generated(29).num_customers == 600
    with pytest.raises(ValueError):
        instances.generated(-1)


def test_dev_files_are_the_44_only():
    names = instances.dev_names()
    assert len(names) == len(set(names)) == 44
    assert {instances.dev_kind(n) for n in names} == {"c", "e"}
    assert all(n.split("-")[2][0] in "24" for n in names)
    with pytest.raises(ValueError, match="44"):
        instances.dev_file("100-5-1e")


def test_located_rows_add_the_model_set_once():
    from clrp_rl4co.solvers.location_model import facility_location_set
    from experiments.depot_choice.collect import located_rows

    inst = random_instance(12, seed=4, num_depots=4)
    located = facility_location_set(inst, None)
    rows = located_rows(inst, "generated", "hetero", TINY, 5.0, np.zeros((0, MAX_DEPOTS), bool))
    assert rows is not None and rows["origin"].tolist() == ["located"]
    assert np.flatnonzero(rows["set_mask"][0]).tolist() == list(located)
    assert located_rows(inst, "generated", "hetero", TINY, 5.0, rows["set_mask"]) is None
