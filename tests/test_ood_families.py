"""The synthetic OOD families (datasets/ood/, built by experiments/ood/families.py):
files, checksums, validity, and each family's definition."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from clrp_rl4co.envs.clrp.dataset import load_dataset
from clrp_rl4co.envs.clrp.validity import check_instance_validity

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "datasets" / "ood"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
BY_NAME = {row["name"]: row for row in MANIFEST}


def _families_module():
    """experiments/ood/families.py, loaded from its file (experiments/ is not a package we
    rely on here)."""
    path = ROOT / "experiments" / "ood" / "families.py"
    spec = importlib.util.spec_from_file_location("ood_families", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def _load(name: str):
    return load_dataset(DATA / f"{name}.npz")


@pytest.mark.parametrize("name", list(BY_NAME))
def test_family_files_are_small_valid_and_match_the_manifest(name):
    row = BY_NAME[name]
    path = ROOT / row["file"]
    assert path.is_file() and path.stat().st_size < 1_000_000
    td = _load(name)  # verifies the checksum
    assert td.batch_size[0] == row["instances"]
    assert td["demand"].shape[-1] == row["customers"]
    assert td["depot_capacity"].shape[-1] == row["depots"]
    check_instance_validity(td)
    assert not td["rounded_costs"].any()  # real Euclidean costs


def test_rebuilding_gives_the_same_files():
    families = _families_module()
    assert set(families.FAMILIES) == set(BY_NAME)
    families.build_all(DATA, check=True)  # raises on any difference


def test_tb_like_families_follow_the_description():
    for name in ("tb100_d10", "tb100_d20", "tb200_d20"):
        td = _load(name)
        cost = td["cost_locs"]
        assert cost.min() >= 0 and cost.max() <= 100 and cost.max() > 90
        assert (td["vehicle_capacity"] == 150).all() and (td["vehicle_fixed_cost"] == 10).all()
        demand = td["demand"]
        assert demand.min() == 10 and demand.max() == 20
        assert (td["opening_cost"] == 100).all()
        total = demand.sum(-1, keepdim=True)
        assert torch.allclose(td["depot_capacity"], (2 * total).expand_as(td["depot_capacity"]))
    # the network input is the unit square, the costs stay in [0, 100]
    assert torch.allclose(td["locs"].amin((-2, -1)), torch.zeros(td.batch_size[0]))


def _mean_nn(locs: torch.Tensor) -> float:
    dist = torch.cdist(locs, locs) + 1e9 * torch.eye(locs.shape[-2])
    return float(dist.amin(-1).mean())


def test_tb_customers_are_clustered_and_the_uniform_variant_is_not():
    clustered = _load("tb100_d10")["cost_locs"][:, 10:].float()
    uniform = _load("tb100_uniform")["cost_locs"][:, 10:].float()
    assert _mean_nn(clustered) < 0.7 * _mean_nn(uniform)  # 3-8 clusters, std 5-10
    assert 4.0 < _mean_nn(uniform) < 6.0  # about 0.5 x 100 / sqrt(100)


@pytest.mark.parametrize(
    "name,changed",
    [
        ("c100_cap2x", {"depot_capacity"}),
        ("c100_q150", {"vehicle_capacity"}),
        ("c100_F10", {"vehicle_fixed_cost"}),
        ("c100_open10", {"opening_cost"}),
        ("c100_openeq", {"opening_cost"}),
        ("c100_equal", {"opening_cost", "depot_capacity"}),
        ("c100_dist100", {"cost_locs"}),
        ("c100_dist10", {"cost_locs"}),
        ("c100_cluster", {"locs", "cost_locs"}),
    ],
)
def test_one_factor_families_change_exactly_one_input(name, changed):
    base, other = _load("c100_base"), _load(name)
    differs = {k for k in base.keys() if not torch.allclose(base[k].double(), other[k].double())}
    assert differs == changed
    if name == "c100_dist100":
        assert torch.allclose(other["cost_locs"], 100 * base["cost_locs"])
    if name == "c100_cluster":  # depots stay, customers move
        assert torch.equal(other["cost_locs"][:, :20], base["cost_locs"][:, :20])


def test_minus_one_factor_families_share_tb100_d10s_instances():
    tb = _load("tb100_d10")
    for name, kept in (
        ("tb100_paperq", ("cost_locs", "demand", "depot_capacity", "opening_cost")),
        ("tb100_papercap", ("cost_locs", "demand", "opening_cost", "vehicle_capacity")),
        ("tb100_uniform", ("demand", "depot_capacity", "opening_cost", "vehicle_capacity")),
        ("tb100_jitter", ("cost_locs", "demand", "depot_capacity", "vehicle_capacity")),
    ):
        other = _load(name)
        for key in kept:
            assert torch.equal(other[key], tb[key]), (name, key)
    cost = _load("tb100_papercost")
    assert torch.allclose(cost["cost_locs"], tb["cost_locs"] / 100)
    jitter = _load("tb100_jitter")["opening_cost"]
    assert (jitter - 100).abs().max() <= 1.0 and (jitter.amax(-1) > jitter.amin(-1)).all()


def test_barreto_like_families():
    for name in ("bar50", "bar100", "bar50_equal"):
        td = _load(name)
        assert (td["vehicle_fixed_cost"] == 0).all() and (td["vehicle_capacity"] == 160).all()
        assert td["demand"].min() >= 1 and td["demand"].max() <= 40
    equal = _load("bar50_equal")
    assert (equal["opening_cost"] == 100).all()
    share = equal["depot_capacity"] / equal["demand"].sum(-1, keepdim=True)
    assert np.allclose(share.numpy(), 0.6)
