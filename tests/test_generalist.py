"""The generalist's resumable training command (experiments/generalist)."""

from __future__ import annotations

import os
import signal

import pytest
import torch
from test_experiments_imitation import spy_autocast

from experiments.generalist import loop, report, settings
from experiments.generalist.loop import TrainOptions, train
from experiments.training.state import (
    RunState,
    choose_resume,
    load_committed,
    load_local,
    save_committed,
)
from experiments.training.trend import instances_to_target


@pytest.mark.parametrize(
    ("num_loc", "expected"),
    [(20, 64), (25, 64), (32, 50), (50, 32), (100, 16), (150, 11), (200, 8), (400, 8), (1, 64)],
)
def test_batch_size_keeps_customer_nodes_per_batch(num_loc, expected):
    # round(1600 / N) instances, clamped to [8, 64]
    assert settings.batch_size(num_loc) == expected


def test_batch_size_rejects_empty_instances():
    with pytest.raises(ValueError, match="num_loc"):
        settings.batch_size(0)


def test_curriculum_stages_switch_at_their_bound():
    first, last = settings.CURRICULUM[0], settings.CURRICULUM[-1]
    assert settings.stage_at(0) == (0, first)
    assert settings.stage_at(first.until - 1) == (0, first)
    assert settings.stage_at(first.until) == (1, settings.CURRICULUM[1])
    assert settings.stage_at(10**9)[1] == last and last.until is None


def _state(instances: int) -> RunState:
    return RunState(instances=instances)


def test_resume_prefers_the_local_checkpoint_only_when_it_is_ahead():
    committed = (_state(100), {"w": torch.zeros(1)})
    ahead = (_state(150), {"w": torch.ones(1)}, {"opt": 1})
    behind = (_state(100), {"w": torch.ones(1)}, {"opt": 1})
    assert choose_resume(committed, ahead)[0] == "local"
    assert choose_resume(committed, ahead)[3] == {"opt": 1}
    origin, state, weights, optimizer = choose_resume(committed, behind)
    assert (origin, state.instances, optimizer) == ("committed", 100, None)
    assert choose_resume(None, behind)[0] == "local"
    assert choose_resume(None, None) == ("fresh", None, None, None)


def test_resume_keeps_the_optimizer_of_a_local_checkpoint_at_the_committed_point():
    committed = (_state(100), {"w": torch.zeros(1)})
    same = (_state(100), {"w": torch.zeros(1)}, {"opt": 1})
    other_weights = (_state(100), {"w": torch.ones(1)}, {"opt": 1})
    other_names = (_state(100), {"v": torch.zeros(1)}, {"opt": 1})
    origin, state, weights, optimizer = choose_resume(committed, same)
    assert (origin, state.instances, optimizer) == ("committed", 100, {"opt": 1})
    assert weights is committed[1]
    assert choose_resume(committed, other_weights)[3] is None
    assert choose_resume(committed, other_names)[3] is None


def test_committed_state_round_trip_and_bad_fields(tmp_path):
    state = RunState(instances=7, cpu_hours=0.5, commits=["abc"])
    save_committed(state, {"w": torch.arange(3, dtype=torch.float64)}, tmp_path)
    loaded, weights = load_committed(tmp_path)
    assert loaded == state
    assert weights["w"].dtype == torch.float32  # weights are committed in fp32
    (tmp_path / "state.json").write_text('{"instances": 1, "bogus": 2}')
    with pytest.raises(ValueError, match=r"state\.json.*bogus"):
        load_committed(tmp_path)
    (tmp_path / "weights.pt").unlink()
    with pytest.raises(FileNotFoundError, match="weights.pt"):
        load_committed(tmp_path)


def _rows(values, key="families_met", start=1000):
    # instances grow x2 per point
    return [{"instances": start * 2**i, key: v} for i, v in enumerate(values)]


def test_instances_to_target_follows_the_log_linear_trend():
    # value = 2 * log2(n / 1000): reaches 18 at n = 1000 * 2**9
    rows = _rows([2.0 * i for i in range(4)])
    more = instances_to_target(rows, "families_met", 18, higher_is_better=True)
    assert more == pytest.approx(1000 * 2**9 - 1000 * 2**3)


