"""clrp_rl4co.evaluation: method identities, the per-instance cache, running and resuming."""

import copy
import math
import re

import pytest
import torch

from clrp_rl4co.data import tensordict_to_instances
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
from clrp_rl4co.evaluation import (
    EvalData,
    InstanceResult,
    Method,
    ResultCache,
    policy_fingerprint,
    run_method,
    validated,
)
from clrp_rl4co.policies import build_policy


def _data(preset="clrp10", n=4, seed=5):
    td = generate_dataset(CLRPGenerator(preset=preset), n, seed=seed)
    names = [f"{preset}-{i}" for i in range(n)]
    return EvalData(tensordict_to_instances(td, names), names, td)


@pytest.fixture(scope="module")
def tiny_policy():
    torch.manual_seed(0)
    return build_policy("drlhq", embed_dim=16, num_encoder_layers=1, num_heads=2).eval()


def test_key_is_the_identity_and_run_settings_are_not_part_of_it():
    x8 = Method("policy", "drlhq_clrp20", "multistart_greedy+aug8", batch_size=7, limit=3)
    assert x8.key == "policy|drlhq_clrp20|multistart_greedy+aug8"
    assert x8 == Method("policy", "drlhq_clrp20", "multistart_greedy+aug8")  # limit, batch
    assert Method("pyvrp", seconds=0.5).key == "pyvrp|0.5s"
    assert Method("exact", seconds=60.0).key == "exact|60s"
    refine = Method("refine", "m", "multistart_greedy", seconds=5.0)
    assert refine.key == "refine|m|multistart_greedy|5s"
    assert refine.base == Method("policy", "m", "multistart_greedy")
    assert x8.base is None and Method("pyvrp", seconds=1.0).base is None
    keys = {Method("pyvrp", seconds=s).key for s in (1.0, 1.5, 10.0)}
    assert len(keys) == 3


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(kind="nope"), "kind"),
        (dict(kind="pyvrp"), "seconds"),
        (dict(kind="pyvrp", seconds=-1.0), "seconds"),
        (dict(kind="pyvrp", seconds=1.0, model="m"), "model, decode"),
        (dict(kind="refine", seconds=1.0, model="m"), "model, decode"),
        (dict(kind="refine", model="m", decode="greedy"), "seconds"),
        (dict(kind="policy", model="m"), "model, decode"),
        (dict(kind="policy", model="m", decode="greedy", seconds=1.0), "seconds"),
        (dict(kind="pyvrp", seconds=1.0, limit=0), "limit"),
        (dict(kind="policy", model="m", decode="greedy", batch_size=0), "batch_size"),
    ],
)
def test_bad_methods_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Method(**kwargs)


