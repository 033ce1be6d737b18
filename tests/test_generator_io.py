"""Instance TensorDicts, dataset files and the first-fit-decreasing packing check.

Expectations come from the docstrings of ``instance_tensordict``, ``save_dataset``,
``load_dataset``, ``dataset_seed`` and ``ffd_feasible`` (and hand-made packing cases).
"""

import re
import zipfile

import numpy as np
import pytest
import torch

from clrp_rl4co.envs.clrp.dataset import (
    dataset_checksum,
    dataset_seed,
    generate_dataset,
    load_dataset,
    save_dataset,
)
from clrp_rl4co.envs.clrp.generator import CLRPGenerator, ffd_feasible, packable
from clrp_rl4co.envs.clrp.instance import INSTANCE_KEYS, instance_tensordict

# ------------------------------------------------------------------ instance_tensordict
B, D, N = 2, 2, 3
LOCS = [[[0.0, 0.0], [1.0, 1.0], [0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]] * B
CAPACITY = [[100.0, 200.0], [150.0, 250.0]]
OPENING = [[1.0, 2.0], [3.0, 4.0]]
DEMAND = [[10, 11, 12], [13, 14, 15]]


def _instance(**kwargs):
    args = dict(
        locs=LOCS,
        depot_capacity=CAPACITY,
        opening_cost=OPENING,
        demand=DEMAND,
        vehicle_capacity=70,
        vehicle_fixed_cost=1,
    )
    args.update(kwargs)
    return instance_tensordict(**args)


def test_instance_from_lists_has_the_documented_dtypes_shapes_and_device():
    td = _instance()
    assert set(td.keys()) == set(INSTANCE_KEYS)
    assert td.batch_size == torch.Size([B])
    assert td.device == torch.device("cpu")  # arrays: CPU
    assert td["cost_locs"].dtype == torch.float64
    assert td["rounded_costs"].dtype == torch.bool
    for key in ("locs", "depot_capacity", "opening_cost", "demand"):
        assert td[key].dtype == torch.float32, key
    # numbers (ints here) become float32 [B, 1], one per instance
    for key, value in (("vehicle_capacity", 70.0), ("vehicle_fixed_cost", 1.0)):
        assert td[key].dtype == torch.float32 and td[key].shape == (B, 1), key
        assert (td[key] == value).all(), key
    assert td["locs"].shape == (B, D + N, 2) and td["demand"].shape == (B, N)
    assert torch.equal(td["cost_locs"], td["locs"].double())
    assert td["rounded_costs"].shape == (B,) and not td["rounded_costs"].any()


def test_instance_from_float64_arrays_is_float32():
    td = _instance(
        locs=np.asarray(LOCS, dtype=np.float64),
        depot_capacity=np.asarray(CAPACITY),
        demand=np.asarray(DEMAND, dtype=np.float64),
        vehicle_capacity=np.float64(70.5),
    )
    assert td.device == torch.device("cpu")
    assert td["locs"].dtype == td["depot_capacity"].dtype == td["demand"].dtype == torch.float32
    assert td["vehicle_capacity"].dtype == torch.float32
    assert td["vehicle_capacity"][:, 0].tolist() == [70.5, 70.5]


@pytest.mark.parametrize(
    "capacity, fixed",
    [
        ([80.0, 90.0], [0.0, 2.5]),  # [...]
        ([[80.0], [90.0]], [[0.0], [2.5]]),  # [..., 1]
        (torch.tensor([80, 90]), torch.tensor([[0.0], [2.5]])),
    ],
)
def test_per_instance_vehicle_values_become_a_column(capacity, fixed):
    td = _instance(vehicle_capacity=capacity, vehicle_fixed_cost=fixed)
    assert td["vehicle_capacity"].shape == td["vehicle_fixed_cost"].shape == (B, 1)
    assert td["vehicle_capacity"].dtype == torch.float32
    assert td["vehicle_capacity"][:, 0].tolist() == [80.0, 90.0]
    assert td["vehicle_fixed_cost"][:, 0].tolist() == [0.0, 2.5]


def test_explicit_cost_locs_and_rounded_costs_are_kept():
    cost_locs = (np.asarray(LOCS, dtype=np.float32) * 100).tolist()  # another scale
    td = _instance(cost_locs=np.asarray(cost_locs, dtype=np.float32), rounded_costs=[1, 0])
    assert td["cost_locs"].dtype == torch.float64
    assert torch.equal(td["cost_locs"], torch.tensor(cost_locs, dtype=torch.float64))
    assert not torch.equal(td["cost_locs"], td["locs"].double())
    assert td["rounded_costs"].dtype == torch.bool
    assert td["rounded_costs"].tolist() == [True, False]
    # one bool for every instance
    td = _instance(rounded_costs=True)
    assert td["rounded_costs"].tolist() == [True, True]


def test_device_defaults_to_the_locs_device_and_can_be_given():
    # the "meta" device exists without an accelerator: it shows where the entries went
    td = _instance(locs=torch.tensor(LOCS, device="meta"))
    assert td.device == torch.device("meta")
    for key in INSTANCE_KEYS:
        assert td[key].device.type == "meta", key
    td = _instance(locs=torch.tensor(LOCS), device="meta")
    assert td.device == torch.device("meta")
    assert td["locs"].device.type == "meta" and td["demand"].device.type == "meta"
    # a CPU tensor: CPU
    assert _instance(locs=torch.tensor(LOCS)).device == torch.device("cpu")


def test_batch_shape_is_the_depot_capacity_batch_shape():
    capacity = torch.tensor(CAPACITY).expand(3, B, D)
    td = instance_tensordict(
        torch.tensor(LOCS).expand(3, B, D + N, 2),
        capacity,
        torch.tensor(OPENING).expand(3, B, D),
        torch.tensor(DEMAND).expand(3, B, N),
        70.0,
        torch.ones(3, B),
        rounded_costs=torch.zeros(3, B, 1, dtype=torch.bool),
    )
    assert td.batch_size == torch.Size([3, B])
    assert td["vehicle_capacity"].shape == td["vehicle_fixed_cost"].shape == (3, B, 1)
    assert td["rounded_costs"].shape == (3, B)
    # a single instance: empty batch shape
    one = instance_tensordict(LOCS[0], CAPACITY[0], OPENING[0], DEMAND[0], 70.0, 1.0)
    assert one.batch_size == torch.Size([])
    assert one["vehicle_capacity"].shape == (1,) and one["rounded_costs"].shape == ()


# --------------------------------------------------------------------------- datasets
def _dataset(size=4, seed=3):
    return generate_dataset(CLRPGenerator(preset="clrp10"), size, seed=seed)


def _arrays(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def test_save_is_uncompressed_by_default_and_keeps_every_key(tmp_path):
    td = _dataset()
    path = tmp_path / "plain.npz"
    checksum = save_dataset(td, path)
    with zipfile.ZipFile(path) as archive:
        assert {i.compress_type for i in archive.infolist()} == {zipfile.ZIP_STORED}
    arrays = _arrays(path)
    assert set(INSTANCE_KEYS) <= set(arrays)
    assert str(arrays["meta_checksum"]) == checksum
    # no seed given: recorded as -1, read back as None
    assert int(arrays["meta_seed"]) == -1 and dataset_seed(path) is None
    loaded = load_dataset(path)
    for key in INSTANCE_KEYS:
        assert torch.equal(loaded[key], td[key]), key


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_seed_is_recorded_including_zero(tmp_path, seed):
    path = tmp_path / "seeded.npz"
    save_dataset(_dataset(seed=seed), path, seed=seed)
    assert dataset_seed(path) == seed


def test_compressed_save_drops_cost_locs_equal_to_locs(tmp_path):
    td = _dataset()
    plain, small = tmp_path / "plain.npz", tmp_path / "small.npz"
    checksum = save_dataset(td, plain, seed=3)
    assert save_dataset(td, small, seed=3, compress=True) == checksum  # same either way
    with zipfile.ZipFile(small) as archive:
        assert zipfile.ZIP_DEFLATED in {i.compress_type for i in archive.infolist()}
    arrays = _arrays(small)
    assert "cost_locs" not in arrays
    assert set(INSTANCE_KEYS) - {"cost_locs"} <= set(arrays)
    assert str(arrays["meta_checksum"]) == checksum and dataset_seed(small) == 3
    loaded = load_dataset(small)  # verifies the checksum over the restored cost_locs
    assert loaded["cost_locs"].dtype == torch.float64
    for key in INSTANCE_KEYS:
        assert torch.equal(loaded[key], td[key]), key


def test_compressed_save_keeps_cost_locs_that_differ(tmp_path):
    td = _dataset()
    td["cost_locs"] = td["cost_locs"] * 100
    path = tmp_path / "scaled.npz"
    checksum = save_dataset(td, path, compress=True)
    arrays = _arrays(path)
    assert "cost_locs" in arrays
    assert np.array_equal(arrays["cost_locs"], td["cost_locs"].numpy())
    loaded = load_dataset(path)
    assert torch.equal(loaded["cost_locs"], td["cost_locs"])
    assert dataset_checksum({k: loaded[k].numpy() for k in INSTANCE_KEYS}) == checksum


REQUIRED = ("locs", "depot_capacity", "opening_cost", "demand")


def test_a_file_without_the_optional_keys_loads_with_defaults(tmp_path):
    """Written by another tool: no cost_locs, rounded_costs, seed or checksum; 1-D vehicle
    values."""
    td = _dataset(size=3)
    arrays = {k: td[k].numpy() for k in REQUIRED}
    arrays["vehicle_capacity"] = np.array([70.0, 60.0, 50.0], dtype=np.float32)
    arrays["vehicle_fixed_cost"] = np.array([1.0, 0.0, 2.0], dtype=np.float32)
    path = tmp_path / "other.npz"
    np.savez(path, **arrays)
    loaded = load_dataset(path)
    assert loaded.batch_size == torch.Size([3])
    assert loaded["cost_locs"].dtype == torch.float64
    assert torch.equal(loaded["cost_locs"], td["locs"].double())
    assert loaded["rounded_costs"].dtype == torch.bool
    assert loaded["rounded_costs"].tolist() == [False, False, False]
    assert loaded["vehicle_capacity"].shape == loaded["vehicle_fixed_cost"].shape == (3, 1)
    assert loaded["vehicle_capacity"][:, 0].tolist() == [70.0, 60.0, 50.0]
    assert loaded["vehicle_fixed_cost"][:, 0].tolist() == [1.0, 0.0, 2.0]
    assert dataset_seed(path) is None


@pytest.mark.parametrize("drop", [["demand"], ["vehicle_capacity", "vehicle_fixed_cost"]])
def test_a_file_missing_a_required_array_names_it(tmp_path, drop):
    td = _dataset(size=2)
    arrays = {k: td[k].numpy() for k in INSTANCE_KEYS if k not in drop}
    path = tmp_path / "missing.npz"
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match=re.escape(f"missing.npz: missing arrays {drop}")):
        load_dataset(path)


def test_verify_false_skips_the_checksum(tmp_path):
    td = _dataset(size=2)
    path = tmp_path / "data.npz"
    save_dataset(td, path, seed=1)
    arrays = _arrays(path)
    arrays["demand"][0, 0] += 1
    np.savez(tmp_path / "edited.npz", **arrays)
    with pytest.raises(ValueError, match=r"edited\.npz: checksum mismatch"):
        load_dataset(tmp_path / "edited.npz")
    loaded = load_dataset(tmp_path / "edited.npz", verify=False)
    assert loaded["demand"][0, 0] == td["demand"][0, 0] + 1


# ------------------------------------------------------------------ first-fit decreasing
def _ffd(demand, capacity):
    return ffd_feasible(torch.tensor(demand, dtype=torch.float32), torch.tensor(capacity))


def test_ffd_takes_demands_by_decreasing_size_into_the_first_depot_that_fits():
    # [6, 9] with 5, 4, 3, 3: 5 -> depot 0 (1 left), 4 -> depot 1 (5 left), 3 -> depot 1
    # (2 left), 3 fits nowhere; yet 3 + 3 | 5 + 4 packs. First fit *decreasing* fails.
    assert _ffd([[5.0, 4.0, 3.0, 3.0]], [[6.0, 9.0]]).tolist() == [False]
    # the same demands in any order: sorted first
    assert _ffd([[3.0, 5.0, 3.0, 4.0]], [[6.0, 9.0]]).tolist() == [False]
    # depots taken in index order: [9, 6] packs 5 + 4 | 3 + 3 exactly
    assert _ffd([[3.0, 5.0, 3.0, 4.0]], [[9.0, 6.0]]).tolist() == [True]
    # one batch, one answer per row
    assert _ffd(
        [[3.0, 3.0, 4.0, 5.0], [4.0, 3.0, 5.0, 3.0]], [[9.0, 6.0], [6.0, 9.0]]
    ).tolist() == [
        True,
        False,
    ]


def test_ffd_a_demand_fits_a_depot_with_exactly_that_much_left():
    assert _ffd([[5.0, 5.0]], [[10.0]]).tolist() == [True]
    assert _ffd([[7.0, 3.0]], [[7.0, 3.0]]).tolist() == [True]
    assert _ffd([[5.0, 5.0]], [[9.999]]).tolist() == [False]
    assert _ffd([[10.0]], [[9.0, 9.0, 9.0]]).tolist() == [False]


def test_ffd_keeps_extra_batch_dimensions():
    demand = torch.tensor([[5.0, 4.0, 3.0, 3.0]]).expand(2, 3, 4)
    capacity = torch.tensor([[[6.0, 9.0], [9.0, 6.0], [20.0, 0.0]]] * 2)
    got = ffd_feasible(demand, capacity)
    assert got.shape == (2, 3)
    assert got.tolist() == [[False, True, True]] * 2


PACKING_CASES = [
    # demand, capacity, first-fit decreasing packs it
    ([5.0, 4.0, 3.0, 3.0], [9.0, 6.0], True),  # total capacity == total demand
    ([5.0, 4.0, 3.0, 3.0], [6.0, 9.0], False),  # == total, FFD fails
    ([10.0], [9.0, 9.0, 9.0], False),  # plenty of total capacity, no depot fits
    ([5.0, 4.0], [5.0, 3.0], False),  # below the total demand
    ([10.0, 10.0], [100.0, 100.0, 100.0], True),  # far above: sure
]


def test_packable_is_first_fit_decreasing_on_every_case():
    for demand, capacity, want in PACKING_CASES:
        d, c = torch.tensor([demand]), torch.tensor([capacity])
        assert packable(d, c).tolist() == [want], (demand, capacity)
        # with extra batch dimensions (as a generator batch of shape [1, 1] passes them)
        assert packable(d[None], c[None]).tolist() == [[want]], (demand, capacity)
    # rows of different cases in one batch (3 depots each)
    demand = torch.tensor([[10.0, 1.0], [10.0, 10.0], [2.0, 2.0]])
    capacity = torch.tensor([[9.0, 9.0, 9.0], [10.0, 10.0, 0.0], [1.0, 1.0, 1.0]])
    assert packable(demand, capacity).tolist() == [False, True, False]


def test_ffd_answers_on_the_inputs_device():
    # the "meta" device (shapes only, no accelerator needed) shows where the answer is made
    demand = torch.tensor([[5.0, 4.0, 3.0, 3.0]] * 3, device="meta")
    capacity = torch.tensor([[6.0, 9.0]] * 3, device="meta")
    got = ffd_feasible(demand, capacity)
    assert got.device.type == "meta" and got.dtype == torch.bool and got.shape == (3,)
