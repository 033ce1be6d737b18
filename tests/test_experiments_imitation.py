"""The imitation-against-POMO harness (experiments/imitation/): the labels' charge, the arms'
phases and counters, resuming, the curve and the comparison at equal CPU hours."""

from __future__ import annotations

import pytest
import torch
from test_imitation import TINY, expert_data

from clrp_rl4co.models import build_policy
from experiments.imitation import __main__ as command
from experiments.imitation import curve, loop, settings
from experiments.imitation.loop import ArmOptions, train
from experiments.imitation.state import ArmState
from experiments.labels.shards import Shard, labels_charge, write_shard
from experiments.training.state import load_committed, load_local


def write_shard_of(data, path, cpu_seconds, objectives) -> None:
    from clrp_rl4co.data import CLRPSolution

    rows = [CLRPSolution.from_actions(r, 5).to_actions(5) for r in data.actions.tolist()]
    n = len(cpu_seconds)
    write_shard(
        Shard(data.instances, rows[:n], list(objectives), list(cpu_seconds), [0.0] * n, {}), path
    )


@pytest.fixture
def labels(tmp_path):
    folder = tmp_path / "labels"
    folder.mkdir()
    write_shard_of(
        expert_data("clrp10", 3, seed=1),
        folder / "shard_00000.npz",
        [360.0] * 3,
        [10.0, 11.0, 12.0],
    )
    write_shard_of(
        expert_data("clrp10", 3, seed=2), folder / "shard_00001.npz", [720.0] * 2, [13.0, 14.0]
    )
    return folder


def test_the_labels_charge_counts_the_first_labels_in_shard_order(labels):
    every = labels_charge(labels)
    assert every["count"] == 5
    assert every["cpu_hours"] == pytest.approx((3 * 360 + 2 * 720) / 3600)
    assert every["mean_objective"] == pytest.approx(12.0)
    first = labels_charge(labels, limit=4)
    assert first["count"] == 4
    assert first["cpu_hours"] == pytest.approx((3 * 360 + 720) / 3600)
    assert first["mean_objective"] == pytest.approx((10 + 11 + 12 + 13) / 4)


@pytest.fixture
def arms(tmp_path, labels, monkeypatch):
    monkeypatch.setattr(settings, "PRESET", "clrp10")
    torch.manual_seed(0)
    start = tmp_path / "start" / "tiny"
    build_policy("drlhq", **TINY).save_pretrained(start)
    evaluations = []

    def fake_evaluation(policy):
        evaluations.append(sum(float(p.detach().abs().sum()) for p in policy.parameters()))
        return 30.0 - len(evaluations)

    def options(arm, **kw):
        base = dict(
            arm=arm,
            hours=1.0,
            nice=0,
            max_steps=3,
            report_dir=tmp_path / "report",
            work_dir=tmp_path / "work",
            labels_dir=labels,
            evaluate_fn=fake_evaluation,
            start_model=str(start),
            pomo_batch=4,
            imitation_batch=2,
            imitation_epochs=1,
            eval_every_cpu_hours=1e9,
            compile=False,  # a few steps of a tiny model (one test compiles)
        )
        return ArmOptions(**{**base, **kw})

    threads = torch.get_num_threads()
    yield options, evaluations, tmp_path
    torch.set_num_threads(threads)


def test_the_imitation_arm_is_charged_its_labels_then_turns_to_pomo(arms):
    options, evaluations, tmp = arms
    first = train(options("imitation", max_steps=2))
    # 5 labels, 2 per step: 4 examples after 2 steps, still in the imitation pass
    assert first.phase == "imitation" and first.examples == 4 and first.instances == 4
    assert first.label_count == 5
    assert first.label_cpu_hours == pytest.approx((3 * 360 + 2 * 720) / 3600)
    assert first.charged_cpu_hours == pytest.approx(first.cpu_hours + first.label_cpu_hours)
    second = train(options("imitation", max_steps=2))
    # the 3rd step takes the pass's last label (5 examples: the pass is done), then one POMO
    # step of 4 instances
    assert second.phase == "pomo" and second.examples == 5 and second.instances == 9
    assert second.resumes == 2 and second.steps == 4
    assert len(evaluations) == 3  # at the arm's start and at the end of each call
    rows = curve.read_points(tmp / "report")
    assert [r["phase"] for r in rows] == ["imitation", "imitation", "pomo"]
    assert [r["pomo_instances"] for r in rows] == [0, 0, 4]
    assert [r["imitation_examples"] for r in rows] == [0, 4, 5]
    assert load_committed(tmp / "report" / "imitation", ArmState)[0].steps == 4
    assert load_local(tmp / "work" / "imitation", ArmState)[0].steps == 4


