"""The paper-reproduction harness: published test sets, row specs, every table command."""

import copy
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from clrp_rl4co.envs.clrp import (
    CLRPGenerator,
    generate_dataset,
    instances_checksum,
    load_dataset,
    save_dataset,
)
from clrp_rl4co.evaluation import InstanceResult, Method, ResultCache
from clrp_rl4co.policies import build_policy, shipped_models
from experiments import specs
from experiments.published_sets import (
    TEST_SET_CHECKSUMS,
    TEST_SET_SIZES,
    load_test_set,
    published_test_set,
)
from experiments.specs import Row, synthetic_part

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


# --------------------------------------------------------------------------- row specs
def test_default_models_are_fixed_and_shipped():
    shipped = set(shipped_models())
    for models in specs.DEFAULT_MODELS.values():
        assert set(models) <= shipped
    for variants in specs.VARIANTS.values():
        assert set(variants.values()) <= shipped
    # largest size not above the preset, else the smallest above it
    assert specs.default_model("drlhq", "clrp20") == "drlhq_clrp20"
    assert specs.default_model("drlhq", "clrp500") == "drlhq_clrp100"
    assert specs.default_model("pomo", "clrp10") == "pomo_clrp20"
    assert specs.default_model("pomo", "clrp100") == "pomo_clrp20"


def test_synthetic_rows_identities_labels_and_families():
    part = synthetic_part("clrp20")
    rows = {r.label: r for r in part.rows}
    assert len(rows) == len(part.rows)  # labels are unique
    assert len({r.method.key for r in part.rows}) == len(part.rows)  # so are the keys
    expected = {
        "Exact (HiGHS 60s)": ("exact", None, None, 60.0, "Exact"),
        "PyVRP 1s": ("pyvrp", None, None, 1.0, "PyVRP short"),
        "PyVRP 4s": ("pyvrp", None, None, 4.0, "PyVRP long"),
        "POMO* x8": ("policy", "pomo_clrp20", "multistart_greedy+aug8", None, "POMO* x8"),
        "MTA* x8": ("policy", "mta_clrp20", "multistart_greedy+aug8", None, "MTA* x8"),
        "DRLHQ[samebudget] x8": ("policy", "drlhq_clrp20_samebudget", "multistart_greedy+aug8",
                                 None, "DRLHQ[samebudget] x8"),
        "DRLHQ untrained x8": ("policy", "untrained:drlhq_clrp20", "multistart_greedy+aug8",
                               None, "DRLHQ untrained x8"),
        "DRLHQ greedy": ("policy", "drlhq_clrp20", "greedy", None, "DRLHQ greedy"),
        "DRLHQ ms-greedy": ("policy", "drlhq_clrp20", "multistart_greedy", None,
                            "DRLHQ ms-greedy"),
        "DRLHQ x8": ("policy", "drlhq_clrp20", "multistart_greedy+aug8", None, "DRLHQ x8"),
        "DRLHQ SGBS(4,4) x8": ("policy", "drlhq_clrp20", "sgbs:4x4+aug8", None, "DRLHQ SGBS"),
        "DRLHQ x8 + refine (1s total)": ("refine", "drlhq_clrp20", "multistart_greedy+aug8",
                                         1.0, "DRLHQ x8 + refine"),
    }  # fmt: skip
    assert list(rows) == list(expected)
    for label, (kind, model, decode, seconds, family) in expected.items():
        m = rows[label].method
        assert (m.kind, m.model, m.decode, m.seconds, rows[label].family) == (
            kind, model, decode, seconds, family), label  # fmt: skip
    # the refinement row starts from the x8 row, found by identity
    assert rows["DRLHQ x8 + refine (1s total)"].method.base == rows["DRLHQ x8"].method
    assert rows["DRLHQ[samebudget] x8"].paired_with == (
        rows["POMO* x8"].method, rows["MTA* x8"].method)  # fmt: skip
    assert not any("samebudget" in r.label for r in synthetic_part("clrp50").rows)


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
    labels = [r.label for r in synthetic_part("clrp20", {"drlhq": model}).rows]
    assert label in labels