def test_cache_round_trip_and_truncated_line(tmp_path, caplog):
    cache = ResultCache(tmp_path)
    key = "policy|a|multistart_greedy+aug8"
    rows = [
        InstanceResult(key, 0, "i0", 12.5, 0.1, True, actions=[0, 5, 0]),
        InstanceResult(key, 1, "i1", math.inf, 0.2, False),
    ]
    cache.add(rows)
    path = cache.path(key)
    with path.open("a") as f:
        f.write('{"method": "A x8", "instance": 2, "na')  # interrupted write
    with caplog.at_level("WARNING", logger="clrp_rl4co.evaluation.records"):
        loaded = cache.load(key)
        everything = cache.load_all()
    assert sorted(loaded) == [0, 1] and len(everything) == 2
    assert loaded[0] == rows[0] and math.isinf(loaded[1].cost)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 2 and all(f"{path}, line 3: dropping" in w for w in warnings)
    caplog.clear()
    with caplog.at_level("WARNING", logger="clrp_rl4co.evaluation.records"):
        cache.add([InstanceResult(key, 2, "i2", 3.0, 0.1, True)])  # after the cut line
    assert any(str(path) in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level("WARNING", logger="clrp_rl4co.evaluation.records"):
        assert sorted(cache.load(key)) == [0, 1, 2]
    assert not caplog.records  # the cut line is gone from the file
    assert len(path.read_text().splitlines()) == 3


def test_a_complete_last_line_without_newline_is_kept(tmp_path):
    cache = ResultCache(tmp_path)
    key = "pyvrp|1s"
    path = cache.path(key)
    path.write_text(InstanceResult(key, 0, "i0", 1.0, 0.1, True).to_json())  # no newline
    cache.add([InstanceResult(key, 1, "i1", 2.0, 0.1, True)])
    assert sorted(cache.load(key)) == [0, 1]


@pytest.mark.parametrize(
    "bad, last",
    [
        ('{"method": "pyvrp|1s", "instance": 1, "na', False),  # cut, then more lines
        ("not json at all", False),
        ('{"method": "pyvrp|1s", "instance": 1}', False),  # fields missing
        ("[1, 2, 3]", False),
        ("not json at all", True),  # a last line with its newline: not an interrupted write
    ],
)
def test_a_corrupt_cache_line_is_an_error_naming_file_and_line(tmp_path, bad, last):
    cache = ResultCache(tmp_path)
    key = "pyvrp|1s"
    good = [InstanceResult(key, k, f"i{k}", 1.0 + k, 0.1, True).to_json() for k in (0, 2)]
    lines = [good[0], good[1], bad] if last else [good[0], bad, good[1]]
    path = cache.path(key)
    path.write_text("\n".join(lines) + "\n")
    number = 3 if last else 2
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}, line {number}: not a cached"):
        cache.load(key)
    with pytest.raises(ValueError, match=f"line {number}"):
        cache.load_all()


def test_a_line_of_another_method_is_an_error(tmp_path):
    cache = ResultCache(tmp_path)
    key = "pyvrp|1s"
    cache.path(key).write_text(InstanceResult("exact|1s", 0, "i0", 1.0, 0.1, True).to_json() + "\n")
    with pytest.raises(ValueError, match=re.escape("line 1: a result of method 'exact|1s'")):
        cache.load(key)


def test_keys_that_look_alike_get_their_own_files(tmp_path):
    cache = ResultCache(tmp_path)
    a, b = "policy|m|multistart_greedy+aug8", "policy|m|multistart_greedy_aug8"
    assert cache.path(a) != cache.path(b)
    cache.add([InstanceResult(a, 0, "i", 1.0, 0.1, True)])
    assert cache.load(b) == {} and set(cache.load(a)) == {0}


def test_validated_rejects_an_invalid_solution():
    data = _data()
    num_depots = data.instances[0].num_depots
    bad = validated("m", 0, data, [0, num_depots, 0], 0.1)  # one customer only
    assert not bad.valid and math.isinf(bad.cost) and "error" in bad.extra


def test_methods_are_valid_cached_and_resumed(tmp_path, tiny_policy):
    data = _data()
    cache = ResultCache(tmp_path)
    loads = []

    def loader(name):
        loads.append(name)
        return tiny_policy

    policy = Method("policy", "tiny", "multistart_greedy", batch_size=3)
    pyvrp = Method("pyvrp", seconds=0.2, limit=2)
    refine = Method("refine", "tiny", "multistart_greedy", seconds=0.5, limit=2)
    first = run_method(policy, data, cache, policy_loader=loader, progress=False)
    assert [r.instance for r in first] == [0, 1, 2, 3] and all(r.valid for r in first)
    assert {r.method for r in first} == {policy.key}
    for r in first:  # the numpy checker and the env agree on the objective
        assert r.cost == pytest.approx(r.extra["env_cost"], rel=1e-9)
        assert r.seconds > 0
    solver = run_method(pyvrp, data, cache, progress=False)
    assert [r.instance for r in solver] == [0, 1] and all(r.valid for r in solver)
    refined = run_method(refine, data, cache, progress=False)
    assert [r.instance for r in refined] == [0, 1]
    for r, base in zip(refined, first):
        assert r.valid and r.cost <= base.cost + 1e-9
        assert r.seconds >= base.seconds and r.extra["base_cost"] == base.cost
    # a rerun reads the cache: nothing is recomputed, the policy is not even loaded
    again = run_method(policy, data, cache, policy_loader=loader, progress=False)
    assert again == first and loads == ["tiny"]
    # an interruption after two instances: only the missing ones are computed
    lines = cache.path(policy.key).read_text().splitlines()
    cache.path(policy.key).write_text("\n".join(lines[:2]) + "\n")
    resumed = run_method(policy, data, cache, policy_loader=loader, progress=False)
    assert [r.instance for r in resumed] == [0, 1, 2, 3] and loads == ["tiny", "tiny"]
    assert [r.cost for r in resumed] == pytest.approx([r.cost for r in first])


