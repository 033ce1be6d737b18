"""Stock RL4CO on the patched tree, without clrp_rl4co: every CLRP solution must be valid.

Run by ``check.sh`` inside the patched copy (``clrp_rl4co`` blocked): ``get_env("clrp")``,
``AttentionModelPolicy(env_name="clrp")`` with greedy, sampling, multistart greedy (with and
without x8 augmentation) and beam search, then ``POMO(get_env("clrp"))`` trained for a few steps
and decoded again. Each solution goes through the env's ``check_solution_validity``; multistart
start ``s`` must serve customer ``s mod N`` first.
"""

import torch
from rl4co.data.transforms import StateAugmentation
from rl4co.envs import get_env
from rl4co.models import POMO, AttentionModelPolicy
from rl4co.utils.ops import batchify
from rl4co.utils.trainer import RL4COTrainer


def check(env, td, out, label):
    actions = out["actions"]
    repeats = actions.shape[0] // td.batch_size[0]
    full = batchify(td, repeats) if repeats > 1 else td
    env.check_solution_validity(full, actions)
    torch.testing.assert_close(env.get_reward(full, actions), out["reward"])
    print(f"{label}: {tuple(actions.shape)} valid, mean cost {-out['reward'].mean():.4f}")


def main():
    torch.manual_seed(0)
    env = get_env("clrp", generator_params=dict(num_loc=20))
    assert type(env).__module__.startswith("rl4co.envs.routing.clrp"), type(env).__module__
    td = env.reset(batch_size=[4])
    num_depots, num_customers = td["depot_capacity"].shape[-1], td["demand"].shape[-1]
    policy = AttentionModelPolicy(env_name="clrp", embed_dim=32, num_heads=4, num_encoder_layers=2)
    with torch.no_grad():
        for decode_type, kwargs in [
            ("greedy", {}),
            ("sampling", {}),
            ("multistart_greedy", {}),
            ("beam_search", {"beam_width": 5, "select_best": False}),
        ]:
            out = policy(td.clone(), env, decode_type=decode_type, **kwargs)
            check(env, td, out, f"AttentionModelPolicy {decode_type}")
        out = policy(td.clone(), env, decode_type="multistart_greedy")
        starts = torch.arange(num_customers).repeat_interleave(4) + num_depots
        assert torch.equal(out["actions"][:, 0], starts)  # the start action
        assert torch.equal(out["actions"][:, 2], starts)  # served right after the first depot
        augmented = StateAugmentation(num_augment=8)(td.clone())
        out = policy(augmented.clone(), env, decode_type="multistart_greedy")
        check(env, augmented, out, "AttentionModelPolicy multistart_greedy x8")

    model = POMO(env, batch_size=8, train_data_size=32, val_data_size=8, val_batch_size=8)
    before = [p.detach().clone() for p in model.policy.parameters()]
    RL4COTrainer(
        max_epochs=1,
        accelerator="cpu",
        precision="32-true",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    ).fit(model)
    changed = any(not torch.equal(a, b) for a, b in zip(model.policy.parameters(), before))
    assert changed, "POMO did not update the policy"
    with torch.no_grad():
        out = model.policy(td.clone(), env, decode_type="multistart_greedy")
    check(env, td, out, "POMO(get_env('clrp')) after 4 training steps, multistart greedy")
    print("smoke: every solution valid")


if __name__ == "__main__":
    main()
