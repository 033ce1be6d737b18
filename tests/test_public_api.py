"""What a new user types works: one class per public name, the README's imports resolve from
where it shows them, and a checkpoint written by RL4CO's trainer loads back."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest
import torch
from rl4co.models import POMO, AttentionModelPolicy
from rl4co.utils.trainer import RL4COTrainer

import clrp_rl4co
from clrp_rl4co.envs.clrp.env import CLRPEnv as EnvItself

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
TINY = dict(embed_dim=16, num_encoder_layers=1, num_heads=2, feedforward_hidden=32)


def test_package_clrp_env_is_the_env_itself():
    from clrp_rl4co import CLRPEnv
    from clrp_rl4co.envs import CLRPEnv as from_envs
    from clrp_rl4co.envs.clrp import CLRPEnv as from_folder

    assert CLRPEnv is EnvItself and from_envs is EnvItself and from_folder is EnvItself
    assert CLRPEnv.__module__ == "clrp_rl4co.envs.clrp.env"
    for name in clrp_rl4co.__all__:  # every public name is importable from the package
        assert getattr(clrp_rl4co, name) is not None, name


@pytest.mark.parametrize("method", ["solve", "local_search"])
def test_env_solver_methods_name_the_functions_to_use(method):
    import clrp_rl4co.solvers as solvers

    env = EnvItself(generator_params={"preset": "clrp10"})
    td = env.reset(env.generator(batch_size=[1]))
    call = {
        "solve": lambda: env.solve(td, max_runtime=0.1),
        "local_search": lambda: env.local_search(td, torch.zeros(1, 4, dtype=torch.long)),
    }[method]
    with pytest.raises(NotImplementedError, match=f"CLRPEnv.{method}") as error:
        call()
    message = str(error.value)
    assert "solve_td" in message and "local_search_td" in message
    assert callable(solvers.solve_td) and callable(solvers.local_search_td)  # they exist


def test_stock_policy_one_liner_from_the_package():
    from clrp_rl4co import clrp_embeddings

    one_line = 'AttentionModelPolicy(env_name="clrp", **clrp_embeddings(128))'
    assert one_line in " ".join(README.split())
    env = clrp_rl4co.CLRPEnv(generator_params={"preset": "clrp10"})
    policy = AttentionModelPolicy(env_name="clrp", **clrp_embeddings(16), embed_dim=16, num_heads=2)
    td = env.reset(env.generator(2))
    out = policy(td.clone(), env, decode_type="greedy", return_actions=True)
    env.check_solution_validity(td, out["actions"])


def _readme_imports() -> list[tuple[str, str]]:
    """``(module, name)`` of every ``from <module> import <name>`` in the README's Python
    blocks."""
    pairs = []
    for block in re.findall(r"```python\n(.*?)```", README, flags=re.S):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom):
                pairs += [(node.module, alias.name) for alias in node.names]
    return pairs


def test_readme_imports_resolve_where_it_shows_them():
    pairs = _readme_imports()
    assert ("clrp_rl4co", "CLRPEnv") in pairs and ("clrp_rl4co.models", "decode_batch") in pairs
    missing = [
        f"from {module} import {name}"
        for module, name in pairs
        if not hasattr(importlib.import_module(module), name)
    ]
    assert not missing


@pytest.fixture(scope="module")
def trained_checkpoint(tmp_path_factory):
    """A checkpoint of a tiny POMO + DRLHQ written by RL4COTrainer's default checkpointing
    after one training step, and the trained model."""
    root = tmp_path_factory.mktemp("rl4co_trainer")
    torch.manual_seed(0)
    env = clrp_rl4co.CLRPEnv(generator_params={"preset": "clrp10"}, check_actions=False)
    policy = clrp_rl4co.DRLHQPolicy(**TINY)
    model = POMO(env, policy=policy, batch_size=4, train_data_size=4, val_data_size=4)
    trainer = RL4COTrainer(
        max_steps=1,
        accelerator="cpu",
        precision="32-true",
        logger=False,
        default_root_dir=root,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    trainer.fit(model)
    ckpt = trainer.checkpoint_callback.best_model_path
    assert ckpt and Path(ckpt).is_file()
    return ckpt, model


def _same_weights(a: torch.nn.Module, b: torch.nn.Module) -> None:
    state_a, state_b = a.state_dict(), b.state_dict()
    assert state_a.keys() == state_b.keys()
    for key, tensor in state_a.items():
        assert torch.equal(tensor, state_b[key]), key


def test_rl4co_load_from_checkpoint_with_the_documented_line(trained_checkpoint):
    ckpt, trained = trained_checkpoint
    assert "POMO.load_from_checkpoint(ckpt, weights_only=False)" in README
    model = POMO.load_from_checkpoint(ckpt, weights_only=False)
    assert type(model.env) is EnvItself and type(model.policy) is clrp_rl4co.DRLHQPolicy
    _same_weights(model.policy, trained.policy)


def test_load_policy_reads_the_trainer_checkpoint(trained_checkpoint):
    ckpt, trained = trained_checkpoint
    assert "load_policy(ckpt)" in README
    policy = clrp_rl4co.load_policy(ckpt)
    assert type(policy) is clrp_rl4co.DRLHQPolicy and policy.config == trained.policy.config
    _same_weights(policy, trained.policy)