@pytest.mark.parametrize(
    "decode, title",
    [
        ("greedy", "greedy"),
        ("multistart_greedy", "ms-greedy"),
        ("multistart_greedy+aug8", "x8"),
        ("multistart_greedy+rot8", "x8 rot45"),
        ("sgbs:4x3+aug8", "SGBS(4,3) x8"),
        ("sampling:16", "sampling:16"),
    ],
)
def test_decode_titles(decode, title):
    assert specs.decode_title(decode) == title


def test_part_specific_limits_override_general_ones():
    from experiments.tables import _apply_limits

    limits = {"x8": 10, "clrp500:x8": 3, "PyVRP": 5}
    for part in specs.cross_size_parts({"drlhq": "drlhq_clrp20"}):
        rows = _apply_limits(part.rows, None, None, limits, part.name)
        got = {r.label: r.method.limit for r in rows}
        assert got["DRLHQ[clrp20 model] x8"] == (3 if part.name == "clrp500" else 10)
        assert all(v == 5 for k, v in got.items() if k.startswith("PyVRP"))
        assert [r.method for r in rows] == part.methods  # limits leave identities alone


def test_paired_lines_name_the_rows():
    from experiments.tables import paired_lines

    pyvrp = Row(Method("pyvrp", seconds=1.0), "clrp10", family="PyVRP short")
    refine = Row(Method("refine", "m", "multistart_greedy+aug8", seconds=1.0), "clrp10", "drlhq")
    rows = [pyvrp, refine]
    results = [
        InstanceResult(refine.method.key, 0, "a", 10.0, 1.0, True),
        InstanceResult(refine.method.key, 1, "b", 12.0, 1.0, True),
        InstanceResult(pyvrp.method.key, 0, "a", 11.0, 1.0, True),
        InstanceResult(pyvrp.method.key, 1, "b", 12.0, 1.0, True),
    ]
    (line,) = paired_lines(rows, results)
    assert line.startswith("Paired, same time per instance: DRLHQ[m model] x8 + refine (1s "
                           "total) minus PyVRP 1s = -0.5000")  # fmt: skip
    assert "lower on 1, equal on 1, higher on 0" in line
    variant = Row(Method("policy", "v", "greedy"), "clrp10", "drlhq", variant="v",
                  paired_with=(refine.method,))  # fmt: skip
    results += [
        InstanceResult(variant.method.key, 0, "a", 9.0, 1.0, True),
        InstanceResult(variant.method.key, 1, "b", 13.0, 1.0, True),
    ]
    lines = paired_lines([*rows, variant], results)
    assert len(lines) == 2 and "Paired: DRLHQ[v] greedy minus DRLHQ[m model] x8 + refine" in (
        lines[1])  # fmt: skip
    assert "= +0.0000" in lines[1] and "lower on 1, equal on 0, higher on 1" in lines[1]


def test_untrained_baseline_has_the_shipped_architecture_and_fresh_weights():
    from clrp_rl4co.policies import load_policy
    from experiments.tables import _load

    trained = load_policy("drlhq_clrp10")
    first, second = _load("untrained:drlhq_clrp10"), _load("untrained:drlhq_clrp10")
    assert type(first) is type(trained) and first.config == trained.config
    pairs = list(zip(first.state_dict().values(), trained.state_dict().values()))
    assert not all(torch.equal(a, b) for a, b in pairs)
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(),
                                                 second.state_dict().values()))  # fmt: skip