def test_instances_to_target_reached_or_not_on_the_trend():
    rows = _rows([5.0, 4.0, 3.0])
    assert instances_to_target(rows, "families_met", 18, True) is None  # moving away
    assert instances_to_target(rows, "families_met", 3, True) == 0.0  # already there
    assert instances_to_target(rows[:2], "families_met", 18, True) is None  # too few
    falling = _rows([20.0, 16.0, 12.0], key="prins_gap_paper_bks")
    more = instances_to_target(falling, "prins_gap_paper_bks", 11.85, False)
    assert more is not None and more > 0
    flat = _rows([9.0, 9.0, 9.001])  # a nearly flat trend: out of reach, not an overflow
    assert instances_to_target(flat, "families_met", 18, True) == float("inf")


def test_training_rates_split_cpu_and_gpu_work():
    # 1,000 instances on CPU in 0.5 CPU h; 9,000 on a GPU in 0.1 h (whose host CPU time counts)
    state = RunState(instances=10_500, start_instances=500, cpu_hours=0.6, gpu_hours=0.1,
                     gpu_instances=9_000)  # fmt: skip
    rates = report.training_rates(state)
    assert rates == pytest.approx({"cpu": 2_000.0, "gpu": 90_000.0})
    assert report.training_rates(RunState(instances=5, start_instances=5)) == {}


def test_batch_scale_multiplies_the_rule_and_its_bounds():
    assert settings.batch_size(100, scale=8) == 128  # 12,800 customer nodes
    assert settings.batch_size(20, scale=8) == 64 * 8  # the upper bound scales too
    assert settings.batch_size(1000, scale=8) == 8 * 8  # and the lower one
    with pytest.raises(ValueError, match="batch scale"):
        settings.batch_size(50, scale=0)


def test_curve_refuses_rows_with_other_columns(tmp_path):
    report.append_curve(tmp_path, _state(1), 0, {"a": 1.0})
    with pytest.raises(ValueError, match="columns"):
        report.append_curve(tmp_path, _state(2), 0, {"b": 1.0})
    assert [r["instances"] for r in report.read_curve(tmp_path)] == [1.0]


@pytest.fixture
def tiny_run(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "CURRICULUM", (settings.Stage((10, 12), None),))
    calls = []

    def fake_validation(policy):
        calls.append(sum(p.detach().abs().sum().item() for p in policy.parameters()))
        return {"families_met": 1.0, "family_gap_mean": 30.0 - len(calls)}

    def options(**kw):
        base = dict(
            hours=1.0,
            nice=0,
            max_steps=2,
            validate_every=10**9,
            state_dir=tmp_path / "state",
            work_dir=tmp_path / "work",
            report_dir=tmp_path / "report",
            validate_fn=fake_validation,
        )
        return TrainOptions(**{**base, **kw})

    return options, calls, tmp_path


def test_train_runs_resumes_and_writes_the_state_back(tiny_run):
    options, calls, tmp = tiny_run
    torch_threads = torch.get_num_threads()
    try:
        first = train(options())
        start = settings.START_MODEL
        assert first.start_model == start and first.resumes == 1 and first.steps == 2
        # 2 steps of 10-12 customers: round(1600 / N) = 133..160 -> clamped to 64 each
        assert first.instances - first.start_instances == 2 * 64
        assert len(calls) == 2  # at the fresh start and at the end
        committed, weights = load_committed(tmp / "state")
        assert committed.instances == first.instances
        assert load_local(tmp / "work")[0].instances == first.instances
        second = train(options(max_steps=1))
        assert second.resumes == 2 and second.instances == first.instances + 64
        assert second.steps == 3
        assert len(second.commands) == 2  # one command line per train call
        assert all(c.startswith("python -m experiments.generalist") for c in second.commands)
        assert len(report.read_curve(tmp / "report")) == 3
        assert second.best_family_gap == 27.0  # the fake metric improves at every call
        # training changed the weights
        _, new_weights = load_committed(tmp / "state")
        assert any(not torch.equal(weights[k], new_weights[k]) for k in weights)
    finally:
        torch.set_num_threads(torch_threads)


