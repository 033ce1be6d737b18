"""The DRLHQ paper's test sets (regenerated) and the ``paper-sets`` table."""

from pathlib import Path

import pytest
import torch

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp import instances_checksum, load_dataset, save_dataset
from clrp_rl4co.evaluation import MethodSummary
from experiments.paper_sets import (
    DRLHQ_TEST_SEED,
    DRLHQ_TEST_SET_CHECKSUMS,
    DRLHQ_TEST_SET_SIZES,
    draw_drlhq_test_set,
    drlhq_test_set_filename,
    load_drlhq_test_set,
)
from experiments.specs import PAPER_SET_PRESETS
from experiments.tables import paper_lines, table_parts

REPO = Path(__file__).resolve().parents[1]


def test_draw_follows_the_repository_order_of_calls_on_the_global_seed():
    """The first two clrp10 instances equal the calls of the DRLHQ repository's generator made
    on torch's global generator after ``torch.manual_seed(1234)``: per instance, depot xy,
    capacity, opening cost, customer xy, demand."""
    td = draw_drlhq_test_set("clrp10", size=2)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(DRLHQ_TEST_SEED)
        for i in range(2):
            depot_xy = torch.rand(size=(5, 2))
            capacity = torch.rand(5) * (300 - 100) + 100
            opening = torch.rand(5) * (5 - 1) + 1
            customer_xy = torch.rand(size=(10, 2))
            demand = torch.randint(10, 20, size=(10,))
            assert torch.equal(td["locs"][i], torch.cat([depot_xy, customer_xy]))
            assert torch.equal(td["depot_capacity"][i], capacity)
            assert torch.equal(td["opening_cost"][i], opening)
            assert torch.equal(td["demand"][i], demand.float())
    assert torch.all(td["vehicle_capacity"] == 70) and torch.all(td["vehicle_fixed_cost"] == 1)


def test_a_prefix_is_the_start_of_the_whole_set():
    whole = draw_drlhq_test_set("clrp20")
    head = draw_drlhq_test_set("clrp20", size=7)
    assert whole.batch_size[0] == DRLHQ_TEST_SET_SIZES["clrp20"]
    for key in ("locs", "depot_capacity", "opening_cost", "demand"):
        assert torch.equal(whole[key][:7], head[key])
    assert instances_checksum(whole) == DRLHQ_TEST_SET_CHECKSUMS["clrp20"]


@pytest.mark.parametrize("preset", PAPER_SET_PRESETS)
def test_published_files_match_the_draw_and_the_pinned_checksum(preset):
    path = REPO / "datasets" / drlhq_test_set_filename(preset)
    assert path.is_file(), f"{path} is not published"
    td = load_dataset(path)
    assert instances_checksum(td) == DRLHQ_TEST_SET_CHECKSUMS[preset]
    assert instances_checksum(draw_drlhq_test_set(preset)) == DRLHQ_TEST_SET_CHECKSUMS[preset]
    gen = CLRPEnv(generator_params={"preset": preset}).generator
    assert td["depot_capacity"].min() >= gen.min_depot_capacity
    assert td["depot_capacity"].max() < gen.max_depot_capacity
    assert td["opening_cost"].min() >= gen.min_opening_cost
    assert td["opening_cost"].max() < gen.max_opening_cost
    assert td["demand"].min() >= 10 and td["demand"].max() <= 19
    CLRPEnv().reset(td[:50])  # feasible for the env (capacity checks in reset)


def test_missing_file_is_drawn_and_a_changed_one_is_rejected(tmp_path):
    td = load_drlhq_test_set("clrp10", root=tmp_path)
    assert (tmp_path / drlhq_test_set_filename("clrp10")).is_file()
    assert instances_checksum(td) == DRLHQ_TEST_SET_CHECKSUMS["clrp10"]
    td["demand"][0, 0] = 19.0 if td["demand"][0, 0] != 19 else 18.0
    save_dataset(td, tmp_path / drlhq_test_set_filename("clrp10"), seed=DRLHQ_TEST_SEED)
    with pytest.raises(ValueError, match="differs from the published"):
        load_drlhq_test_set("clrp10", root=tmp_path)


