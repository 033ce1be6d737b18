"""The hard benchmark (``python -m benchmarks.hard``): the families match their pinned checksums
and their description, the gap table's arithmetic, and the resumable runs (fake solvers that
return known solutions stand in for the time-limited ones)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.hard import cli
from benchmarks.hard import families as fam
from benchmarks.hard.bound import Bound
from benchmarks.hard.runs import Entry, RunSpec, benchmark, select
from benchmarks.hard.table import Table, gap, summary_rows, target_rows
from clrp_rl4co.data import CLRPSolution, Route
from clrp_rl4co.data.prodhon import write_prodhon
from clrp_rl4co.evaluation import InstanceResult
from clrp_rl4co.result import SolveResult

#: The description's rules, written out: depots and side of the square per size.
DEPOTS = {100: 10, 200: 15, 300: 20, 400: 25, 500: 30, 600: 30}
SIDE = {100: 50, 200: 50, 300: 100, 400: 100, 500: 150, 600: 150}


@pytest.fixture(scope="module")
def drawn():
    """Every instance of the benchmark, drawn from its seeds: (family, size, k) -> instance."""
    return {(f, n, k): fam.draw(f, n, k) for f, n in fam.every() for k in range(fam.COUNT)}


def test_the_pinned_checksums_cover_every_family_and_size_and_match_draws_and_files(drawn):
    assert set(fam.CHECKSUMS) == {f"{f}-{n}" for f, n in fam.every()}
    assert len(fam.CHECKSUMS) == 5 * 6
    for f, n in fam.every():
        instances = [drawn[f, n, k] for k in range(fam.COUNT)]
        assert fam.checksum(instances) == fam.CHECKSUMS[f"{f}-{n}"], (f, n)
        read = fam.load(f, n)  # the published files
        assert [i.name for i in read] == [f"{f}-{n}-{k}" for k in range(fam.COUNT)]
    assert cli.main(["check"]) == 0


def test_a_changed_file_or_generator_is_refused(tmp_path, monkeypatch):
    instances = fam.load("hetero", 100, root=None)
    changed = instances[1].demand.copy()
    changed[0] += 1
    for inst in instances:
        (tmp_path / "hetero").mkdir(exist_ok=True)
        write_prodhon(inst, tmp_path / "hetero" / f"{inst.name}.dat")
    assert fam.checksum(fam.load("hetero", 100, root=tmp_path)) == fam.CHECKSUMS["hetero-100"]
    from dataclasses import replace

    write_prodhon(replace(instances[1], demand=changed), tmp_path / "hetero" / "hetero-100-1.dat")
    with pytest.raises(ValueError, match=r"hetero/hetero-100-\*\.dat: checksum .* differs"):
        fam.load("hetero", 100, root=tmp_path)
    monkeypatch.setitem(fam.CHECKSUMS, "hetero-100", "0" * 64)
    with pytest.raises(ValueError, match="the draw of hetero-100: checksum"):
        fam.load("hetero", 100, root=None)
    with pytest.raises(ValueError, match="size: 150 customers is not one of"):
        fam.load("hetero", 150)


def test_every_instance_has_the_prodhon_conventions_and_the_size_rules(drawn):
    for (f, n, k), inst in drawn.items():
        assert inst.name == f"{f}-{n}-{k}"
        assert (inst.num_customers, inst.num_depots) == (n, DEPOTS[n])
        assert inst.vehicle_capacity == 70 and inst.vehicle_fixed_cost == 1000
        assert inst.rounded_costs
        for locs in (inst.depot_locs, inst.customer_locs):
            assert np.all(locs == np.round(locs)) and locs.min() >= 0 and locs.max() <= SIDE[n]
        assert np.all(inst.demand == np.round(inst.demand))
        assert inst.demand.min() >= 11 and inst.demand.max() <= 20
        base = drawn["hetero", n, k]  # every family shares the layout at (n, k)
        assert np.array_equal(inst.customer_locs, base.customer_locs)
        assert np.array_equal(inst.depot_locs, base.depot_locs)
        assert np.array_equal(inst.demand, base.demand)


def test_even_instances_are_uniform_and_odd_ones_clustered(drawn):
    for n in fam.SIZES:
        for k in range(fam.COUNT):
            locs = drawn["free", n, k].customer_locs
            dist = np.sqrt(((locs[:, None] - locs[None]) ** 2).sum(-1))
            np.fill_diagonal(dist, np.inf)
            # mean nearest-neighbour distance over its value for uniform points, 0.5 side / sqrt(n)
            ratio = dist.min(1).mean() / (0.5 * SIDE[n] / math.sqrt(n))
            assert (ratio > 0.9) if k == 0 else (ratio < 0.75), (n, k, ratio)


@pytest.mark.parametrize("family", ["hetero", "hetero-spread20", "hetero-tight"])
def test_heterogeneous_depots_follow_the_description(drawn, family):
    spread, ratio = {"hetero": (10, 2), "hetero-spread20": (20, 2), "hetero-tight": (10, 1.5)}[
        family
    ]
    for n in fam.SIZES:
        for k in range(fam.COUNT):
            inst = drawn[family, n, k]
            cap, cost, d = inst.depot_capacity, inst.opening_cost, inst.num_depots
            levels = np.unique(cap)
            assert len(levels) == 3  # small, medium, large
            small, medium, large = levels
            assert large / small == pytest.approx(spread, rel=0.02)
            assert medium / small == pytest.approx(math.sqrt(spread), rel=0.02)
            counts = [int((cap == v).sum()) for v in levels]
            assert counts == [math.ceil(d / 2), d - math.ceil(d / 2) - (d + 3) // 6, (d + 3) // 6]
            assert cap.sum() / inst.demand.sum() == pytest.approx(ratio, rel=0.005)
            # opening cost 7.5 x side x Q^0.8 x a factor in [0.85, 1.15], rounded
            factor = cost / (7.5 * SIDE[n] * cap**0.8)
            assert factor.min() >= 0.85 - 1e-3 and factor.max() <= 1.15 + 1e-3
            by_class = [cost[cap == v] for v in levels]
            for lower, upper in zip(by_class, by_class[1:]):
                assert lower.max() < upper.min()  # costs grow with capacity
            per_unit = [(cost[cap == v] / v).mean() for v in levels]
            assert per_unit[0] > per_unit[1] > per_unit[2]  # economies of scale


@pytest.mark.parametrize("family, ratio", [("free", 4.0), ("free-tight", 2.0)])
def test_nearly_free_depots_follow_the_description(drawn, family, ratio):
    for n in fam.SIZES:
        for k in range(fam.COUNT):
            inst = drawn[family, n, k]
            cap, cost = inst.depot_capacity, inst.opening_cost
            assert cap.max() / cap.min() <= 1.2 / 0.8 + 0.01
            assert cap.sum() / inst.demand.sum() == pytest.approx(ratio, rel=0.005)
            assert cost.min() >= SIDE[n] and cost.max() <= 2 * SIDE[n]
            assert cost.max() <= 0.3 * inst.vehicle_fixed_cost


def test_select_by_family_instance_and_size():
    entries = benchmark()
    assert len(entries) == 60 and [e.index for e in entries] == list(range(60))
    names = [e.name for e in select(entries, ["hetero-tight", "free-300-1"], [300, 400])]
    assert names == ["hetero-tight-300-0", "hetero-tight-300-1", "hetero-tight-400-0",
                     "hetero-tight-400-1", "free-300-1"]  # fmt: skip
    with pytest.raises(ValueError, match=r"--only: \['heter'\] names no family and no instance"):
        select(entries, ["heter"])


# ------------------------------------------------------------------------------- the table
def _row(spec: RunSpec, index: int, cost: float, valid: bool = True) -> InstanceResult:
    return InstanceResult(spec.key, index, f"i{index}", cost, 1.0, valid)


def test_gaps_to_the_best_reference_and_to_the_bound():
    inst = fam.load("free", 300)[0]
    entries = [Entry(i, "free", 300, inst) for i in range(3)]
    auto, ref_h, ref_p = (
        RunSpec("auto", 10),
        RunSpec("hybrid", 600, reference=True),
        RunSpec("pyvrp", 600, reference=True),
    )
    results = {
        auto.key: {0: _row(auto, 0, 103.0), 1: _row(auto, 1, 206.0), 2: _row(auto, 2, 1.0, False)},
        ref_h.key: {0: _row(ref_h, 0, 101.0), 1: _row(ref_h, 1, 200.0)},
        ref_p.key: {0: _row(ref_p, 0, 100.0), 1: _row(ref_p, 1, 1.0, False)},
    }
    table = Table(entries, [auto, ref_h, ref_p], results, {0: 80.0, 1: 160.0})
    assert table.reference(0) == (100.0, "pyvrp 600 s")
    assert table.reference(1) == (200.0, "hybrid 600 s")  # pyvrp's row has no valid solution
    assert table.gaps(auto, 0) == pytest.approx((3.0, 28.75))
    assert table.gaps(auto, 1) == pytest.approx((3.0, 28.75))
    assert table.gaps(auto, 2) == (None, None)
    assert gap(None, 1.0) is None and gap(1.0, math.inf) is None
    summary = {row[2]: row for row in summary_rows(table)}
    # auto: 2 of 3 valid, mean objective 154.5, gaps +3 / +3, to the bound +28.75
    assert summary["auto 10 s"][3:8] == ["2 / 3", "154", "+3.00", "+3.00", "+28.75"]
    assert summary["pyvrp 600 s (ref.)"][3:6] == ["1 / 3", "100", "+0.00"]
    assert target_rows(table) == [["auto 10 s", "2 / 3", "+3.00", "+3.00", "2"]]


# ------------------------------------------------------------------------------- the runs
def _one_route_each(instance, reverse: bool) -> CLRPSolution:
    """Every customer alone on a route, from the first depot (in index order, or reversed)
    with room left."""
    left = instance.depot_capacity.copy()
    order = range(instance.num_depots - 1, -1, -1) if reverse else range(instance.num_depots)
    routes = []
    for j, demand in enumerate(instance.demand):
        depot = next(i for i in order if left[i] >= demand)
        left[depot] -= demand
        routes.append(Route(depot, (j,)))
    return CLRPSolution(routes, tuple(sorted({r.depot for r in routes})))


def _cost(instance, solution: CLRPSolution) -> float:
    """The objective by its definition: opening costs, F per route, ceil(100 d) per arc."""
    total = sum(instance.opening_cost[i] for i in solution.open_depots)
    for route in solution.routes:
        (j,) = route.customers
        d = np.linalg.norm(instance.depot_locs[route.depot] - instance.customer_locs[j])
        total += instance.vehicle_fixed_cost + 2 * math.ceil(100 * d - 1e-9)
    return total


class FakeSolvers:
    """``hybrid`` first-fits the depots in index order, ``pyvrp`` (and ``auto``, which runs
    it) in reverse; ``fail`` names instances whose run raised; the bound is 1000 less than
    the hybrid's cost."""

    def __init__(self, fail=()):
        self.calls: list[tuple[str, str, float]] = []
        self.bounds: list[str] = []
        self.fail = set(fail)

    def solve_many(self, instances, method, seconds, seed, workers, on_result):
        out = []
        for k, inst in enumerate(instances):
            self.calls.append((inst.name, method, seconds))
            ran = "pyvrp" if method == "auto" else method
            if inst.name in self.fail:
                res = SolveResult(None, None, ran, None, 0.0, "failed", error="boom")
            else:
                sol = _one_route_each(inst, reverse=ran == "pyvrp")
                model = "drlhqcf_mixed" if ran == "hybrid" else None
                res = SolveResult(sol, None, ran, model, seconds * 0.9, "feasible")
            on_result(k, res)
            out.append(res)
        return out

    def bound(self, instance, seconds):
        self.bounds.append(instance.name)
        value = _cost(instance, _one_route_each(instance, reverse=False)) - 1000.0
        return Bound(value, "Optimal", 0.5, True)


