"""Env step speed: random-policy rollouts of CLRPEnv (CLRP50) next to RL4CO's CVRPEnv (50).

Both envs run in the same process, alternating, with the same batch size and the same random
policy (uniform over feasible actions); prints ms per step for each and their ratio.

    python benchmarks/env_step.py --batch-size 512 --repeats 5
"""

from __future__ import annotations

import argparse
import time

import torch
from rl4co.envs import CVRPEnv

from clrp_rl4co import CLRPEnv


def rollout_time(env, td0, seed: int) -> tuple[float, int]:
    """Seconds and number of steps of one full random rollout (reset included)."""
    gen = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    td = env.reset(td0.clone())
    steps = 0
    while not td["done"].all():
        action = torch.multinomial(td["action_mask"].float(), 1, generator=gen).squeeze(-1)
        td.set("action", action)
        td = env.step(td)["next"]
        steps += 1
    return time.perf_counter() - start, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--num-loc", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--check-actions",
        action="store_true",
        help="keep CLRPEnv's masked-action check on (off by default, as in training)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    clrp = CLRPEnv(
        generator_params={"preset": "clrp50", "num_loc": args.num_loc},
        check_actions=args.check_actions,
    )
    cvrp = CVRPEnv(generator_params={"num_loc": args.num_loc})
    td_clrp = clrp.generator(args.batch_size)
    td_cvrp = cvrp.generator(args.batch_size)
    rollout_time(clrp, td_clrp, 0)  # warm-up
    rollout_time(cvrp, td_cvrp, 0)
    totals = {"clrp": [0.0, 0], "cvrp": [0.0, 0]}
    for r in range(args.repeats):
        for name, env, td in (("clrp", clrp, td_clrp), ("cvrp", cvrp, td_cvrp)):
            seconds, steps = rollout_time(env, td, r + 1)
            totals[name][0] += seconds
            totals[name][1] += steps
    ms = {k: 1000 * s / n for k, (s, n) in totals.items()}
    print(
        f"batch {args.batch_size}, {args.num_loc} customers, threads {args.threads}, "
        f"repeats {args.repeats}, check_actions={args.check_actions}"
    )
    print(f"CLRPEnv: {ms['clrp']:.3f} ms/step ({totals['clrp'][1] / args.repeats:.0f} steps)")
    print(f"CVRPEnv: {ms['cvrp']:.3f} ms/step ({totals['cvrp'][1] / args.repeats:.0f} steps)")
    print(f"ratio CLRP/CVRP per step: {ms['clrp'] / ms['cvrp']:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
