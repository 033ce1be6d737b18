"""The mean of an arm's committed weights at several commits (experiments/imitation/average.py)
and shipping it (``ship --average``)."""

from __future__ import annotations

import json
import subprocess

import pytest
import torch
from test_imitation import TINY

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.policies import build_policy
from experiments.imitation import average as averaging
from experiments.imitation import ship as shipping
from experiments.imitation.state import ArmState, hours_label
from experiments.training.state import load_committed, save_committed


def test_the_mean_of_weights_is_taken_entry_by_entry():
    a = {"w": torch.tensor([1.0, 2.0]), "steps": torch.tensor(3)}
    b = {"w": torch.tensor([3.0, 6.0]), "steps": torch.tensor(3)}
    c = {"w": torch.tensor([2.0, 1.0]), "steps": torch.tensor(3)}
    mean = averaging.mean_weights([a, b, c])
    assert torch.equal(mean["w"], torch.tensor([2.0, 3.0]))
    assert mean["w"].dtype == torch.float32
    assert torch.equal(mean["steps"], torch.tensor(3))


def test_weights_that_cannot_be_averaged_are_refused():
    with pytest.raises(ValueError, match="nothing to average"):
        averaging.mean_weights([])
    a = {"w": torch.ones(2), "n": torch.tensor(1)}
    with pytest.raises(ValueError, match=r"weights\[1\]: .*\['n', 'v'\]"):
        averaging.mean_weights([a, {"w": torch.ones(2), "v": torch.tensor(1)}])
    with pytest.raises(ValueError, match="'n' differs"):
        averaging.mean_weights([a, {"w": torch.ones(2), "n": torch.tensor(2)}])


def _git(repo, *args):
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@pytest.fixture
def history(tmp_path):
    """A git repository whose ``report/pomo`` holds three committed states of one arm, with
    its start model beside it; returns (tmp_path, the commits, the weights of each)."""
    return _history(tmp_path, (1.0, 1.5, 2.0))


def _history(tmp_path, hours_of_each):
    _git(tmp_path, "init", "-q")
    start = tmp_path / "start" / "drlhq_clrp50"
    torch.manual_seed(0)
    build_policy("drlhq", **TINY).save_pretrained(start, extra={"training_instances": 100})
    commits, weights = [], []
    for number, hours in enumerate(hours_of_each):
        torch.manual_seed(10 + number)
        policy_weights = build_policy("drlhq", **TINY).state_dict()
        state = ArmState(arm="pomo", cpu_hours=hours, instances=640 * (number + 1))
        state.start_model = str(start)
        state.commands = ["python -m experiments.imitation train --arm pomo --hours 1"]
        state.last_validation = {"x8": 30.0 - number}
        save_committed(state, policy_weights, tmp_path / "report" / "pomo")
        _git(tmp_path, "add", "-A")
        _git(tmp_path, "commit", "-qm", f"state {number}")
        commits.append(_git(tmp_path, "rev-parse", "--short", "HEAD"))
        weights.append(policy_weights)
    return tmp_path, commits, weights


def test_the_average_is_the_mean_of_the_weights_the_commits_hold(history):
    tmp_path, commits, weights = history
    seen = []

    def evaluate(policy):
        seen.append(policy)
        return 27.25

    sources = averaging.average("pomo", commits[1:], tmp_path / "report", evaluate)
    assert sources["revisions"] == commits[1:]
    assert sources["cpu_hours"] == [1.5, 2.0]
    assert sources["x8"] == 27.25 and sources["x8_of_each"] == [29.0, 28.0]
    state, mean = load_committed(tmp_path / "report" / "pomo" / "average", ArmState)
    for key, value in weights[1].items():
        if value.is_floating_point():
            assert torch.allclose(mean[key], (value + weights[2][key]) / 2, atol=1e-7)
    for key, value in seen[0].state_dict().items():
        assert torch.equal(value, mean[key])  # the evaluated policy holds the mean
    assert state.cpu_hours == 2.0 and state.instances == 1920  # the newest state's counters
    assert state.last_validation["x8"] == 27.25
    assert state.commands[-1] == (
        f"python -m experiments.imitation average --arm pomo --revisions {commits[1]} {commits[2]}"
    )
    written = json.loads((tmp_path / "report" / "pomo" / "average" / "sources.json").read_text())
    assert written == sources
    with pytest.raises(ValueError, match="holds an average already"):
        averaging.average("pomo", commits[:2], tmp_path / "report", evaluate)
    assert json.loads((tmp_path / "report" / "pomo" / "average" / "sources.json").read_text()) == (
        sources
    )  # the refused call wrote nothing
    replaced = averaging.average("pomo", commits[:2], tmp_path / "report", evaluate, replace=True)
    assert replaced["revisions"] == commits[:2]
    # the record names the command as it ran, so that it reruns over the average it replaced
    assert replaced["command"] == (
        f"python -m experiments.imitation average --arm pomo --revisions {commits[0]} "
        f"{commits[1]} --replace"
    )
    # the arm's own state stays the newest commit's
    own = load_committed(tmp_path / "report" / "pomo", ArmState)[1]
    assert all(torch.equal(own[key], value) for key, value in weights[2].items())


