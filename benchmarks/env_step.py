"""Env step speed: random-policy rollouts of CLRPEnv (CLRP50) next to RL4CO's CVRPEnv (50).

Both envs run in the same process, alternating rollout by rollout, with the same batch size
and the same random policy (uniform over feasible actions, ``torch.multinomial``). Prints the
best ms per step of each (the least disturbed by other load on a shared machine), the ratio of
those, and the median of the per-repeat ratios.

    python benchmarks/env_step.py --batch-size 512 --repeats 10
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
    parser.add_argument("--repeats", type=int, default=10)
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
    per_repeat = {"clrp": [], "cvrp": []}  # ms per step of each repeat
    for r in range(args.repeats):
        for name, env, td in (("clrp", clrp, td_clrp), ("cvrp", cvrp, td_cvrp)):
            seconds, steps = rollout_time(env, td, r + 1)
            per_repeat[name].append(1000 * seconds / steps)
    best = {k: min(v) for k, v in per_repeat.items()}
    pair_ratios = sorted(a / b for a, b in zip(per_repeat["clrp"], per_repeat["cvrp"]))
    median_ratio = pair_ratios[len(pair_ratios) // 2]
    print(
        f"batch {args.batch_size}, {args.num_loc} customers, threads {args.threads}, "
        f"repeats {args.repeats} (alternating), check_actions={args.check_actions}"
    )
    print(f"CLRPEnv: best {best['clrp']:.3f} ms/step")
    print(f"CVRPEnv: best {best['cvrp']:.3f} ms/step")
    print(
        f"ratio of best times: {best['clrp'] / best['cvrp']:.2f}; median of paired ratios: "
        f"{median_ratio:.2f} (target <= 1.5)"
    )


if __name__ == "__main__":
    main()