ARGV = ["run", "--only", "hetero-100-0", "free-200-1", "--seconds", "1", "2",
        "--reference-seconds", "5"]  # fmt: skip


def test_a_run_caches_every_result_and_writes_the_gaps(tmp_path, capsys):
    fake = FakeSolvers()
    argv = [*ARGV, "--out", str(tmp_path)]
    assert cli.main(argv, solve_many=fake.solve_many, bound=fake.bound) == 0
    names = ["hetero-100-0", "free-200-1"]
    assert fake.bounds == names
    runs = [(m, s) for s in (1.0, 2.0) for m in ("auto", "hybrid", "pyvrp")]
    runs += [("hybrid", 5.0), ("pyvrp", 5.0)]
    assert fake.calls == [(name, m, s) for m, s in runs for name in names]
    md = (tmp_path / "table.md").read_text()
    for name in names:
        fam_name, n, k = name.rsplit("-", 2)
        inst = fam.load(fam_name, int(n))[int(k)]
        first = _cost(inst, _one_route_each(inst, reverse=False))
        last = _cost(inst, _one_route_each(inst, reverse=True))
        best, bound = min(first, last), first - 1000.0
        frm = "hybrid 5 s" if first <= last else "pyvrp 5 s"
        assert (f"| {name} | {n} | {inst.num_depots} | {bound:.0f} | {best:.0f} | {frm} | "
                f"{100 * (best - bound) / bound:+.2f} |") in md  # fmt: skip
        auto_gap = 100 * (last - best) / best
        assert (f"| {name} | auto 2 s | {last:.0f} | {auto_gap:+.2f} | "
                f"{100 * (last - bound) / bound:+.2f} | 1.8 | pyvrp |") in md  # fmt: skip
        assert f"| {name} | hybrid 1 s | {first:.0f} |" in md
    assert "| hybrid 1 s | 0 / 0 |" not in md and "No evaluation result at these sizes" in md
    assert (
        "command: `python -m benchmarks.hard run --only hetero-100-0 free-200-1 --seconds 1 2 "
        "--reference-seconds 5 --methods auto hybrid pyvrp" in md
    )
    assert "hybrid (drlhqcf_mixed)" in md and "machine of the runs:" in md
    out = capsys.readouterr().out
    assert "pyvrp 5 s (reference): 2 instances" in out and "free-200-1: auto 1 s: " in out

    again = FakeSolvers()
    assert cli.main(argv, solve_many=again.solve_many, bound=again.bound) == 0
    assert again.calls == [] and again.bounds == []
    assert (tmp_path / "table.md").read_text().split("- command")[1] == md.split("- command")[1]


