"""A corrupt or mismatched saved policy fails with an error that names the file and says what is
wrong (not torch's bare zip or unpickling error)."""

import json
import re

import pytest
import torch

from clrp_rl4co.policies import DRLHQPolicy, load_policy

TINY = dict(embed_dim=16, num_encoder_layers=1, num_heads=2, feedforward_hidden=32)


@pytest.fixture
def saved(tmp_path):
    torch.manual_seed(0)
    weights, config = DRLHQPolicy(**TINY).save_pretrained(tmp_path / "tiny")
    return weights, config


def _raises(loader, path, what):
    with pytest.raises(ValueError) as info:
        loader(path)
    message = str(info.value)
    assert str(path) in message and what in message, message
    return message


@pytest.mark.parametrize("loader", [DRLHQPolicy.from_pretrained, load_policy])
def test_truncated_weights_name_the_file(saved, loader):
    weights, _ = saved
    weights.write_bytes(weights.read_bytes()[:200])
    _raises(loader, weights, "truncated or not a PyTorch checkpoint")


@pytest.mark.parametrize("loader", [DRLHQPolicy.from_pretrained, load_policy])
def test_empty_or_foreign_weights_name_the_file(saved, loader):
    weights, _ = saved
    weights.write_bytes(b"")
    _raises(loader, weights, "the file is empty")
    weights.write_text("not a checkpoint at all\n")
    _raises(loader, weights, "truncated or not a PyTorch checkpoint")


def test_pickled_objects_are_refused_by_name(saved):
    weights, _ = saved
    torch.save({"weights": torch.zeros(2), "extra": re.compile("x")}, weights)
    _raises(DRLHQPolicy.from_pretrained, weights, "weights_only=True refuses")


def test_weights_that_do_not_fit_the_config_name_both_files(saved):
    weights, config = saved
    meta = json.loads(config.read_text())
    meta["config"]["embed_dim"] = 32
    config.write_text(json.dumps(meta))
    message = _raises(DRLHQPolicy.from_pretrained, weights, "do not fit")
    assert str(config) in message


def test_corrupt_lightning_checkpoint_names_the_file(tmp_path):
    ckpt = tmp_path / "last.ckpt"
    ckpt.write_bytes(b"PK\x03\x04 broken zip")
    _raises(load_policy, ckpt, "truncated or not a PyTorch checkpoint")
    torch.save([1, 2, 3], ckpt)
    _raises(load_policy, ckpt, "not a Lightning checkpoint")


def test_a_stem_path_with_a_folder_is_that_file_not_the_shipped_model(tmp_path):
    # a user's model saved under a shipped model's name, loaded by its stem path
    torch.manual_seed(0)
    DRLHQPolicy(**TINY).save_pretrained(tmp_path / "drlhq_clrp20")
    size = sum(p.numel() for p in DRLHQPolicy(**TINY).parameters())
    mine = load_policy(tmp_path / "drlhq_clrp20")
    assert sum(p.numel() for p in mine.parameters()) == size
    shipped = load_policy("drlhq_clrp20")  # a bare name: the shipped model (128-d)
    assert sum(p.numel() for p in shipped.parameters()) > 10 * size


@pytest.mark.parametrize("loader", [DRLHQPolicy.from_pretrained, load_policy])
@pytest.mark.parametrize("removed", [".json", ".pt"])
@pytest.mark.parametrize("given", ["stem", ".pt", ".json"])
def test_half_a_saved_policy_names_the_missing_file(saved, loader, removed, given):
    weights, config = saved
    missing = weights.with_suffix(removed)
    present = config if removed == ".pt" else weights
    missing.unlink()
    path = weights.with_suffix("") if given == "stem" else weights.with_suffix(given)
    with pytest.raises(FileNotFoundError) as info:
        loader(path)
    message = str(info.value)
    assert f"{missing} is missing" in message and str(present) in message, message


def test_a_name_that_is_nowhere_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="'nothing_here': no such file or shipped model"):
        load_policy("nothing_here")


@pytest.mark.parametrize("preset", ["clrp10", "clrp20", "clrp50", "clrp100"])
def test_load_policy_takes_the_names_from_pretrained_takes(preset):
    by_class = DRLHQPolicy.from_pretrained(preset)
    for name in (preset, f"drlhq_{preset}"):
        loaded = load_policy(name)
        assert type(loaded) is DRLHQPolicy and loaded.config == by_class.config
        for key, tensor in by_class.state_dict().items():
            assert torch.equal(loaded.state_dict()[key], tensor), (name, key)


def test_load_policy_bare_preset_of_another_model():
    from clrp_rl4co.policies import POMOStarPolicy

    pomo = load_policy("clrp20", model="pomo")
    assert type(pomo) is POMOStarPolicy
    reference = POMOStarPolicy.from_pretrained("clrp20").state_dict()
    assert all(torch.equal(pomo.state_dict()[k], v) for k, v in reference.items())
    with pytest.raises(FileNotFoundError, match="'mta_clrp100'"):
        load_policy("clrp100", model="mta")  # no shipped MTA* model of that size