def test_the_pomo_arm_has_no_labels_and_changes_its_weights(arms):
    options, evaluations, tmp = arms
    state = train(options("pomo", max_steps=2))
    assert state.phase == "pomo" and state.label_count == 0 and state.label_cpu_hours == 0.0
    assert state.instances == 8 and state.examples == 0
    assert state.charged_cpu_hours == state.cpu_hours > 0
    assert evaluations[0] != evaluations[-1]  # trained between the two evaluations
    assert state.commands[0].startswith("python -m experiments.imitation")


def test_an_evaluation_every_so_many_cpu_hours(arms):
    options, evaluations, tmp = arms
    train(options("pomo", max_steps=3, eval_every_cpu_hours=1e-12))
    assert len(evaluations) == 1 + 3  # the start, then after every step (none left at the end)


def test_an_unknown_arm_is_refused(arms):
    options, _, _ = arms
    with pytest.raises(ValueError, match="arm: 'both' is not one of"):
        train(options("both"))


def _state(arm: str, hours: float, labels: float = 0.0) -> ArmState:
    return ArmState(arm=arm, cpu_hours=hours, label_cpu_hours=labels)


def test_the_comparison_is_at_the_hours_both_arms_reached(tmp_path):
    for arm, hours, labels, x8 in [
        ("pomo", 0.0, 0.0, 28.4),
        ("imitation", 0.0, 1.0, 28.4),
        ("pomo", 1.0, 0.0, 28.2),
        ("pomo", 2.0, 0.0, 28.1),
        ("imitation", 1.0, 1.0, 27.9),  # 2.0 charged
        ("pomo", 3.0, 0.0, 28.0),
    ]:
        curve.append_point(tmp_path, _state(arm, hours, labels), x8, 1.0)
    both = curve.comparison(curve.read_points(tmp_path))
    assert both["value"] == 2.0  # the imitation arm's furthest point
    assert both["points"]["pomo"]["x8"] == 28.1 and both["points"]["imitation"]["x8"] == 27.9
    assert both["leader"] == "imitation"
    assert curve.comparison([r for r in curve.read_points(tmp_path) if r["arm"] == "pomo"]) is None
    # a branch starts at its parent's hours: the comparison of the others is unchanged
    curve.append_point(tmp_path, _state("pomo-slow", 3.0), 27.0, 1.0)
    assert curve.comparison(curve.read_points(tmp_path)) == both


def test_an_arm_is_paired_with_its_control_from_the_branch_point_on(restore_preset):
    settings.use_preset("clrp100")  # pomo-leader's control is the pomo arm itself
    rows = [
        {"arm": "pomo", "charged_cpu_hours": h, "x8": x}
        for h, x in [(1.0, 57.9), (1.5, 57.8), (2.0, 57.6), (2.6, 57.5), (3.1, 57.45), (3.6, 57.4)]
    ] + [
        {"arm": "pomo-leader", "charged_cpu_hours": h, "x8": x}
        # the branch point's evaluation (the parent's weights), then 2.5, 3.0, 3.5; 4.0 is beyond
        # the hours the control has reached
        for h, x in [(2.0, 57.6), (2.5, 57.55), (3.0, 57.3), (3.5, 57.5), (4.0, 57.0)]
    ]
    pair = curve.control_comparison(rows, "pomo-leader", "pomo")
    assert pair["start"] == 2.0 and pair["end"] == 3.6
    # 2.5 meets nothing after the branch point at or before it (2.0 is the branch point)
    assert pair["pairs"] == [(57.3, 57.5), (57.5, 57.45)]
    assert pair["means"] == pytest.approx((57.4, 57.475)) and pair["lower"] == 1
    text = "\n".join(curve._control_lines(rows))
    assert "mean x8 57.4000 against 57.4750 (-0.0750); pomo-leader lower in 1 of 2." in text
    assert "from the branch point at 2.00 CPU h to 3.60" in text
    # evaluations a few CPU seconds apart are at the same hours: 2.995 meets the control's 3.0
    close = [{"arm": "pomo", "charged_cpu_hours": 2.0, "x8": 57.6},
             {"arm": "pomo", "charged_cpu_hours": 3.0, "x8": 57.5},
             {"arm": "pomo-leader", "charged_cpu_hours": 2.0, "x8": 57.6},
             {"arm": "pomo-leader", "charged_cpu_hours": 2.995, "x8": 57.4}]  # fmt: skip
    assert curve.control_comparison(close, "pomo-leader", "pomo")["pairs"] == [(57.4, 57.5)]
    close[1]["charged_cpu_hours"] = 3.02  # beyond the tolerance: the control has not got there
    assert curve.control_comparison(close, "pomo-leader", "pomo") is None
    only_start = [r for r in rows if r["arm"] == "pomo" or r["charged_cpu_hours"] == 2.0]
    assert curve.control_comparison(only_start, "pomo-leader", "pomo") is None
    assert "no evaluations to pair yet" in "\n".join(curve._control_lines(only_start))


