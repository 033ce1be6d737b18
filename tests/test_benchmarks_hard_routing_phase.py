"""``python -m benchmarks.hard.routing_phase``: variants parsed from their text, PyVRP run
with them inside the block only, and the report's arithmetic on hand-made costs."""

from __future__ import annotations

import pytest
from pyvrp.search import PerturbationParams

from benchmarks.hard import routing_phase as rp
from benchmarks.hard.families import load
from clrp_rl4co.solvers import pyvrp_solver


def test_variants_parse_pyvrp_defaults_and_overrides():
    assert rp.Variant.parse("default") == rp.Variant("default", 50, 25)
    assert rp.Variant.parse("perturbations=10") == rp.Variant("perturbations=10", 50, 10)
    both = rp.Variant.parse("neighbours=20,perturbations=10")
    assert (both.neighbours, both.perturbations) == (20, 10)
    params = both.params()
    assert params.neighbourhood.num_neighbours == 20
    assert (params.perturbation.min_perturbations, params.perturbation.max_perturbations) == (1, 10)


@pytest.mark.parametrize(
    "text,message",
    [
        ("neighbors=20", "unknown setting 'neighbors'"),
        ("perturbations=0", "perturbations must be a positive integer, got '0'"),
        ("neighbours=x", "neighbours must be a positive integer, got 'x'"),
        ("neighbours", "neighbours must be a positive integer, got ''"),
    ],
)
def test_a_bad_variant_names_the_setting_and_the_value(text, message):
    with pytest.raises(ValueError, match=f"--variants '{text}': {message}"):
        rp.Variant.parse(text)


def test_the_variant_reaches_every_pyvrp_run_inside_the_block_only(monkeypatch):
    seen = []

    def recorder(data, stop, *args, **kwargs):
        params = kwargs.get("params")
        seen.append(None if params is None else params.perturbation.max_perturbations)
        return real(data, stop, *args, **kwargs)

    real = pyvrp_solver.pyvrp.solve
    monkeypatch.setattr(pyvrp_solver.pyvrp, "solve", recorder)
    instance = load("free", 100)[0]
    with rp.search_params(rp.Variant.parse("perturbations=7")):
        inside = pyvrp_solver.route_on_set(instance, [0, 1, 2], None, max_iterations=2)
    assert inside is not None
    assert seen == [7, 7]  # the fleet run and the trips polish
    assert pyvrp_solver.pyvrp.solve is recorder  # restored
    pyvrp_solver.route_on_set(instance, [0, 1, 2], None, max_iterations=2)
    default = PerturbationParams().max_perturbations
    assert seen[2:] == [default, default]  # outside: PyVRP's own parameters


def test_a_family_and_sizes_select_its_instances(capsys, monkeypatch):
    ran = []

    def fake_runs(instance, variants, seeds, seconds, start_seconds):
        ran.append(instance.name)
        return 1000.0, [(seed, v.name, 990.0) for seed in seeds for v in variants]

    monkeypatch.setattr(rp, "phase_runs", fake_runs)
    rp.main(["--only", "free", "hetero-200-1", "--sizes", "100", "200", "--seeds", "0"])
    assert sorted(ran) == ["free-100-0", "free-100-1", "free-200-0", "free-200-1", "hetero-200-1"]
    assert "| free-200-1 | 0 | 1,000 | -1.00 |" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["hetero-100", "hetero-100-2", "hetero-101-0"])
def test_an_unknown_instance_name_is_refused_before_anything_runs(name, capsys, monkeypatch):
    monkeypatch.setattr(rp, "phase_runs", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(SystemExit):
        rp.main(["--only", name])
    assert f"--only: ['{name}'] names no family and no instance" in capsys.readouterr().err


def test_report_gives_changes_from_the_start_and_differences_to_the_first_variant():
    variants = [rp.Variant.parse("default"), rp.Variant.parse("perturbations=10")]
    results = {
        "a": (1000.0, [(0, "default", 990.0), (0, "perturbations=10", 980.0),
                       (1, "default", 1000.0), (1, "perturbations=10", 1000.0)]),
        "b": (200.0, [(0, "default", 200.0), (0, "perturbations=10", 202.0)]),
    }  # fmt: skip
    text = rp.report(results, variants)
    lines = text.splitlines()
    assert "| a | 0 | 1,000 | -1.00 | -2.00 |" in lines
    assert "| a | 1 | 1,000 | +0.00 | +0.00 |" in lines
    assert "| b | 0 | 200 | +0.00 | +1.00 |" in lines
    # differences to default: a/0 (980-990)/990 = -1.0101%, a/1 0%, b/0 +1%: mean -0.0034%
    assert "| `perturbations=10` | 3 | -0.00 | 1 / 1 |" in lines
    assert "| `default` | 3 | +0.00 | 0 / 0 |" in lines


def test_a_short_run_writes_one_row_per_instance_and_seed(tmp_path, capsys):
    out = tmp_path / "phase.md"
    rp.main(["--only", "hetero-100-0", "--variants", "default", "perturbations=5", "--seeds",
             "0", "--seconds", "0.2", "--start-seconds", "0.5", "--out", str(out)])  # fmt: skip
    lines = out.read_text().splitlines()
    assert lines[0] == "# Routing on a fixed depot set: PyVRP's search parameters"
    rows = [line for line in lines if line.startswith("| hetero-100-0 | 0 |")]
    assert len(rows) == 1
    changes = [float(cell) for cell in rows[0].strip("|").split("|")[3:]]
    assert len(changes) == 2 and all(change <= 0 for change in changes)  # never above the start
    assert any(line.startswith("| `perturbations=5` | 1 |") for line in lines)
    with pytest.raises(SystemExit):
        rp.main(["--only", "hetero-100-0", "--variants", "default", "default"])
    assert "each variant once" in capsys.readouterr().err
