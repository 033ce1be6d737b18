"""Conventions the env folder defines once: the rounded arc cost (torch, and its numpy twin next
to it) and the instance-TensorDict builder."""

import numpy as np
import pytest
import torch

from clrp_rl4co.envs.clrp import instance_tensordict, round_cost, round_cost_np
from clrp_rl4co.envs.clrp.instance import INSTANCE_KEYS


def _distances() -> np.ndarray:
    rng = np.random.default_rng(0)
    hundredths = np.arange(0, 20_001) / 100.0  # exact multiples of 0.01 (as float64 gets them)
    pythagorean = np.hypot([0.03, 0.3, 5.0, 0.05], [0.04, 0.4, 12.0, 0.12])  # 0.05, 0.5, 13, 0.13
    return np.concatenate([rng.uniform(0, 200, 20_000), hundredths, pythagorean])


def test_round_cost_and_its_numpy_twin_agree():
    d = _distances()
    np.testing.assert_array_equal(round_cost(torch.from_numpy(d)).numpy(), round_cost_np(d))


def test_round_cost_prices_an_exact_hundredth_multiple_at_100_d():
    k = np.arange(0, 20_001)
    # ceil(100 * k / 100) = k in real arithmetic; float64 gives e.g. 100 * 0.07 = 7.000000000000001
    assert (100.0 * (k / 100.0) > k).any(), "no round-off case left: the test checks nothing"
    assert np.array_equal(round_cost_np(k / 100.0), k)
    assert np.array_equal(round_cost(torch.from_numpy(k / 100.0)).numpy(), k)
    assert round_cost_np(np.hypot(0.03, 0.04)) == 5.0
    assert round_cost_np(0.0100001) == 2.0  # anything above a multiple goes up


def test_round_cost_np_reads_its_input_as_float64():
    # float32(0.1) is 0.100000001490116..., so ceil(100 d) = 11 in float64 (the documented
    # reading); float32 arithmetic would round 100 d to 10.0 exactly and give 10
    d = np.array([0.1], dtype=np.float32)
    assert float(d.astype(np.float64)[0]) > 0.1
    assert round_cost_np(d).tolist() == [11.0]
    assert round_cost_np(d).dtype == np.float64


def test_instance_tensordict_layout():
    locs = np.random.default_rng(1).random((3, 5, 2))
    td = instance_tensordict(
        locs, np.full((3, 2), 10.0), np.ones((3, 2)), np.arange(1.0, 10.0).reshape(3, 3), 70, 1.5
    )
    assert tuple(td.keys(sort=True)) == tuple(sorted(INSTANCE_KEYS))
    assert td.batch_size == torch.Size([3])
    assert td["cost_locs"].dtype == torch.float64 and td["rounded_costs"].dtype == torch.bool
    for key in ("locs", "depot_capacity", "opening_cost", "demand", "vehicle_capacity"):
        assert td[key].dtype == torch.float32, key
    assert torch.equal(td["cost_locs"], torch.from_numpy(locs).float().double())
    assert td["vehicle_capacity"].tolist() == [[70.0]] * 3
    assert td["vehicle_fixed_cost"].tolist() == [[1.5]] * 3
    assert not td["rounded_costs"].any()
    td["vehicle_fixed_cost"][1, 0] = 2.0  # one value per instance, not a shared broadcast
    assert td["vehicle_fixed_cost"].tolist() == [[1.5], [2.0], [1.5]]


@pytest.mark.parametrize("shape", [(3,), (3, 1)])
def test_instance_tensordict_takes_one_value_per_instance(shape):
    per = instance_tensordict(
        torch.zeros(3, 5, 2),
        torch.full((3, 2), 10.0),
        torch.ones(3, 2),
        torch.ones(3, 3),
        torch.tensor([5.0, 6.0, 7.0]).reshape(shape),
        torch.tensor([1.0, 2.0, 3.0]).reshape(shape),
        cost_locs=torch.ones(3, 5, 2),
        rounded_costs=[True, False, True],
    )
    assert per["vehicle_capacity"].tolist() == [[5.0], [6.0], [7.0]]
    assert per["vehicle_fixed_cost"].tolist() == [[1.0], [2.0], [3.0]]
    assert per["rounded_costs"].tolist() == [True, False, True]
    assert (per["cost_locs"] == 1).all() and (per["locs"] == 0).all()