def test_the_command_line_takes_every_presets_arms_and_the_preset_holds_them_to_its_own(
    restore_preset,
):
    parser = command._parser()
    args = parser.parse_args(
        ["--preset", "clrp100", "train", "--arm", "pomo-leader", "--hours", "1"]
    )
    assert (args.preset, args.arm) == ("clrp100", "pomo-leader")
    assert args.compile is None  # the package's rule decides
    train_args = ["train", "--arm", "pomo", "--hours", "1"]
    assert parser.parse_args([*train_args, "--no-compile"]).compile is False
    assert parser.parse_args([*train_args, "--compile"]).compile is True
    assert parser.parse_args(["--preset", "clrp100", "ship", "--arm", "pomo-leader"]).arm == (
        "pomo-leader"
    )
    assert settings.all_arms() == (
        *settings.ARMS,
        "pomo-leader",
        "leader8-aug",
        "leader8-deep",
    )  # each once
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "--arm", "no-such-arm", "--hours", "1"])
    with pytest.raises(ValueError, match="'pomo-leader' is not one of clrp50's arms"):
        command.main(["train", "--arm", "pomo-leader", "--hours", "0"])


def test_behind_picks_the_arm_with_fewer_charged_hours():
    assert command.behind_arm({"pomo": None, "imitation": _state("imitation", 0, 1)}) == "pomo"
    states = {"pomo": _state("pomo", 1.5), "imitation": _state("imitation", 0.2, 1.0)}
    assert command.behind_arm(states) == "imitation"
    states["imitation"] = _state("imitation", 0.6, 1.0)
    assert command.behind_arm(states) == "pomo"
    # a GPU arm not started yet (or at fewer CPU hours) is not the CPU's to train
    assert command.behind_arm({**states, "wide": None, "pomo-gpu": _state("pomo-gpu", 0)}) == (
        "pomo"
    )


def _committed_arms(folder, points) -> None:
    """One evaluation and a committed state per ``(arm, hours, labels, x8)``."""
    from experiments.training.state import save_committed

    for arm, hours, labels, x8 in points:
        state = _state(arm, hours, labels)
        curve.append_point(folder, state, x8, 1.0)
        save_committed(state, {"w": torch.zeros(1)}, folder / arm)


def test_the_report_names_the_leader(tmp_path):
    _committed_arms(tmp_path, [("pomo", 1.0, 0.0, 28.0), ("imitation", 0.5, 0.5, 28.3)])
    text = command.write_report(tmp_path).read_text()
    assert "**pomo** leads" in text and "At 1.00 CPU hours" in text
    assert (tmp_path / curve.CURVE_PNG).is_file()


def test_the_report_says_when_the_arms_share_no_hours_yet(tmp_path):
    _committed_arms(tmp_path, [("pomo", 0.5, 0.0, 28.0), ("imitation", 0.2, 0.9, 28.3)])
    text = command.write_report(tmp_path).read_text()
    assert "the arms share no CPU hours (pomo 0.50-0.50, imitation 1.10-1.10)" in text


@pytest.mark.parametrize("preset", ["clrp50", "clrp100"])
def test_the_intro_names_each_leader_doubling_its_parent_weight_and_control(preset, restore_preset):
    settings.use_preset(preset)
    intro = " ".join(command._intro())
    # every arm whose only change from a leader arm is the weight: leader8 at both sizes
    doublings = {
        arm: parent
        for arm, parent in settings.BRANCHES.items()
        if arm in settings.LEADER_WEIGHTS
        and parent in settings.LEADER_WEIGHTS
        and arm not in settings.TRAIN_COPIES
        and settings.LEADER_WEIGHTS[arm] != settings.LEADER_WEIGHTS[parent]
    }
    assert "leader8" in doublings
    for arm, parent in doublings.items():
        weight = settings.LEADER_WEIGHTS[arm]
        assert weight == 2 * settings.LEADER_WEIGHTS[parent]  # each doubles its parent's
        assert (
            f"`{arm}` from `{parent}`'s state: POMO on one CPU thread (batch 64, Adam "
            f"{settings.pomo_lr(parent):g}, leader reward weight {weight:g}), "
            f"`{settings.CONTROLS[arm]}` going on beside it as its control"
        ) in intro


#: What the one-change branches add to their recipe line.
COPIES = "each instance's 8 dihedral copies one group"
GROWN = "the encoder grown from 3 to 6 layers, the new ones starting as the identity at Adam 0.0001"