def test_a_failed_run_is_not_cached_and_runs_again(tmp_path, capsys):
    argv = [*ARGV, "--out", str(tmp_path), "--parts", "evaluation"]
    fake = FakeSolvers(fail={"free-200-1"})
    assert cli.main(argv, solve_many=fake.solve_many, bound=fake.bound) == 1
    assert fake.bounds == []  # not among the parts
    assert "free-200-1: failed: boom" in capsys.readouterr().out
    again = FakeSolvers()
    assert cli.main(argv, solve_many=again.solve_many, bound=again.bound) == 0
    assert again.calls == [("free-200-1", m, s) for s in (1.0, 2.0)
                           for m in ("auto", "hybrid", "pyvrp")]  # fmt: skip


def test_the_table_command_only_reads_and_a_foreign_cache_is_refused(tmp_path):
    fake = FakeSolvers()
    assert cli.main([*ARGV, "--out", str(tmp_path)], fake.solve_many, fake.bound) == 0
    (tmp_path / "table.md").unlink()

    def refuse(*args, **kwargs):
        raise AssertionError("table must not solve")

    argv = ["table", "--only", "hetero-100-0", "--seconds", "1", "2", "--reference-seconds", "5"]
    assert cli.main([*argv, "--out", str(tmp_path)], refuse, refuse) == 0
    md = (tmp_path / "table.md").read_text()
    assert "| hetero-100-0 | auto 1 s |" in md and "free-200-1" not in md
    cached = next((tmp_path / "cache").glob("auto_1s*.jsonl"))
    cached.write_text(cached.read_text().replace('"hetero-100-0"', '"hetero-100-1"'))
    with pytest.raises(ValueError, match="is 'hetero-100-1' in the cache but 'hetero-100-0'"):
        cli.main([*argv, "--out", str(tmp_path)], refuse, refuse)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "--seconds", "0"], "--seconds: must be a positive number of seconds, got '0'"),
        (["run", "--sizes", "150"], "--sizes: invalid choice: 150"),
        (["run", "--workers", "0"], "--workers: must be at least 1, got 0"),
        (["run", "--methods", "sa"], "--methods: invalid choice: 'sa'"),
        (["table", "--table", "sub/t.md"], "--table: must be a file name ending in .md, got"),
        (["run", "--table", "t.csv"], "--table: must be a file name ending in .md, got 't.csv'"),
    ],
)
def test_bad_arguments_name_the_argument_and_value(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_default_reference_budget_is_ten_times_the_longest():
    args = cli.parse(["run"])
    assert args.seconds == [10.0, 60.0] and args.reference_seconds == 600.0
    assert cli.parse(["run", "--seconds", "3"]).reference_seconds == 30.0


def test_end_to_end_with_pyvrp_on_one_instance(tmp_path):
    argv = ["run", "--only", "hetero-100-0", "--seconds", "0.5", "--reference-seconds", "1",
            "--methods", "pyvrp", "--reference-methods", "pyvrp", "--parts", "evaluation",
            "reference", "--out", str(tmp_path)]  # fmt: skip
    assert cli.main(argv) == 0
    md = (tmp_path / "table.md").read_text()
    assert "| hetero-100-0 | pyvrp 0.5 s |" in md and "| hetero-100-0 | pyvrp 1 s (ref.) |" in md


def test_the_command_reports_bad_input_in_one_line(capsys):
    assert cli.command(["table", "--only", "hetero-700-0", "--out", "unused"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --only: ['hetero-700-0'] names no family and no instance")
    assert err.count("\n") == 1


def test_a_run_stopped_early_is_not_cached(tmp_path, capsys):
    class Stopped(FakeSolvers):
        def solve_many(self, instances, method, seconds, seed, workers, on_result):
            sol = _one_route_each(instances[0], reverse=False)
            res = SolveResult(sol, None, method, None, 0.1, "feasible", interrupted=True)
            on_result(0, res)
            return [res]

    argv = ["run", "--only", "hetero-100-0", "--seconds", "1", "--methods", "pyvrp",
            "--parts", "evaluation", "--out", str(tmp_path)]  # fmt: skip
    fake = Stopped()
    assert cli.main(argv, solve_many=fake.solve_many, bound=fake.bound) == 0
    assert "hetero-100-0: pyvrp 1 s: stopped early, not cached" in capsys.readouterr().out
    assert not list((tmp_path / "cache").glob("pyvrp_1s*.jsonl"))


def test_a_second_seed_is_compared_with_the_references_of_the_first(tmp_path):
    """Seed 0 runs everything; seed 1 only its evaluation runs, and its table (a file of its
    own) takes the references of seed 0; without --reference-seed there are none."""
    fake = FakeSolvers()
    assert cli.main([*ARGV, "--out", str(tmp_path)], fake.solve_many, fake.bound) == 0
    first = (tmp_path / "table.md").read_text()
    again = FakeSolvers()
    argv = [*ARGV, "--out", str(tmp_path), "--seed", "1", "--parts", "evaluation"]
    argv += ["--reference-seed", "0", "--table", "table_seed1.md"]
    assert cli.main(argv, again.solve_many, again.bound) == 0
    assert {m for _, m, _ in again.calls} == {"auto", "hybrid", "pyvrp"}
    assert all(s in (1.0, 2.0) for _, _, s in again.calls)  # no reference run
    assert (tmp_path / "table.md").read_text() == first
    md = (tmp_path / "table_seed1.md").read_text()
    inst = fam.load("hetero", 100)[0]
    cost = _cost(inst, _one_route_each(inst, reverse=False))
    assert f"| hetero-100-0 | hybrid 1 s | {cost:.0f} | +" in md  # a gap: a reference
    assert "seed 1 (references: seed 0)" in md
    assert "--seed 1 --reference-seed 0 --out" in md and "--table table_seed1.md" in md
    assert cli.main(["table", *ARGV[1:], "--out", str(tmp_path), "--seed", "1", "--table",
                     "alone.md"], again.solve_many, again.bound) == 0  # fmt: skip
    assert f"| hetero-100-0 | hybrid 1 s | {cost:.0f} |  | " in (tmp_path / "alone.md").read_text()
