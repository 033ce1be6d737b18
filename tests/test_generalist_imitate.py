"""One imitation pass from the generalist's committed weights (experiments/generalist/imitate.py)
and a pass over labels of several instance sizes (experiments/imitation/recipes.py)."""

from __future__ import annotations

import pytest
import torch
from test_imitation import expert_data, write_labels

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.models import load_policy
from clrp_rl4co.policies import build_policy
from experiments.generalist import settings
from experiments.generalist.imitate import REPORT, imitate
from experiments.training.imitation_pass import Recipe, imitation_pass
from experiments.training.state import RunState, load_committed, save_committed


@pytest.fixture
def run(tmp_path):
    """A committed generalist state (fresh weights, seed 0), its curve with one row at the
    state's instances, and labels of 10 and 20 customers (3 and 2)."""
    torch.manual_seed(0)
    policy = build_policy(settings.POLICY, **settings.ARCHITECTURE)
    state_dir, report_dir, labels = tmp_path / "state", tmp_path / "report", tmp_path / "labels"
    save_committed(RunState(instances=1234), policy.state_dict(), state_dir)
    report_dir.mkdir()
    (report_dir / "curve.csv").write_text(
        "instances,family_gap_mean,families_met\n1000,30.0,1\n1234,20.0,3\n"
    )
    labels.mkdir()
    write_labels(expert_data("clrp10", 3, seed=1), labels / "shard_00000.npz")
    write_labels(expert_data("clrp20", 2, seed=2), labels / "shard_00001.npz")
    return state_dir, report_dir, labels


def _changed_weights(policy) -> dict:
    """A stand-in validation: how far the weights are from the committed ones' seed-0 draw."""
    torch.manual_seed(0)
    fresh = build_policy(settings.POLICY, **settings.ARCHITECTURE).state_dict()
    moved = sum((v - fresh[k]).abs().sum().item() for k, v in policy.state_dict().items())
    return {"family_gap_mean": 20.0 - moved, "families_met": 3.0}


def test_a_pass_with_a_positive_rate_moves_the_weights_and_reports_the_change(run, tmp_path):
    state_dir, report_dir, labels = run
    calls = []

    def validate(policy):
        calls.append(1)
        return _changed_weights(policy)

    path = imitate(labels, "solution,dihedral,1e-3", save=tmp_path / "out" / "imitated",
                   state_dir=state_dir, report_dir=report_dir, validate_fn=validate,
                   command="python -m experiments.generalist imitate ...")  # fmt: skip
    assert len(calls) == 1  # the committed weights' validation is the curve's row at 1,234
    text = path.read_text()
    assert path.name == REPORT and "over 5 labels, from 1,234 instances" in text
    assert "3 of N10 with 5 depots, 2 of N20 with 5 depots" in text
    line = next(x for x in text.splitlines() if x.startswith("| mean OOD family gap"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == "20.0000" and float(cells[2]) < 20.0 and cells[4] == "better"
    saved = load_policy(tmp_path / "out" / "imitated.pt")
    assert _changed_weights(saved)["family_gap_mean"] == pytest.approx(float(cells[2]))
    state, weights = load_committed(state_dir)  # the committed state is left as it was
    assert state.instances == 1234
    torch.manual_seed(0)
    fresh = build_policy(settings.POLICY, **settings.ARCHITECTURE).state_dict()
    assert all(torch.equal(weights[k], fresh[k]) for k in fresh)


def test_without_a_curve_row_the_committed_weights_are_validated_too(run):
    state_dir, report_dir, labels = run
    (report_dir / "curve.csv").write_text("instances,family_gap_mean,families_met\n1000,30,1\n")
    calls = []

    def validate(policy):
        calls.append(_changed_weights(policy)["family_gap_mean"])
        return _changed_weights(policy)

    path = imitate(labels, "solution,identity,0", state_dir=state_dir, report_dir=report_dir,
                   validate_fn=validate)  # fmt: skip
    assert calls == [20.0, 20.0]  # before and after; rate 0 leaves the weights
    line = next(x for x in path.read_text().splitlines() if x.startswith("| mean OOD"))
    assert "+0.0000" in line and line.rstrip().endswith("| same |")
    again = imitate(labels, "solution,identity,0", limit=3, state_dir=state_dir,
                    report_dir=report_dir, validate_fn=validate)  # fmt: skip
    assert again.read_text().count("## `solution,identity,0`") == 2  # sections accumulate
    assert "over 3 labels" in again.read_text()


def test_imitate_needs_a_committed_state_and_a_valid_recipe(run, tmp_path):
    state_dir, report_dir, labels = run
    with pytest.raises(FileNotFoundError, match="no committed generalist state"):
        imitate(labels, "solution,dihedral,0", state_dir=tmp_path / "none",
                report_dir=report_dir)  # fmt: skip
    with pytest.raises(ValueError, match="likelihood 'route'"):
        imitate(labels, "route,dihedral,0", state_dir=state_dir, report_dir=report_dir)


def test_a_pass_over_several_sizes_takes_every_batch_of_each_once(run):
    _, _, labels = run
    from experiments.labels.shards import expert_datasets

    data = expert_datasets(labels)
    torch.manual_seed(0)
    policy = build_policy(settings.POLICY, **settings.ARCHITECTURE)
    done = imitation_pass(
        policy,
        CLRPEnv(check_actions=False),
        [data[10, 5], data[20, 5]],
        Recipe("solution", "identity", 0.0),
        batch=2,
        weight_decay=settings.WEIGHT_DECAY,
        grad_clip=settings.GRAD_CLIP,
    )
    assert done["steps"] == 2 + 1  # 3 labels of N10 in batches of 2, 2 of N20 in one