@pytest.mark.parametrize(
    ("preset", "arm", "parent", "weight", "batch", "change"),
    [
        ("clrp50", "leader16-aug", "leader16", 16, 8, COPIES),
        ("clrp100", "leader8-aug", "leader8", 8, 8, COPIES),
        ("clrp50", "leader16-deep", "leader16", 16, 64, GROWN),
        ("clrp100", "leader8-deep", "leader8", 8, 64, GROWN),
    ],
)
def test_the_intro_names_a_one_change_branch_with_its_change_and_control(
    preset, arm, parent, weight, batch, change, restore_preset
):
    settings.use_preset(preset)
    intro = " ".join(command._intro())
    assert (
        f"`{arm}` from `{parent}`'s state: POMO on one CPU thread (batch {batch}, Adam "
        f"{settings.pomo_lr(parent):g}, leader reward weight {weight}, {change}), `{parent}` "
        "going on beside it as its control"
    ) in intro
    # the parent's weight, rate and rollouts a step (8 instances' 8 copies make as many as 64
    # instances): the copies, or the depth (whose new layers bring their own rate), the one change
    assert settings.BRANCHES[arm] == settings.CONTROLS[arm] == parent
    assert settings.LEADER_WEIGHTS[arm] == settings.LEADER_WEIGHTS[parent]
    assert settings.pomo_lr(arm) == settings.pomo_lr(parent)
    assert settings.pomo_batch(arm) * settings.train_augment(arm) == settings.pomo_batch(parent)


def test_the_intro_names_the_arm_at_a_higher_rate_with_its_weight_and_rate():
    intro = " ".join(command._intro())
    # leader16's weight, four times its rate (2.5e-05), no control going on beside it
    assert (
        "`leader16-swa` from `leader16`'s state: POMO on one CPU thread (batch 64, Adam 0.0001, "
        "leader reward weight 16); "
    ) in intro
    assert "leader16-swa" not in settings.CONTROLS
    assert settings.pomo_batch("leader16-swa") == settings.pomo_batch("leader16")
    assert settings.train_augment("leader16-swa") == 1


def test_a_grown_branch_starts_from_its_parents_weights_in_a_deeper_encoder(arms, monkeypatch):
    from experiments.imitation.growth import encoder_layers
    from experiments.imitation.state import arm_policy

    options, _, tmp = arms
    layers = TINY["num_encoder_layers"]
    monkeypatch.setattr(settings, "BRANCHES", {"deep": "pomo"})
    monkeypatch.setattr(settings, "POMO_LRS", {"deep": 2.5e-5})
    monkeypatch.setattr(settings, "GROWN_ARMS", {"deep": (layers, layers + 2)})
    monkeypatch.setattr(settings, "ARMS", (*settings.ARMS, "deep"))
    train(options("pomo", max_steps=2))
    parent_weights = load_committed(tmp / "report" / "pomo", ArmState)[1]
    groups = []
    real_adam = torch.optim.Adam

    def spy_adam(params, **kw):
        params = list(params)
        groups.append(params)
        return real_adam(params, **kw)

    monkeypatch.setattr(torch.optim, "Adam", spy_adam)
    seen = []

    def first_evaluation(policy):
        seen.append((policy, {k: v.clone() for k, v in policy.state_dict().items()}))
        return 1.0

    train(options("deep", max_steps=1, evaluate_fn=first_evaluation))
    grown, first = seen[0]
    assert len(encoder_layers(grown)) == layers + 2
    # evaluated first with the parent's weights, in the grown encoder
    assert all(torch.equal(first[k], parent_weights[k]) for k in parent_weights)
    assert len(first) > len(parent_weights)
    # two groups: the parent's parameters at the arm's rate, the new layers' at their own
    (grouped,) = groups
    assert [g["lr"] for g in grouped] == [2.5e-5, settings.GROWN_LAYER_LR]
    named = dict(grown.named_parameters())
    new_names = {k for k in named if k not in parent_weights}
    assert sum(p.numel() for p in grouped[1]["params"]) == sum(named[k].numel() for k in new_names)
    # the committed state loads into the arm's own (grown) architecture
    state, weights = load_committed(tmp / "report" / "deep", ArmState)
    policy = arm_policy(weights, options("deep").start_model, "deep")
    assert len(encoder_layers(policy)) == layers + 2
    assert all(torch.equal(policy.state_dict()[k], weights[k]) for k in weights)


def test_a_grown_branch_refuses_a_parent_of_another_depth(arms, monkeypatch):
    options, _, tmp = arms
    layers = TINY["num_encoder_layers"]
    monkeypatch.setattr(settings, "BRANCHES", {"deep": "pomo"})
    monkeypatch.setattr(settings, "GROWN_ARMS", {"deep": (layers + 1, layers + 3)})
    monkeypatch.setattr(settings, "ARMS", (*settings.ARMS, "deep"))
    train(options("pomo", max_steps=1))
    with pytest.raises(ValueError, match=f"'deep' grows {layers + 1} encoder layers; its parent"):
        train(options("deep", max_steps=1))


def test_a_new_leader_arm_reaches_the_intro_from_the_settings_tables(monkeypatch):
    arms = (*settings.preset_arms(), "leader64")
    monkeypatch.setitem(settings.PRESET_ARMS, "clrp50", arms)
    monkeypatch.setitem(settings.BRANCHES, "leader64", "leader32")
    monkeypatch.setitem(settings.CONTROLS, "leader64", "leader32")
    monkeypatch.setitem(settings.LEADER_WEIGHTS, "leader64", 64.0)
    intro = " ".join(command._intro())
    assert (
        "`leader64` from `leader32`'s state: POMO on one CPU thread (batch 64, Adam 0.0001, "
        "leader reward weight 64), `leader32` going on beside it as its control"
    ) in intro