# --------------------------------------------------------------------------- table commands
@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    """``drlhq`` / ``pomo`` / ``mta`` -> a tiny saved policy of that kind (each named tiny)."""
    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("models")
    out = {}
    for policy in ("drlhq", "pomo", "mta"):
        path = root / policy / "tiny"
        build_policy(policy, embed_dim=16, num_encoder_layers=1, num_heads=2).save_pretrained(path)
        out[policy] = path
    return out


@pytest.fixture(scope="module")
def tiny_model(tiny_models):
    return tiny_models["drlhq"]


@pytest.fixture
def short_budgets(monkeypatch):
    """Every solver budget cut to a fraction of a second (the rows stay the same)."""
    monkeypatch.setattr(specs, "PYVRP_BUDGETS", {k: (0.1, 0.2) for k in specs.PYVRP_BUDGETS})
    monkeypatch.setattr(specs, "EXACT_SECONDS", 1.0)
    monkeypatch.setattr(specs, "PRINS_SECONDS", 0.3)


#: Rows each table must show (labels rendered from the tiny models' identities).
TABLE_ROWS = {
    "clrp10": ["Exact (HiGHS 1s)", "PyVRP 0.1s", "POMO*[tiny model] x8", "DRLHQ[tiny model] x8",
               "DRLHQ[tiny model] x8 + refine (0.1s total)"],
    "clrp20": ["Exact (HiGHS 1s)", "PyVRP 0.2s", "MTA*[tiny model] x8", "DRLHQ[samebudget] x8"],
    "clrp50": ["PyVRP 0.1s", "DRLHQ[tiny model] SGBS(4,4) x8"],
    "clrp100": ["PyVRP 0.2s", "DRLHQ[tiny model] greedy"],
    "cross-size": ["DRLHQ[tiny model] ms-greedy + refine (0.1s total)"],
    "prins": ["PyVRP 0.3s", "DRLHQ[tiny model] x8 rot45", "DRLHQ[tiny model] SGBS(4,4) x8 rot45"],
    "paper-sets": ["Exact (HiGHS 1s)", "DRLHQ[tiny model] x8 rot45"],
}  # fmt: skip

#: Row filters of the large tables (every kind of row still runs in clrp10 / clrp20).
TABLE_ONLY = {
    "clrp50": ["PyVRP", "SGBS"],
    "clrp100": ["PyVRP", "DRLHQ[tiny model] greedy"],
    "cross-size": ["PyVRP", "ms-greedy"],
}


@pytest.mark.parametrize("table", list(TABLE_ROWS))
def test_every_table_command_runs_on_a_tiny_subset(table, tmp_path, tiny_models, short_budgets,
                                                   request):  # fmt: skip
    from experiments.__main__ import main
    from experiments.tables import TABLES

    assert set(TABLE_ROWS) == set(TABLES)
    if table == "prins":
        request.getfixturevalue("benchmarks_root")
    models = [f"--model={p}={path}" for p, path in tiny_models.items()]
    argv = ["table", table, "--out", str(tmp_path), "--max-instances", "1", "--no-progress"]
    only = ["--only", *TABLE_ONLY[table]] if table in TABLE_ONLY else []
    assert main([*argv, *models, *only]) == 0
    md = (tmp_path / table / f"{table}.md").read_text()
    for label in TABLE_ROWS[table]:
        assert f"| {label} | 1 |" in md, label
    assert "command: `python -m experiments table" in md and "hardware:" in md
    if table == "prins":
        assert "gap to BKS %" in md and "BKS (DRLHQ paper)" in md
        assert (tmp_path / "prins" / "prins_solution.png").stat().st_size > 1000
    if table in specs.SYNTHETIC:
        assert (tmp_path / "gap_by_size.png").stat().st_size > 1000
        headline = (tmp_path / "headline.md").read_text().splitlines()
        assert headline[2].startswith(f"| {table} | 1 |")


