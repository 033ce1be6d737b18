"""The arms on held-out instances (experiments/imitation/heldout.py): which instances, the
paired differences to the start, and the written table."""

from __future__ import annotations

import math

import pytest
import torch
from test_imitation import TINY

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.policies import build_policy
from experiments.imitation import heldout, settings
from experiments.imitation.state import ArmState
from experiments.training.state import save_committed


def test_a_paired_row_is_the_mean_difference_with_its_t_interval_and_counts():
    row = heldout.paired_row("arm", [10.0, 11.0, 12.0], [10.5, 11.0, 11.0])
    # differences -0.5, 0, +1: mean 1/6, sd sqrt(7/12), t(0.975, 2) = 4.302653
    half = 4.302653 * math.sqrt(7 / 12) / math.sqrt(3)
    assert row[0] == "arm" and row[1] == "11.0000"
    assert row[2] == f"+0.1667 ± {half:.4f}"
    assert row[3] == f"[{1 / 6 - half:+.4f}, {1 / 6 + half:+.4f}]"
    assert row[4] == "1 / 1 / 1"


def test_the_held_out_instances_follow_the_curves_and_stay_inside_the_set():
    from experiments.paper_sets import load_drlhq_test_set

    every = load_drlhq_test_set(settings.PRESET)
    got = heldout.heldout_instances(3)
    assert got.batch_size[0] == 3
    assert torch.equal(got["locs"], every["locs"][settings.EVAL_SIZE : settings.EVAL_SIZE + 3])
    beyond = every.batch_size[0] - settings.EVAL_SIZE + 1
    with pytest.raises(ValueError, match=f"count: {beyond} held-out instances asked"):
        heldout.heldout_instances(beyond)
    with pytest.raises(ValueError, match="count: 0 held-out"):
        heldout.heldout_instances(0)


def test_an_arm_with_the_starts_weights_ties_it_on_every_instance(tmp_path):
    torch.manual_seed(0)
    start = tmp_path / "tiny"
    policy = build_policy("drlhq", **TINY)
    policy.save_pretrained(start)
    weights = {k: v.clone() for k, v in policy.state_dict().items()}
    state = ArmState(arm="pomo", cpu_hours=1.5, instances=640)
    save_committed(state, weights, tmp_path / "report" / "pomo")
    instances = CLRPEnv(generator_params={"preset": "clrp10"}).generator(4)
    path = heldout.write_heldout(4, tmp_path / "report", str(start), instances)
    text = path.read_text()
    assert "| pomo arm at 1.50 CPU h (640 POMO instances) |" in text
    assert "+0.0000 ± 0.0000" in text and "0 / 4 / 0" in text
    assert "imitation arm" not in text  # no committed state
    save_committed(
        ArmState(arm="imitation", cpu_hours=2.0), weights, tmp_path / "report" / "imitation"
    )
    text = heldout.write_heldout(4, tmp_path / "report", str(start), instances).read_text()
    assert "imitation arm minus pomo arm (each at its committed CPU hours above): +0.0000" in text
    assert "python -m experiments.imitation heldout --count 4" in text