def test_the_comparison_by_pomo_instances_and_the_window_mean(tmp_path):
    # POMO instances are hours x 10,000 for pomo, x 5,000 for imitation (a shared core).
    for arm, hours, labels, x8 in [
        ("pomo", 0.0, 0.0, 28.4),
        ("pomo", 1.0, 0.0, 28.3),
        ("pomo", 2.0, 0.0, 28.1),
        ("pomo", 3.0, 0.0, 28.2),
        ("imitation", 0.0, 1.0, 28.4),
        ("imitation", 2.0, 1.0, 28.25),
        ("imitation", 4.0, 1.0, 28.15),
    ]:
        state = _state(arm, hours, labels)
        state.instances = int(hours * (10_000 if arm == "pomo" else 5_000))
        curve.append_point(tmp_path, state, x8, 1.0)
    rows = curve.read_points(tmp_path)
    by_hours = curve.comparison(rows)
    assert by_hours["value"] == 3.0  # pomo's furthest charged hours (imitation reached 5.0)
    assert by_hours["points"]["imitation"]["x8"] == 28.25 and by_hours["leader"] == "pomo"
    by_instances = curve.comparison(rows, key="pomo_instances")
    assert by_instances["value"] == 20_000  # the imitation arm's furthest
    assert by_instances["points"]["pomo"]["x8"] == 28.1
    assert by_instances["points"]["imitation"]["x8"] == 28.15
    assert by_instances["leader"] == "pomo"
    # the mean of the last WINDOW (4) evaluations up to there: pomo 28.4, 28.3, 28.1
    assert by_instances["means"]["pomo"] == pytest.approx((28.4 + 28.3 + 28.1) / 3)
    assert by_instances["mean_leader"] == "imitation"  # (28.4 + 28.25 + 28.15) / 3 = 28.2667
    assert curve.window_mean(rows, "pomo", 3.0, count=2) == pytest.approx((28.1 + 28.2) / 2)
    assert curve.window_mean(rows, "pomo", -1.0) is None


def test_the_start_is_pinned_beside_the_report_and_resolved_from_the_repository(tmp_path):
    from clrp_rl4co.pretrained import pretrained_files

    resolved = settings.start_model_path()
    assert resolved == str(settings.ROOT / settings.START_MODEL)
    weights, config = pretrained_files(resolved)
    assert weights.parent == settings.REPORT_DIR / "start" and weights.stem == settings.START_NAME
    # a shipped name or an absolute path passes unchanged
    assert settings.start_model_path("drlhq_clrp50") == "drlhq_clrp50"
    assert settings.start_model_path(str(tmp_path / "m")) == str(tmp_path / "m")


def test_a_branch_starts_from_its_parents_committed_state_at_its_own_rate(arms, monkeypatch):
    options, evaluations, tmp = arms
    monkeypatch.setattr(settings, "BRANCHES", {"pomo-slow": "pomo"})
    monkeypatch.setattr(settings, "POMO_LRS", {"pomo-slow": 2.5e-5})
    with pytest.raises(ValueError, match="branches from the 'pomo' arm, which has no committed"):
        train(options("pomo-slow"))
    parent = train(options("pomo", max_steps=2))
    parent_weights = load_committed(tmp / "report" / "pomo", ArmState)[1]
    rates = []
    real_adam = torch.optim.Adam

    def spy_adam(params, lr, **kw):
        rates.append(lr)
        return real_adam(params, lr=lr, **kw)

    monkeypatch.setattr(torch.optim, "Adam", spy_adam)
    seen = []

    def first_evaluation(policy):
        seen.append({k: v.clone() for k, v in policy.state_dict().items()})
        return 1.0

    branch = train(options("pomo-slow", max_steps=1, evaluate_fn=first_evaluation))
    assert rates == [2.5e-5]
    # evaluated first with the parent's weights, then trained one step of 4 from its counters
    assert all(torch.equal(seen[0][k], parent_weights[k]) for k in parent_weights)
    assert len(seen) == 2
    assert not all(torch.equal(seen[1][k], parent_weights[k]) for k in parent_weights)
    assert branch.arm == "pomo-slow" and branch.instances == parent.instances + 4
    assert branch.steps == parent.steps + 1 and branch.cpu_hours > parent.cpu_hours
    assert load_committed(tmp / "report" / "pomo", ArmState)[0].instances == parent.instances
    rows = [r for r in curve.read_points(tmp / "report") if r["arm"] == "pomo-slow"]
    assert [r["pomo_instances"] for r in rows] == [parent.instances, parent.instances + 4]
    assert settings.pomo_lr("pomo") == settings.POMO_LR


