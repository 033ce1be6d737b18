"""Every decode type x every model gives valid solutions (generated and Prins instances)."""

import pytest
import torch
from rl4co.data.transforms import StateAugmentation
from rl4co.utils.ops import batchify

from clrp_rl4co.data import instances_to_tensordict, prins_files, read_prodhon
from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.policies import POLICIES, rotate45_augmentation

TINY = dict(embed_dim=16, num_encoder_layers=1, num_heads=2, feedforward_hidden=32)
DECODE = [
    ("greedy", {}),
    ("sampling", {}),
    ("multistart_greedy", {}),
    ("multistart_sampling", {}),
    ("beam_search", {"beam_width": 3}),
    ("beam_search", {"beam_width": 3, "select_best": False}),
]


@pytest.fixture(scope="module")
def policies():
    torch.manual_seed(0)
    return {name: cls(**TINY).eval() for name, cls in POLICIES.items()}


def _check(env, policy, td, decode_type, kwargs):
    batch = td.batch_size[0]
    with torch.no_grad():
        out = policy(td.clone(), env, decode_type=decode_type, **kwargs)
    actions = out["actions"]
    repeats = actions.shape[0] // batch
    env.check_solution_validity(batchify(td, repeats) if repeats > 1 else td, actions)
    assert torch.isfinite(out["reward"]).all()
    assert torch.isfinite(out["log_likelihood"]).all()
    # evaluate: the log-likelihood of the same actions
    if repeats == 1 and decode_type != "beam_search":
        with torch.no_grad():
            ev = policy(td.clone(), env, actions=actions)
        torch.testing.assert_close(ev["log_likelihood"], out["log_likelihood"])
    return out


@pytest.mark.parametrize("name", list(POLICIES))
@pytest.mark.parametrize("decode_type,kwargs", DECODE)
def test_generated(policies, name, decode_type, kwargs):
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    torch.manual_seed(3)
    td = env.reset(env.generator(3))
    _check(env, policies[name], td, decode_type, kwargs)


@pytest.mark.parametrize("name", list(POLICIES))
@pytest.mark.parametrize("augment_fn", ["dihedral8", rotate45_augmentation])
def test_augmented_multistart(policies, name, augment_fn):
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    torch.manual_seed(4)
    td = env.reset(env.generator(2))
    aug = StateAugmentation(num_augment=8, augment_fn=augment_fn)(td)
    out = _check(env, policies[name], aug, "multistart_greedy", {})
    assert out["actions"].shape[0] == 8 * 2 * 10


@pytest.mark.parametrize("name", list(POLICIES))
def test_prins(policies, name, benchmarks_root):
    """The smallest and a 200-customer Prins instance (a model of any size runs on them)."""
    env = CLRPEnv()
    files = prins_files(benchmarks_root)
    for path in (files[0], next(f for f in files if "200-10" in f.name)):
        td = env.reset(instances_to_tensordict([read_prodhon(path)]))
        for decode_type, kwargs in DECODE[:3] + [("beam_search", {"beam_width": 2})]:
            if "200" in path.name and decode_type.startswith("multistart"):
                kwargs = {"num_starts": 8}
            _check(env, policies[name], td, decode_type, kwargs)