def test_train_stops_cleanly_on_sigterm(tiny_run, monkeypatch):
    options, calls, tmp = tiny_run
    import experiments.generalist.loop as loop

    draw = loop.generate_dataset

    def draw_then_terminate(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # arrives while the first step runs
        return draw(*args, **kwargs)

    monkeypatch.setattr(loop, "generate_dataset", draw_then_terminate)
    before = signal.getsignal(signal.SIGTERM)
    torch_threads = torch.get_num_threads()
    try:
        state = train(options(max_steps=50))
    finally:
        torch.set_num_threads(torch_threads)
    assert state.steps == 1  # the step in progress finished, then the loop stopped
    assert load_committed(tmp / "state")[0].steps == 1
    assert len(calls) == 2  # validated at the start and once more before writing back
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is given back


def test_sigterm_during_the_first_validation_still_writes_the_state(tiny_run):
    options, calls, tmp = tiny_run

    def validate_then_terminate(policy):
        if not calls:
            os.kill(os.getpid(), signal.SIGTERM)
        calls.append(1)
        return {"families_met": 0.0, "family_gap_mean": 1.0}

    torch_threads = torch.get_num_threads()
    try:
        state = train(options(max_steps=50, validate_fn=validate_then_terminate))
    finally:
        torch.set_num_threads(torch_threads)
    assert state.steps == 0
    assert load_committed(tmp / "state")[0].resumes == 1


def test_a_call_refuses_to_start_when_its_validation_could_not_measure_prins(tmp_path, monkeypatch):
    from experiments.generalist import loop

    (tmp_path / report.CURVE).write_text("instances,prins_gap_paper_bks\n1000,20.0\n")
    monkeypatch.delenv("CLRP_BENCHMARKS_DIR", raising=False)
    with pytest.raises(FileNotFoundError, match=r"curve\.csv.*CLRP_BENCHMARKS_DIR"):
        loop.check_validation_inputs(tmp_path)
    options = loop.TrainOptions(hours=1.0, nice=0, state_dir=tmp_path / "state",
                                work_dir=tmp_path / "work", report_dir=tmp_path)  # fmt: skip
    with pytest.raises(FileNotFoundError, match="CLRP_BENCHMARKS_DIR"):
        loop.train(options)  # before any model is built or any step taken
    assert not (tmp_path / "state").exists()
    (tmp_path / report.CURVE).write_text("instances,families_met\n1000,9\n")
    loop.check_validation_inputs(tmp_path)  # no Prins column: nothing to refuse


def test_curve_png_has_three_panels_with_the_targets_where_their_metric_is_logged(
    tmp_path, monkeypatch
):
    from matplotlib.figure import Figure

    drawn = []
    save = Figure.savefig

    def savefig(fig, *args, **kwargs):
        drawn.append([(ax.get_title(), len(ax.get_lines())) for ax in fig.axes])
        return save(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    rows = [
        {"instances": 1000.0, "families_met": 3, "family_gap_mean": 20.0},
        {"instances": 2000.0, "families_met": 5, "family_gap_mean": 18.0},
    ]
    path = report.plot_curve(rows, tmp_path / "curve.png")
    assert path.read_bytes().startswith(b"\x89PNG")
    with_prins = [dict(r, prins_gap_paper_bks=12.0) for r in rows]
    report.plot_curve(with_prins, tmp_path / "prins.png")
    # lines per panel: families (curve + target), gap (curve), Prins (curve + target, or none)
    assert [n for _, n in drawn[0]] == [2, 1, 0] and [n for _, n in drawn[1]] == [2, 1, 2]
    assert drawn[1][2][0] == "Prins x8: gap to the paper's BKS, %"


@pytest.fixture
def plain_run_after():
    yield
    settings.use_run("plain")


def test_the_bias_run_keeps_its_own_folders_and_adds_the_bias(plain_run_after):
    plain = (
        settings.STATE_DIR,
        settings.REPORT_DIR,
        settings.WORK_DIR,
        dict(settings.ARCHITECTURE),
    )
    assert settings.RUN == "plain" and settings.BRANCH_FROM is None
    assert "distance_bias" not in settings.ARCHITECTURE
    settings.use_run("bias")
    assert settings.RUN == "bias" and settings.ARCHITECTURE == {**plain[3], "distance_bias": True}
    assert settings.REPORT_DIR == settings.REPO / "results" / "generalist" / "bias"
    assert settings.STATE_DIR == settings.REPORT_DIR / "state"
    assert settings.WORK_DIR == settings.REPO / "runs" / "generalist-work" / "bias"
    assert settings.BRANCH_FROM == plain[0]  # the plain run's committed state
    settings.use_run("plain")
    assert (settings.STATE_DIR, settings.REPORT_DIR, settings.WORK_DIR) == plain[:3]
    assert settings.ARCHITECTURE == plain[3] and settings.BRANCH_FROM is None
    with pytest.raises(ValueError, match="run: 'wide' is not one of"):
        settings.use_run("wide")


def test_the_bias_run_starts_from_the_plain_runs_state_with_every_alpha_at_zero(
    tiny_run, plain_run_after, monkeypatch
):
    options, calls, tmp = tiny_run
    plain = train(options(max_steps=1))
    plain_weights = load_committed(tmp / "state")[1]
    settings.use_run("bias")
    monkeypatch.setattr(settings, "BRANCH_FROM", tmp / "state")
    seen = []

    def first_validation(policy):
        seen.append({k: v.detach().clone() for k, v in policy.state_dict().items()})
        return {"families_met": 1.0, "family_gap_mean": 20.0}

    bias = train(
        options(
            max_steps=1,
            state_dir=tmp / "bias" / "state",
            work_dir=tmp / "bias" / "work",
            report_dir=tmp / "bias",
            validate_fn=first_validation,
        )
    )
    alphas = [k for k in seen[0] if k not in plain_weights]
    assert alphas and all(k.rsplit(".", 1)[-1].endswith("alpha") for k in alphas)
    assert all(torch.count_nonzero(seen[0][k]) == 0 for k in alphas)
    assert all(torch.equal(seen[0][k], plain_weights[k]) for k in plain_weights)
    # counters continue the plain run's; one step of 64 instances
    assert bias.instances == plain.instances + 64 and bias.start_model.startswith(str(tmp))
    monkeypatch.setattr(settings, "REPO", tmp)  # a parent inside the repository: named relative
    assert loop._branch_policy(tmp / "state")[1].start_model == (
        f"state at {plain.instances} instances"
    )
    assert (tmp / "bias" / "state" / "weights.pt").is_file()
    # the bias's alphas are trained: the committed weights moved them from 0
    trained = load_committed(tmp / "bias" / "state")[1]
    assert any(torch.count_nonzero(trained[k]) for k in alphas)
    assert load_committed(tmp / "state")[0].instances == plain.instances  # parent untouched


def test_a_bias_run_without_a_parent_state_is_refused(tiny_run, plain_run_after, monkeypatch):
    options, _, tmp = tiny_run
    settings.use_run("bias")
    monkeypatch.setattr(settings, "BRANCH_FROM", tmp / "nothing")
    with pytest.raises(ValueError, match="branches from .*nothing, which has no state"):
        train(options(state_dir=tmp / "b" / "state", work_dir=tmp / "b" / "work"))


def test_every_run_validates_on_the_plain_runs_fixed_mixed_sets(plain_run_after):
    import importlib

    from experiments.generalist import validation

    settings.use_run("bias")
    reloaded = importlib.reload(validation)  # as a process that picked the bias run first
    assert reloaded.VAL_DIR == settings.REPO / "results" / "generalist" / "val"
    assert sorted(p.name for p in reloaded.VAL_DIR.glob("mixed_n*.npz")) == [
        f"mixed_n{n}.npz" for n in sorted(reloaded.MIXED_SIZES, key=str)
    ]


def test_a_bf16_call_computes_its_loss_under_autocast_and_names_its_precision(
    tiny_run, monkeypatch
):
    options, calls, tmp = tiny_run
    seen = spy_autocast(monkeypatch, loop)
    threads = torch.get_num_threads()
    try:
        state = train(options(max_steps=1, precision="bf16-mixed"))
        assert seen == [True]
        assert state.hardware[-1].endswith("; bf16-mixed")
        assert calls[0] != calls[-1]  # the step moved the weights
        _, weights = load_committed(tmp / "state")
        assert {w.dtype for w in weights.values()} == {torch.float32}
    finally:
        torch.set_num_threads(threads)