def test_a_killed_call_keeps_what_it_evaluated(arms):
    # evaluations after every step; the third one never returns (the process is killed)
    options, _, tmp = arms
    calls = []

    def evaluation_then_kill(policy):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return 30.0

    with pytest.raises(KeyboardInterrupt):
        train(
            options("pomo", max_steps=5, eval_every_cpu_hours=0.0, evaluate_fn=evaluation_then_kill)
        )
    state = load_committed(tmp / "report" / "pomo", ArmState)[0]
    assert state.steps == 1 and state.instances == 4  # the first step's evaluation
    assert [r["pomo_instances"] for r in curve.read_points(tmp / "report")] == [0, 4]


def test_an_arms_batch_is_its_own_and_the_gpu_arms_take_eight_times_as_many():
    assert settings.pomo_batch("pomo") == settings.POMO_BATCH == 64
    assert settings.pomo_batch("pomo-gpu") == settings.pomo_batch("pomo-gpu-slow") == 8 * 64
    assert settings.pomo_lr("pomo-gpu") == settings.POMO_LR
    assert settings.pomo_lr("pomo-gpu-slow") == settings.pomo_lr("pomo-slow")
    assert settings.BRANCHES["pomo-gpu"] == settings.BRANCHES["pomo-gpu-slow"] == "pomo-slow"


def test_without_a_batch_option_the_arm_trains_on_its_own_batch(arms, monkeypatch):
    options, _, _ = arms
    monkeypatch.setattr(settings, "POMO_BATCHES", {"pomo": 3})
    state = train(options("pomo", max_steps=2, pomo_batch=None))
    assert state.instances == 6 and state.steps == 2
    assert state.gpu_hours == 0.0 and state.gpu_instances == 0 and state.cpu_hours > 0


def test_the_imitation_phase_is_refused_on_an_accelerator(arms):
    options, _, _ = arms
    with pytest.raises(ValueError, match="device: 'cuda'; the imitation phase trains on the CPU"):
        train(options("imitation", device="cuda"))


@pytest.fixture
def restore_preset():
    yield
    settings.use_preset("clrp50")


def test_a_preset_points_the_arms_at_its_own_start_report_and_checkpoints(restore_preset):
    clrp50 = (settings.START_MODEL, settings.REPORT_DIR, settings.WORK_DIR, settings.LABELS_DIR)
    settings.use_preset("clrp100")
    assert settings.PRESET == "clrp100" and settings.START_NAME == "drlhq_clrp100"
    assert settings.START_MODEL == "results/imitation/clrp100/start/drlhq_clrp100"
    assert settings.REPORT_DIR == settings.ROOT / "results" / "imitation" / "clrp100"
    # clrp100's arm is named as clrp50's first arm: its local checkpoints live apart
    assert settings.WORK_DIR == settings.ROOT / "runs" / "imitation-work" / "clrp100"
    assert settings.LABELS_DIR == settings.ROOT / "datasets" / "labels" / "clrp100"
    assert settings.preset_arms() == (
        "pomo",
        "pomo-gpu",
        "pomo-leader",
        "pomo-slow",
        "pomo-slower",
        "leader",
        "leader8",
        "leader8-aug",
        "leader8-deep",
    )
    assert settings.shipped_name() == "drlhq_clrp100"
    # clrp100's GPU, leader-reward and slow arms continue its pomo arm, the slower one the slow
    assert settings.BRANCHES == {
        "pomo-gpu": "pomo",
        "pomo-leader": "pomo",
        "pomo-slow": "pomo",
        "pomo-slower": "pomo-slow",
        "leader": "pomo-slow",
        "leader8": "leader",
        "leader8-aug": "leader8",
        "leader8-deep": "leader8",
    }
    # the slow arm goes on at a quarter of the pomo arm's rate, the slower at a quarter of that
    assert settings.pomo_lr("pomo-slow") == 2.5e-5 and settings.pomo_batch("pomo-slow") == 64
    assert settings.pomo_lr("pomo-slower") == 6.25e-6
    assert settings.pomo_batch("pomo-slower") == 64
    # the leader arm differs from its control (the pomo arm) in the loss alone
    assert settings.pomo_lr("pomo-leader") == settings.pomo_lr("pomo") == 1e-4
    assert settings.pomo_batch("pomo-leader") == settings.pomo_batch("pomo") == 64
    assert settings.LEADER_WEIGHTS["pomo-leader"] == 4.0 and "pomo" not in settings.LEADER_WEIGHTS
    # clrp100's leader arm differs from pomo-slow, its control from the branch point, in the loss
    assert settings.CONTROLS == {
        "pomo-leader": "pomo",
        "leader": "pomo-slow",
        "leader8": "leader",
        "leader8-aug": "leader8",
        "leader8-deep": "leader8",
    }
    assert settings.pomo_lr("leader") == settings.pomo_lr("pomo-slow")
    assert settings.pomo_batch("leader") == settings.pomo_batch("pomo-slow")
    assert settings.LEADER_WEIGHTS["leader"] == 4.0 and "pomo-slow" not in settings.LEADER_WEIGHTS
    # clrp100's leader8 differs from leader, its control, in the leader reward's weight alone
    assert settings.LEADER_WEIGHTS["leader8"] == 2 * settings.LEADER_WEIGHTS["leader"]
    assert settings.pomo_lr("leader8") == settings.pomo_lr("leader")
    assert settings.pomo_batch("leader8") == settings.pomo_batch("leader")
    assert settings.eval_every_cpu_hours() == 0.5
    settings.check_arm("pomo")
    with pytest.raises(ValueError, match="'pomo16' is not one of clrp100's arms"):
        settings.check_arm("pomo16")
    # the pinned start is the shipped clrp100 model's file
    assert settings.start_model_path(settings.START_MODEL) == str(
        settings.ROOT / settings.START_MODEL
    )
    settings.use_preset("clrp50")
    # back at clrp50, its leader arm's control is its own
    assert settings.CONTROLS == {
        "leader": "pomo-cpu-slow",
        "leader8": "leader",
        "leader16": "leader8",
        "leader32": "leader16",
        "leader16-aug": "leader16",
        "leader16-deep": "leader16",
    }
    assert (settings.START_MODEL, settings.REPORT_DIR, settings.WORK_DIR) == clrp50[:3]
    assert settings.LABELS_DIR == clrp50[3] and settings.eval_every_cpu_hours() == 0.25
    assert settings.shipped_name() == "drlhq_clrp50"
    assert settings.BRANCHES["pomo-gpu"] == "pomo-slow"
    with pytest.raises(ValueError, match="preset: 'clrp20' is not one of"):
        settings.use_preset("clrp20")