def test_a_failed_solver_run_raises_and_is_not_cached(tmp_path, monkeypatch):
    """A solver run that raises stops the evaluation with its error; nothing is written to
    the cache for it."""
    from clrp_rl4co import solvers

    def failing(instance, seconds):
        raise RuntimeError(f"HiGHS crashed on {instance.name}")

    monkeypatch.setattr(solvers, "solve_pyvrp", failing)
    cache = ResultCache(tmp_path)
    method = Method("pyvrp", seconds=0.2, limit=1)
    with pytest.raises(RuntimeError, match="^HiGHS crashed on clrp10-0$"):
        run_method(method, _data(), cache, progress=False)
    assert cache.load(method.key) == {}


def test_refinement_needs_its_base(tmp_path):
    data = _data()
    refine = Method("refine", "x", "greedy", seconds=0.5, limit=1)
    with pytest.raises(RuntimeError, match="run it first"):
        run_method(refine, data, ResultCache(tmp_path), progress=False)


def test_exact_method_reports_optimality(tmp_path):
    data = _data(n=1, seed=11)
    (row,) = run_method(Method("exact", seconds=30.0), data, ResultCache(tmp_path),
                        progress=False)  # fmt: skip
    assert row.valid and row.extra["status"]
    if row.optimal:  # proven: the bound meets the objective
        assert row.bound == pytest.approx(row.cost, rel=1e-6)
    else:  # stopped by the limit: an open gap
        assert row.bound is None or row.bound < row.cost * (1 - 1e-6)


def test_cache_keeps_rows_only_for_the_weights_that_produced_them(tmp_path):
    cache = ResultCache(tmp_path)
    cache.add(
        [InstanceResult("A", 0, "a", 1.0, 0.1, True), InstanceResult("B", 0, "a", 2.0, 0.1, True)]
    )
    assert cache.guard_models({"A": "f1"}) == ["A"]  # cached before fingerprints were recorded
    stale = tmp_path / "stale"
    assert cache.load("A") == {} and (stale / f"{cache.path('A').stem}.unrecorded.jsonl").is_file()
    assert set(cache.load("B")) == {0}  # rows without a model are left alone
    cache.add([InstanceResult("A", 0, "a", 3.0, 0.1, True)])
    assert cache.guard_models({"A": "f1"}) == []
    assert cache.load("A")[0].cost == 3.0
    assert cache.guard_models({"A": "f2"}) == ["A"]  # retrained under the same name
    assert cache.load("A") == {} and (stale / f"{cache.path('A').stem}.f1.jsonl").is_file()


def test_policy_fingerprint_follows_the_weights(tiny_policy):
    twin = copy.deepcopy(tiny_policy)
    assert policy_fingerprint(twin) == policy_fingerprint(tiny_policy)
    with torch.no_grad():
        next(twin.parameters()).view(-1)[0] += 1e-6
    assert policy_fingerprint(twin) != policy_fingerprint(tiny_policy)
