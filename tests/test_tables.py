"""The evaluation tables: published test sets, per-instance cache, rows, resume, outputs."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from clrp_rl4co.data import tensordict_to_instances
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset, load_dataset, save_dataset
from clrp_rl4co.models import build_policy
from clrp_rl4co.tables import InstanceResult, Method, ResultCache, TableData, run_method
from clrp_rl4co.tables.datasets import (
    TEST_SET_CHECKSUMS,
    TEST_SET_SIZES,
    instances_checksum,
    load_test_set,
    published_test_set,
)
from clrp_rl4co.tables.methods import validated

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("preset", list(TEST_SET_SIZES))
def test_published_test_sets_match_seed_and_checksum(preset):
    spec = published_test_set(preset)
    path = REPO / "datasets" / spec.filename
    assert path.is_file(), f"{path} is not published"
    published = load_dataset(path)
    regenerated = generate_dataset(CLRPGenerator(preset=preset), spec.size, spec.seed)
    assert published.batch_size[0] == TEST_SET_SIZES[preset]
    assert instances_checksum(published) == TEST_SET_CHECKSUMS[preset]
    assert instances_checksum(regenerated) == TEST_SET_CHECKSUMS[preset]
    assert torch.equal(published["cost_locs"], regenerated["cost_locs"])


def test_missing_test_set_is_regenerated_and_tampering_is_caught(tmp_path):
    td = load_test_set("clrp10", root=tmp_path)
    assert (tmp_path / published_test_set("clrp10").filename).is_file()
    assert instances_checksum(td) == TEST_SET_CHECKSUMS["clrp10"]
    # a file with a valid checksum of its own but other instances is rejected
    other = generate_dataset(CLRPGenerator(preset="clrp10"), 1000, seed=1)
    save_dataset(other, tmp_path / published_test_set("clrp10").filename, seed=1)
    with pytest.raises(ValueError, match="differs from the published"):
        load_test_set("clrp10", root=tmp_path)


def test_compressed_dataset_round_trip_keeps_checksum(tmp_path):
    td = generate_dataset(CLRPGenerator(preset="clrp20"), 5, seed=3)
    plain = save_dataset(td, tmp_path / "plain.npz", seed=3)
    small = save_dataset(td, tmp_path / "small.npz", seed=3, compress=True)
    assert plain == small
    with np.load(tmp_path / "small.npz") as f:
        assert "cost_locs" not in f.files
    back = load_dataset(tmp_path / "small.npz")
    assert torch.equal(back["cost_locs"], td["cost_locs"])
    assert back["cost_locs"].dtype == torch.float64


def test_cache_round_trip_and_truncated_line(tmp_path):
    cache = ResultCache(tmp_path)
    rows = [
        InstanceResult("A x8", 0, "i0", 12.5, 0.1, True, actions=[0, 5, 0]),
        InstanceResult("A x8", 1, "i1", math.inf, 0.2, False),
    ]
    cache.add(rows)
    with cache.path("A x8").open("a") as f:
        f.write('{"method": "A x8", "instance": 2, "na')  # interrupted write
    loaded = cache.load("A x8")
    assert sorted(loaded) == [0, 1]
    assert loaded[0] == rows[0] and math.isinf(loaded[1].cost)
    cache.add([InstanceResult("A x8", 2, "i2", 3.0, 0.1, True)])  # after the cut line
    assert sorted(cache.load("A x8")) == [0, 1, 2]


def _data(preset="clrp10", n=4, seed=5):
    td = generate_dataset(CLRPGenerator(preset=preset), n, seed=seed)
    names = [f"{preset}-{i}" for i in range(n)]
    return TableData(tensordict_to_instances(td, names), names, td)


def test_validated_rejects_an_invalid_solution():
    data = _data()
    num_depots = data.instances[0].num_depots
    bad = validated("m", 0, data, [0, num_depots, 0], 0.1)  # one customer only
    assert not bad.valid and math.isinf(bad.cost) and "error" in bad.extra


@pytest.fixture(scope="module")
def tiny_policy():
    torch.manual_seed(0)
    return build_policy("drlhq", embed_dim=16, num_encoder_layers=1, num_heads=2).eval()


def test_rows_are_valid_cached_and_resumed(tmp_path, tiny_policy):
    data = _data()
    cache = ResultCache(tmp_path)
    loads = []

    def loader(name):
        loads.append(name)
        return tiny_policy

    policy_row = Method("tiny ms", "policy", model="tiny", decode="multistart_greedy",
                        batch_size=3)  # fmt: skip
    pyvrp_row = Method("PyVRP", "pyvrp", seconds=0.2, limit=2)
    refine_row = Method("tiny ms + refine", "refine", seconds=0.5, base="tiny ms", limit=2)
    first = run_method(policy_row, data, cache, policy_loader=loader, progress=False)
    assert [r.instance for r in first] == [0, 1, 2, 3] and all(r.valid for r in first)
    for r in first:  # the numpy checker and the env agree on the objective
        assert r.cost == pytest.approx(r.extra["env_cost"], rel=1e-9)
        assert r.seconds > 0
    solver = run_method(pyvrp_row, data, cache, progress=False)
    assert [r.instance for r in solver] == [0, 1] and all(r.valid for r in solver)
    refined = run_method(refine_row, data, cache, progress=False)
    for r, base in zip(refined, first):
        assert r.valid and r.cost <= base.cost + 1e-9
        assert r.seconds >= base.seconds
    # a rerun reads the cache: nothing is recomputed, the policy is not even loaded
    again = run_method(policy_row, data, cache, policy_loader=loader, progress=False)
    assert again == first and loads == ["tiny"]
    # an interruption after two instances: only the missing ones are computed
    lines = cache.path("tiny ms").read_text().splitlines()
    cache.path("tiny ms").write_text("\n".join(lines[:2]) + "\n")
    resumed = run_method(policy_row, data, cache, policy_loader=loader, progress=False)
    assert [r.instance for r in resumed] == [0, 1, 2, 3] and loads == ["tiny", "tiny"]
    assert [r.cost for r in resumed] == pytest.approx([r.cost for r in first])


def test_refine_row_needs_its_base(tmp_path):
    data = _data()
    row = Method("x + refine", "refine", seconds=0.5, base="x", limit=1)
    with pytest.raises(RuntimeError, match="run it first"):
        run_method(row, data, ResultCache(tmp_path), progress=False)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(kind="nope"), "kind"),
        (dict(kind="pyvrp"), "seconds"),
        (dict(kind="refine", seconds=1.0), "base"),
        (dict(kind="policy"), "model and decode"),
        (dict(kind="pyvrp", seconds=1.0, limit=0), "limit"),
    ],
)
def test_bad_rows_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Method("row", **kwargs)


def test_exact_row_reports_optimality(tmp_path):
    data = _data(n=1, seed=11)
    (row,) = run_method(Method("Exact", "exact", seconds=30.0), data, ResultCache(tmp_path),
                        progress=False)  # fmt: skip
    assert row.valid and row.extra["status"]
    if row.optimal:
        assert row.bound == pytest.approx(row.cost, rel=1e-6)


def test_table_command_writes_tables_and_plot(tmp_path):
    from clrp_rl4co.cli import main

    argv = ["table", "clrp10", "--out", str(tmp_path), "--max-instances", "3", "--no-progress"]
    assert main([*argv, "--only", "ms-greedy", "PyVRP 0.5"]) == 0
    folder = tmp_path / "clrp10"
    md = (folder / "clrp10.md").read_text()
    assert "| DRLHQ ms-greedy | 3 |" in md and "| PyVRP 0.5s | 3 |" in md
    assert "hardware:" in md and "seed 777000" in md and "Exact" not in md
    rows = (folder / "clrp10_per_instance.csv").read_text().splitlines()
    assert len(rows) == 1 + 3
    assert (tmp_path / "gap_by_size.png").stat().st_size > 1000
    headline = (tmp_path / "headline.md").read_text().splitlines()
    assert headline[2].startswith("| clrp10 | 3 |") and "x8 8.6480" in headline[2]
    # a rerun with one more row only computes that row
    before = (folder / "cache" / "clrp10" / "DRLHQ_ms-greedy.jsonl").read_text()
    assert main([*argv, "--only", "DRLHQ greedy", "ms-greedy", "--limit", "DRLHQ greedy=2"]) == 0
    assert (folder / "cache" / "clrp10" / "DRLHQ_ms-greedy.jsonl").read_text() == before
    md = (folder / "clrp10.md").read_text()
    assert "| DRLHQ greedy | 2 |" in md and "| DRLHQ ms-greedy | 3 |" in md


def test_prins_table_reports_both_best_known_columns(tmp_path, benchmarks_root):
    from clrp_rl4co.tables.run import RunOptions, run_table

    options = RunOptions(max_instances=1, only=("ms-greedy",), progress=False)
    md = run_table("prins", out=tmp_path, options=options)
    text = md.read_text()
    assert "gap to BKS %" in text and "BKS (DRLHQ paper)" in text
    assert (tmp_path / "prins" / "prins_solution.png").stat().st_size > 1000


def test_untrained_baseline_has_the_shipped_architecture_and_fresh_weights():
    from clrp_rl4co.models import load_policy
    from clrp_rl4co.tables.run import _load

    trained = load_policy("drlhq_clrp10")
    first, second = (
        _load("untrained:drlhq_clrp10"),
        _load("untrained:drlhq_clrp10"),
    )
    assert type(first) is type(trained) and first.config == trained.config
    pairs = list(zip(first.state_dict().values(), trained.state_dict().values()))
    assert not all(torch.equal(a, b) for a, b in pairs)
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(),
                                                 second.state_dict().values()))  # fmt: skip


@pytest.mark.parametrize(
    "label, column",
    [
        ("Exact (HiGHS 60s)", "Exact"),
        ("PyVRP 5s", "PyVRP"),
        ("POMO* x8", "POMO* x8"),
        ("MTA*[clrp20 model] x8", "MTA* x8"),
        ("DRLHQ[clrp20 model] x8", "DRLHQ x8"),
        ("DRLHQ SGBS(4,4) x8", "DRLHQ SGBS"),
        ("DRLHQ x8 + refine (5s total)", "DRLHQ x8 + refine"),
        ("DRLHQ untrained x8", None),
        ("DRLHQ ms-greedy", None),
        ("DRLHQ[samebudget] x8", None),
    ],
)
def test_headline_columns(label, column):
    from clrp_rl4co.tables.headline import family

    assert family(label) == column


def test_paired_comparison_of_refinement_and_pyvrp():
    from clrp_rl4co.tables.run import paired, paired_lines

    rows = [
        InstanceResult("R", 0, "a", 10.0, 1.0, True),
        InstanceResult("R", 1, "b", 12.0, 1.0, True),
        InstanceResult("R", 2, "c", 9.0, 1.0, True),
        InstanceResult("P", 0, "a", 11.0, 1.0, True),
        InstanceResult("P", 1, "b", 12.0, 1.0, True),
        InstanceResult("P", 2, "c", 8.0, 1.0, False),  # invalid: not paired
    ]
    stats = paired(rows, "R", "P")
    assert stats["n"] == 2 and stats["mean_diff"] == pytest.approx(-0.5)
    assert (stats["wins"], stats["ties"], stats["losses"]) == (1, 1, 0)
    methods = [Method("P", "pyvrp", seconds=1.0), Method("R", "refine", seconds=1.0, base="x")]
    (line,) = paired_lines(methods, rows)
    assert "R minus P = -0.5000" in line and "lower on 1, equal on 1, higher on 0" in line
    methods.append(Method("V", "policy", model="m", decode="greedy", paired_with=("R",)))
    rows += [
        InstanceResult("V", 0, "a", 9.0, 1.0, True),
        InstanceResult("V", 1, "b", 13.0, 1.0, True),
    ]
    lines = paired_lines(methods, rows)
    assert len(lines) == 2 and "Paired: V minus R = +0.0000" in lines[1]
    assert "lower on 1, equal on 0, higher on 1" in lines[1]


def test_part_specific_limits_override_general_ones():
    from clrp_rl4co.tables.run import _apply_limits
    from clrp_rl4co.tables.specs import cross_size_parts

    limits = {"x8": 10, "clrp500:x8": 3, "PyVRP": 5}
    for part in cross_size_parts({"drlhq": "drlhq_clrp20"}):
        got = {m.label: m.limit for m in _apply_limits(part.methods, None, None, limits, part.name)}
        x8 = 3 if part.name == "clrp500" else 10
        assert got["DRLHQ[clrp20 model] x8"] == x8
        assert all(v == 5 for k, v in got.items() if k.startswith("PyVRP"))


def test_cache_keeps_rows_only_for_the_weights_that_produced_them(tmp_path):
    cache = ResultCache(tmp_path)
    cache.add(
        [InstanceResult("A", 0, "a", 1.0, 0.1, True), InstanceResult("B", 0, "a", 2.0, 0.1, True)]
    )
    assert cache.guard_models({"A": "f1"}) == ["A"]  # cached before fingerprints were recorded
    assert cache.load("A") == {} and (tmp_path / "stale" / "A.unrecorded.jsonl").is_file()
    assert set(cache.load("B")) == {0}  # rows without a model are left alone
    cache.add([InstanceResult("A", 0, "a", 3.0, 0.1, True)])
    assert cache.guard_models({"A": "f1"}) == []
    assert cache.load("A")[0].cost == 3.0
    assert cache.guard_models({"A": "f2"}) == ["A"]  # retrained under the same name
    assert cache.load("A") == {} and (tmp_path / "stale" / "A.f1.jsonl").is_file()


def test_policy_fingerprint_follows_the_weights(tiny_policy):
    import copy

    from clrp_rl4co.tables.records import policy_fingerprint

    twin = copy.deepcopy(tiny_policy)
    assert policy_fingerprint(twin) == policy_fingerprint(tiny_policy)
    with torch.no_grad():
        next(twin.parameters()).view(-1)[0] += 1e-6
    assert policy_fingerprint(twin) != policy_fingerprint(tiny_policy)


def test_table_rerun_recomputes_rows_of_a_retrained_model(tmp_path, tiny_policy):
    """Same model path, new weights: the cached rows of the old weights are not reused."""
    import copy

    from clrp_rl4co.cli import main

    model = tmp_path / "model" / "tiny"
    tiny_policy.save_pretrained(model)
    label = "DRLHQ[tiny model] greedy"  # a model named by path is labelled by its file name
    argv = ["table", "clrp10", "--out", str(tmp_path), "--max-instances", "2", "--no-progress",
            "--only", label, "--model", f"drlhq={model}"]  # fmt: skip
    assert main(argv) == 0
    cache = ResultCache(tmp_path / "clrp10" / "cache" / "clrp10")
    first = cache.load(label)
    assert set(first) == {0, 1}
    torch.manual_seed(1)
    retrained = copy.deepcopy(tiny_policy)
    with torch.no_grad():
        for param in retrained.parameters():
            param.add_(torch.randn_like(param))
    retrained.save_pretrained(model)
    assert main(argv) == 0
    assert (tmp_path / "clrp10" / "cache" / "clrp10" / "stale").is_dir()
    second = cache.load(label)
    assert set(second) == {0, 1}
    assert [r.actions for r in second.values()] != [r.actions for r in first.values()]


def test_same_budget_variant_gets_its_own_row():
    from clrp_rl4co.tables.specs import synthetic_part

    rows = {m.label: m for m in synthetic_part("clrp20").methods}
    assert rows["DRLHQ[samebudget] x8"].model == "drlhq_clrp20_samebudget"
    assert rows["DRLHQ[samebudget] x8"].paired_with == ("POMO* x8", "MTA* x8")
    assert rows["DRLHQ x8"].model == "drlhq_clrp20"
    assert not any("samebudget" in label for label in
                   (m.label for m in synthetic_part("clrp50").methods))  # fmt: skip


@pytest.mark.parametrize(
    "model, label",
    [
        ("drlhq_clrp20", "DRLHQ x8"),
        ("drlhq_clrp50", "DRLHQ[clrp50 model] x8"),
        ("drlhq_clrp20_samebudget", "DRLHQ[clrp20_samebudget model] x8"),
        ("/tmp/some_dir/my_model", "DRLHQ[my_model model] x8"),
        ("runs/a_b/checkpoints/best.ckpt", "DRLHQ[best model] x8"),
    ],
)
def test_row_labels_name_the_model(model, label):
    from clrp_rl4co.tables.specs import synthetic_part

    labels = [m.label for m in synthetic_part("clrp20", {"drlhq": model}).methods]
    assert label in labels