def test_an_arm_of_another_preset_trains_and_reports_in_that_presets_folders(
    arms, restore_preset, monkeypatch
):
    options, _, tmp = arms
    monkeypatch.setattr(settings, "ROOT", tmp)
    settings.use_preset("clrp100")
    generated = []
    real = loop.CLRPGenerator

    def spy_generator(preset):
        generated.append(preset)
        return real(preset=preset)

    monkeypatch.setattr(loop, "CLRPGenerator", lambda preset: spy_generator(preset))
    state = train(options("pomo", max_steps=1, report_dir=None, work_dir=None))
    assert generated == ["clrp100"] and state.instances == 4
    assert (tmp / "results" / "imitation" / "clrp100" / "pomo" / "state.json").is_file()
    assert (tmp / "runs" / "imitation-work" / "clrp100" / "pomo").is_dir()
    report = (tmp / "results" / "imitation" / "clrp100" / "curve.csv").read_text()
    assert report.count("\npomo,") == 2  # the start's evaluation and the step's


def test_an_arms_hours_name_its_gpu_hours_when_it_had_some():
    from experiments.imitation.state import hours_label

    state = ArmState(arm="pomo", cpu_hours=12.836, label_cpu_hours=0.5)
    assert hours_label(state) == "13.34 CPU h"
    state.gpu_hours = 0.169
    assert hours_label(state) == "13.34 CPU h + 0.17 GPU h"


def test_the_latest_point_of_a_gpu_arm_is_its_last_row_at_its_parents_hours():
    rows = [
        {"arm": "pomo-gpu", "charged_cpu_hours": 12.8, "x8": 27.85},
        {"arm": "pomo-gpu", "charged_cpu_hours": 12.8, "x8": 27.83},
        {"arm": "pomo", "charged_cpu_hours": 13.0, "x8": 27.90},
        {"arm": "pomo-gpu", "charged_cpu_hours": 12.8, "x8": 27.86},
    ]
    assert curve.latest_at(rows, "pomo-gpu", float("inf"))["x8"] == 27.86
    assert curve.latest_at(rows, "pomo", 12.9) is None


def test_a_scratch_arm_starts_from_random_weights_of_its_own_architecture(arms, monkeypatch):
    from experiments.imitation import ship as shipping
    from experiments.imitation.state import arm_policy

    options, _, tmp = arms
    wide = {**TINY, "embed_dim": 2 * TINY["embed_dim"]}
    monkeypatch.setattr(settings, "SCRATCH_ARMS", {"wide": wide})
    seen = []

    def first_evaluation(policy):
        seen.append({k: v.clone() for k, v in policy.state_dict().items()})
        return 1.0

    state = train(options("wide", max_steps=1, pomo_batch=4, evaluate_fn=first_evaluation))
    assert state.start_model == "scratch" and state.instances == 4 and state.steps == 1
    # the paper's size in the real settings; here the doubled tiny width, not the start model's
    assert seen[0]["encoder.init_embedding.init_embed_depot.weight"].shape[0] == wide["embed_dim"]
    state2, weights = load_committed(tmp / "report" / "wide", ArmState)
    policy = arm_policy(weights, "unused", "wide")
    assert all(torch.equal(policy.state_dict()[k], weights[k]) for k in weights)
    with pytest.raises(ValueError, match="'wide' trains from scratch"):
        shipping.ship("wide", 4, tmp / "report")


