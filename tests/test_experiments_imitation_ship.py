"""Shipping an arm's weights (experiments/imitation/ship.py): the rule, what is written, and
that nothing ships when the arm is not better."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from test_imitation import TINY

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.policies import build_policy
from experiments.extrapolate import finetune_record
from experiments.imitation import ship as shipping
from experiments.imitation.state import ArmState
from experiments.training.state import save_committed


def test_an_arm_beats_the_shipped_model_only_with_its_interval_below_zero():
    assert shipping.beats([9.0, 9.1, 8.9, 9.0], [10.0, 10.0, 10.0, 10.1])
    assert not shipping.beats([10.0] * 4, [10.0] * 4)  # equal: the interval touches 0
    assert not shipping.beats([9.0, 11.0, 9.0, 11.0], [10.0] * 4)  # mean 0, wide interval
    assert not shipping.beats([11.0] * 4, [10.0, 10.1, 10.0, 10.2])  # worse


@pytest.fixture
def folders(tmp_path):
    torch.manual_seed(0)
    start_meta = {"training_instances": 1000, "training_instances_including_init": 1500,
                  "global_step": 10, "seed": 3, "note": "the start"}  # fmt: skip
    start = tmp_path / "start" / "drlhq_clrp50"
    build_policy("drlhq", **TINY).save_pretrained(start, extra=start_meta)
    pretrained = tmp_path / "pretrained"
    build_policy("drlhq", **TINY).save_pretrained(pretrained / "drlhq_clrp50", extra=start_meta)
    arm_policy = build_policy("drlhq", **TINY)
    state = ArmState(arm="pomo", cpu_hours=2.5, instances=640, start_model=str(start))
    state.commands = ["python -m experiments.imitation train --hours 1"]
    state.commits = ["abc1234"]
    state.hardware = ["a CPU"]
    state.last_validation = {"x8": 27.5}
    save_committed(state, arm_policy.state_dict(), tmp_path / "report" / "pomo")
    instances = CLRPEnv(generator_params={"preset": "clrp10"}).generator(4)
    return tmp_path, pretrained, arm_policy, instances


def _fake_costs(monkeypatch, shipped, arm):
    calls = iter([shipped, arm])  # the shipped model is decoded first
    monkeypatch.setattr(shipping, "per_instance_x8", lambda policy, instances: next(calls))


def test_a_better_arm_ships_with_its_whole_training_in_the_json(folders, monkeypatch):
    tmp_path, pretrained, arm_policy, instances = folders
    _fake_costs(monkeypatch, [10.0, 10.0, 10.1, 10.0], [9.0, 9.1, 8.9, 9.0])
    verdict = shipping.ship("pomo", 4, tmp_path / "report", pretrained, instances)
    assert verdict.endswith("beats the shipped drlhq_clrp50 on 4 held-out instances: "
                            "shipped as drlhq_clrp50")  # fmt: skip
    weights = torch.load(pretrained / "drlhq_clrp50.pt", weights_only=True)
    for key, value in arm_policy.state_dict().items():
        assert torch.equal(weights[key], value)
    meta = json.loads((pretrained / "drlhq_clrp50.json").read_text())
    assert meta["class"] == "DRLHQPolicy" and meta["preset"] == "clrp50"
    assert meta["training_instances"] == 1000 + 640
    assert meta["training_instances_including_init"] == 1500 + 640
    assert meta["cpu_hours"] == 2.5 and meta["x8_curve"] == 27.5 and meta["seed"] == 3
    assert meta["training"][-1] == "python -m experiments.imitation ship --arm pomo --count 4"
    assert meta["continued_from"]["note"] == "the start"
    assert "class" not in meta["continued_from"]
    assert meta["heldout"]["mean"] == pytest.approx(9.0) and meta["heldout"]["replaced_mean"] == (
        pytest.approx(10.025)
    )
    assert finetune_record(meta)["global_step"] == 10  # the GPU fine-tune's record
    text = (tmp_path / "report" / shipping.SHIP_MD).read_text()
    assert "shipped as drlhq_clrp50" in text and "| pomo arm | 9.0000 | -1.0250 ±" in text
    assert "python -m experiments.imitation ship --arm pomo --count 4\n" in text


def test_the_written_commands_name_a_preset_other_than_the_default(monkeypatch):
    from experiments.imitation import settings

    assert settings.preset_flag() == ""  # clrp50, the default
    monkeypatch.setattr(settings, "PRESET", "clrp100")
    assert settings.preset_flag() == " --preset clrp100"
    state = ArmState(arm="pomo", instances=10, start_model="x")
    meta = shipping.provenance(state, {"training_instances": 5}, heldout={}, count=800)
    assert meta["training"][-1] == (
        "python -m experiments.imitation --preset clrp100 ship --arm pomo --count 800"
    )


def test_an_arm_that_is_not_better_ships_nothing(folders, monkeypatch):
    tmp_path, pretrained, _, instances = folders
    before = (pretrained / "drlhq_clrp50.pt").read_bytes()
    _fake_costs(monkeypatch, [10.0, 10.0, 10.1, 10.0], [10.0, 9.9, 10.2, 10.0])
    verdict = shipping.ship("pomo", 4, tmp_path / "report", pretrained, instances)
    assert verdict.endswith(": nothing shipped")
    assert (pretrained / "drlhq_clrp50.pt").read_bytes() == before
    assert "nothing shipped" in (tmp_path / "report" / shipping.SHIP_MD).read_text()
    with pytest.raises(ValueError, match="arm: 'imitation' has no committed state"):
        shipping.ship("imitation", 4, tmp_path / "report", pretrained, instances)


def test_side_by_side_decoding_pairs_the_same_costs_as_one_after_the_other(folders):
    """Real decodes of two different tiny models: ``jobs=2`` (the shipped one in a second
    process) must write the same figures as ``jobs=1``, and record its command."""
    tmp_path, pretrained, _, instances = folders
    rows = {}
    for jobs in (1, 2):
        report, models = tmp_path / f"report{jobs}", tmp_path / f"pretrained{jobs}"
        shutil.copytree(tmp_path / "report", report)
        shutil.copytree(pretrained, models)
        shipping.ship("pomo", 4, report, models, instances, jobs=jobs)
        text = (report / shipping.SHIP_MD).read_text()
        rows[jobs] = [line for line in text.splitlines() if line.startswith("| `drlhq")
                      or line.startswith("| pomo")]  # fmt: skip
        assert ("ship --arm pomo --count 4 --jobs 2" in text) == (jobs == 2)
    assert len(rows[1]) == 2 and rows[1] == rows[2]
    assert rows[1][0].split("|")[2] != rows[1][1].split("|")[2]  # two models, two means
    with pytest.raises(ValueError, match="jobs: 3"):
        shipping.ship("pomo", 4, tmp_path / "report", pretrained, instances, jobs=3)


def test_a_second_check_adds_to_the_record_and_keeps_the_first(folders, monkeypatch):
    tmp_path, pretrained, _, instances = folders
    _fake_costs(monkeypatch, [10.0, 10.0, 10.1, 10.0], [9.0, 9.1, 8.9, 9.0])
    shipping.ship("pomo", 4, tmp_path / "report", pretrained, instances)
    _fake_costs(monkeypatch, [9.0, 9.1, 8.9, 9.0], [9.0, 9.2, 8.9, 9.1])
    shipping.ship("pomo", 4, tmp_path / "report", pretrained, instances)
    text = (tmp_path / "report" / shipping.SHIP_MD).read_text()
    assert text.startswith("# Arms against the shipped `drlhq_clrp50`\n")
    sections = text.split("\n## ")[1:]
    assert len(sections) == 2 and all(" UTC: the pomo arm at 2.50 CPU h" in s for s in sections)
    assert "shipped as drlhq_clrp50" in sections[0] and "| 10.0250 |" in sections[0]
    assert "nothing shipped" in sections[1] and "| 9.0000 |" in sections[1]


def test_an_arm_that_records_the_start_by_its_shipped_name_continues_the_pinned_start(
    folders, monkeypatch
):
    from experiments.imitation import settings

    tmp_path, pretrained, _, instances = folders
    monkeypatch.setattr(settings, "START_MODEL", str(tmp_path / "start" / "drlhq_clrp50"))
    state_json = tmp_path / "report" / "pomo" / "state.json"
    data = json.loads(state_json.read_text())
    data["start_model"] = settings.START_NAME  # as the arms begun before the pin record it
    state_json.write_text(json.dumps(data))
    # the shipped model's JSON is not the start's: a second ship must not nest it
    meta = json.loads((pretrained / "drlhq_clrp50.json").read_text())
    meta["training_instances"] = 99_999
    (pretrained / "drlhq_clrp50.json").write_text(json.dumps(meta))
    _fake_costs(monkeypatch, [10.0, 10.0, 10.1, 10.0], [9.0, 9.1, 8.9, 9.0])
    shipping.ship("pomo", 4, tmp_path / "report", pretrained, instances)
    shipped = json.loads((pretrained / "drlhq_clrp50.json").read_text())
    assert shipped["training_instances"] == 1000 + 640


def test_a_branchs_recipe_names_every_step_from_the_shipped_start():
    from experiments.imitation import settings

    assert shipping.arm_recipe("pomo") == (
        "POMO continued on one CPU thread (batch 64, Adam 0.0001)"
    )
    assert shipping.arm_recipe("imitation", 3600).startswith(
        "PyVRP labels and imitation (3,600 examples), then POMO"
    )
    assert shipping.arm_recipe("pomo-gpu-slow") == (
        "POMO continued on one CPU thread (batch 64, Adam 0.0001), then from the pomo arm's "
        "committed state POMO on one CPU thread (batch 64, Adam 2.5e-05), then from the "
        "pomo-slow arm's committed state POMO on a GPU (batch 512, Adam 2.5e-05)"
    )
    assert shipping.arm_recipe("leader").endswith(
        "then from the pomo-gpu-slow arm's committed state POMO on one CPU thread (batch 64, "
        "Adam 2.5e-05, leader reward weight 4)"
    )
    assert shipping.arm_recipe("pomo-cpu-slow").endswith(  # the leader arm's control
        "then from the pomo-gpu-slow arm's committed state POMO on one CPU thread (batch 64, "
        "Adam 2.5e-05)"
    )
    assert shipping.arm_recipe("leader8").endswith(  # leader's branch at twice its weight
        "leader reward weight 4), then from the leader arm's committed state POMO on one CPU "
        "thread (batch 64, Adam 2.5e-05, leader reward weight 8)"
    )
    assert shipping.arm_recipe("leader16").endswith(  # leader8's branch at twice its weight
        "leader reward weight 8), then from the leader8 arm's committed state POMO on one CPU "
        "thread (batch 64, Adam 2.5e-05, leader reward weight 16)"
    )
    assert shipping.arm_recipe("leader32").endswith(  # leader16's branch at twice its weight
        "leader reward weight 16), then from the leader16 arm's committed state POMO on one CPU "
        "thread (batch 64, Adam 2.5e-05, leader reward weight 32)"
    )
    assert shipping.arm_recipe("leader16-aug").endswith(  # leader16 over the dihedral copies
        "leader reward weight 16), then from the leader16 arm's committed state POMO on one CPU "
        "thread (batch 8, Adam 2.5e-05, leader reward weight 16, each instance's 8 dihedral "
        "copies one group)"
    )
    assert shipping.arm_recipe("leader16-swa").endswith(  # leader16 at four times its rate
        "leader reward weight 16), then from the leader16 arm's committed state POMO on one CPU "
        "thread (batch 64, Adam 0.0001, leader reward weight 16)"
    )
    assert shipping.arm_recipe("leader16-deep").endswith(  # leader16 with a deeper encoder
        "leader reward weight 16), then from the leader16 arm's committed state POMO on one CPU "
        "thread (batch 64, Adam 2.5e-05, leader reward weight 16, the encoder grown from 3 to 6 "
        "layers, the new ones starting as the identity at Adam 0.0001)"
    )
    # a batch of its own: a GPU arm's, or an augmented arm's 64 rollouts a start as POMO's
    assert set(settings.POMO_BATCHES) == {*settings.GPU_ARMS, *settings.TRAIN_COPIES}
    for arm, copies in settings.TRAIN_COPIES.items():
        assert settings.pomo_batch(arm) * copies == settings.POMO_BATCH