def test_rerun_computes_only_the_new_row_and_headline_reads_families(tmp_path, short_budgets):
    from experiments.__main__ import main

    argv = ["table", "clrp10", "--out", str(tmp_path), "--max-instances", "3", "--no-progress"]
    assert main([*argv, "--only", "ms-greedy", "PyVRP 0.1", "DRLHQ x8"]) == 0
    folder = tmp_path / "clrp10"
    md = (folder / "clrp10.md").read_text()
    assert "| DRLHQ ms-greedy | 3 |" in md and "| PyVRP 0.1s | 3 |" in md and "Exact" not in md
    assert "seed 777000" in md
    assert len((folder / "clrp10_per_instance.csv").read_text().splitlines()) == 1 + 3
    headline = (tmp_path / "headline.md").read_text().splitlines()
    cells = [c.strip() for c in headline[2].split("|")[1:-1]]
    header = [c.strip() for c in headline[0].split("|")[1:-1]]
    line = dict(zip(header, cells))
    assert line["subset n"] == "3" and line["DRLHQ x8"].endswith("%)")
    # a 0.1 s time limit: the measured time is at least that (more on a loaded machine)
    assert re.search(r" 0\.1\d*s$", line["PyVRP short"]) and line["Exact"] == ""
    assert line["paper (DRLHQ)"] == "x8 8.6480 / SGBS 8.6293 (0.94 s)"
    cache = ResultCache(folder / "cache" / "clrp10")
    key = Method("policy", "drlhq_clrp10", "multistart_greedy").key
    before = cache.path(key).read_text()
    assert main([*argv, "--only", "DRLHQ greedy", "ms-greedy", "--limit", "DRLHQ greedy=2"]) == 0
    assert cache.path(key).read_text() == before
    md = (folder / "clrp10.md").read_text()
    assert "| DRLHQ greedy | 2 |" in md and "| DRLHQ ms-greedy | 3 |" in md


def test_table_rerun_recomputes_rows_of_a_retrained_model(tmp_path, tiny_model):
    """Same model path, new weights: the cached rows of the old weights are not reused."""
    from clrp_rl4co.policies import load_policy
    from experiments.__main__ import main

    model = tmp_path / "model" / "tiny"
    load_policy(tiny_model).save_pretrained(model)
    argv = ["table", "clrp10", "--out", str(tmp_path), "--max-instances", "2", "--no-progress",
            "--only", "DRLHQ[tiny model] greedy", "--model", f"drlhq={model}"]  # fmt: skip
    assert main(argv) == 0
    cache = ResultCache(tmp_path / "clrp10" / "cache" / "clrp10")
    key = Method("policy", str(model), "greedy").key
    first = cache.load(key)
    assert set(first) == {0, 1}
    torch.manual_seed(1)
    retrained = copy.deepcopy(load_policy(model))
    with torch.no_grad():
        for param in retrained.parameters():
            param.add_(torch.randn_like(param))
    retrained.save_pretrained(model)
    assert main(argv) == 0
    assert (tmp_path / "clrp10" / "cache" / "clrp10" / "stale").is_dir()
    second = cache.load(key)
    assert set(second) == {0, 1}
    assert [r.actions for r in second.values()] != [r.actions for r in first.values()]


def test_the_models_line_names_a_recipe_where_the_json_has_one(tmp_path):
    import json

    from experiments.tables import model_label

    (tmp_path / "m.pt").write_bytes(b"")
    (tmp_path / "m.json").write_text(json.dumps({"recipe": "GPU, then 6 CPU h of POMO"}))
    assert model_label("drlhq", str(tmp_path / "m")) == (
        f"drlhq = `{tmp_path / 'm'}` (recipe: GPU, then 6 CPU h of POMO)"
    )
    (tmp_path / "m.json").write_text(json.dumps({"note": "no recipe"}))
    assert model_label("drlhq", str(tmp_path / "m")) == f"drlhq = `{tmp_path / 'm'}`"
    assert model_label("drlhq", str(tmp_path / "absent")) == f"drlhq = `{tmp_path / 'absent'}`"
