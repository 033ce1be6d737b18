"""POMO training time per decoding step: DRLHQ on CLRP20 next to RL4CO's stock POMO on CVRP20.

One process, same model size, same batch, interleaved repetitions. One *training iteration* is
RL4CO POMO's work on a batch: multistart sampling with N starts, the shared-baseline loss,
backward and an Adam step. Its time is divided by the number of decoding steps of that batch
(CLRP20 has more nodes and steps than CVRP20, so the comparison is per step).

    python benchmarks/train_throughput.py --embed-dim 128 --layers 6 --heads 8 --batch-size 64

Prints a Markdown table and the ratio (target <= 1.3).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from rl4co.envs import CVRPEnv
from rl4co.models import POMO
from rl4co.models.zoo.am import AttentionModelPolicy
from rl4co.utils.ops import unbatchify

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.policies import DRLHQPolicy


def train_iteration(policy, env, td, optimizer) -> tuple[float, int]:
    """(seconds, decoding steps) of one POMO iteration (RL4CO's shared-baseline loss)."""
    start = time.perf_counter()
    td = env.reset(td)
    num_starts = env.get_num_starts(td)
    out = policy(td, env, phase="train", num_starts=num_starts)
    reward = unbatchify(out["reward"], num_starts)
    log_likelihood = unbatchify(out["log_likelihood"], num_starts)
    advantage = reward - reward.mean(-1, keepdim=True)
    loss = -(advantage * log_likelihood).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
    optimizer.step()
    return time.perf_counter() - start, out["actions"].shape[1]


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--embed-dim", type=int, default=128)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--ff", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--repeats", type=int, default=6)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    size = dict(
        embed_dim=args.embed_dim,
        num_encoder_layers=args.layers,
        num_heads=args.heads,
        feedforward_hidden=args.ff,
    )

    clrp_env = CLRPEnv(
        generator_params={"preset": "clrp20"}, check_actions=False, device=args.device
    )
    clrp_policy = DRLHQPolicy(**size)
    cvrp_env = CVRPEnv(generator_params={"num_loc": 20}, check_solution=False, device=args.device)
    # RL4CO's stock POMO policy (what POMO builds without a policy), same size
    cvrp_policy = POMO(cvrp_env, policy_kwargs=size).policy
    assert isinstance(cvrp_policy, AttentionModelPolicy)
    cases = {
        "DRLHQ / CLRP20": (clrp_policy, clrp_env),
        "RL4CO POMO / CVRP20": (cvrp_policy, cvrp_env),
    }
    for policy, _ in cases.values():
        policy.to(args.device).train()
        policy.train_decode_type = "multistart_sampling"
    optimizers = {k: torch.optim.Adam(v[0].parameters(), lr=1e-4) for k, v in cases.items()}
    times: dict[str, list[float]] = {k: [] for k in cases}
    steps: dict[str, list[int]] = {k: [] for k in cases}
    for rep in range(args.warmup + args.repeats):
        for name, (policy, env) in cases.items():
            td = env.generator(args.batch_size).to(args.device)
            seconds, num_steps = train_iteration(policy, env, td, optimizers[name])
            if rep >= args.warmup:
                times[name].append(seconds)
                steps[name].append(num_steps)
    rows = {}
    print(
        f"model {size}, batch {args.batch_size} x N starts, {args.repeats} iterations, "
        f"{args.threads} thread(s), device {args.device}"
    )
    print("| case | s / iteration (median) | decoding steps (mean) | ms / decoding step |")
    print("|---|---|---|---|")
    for name in cases:
        per_step = [t / s for t, s in zip(times[name], steps[name])]
        rows[name] = statistics.median(per_step)
        print(
            f"| {name} | {statistics.median(times[name]):.3f} | "
            f"{statistics.mean(steps[name]):.1f} | {1000 * rows[name]:.2f} |"
        )
    names = list(cases)
    ratio = rows[names[0]] / rows[names[1]]
    print(f"ratio per decoding step (DRLHQ/CLRP20 : POMO/CVRP20) = {ratio:.3f} (target <= 1.3)")
    return {"per_step": rows, "ratio": ratio}


if __name__ == "__main__":
    main()