def test_the_hours_of_an_average_read_as_each_state_labels_itself(tmp_path):
    # 33.02504 CPU h labels itself 33.03; rounded to 33.025 first, it would read 33.02
    _, commits, _ = _history(tmp_path, (32.5, 33.02504))
    sources = averaging.average("pomo", commits, tmp_path / "report", lambda policy: 27.0)
    assert sources["cpu_hours"] == [32.5, 33.02504]
    assert averaging.hours_list(sources["cpu_hours"]) == "32.50, 33.03"
    state = load_committed(tmp_path / "report" / "pomo" / "average", ArmState)[0]
    assert hours_label(state) == "33.03 CPU h"


def test_revisions_that_cannot_be_averaged_are_refused(history):
    tmp_path, commits, _ = history
    report = tmp_path / "report"
    with pytest.raises(ValueError, match="two or more distinct"):
        averaging.average("pomo", commits[:1], report, lambda p: 0.0)
    with pytest.raises(ValueError, match="two or more distinct"):
        averaging.average("pomo", [commits[0], commits[0]], report, lambda p: 0.0)
    with pytest.raises(ValueError, match="must rise"):
        averaging.average("pomo", [commits[2], commits[0]], report, lambda p: 0.0)
    with pytest.raises(ValueError, match=r"'nonesuch' holds no .*state\.json"):
        averaging.average("pomo", [commits[0], "nonesuch"], report, lambda p: 0.0)
    assert not (report / "pomo" / "average").exists()


def test_the_average_ships_with_its_hours_in_the_record(history, monkeypatch):
    tmp_path, commits, _ = history
    report = tmp_path / "report"
    averaging.average("pomo", commits, report, lambda policy: 27.0)
    pretrained = tmp_path / "pretrained"
    start_meta = {"training_instances": 100, "seed": 3}
    build_policy("drlhq", **TINY).save_pretrained(pretrained / "drlhq_clrp50", extra=start_meta)
    calls = iter([[10.0, 10.0, 10.1, 10.0], [9.0, 9.1, 8.9, 9.0]])  # shipped, then the average
    monkeypatch.setattr(shipping, "per_instance_x8", lambda policy, instances: next(calls))
    instances = CLRPEnv(generator_params={"preset": "clrp10"}).generator(4)
    verdict = shipping.ship("pomo", 4, report, pretrained, instances, average=True)
    assert verdict.startswith("pomo arm's mean of 3 weights (2.00 CPU h, ")
    assert verdict.endswith("shipped as drlhq_clrp50")
    shipped = torch.load(pretrained / "drlhq_clrp50.pt", weights_only=True)
    mean = load_committed(report / "pomo" / "average", ArmState)[1]
    assert all(torch.equal(shipped[key], value) for key, value in mean.items())
    meta = json.loads((pretrained / "drlhq_clrp50.json").read_text())
    assert meta["recipe"].endswith(
        ", then the mean of its weights at 1.00, 1.50, 2.00 CPU h: the pomo arm of "
        "experiments/imitation"
    )
    assert meta["training"][-2].startswith("python -m experiments.imitation average --arm pomo")
    ship_line = "python -m experiments.imitation ship --arm pomo --count 4 --average"
    assert meta["training"][-1] == ship_line
    text = (report / shipping.SHIP_MD).read_text()
    heading = "UTC: the pomo arm at 2.00 CPU h (the mean of its weights at 1.00, 1.50, 2.00 CPU h)"
    assert heading in text and f"```bash\n{ship_line}\n```" in text
    assert "| pomo arm's mean of 3 weights | 9.0000 | -1.0250 ±" in text


def test_an_arm_without_an_average_cannot_ship_one(history):
    tmp_path, _, _ = history
    with pytest.raises(ValueError, match="has no average in .*pomo/average"):
        shipping.ship("pomo", 4, tmp_path / "report", tmp_path / "pretrained", [], average=True)