@pytest.mark.parametrize(
    ("preset", "size", "match"),
    [("clrp30", None, "preset: .*'clrp30'"), ("clrp10", 0, "size: .*got 0"),
     ("clrp200", 101, "size: .*got 101")],
)  # fmt: skip
def test_bad_requests_name_the_field(preset, size, match):
    with pytest.raises(ValueError, match=match):
        draw_drlhq_test_set(preset, size)


def test_paper_sets_table_rows_and_paper_lines():
    parts = table_parts("paper-sets")
    assert [p.name for p in parts] == [f"paper-{p}" for p in PAPER_SET_PRESETS]
    assert [(p.source, p.preset) for p in parts] == [("drlhq", p) for p in PAPER_SET_PRESETS]
    labels = {r.label: r.method for r in parts[1].rows}
    assert labels["DRLHQ x8 rot45"].decode == "multistart_greedy+rot8"
    assert labels["DRLHQ SGBS(4,4) x8"].decode == "sgbs:4x4+aug8"
    assert labels["DRLHQ x8"].model == "drlhq_clrp20"
    assert "Exact (HiGHS 60s)" in {r.label for r in parts[0].rows}

    def row(label, objective, n):
        return MethodSummary(label, n, n, 0, objective, 0.0, 0.0, 0.0, n, 0, objective, 0.0,
                             0.1, 0, float("nan"), 0)  # fmt: skip

    summaries = [
        row("PyVRP 1s", 14.5, 100),
        row("DRLHQ x8", 14.9, 1000),
        row("DRLHQ x8 rot45", 15.0, 1000),
        row("DRLHQ SGBS(4,4) x8", 14.8, 40),
    ]
    x8, sgbs = paper_lines(parts[1], summaries, 1000)
    assert "DRLHQ x8 = 14.8549 on its test set" in x8 and "DRLHQ x8 14.9000 (+0.30%)" in x8
    assert "DRLHQ x8 rot45 15.0000 (+0.98%)" in x8 and "SGBS" not in x8
    assert "DRLHQ SGBS(4,4) x8 14.8000 (+0.35%, first 40 instances only)" in sgbs
    assert paper_lines(table_parts("clrp20")[0], summaries, 1000) == []


def test_the_default_rows_and_their_instances():
    """The table's defaults: x8 (both augmentations) on every instance of clrp10 / 20 / 50 and
    the first 200 of clrp100; SGBS(4,4) x8 on every instance of clrp10 / 20 (with rot45 too)
    and on the first 100 of clrp50 / clrp100; the solvers on the first 100."""
    parts = {part.name: part for part in table_parts("paper-sets", {})}
    assert list(parts) == [f"paper-{p}" for p in ("clrp10", "clrp20", "clrp50", "clrp100")]

    def limits(name: str) -> dict[str, int | None]:
        return {row.label: row.method.limit for row in parts[name].rows}

    everything = {"DRLHQ ms-greedy": None, "DRLHQ x8": None, "DRLHQ x8 rot45": None}
    sgbs_all = {"DRLHQ SGBS(4,4) x8": None, "DRLHQ SGBS(4,4) x8 rot45": None}
    assert limits("paper-clrp10") == {"Exact (HiGHS 60s)": 100, "PyVRP 0.5s": 100,
                                      **everything, **sgbs_all}  # fmt: skip
    assert limits("paper-clrp20") == {"PyVRP 1s": 100, **everything, **sgbs_all}
    assert limits("paper-clrp50") == {"PyVRP 5s": 100, **everything, "DRLHQ SGBS(4,4) x8": 100}
    assert limits("paper-clrp100") == {"PyVRP 10s": 100, "DRLHQ ms-greedy": 200,
                                       "DRLHQ x8": 200, "DRLHQ x8 rot45": 200,
                                       "DRLHQ SGBS(4,4) x8": 100}  # fmt: skip