def test_the_wide_arm_is_the_papers_model_size_on_a_gpu():
    assert settings.SCRATCH_ARMS["wide"] == {
        "embed_dim": 256,
        "num_encoder_layers": 6,
        "num_heads": 16,
        "feedforward_hidden": 512,
    }
    assert "wide" in settings.GPU_ARMS and settings.pomo_batch("wide") == 512
    assert "wide" not in settings.BRANCHES


def test_a_scratch_start_is_seeded_and_leaves_the_callers_random_stream(monkeypatch):
    from experiments.imitation.state import start_policy

    monkeypatch.setattr(settings, "SCRATCH_ARMS", {"wide": TINY})
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    first = start_policy("wide", "unused", seed=1)
    assert torch.equal(torch.rand(3), expected)
    again, other = start_policy("wide", "unused", seed=1), start_policy("wide", "unused", seed=2)
    weights = first.state_dict()
    assert all(torch.equal(again.state_dict()[k], weights[k]) for k in weights)
    assert any(not torch.equal(other.state_dict()[k], weights[k]) for k in weights)


def spy_autocast(monkeypatch, module) -> list[bool]:
    """Records, at each training step's loss, whether CPU autocast to bf16 was on."""
    seen = []
    build = module.build_model

    def spying_build_model(*args, **kwargs):
        model = build(*args, **kwargs)
        shared_step = model.shared_step

        def step(*a, **k):
            seen.append(
                torch.is_autocast_enabled("cpu")
                and torch.get_autocast_dtype("cpu") == torch.bfloat16
            )
            return shared_step(*a, **k)

        model.shared_step = step
        return model

    monkeypatch.setattr(module, "build_model", spying_build_model)
    return seen


def test_a_bf16_arm_computes_its_loss_under_autocast_and_keeps_float32_weights(arms, monkeypatch):
    options, evaluations, tmp = arms
    seen = spy_autocast(monkeypatch, loop)
    state = train(options("pomo", max_steps=1, precision="bf16-mixed"))
    assert seen == [True]
    assert state.hardware[-1].endswith("; bf16-mixed")
    assert evaluations[0] != evaluations[-1]  # the step moved the weights
    _, weights = load_committed(tmp / "report" / "pomo", ArmState)
    assert {w.dtype for w in weights.values()} == {torch.float32}
    seen.clear()
    plain = train(options("pomo", max_steps=1))  # on the CPU the default is float32
    assert seen == [False]
    assert plain.hardware == [*state.hardware, state.hardware[-1].removesuffix("; bf16-mixed")]


def test_a_compiled_arm_trains_with_its_decoder_step_compiled_and_evaluates_eagerly(
    arms, monkeypatch
):
    from torch._dynamo import eval_frame

    options, _, tmp = arms
    compiled_steps, eval_stances = [], []
    build = loop.build_model

    def spying_build_model(*args, **kwargs):
        model = build(*args, **kwargs)
        shared_step = model.shared_step

        def step(*a, **k):
            compiled_steps.append(model.policy.decoder._compiled_call_impl is not None)
            return shared_step(*a, **k)

        model.shared_step = step
        return model

    def evaluation(policy):
        eval_stances.append(eval_frame._stance.stance)  # torch.compiler.set_stance's
        return 30.0

    monkeypatch.setattr(loop, "build_model", spying_build_model)
    state = train(options("pomo", max_steps=1, compile=True, evaluate_fn=evaluation))
    assert compiled_steps == [True]
    assert eval_stances == ["force_eager", "force_eager"]  # the start's and the last one
    assert state.hardware[-1].endswith("; compiled decoder")
    _, weights = load_committed(tmp / "report" / "pomo", ArmState)
    eager = train(options("pomo", max_steps=1, evaluate_fn=evaluation))  # compile=False
    assert compiled_steps == [True, False]
    assert eager.hardware[-1] == state.hardware[-1].removesuffix("; compiled decoder")
    assert set(weights) == set(load_committed(tmp / "report" / "pomo", ArmState)[1])


def test_an_arm_with_a_leader_weight_trains_with_the_leader_reward(arms, monkeypatch):
    from clrp_rl4co.models import LeaderRewardPOMO

    options, _, _ = arms
    built = []
    build = loop.build_model
    monkeypatch.setattr(
        loop, "build_model", lambda *a, **k: built.append(build(*a, **k)) or built[-1]
    )
    monkeypatch.setattr(settings, "LEADER_WEIGHTS", {"pomo": 3.0})
    state = train(options("pomo", max_steps=1))
    assert state.steps == 1
    assert isinstance(built[0], LeaderRewardPOMO) and built[0].leader_weight == 3.0
    monkeypatch.setattr(settings, "LEADER_WEIGHTS", {})
    train(options("pomo", max_steps=1))
    assert not isinstance(built[1], LeaderRewardPOMO)
