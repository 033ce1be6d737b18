"""The main job: generate CLRP20 instances, solve them through the env, print the cost
breakdown and write a picture of one solution.

    python examples/demo.py --num-instances 64 --seed 1234 --out demo_solution.png
"""

from __future__ import annotations

import argparse
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from clrp_rl4co import CLRPEnv  # noqa: E402
from clrp_rl4co.envs.clrp import generate_dataset  # noqa: E402
from clrp_rl4co.heuristics import nearest_neighbor_rollout  # noqa: E402


def random_rollout(env, td, seed):
    gen = torch.Generator().manual_seed(seed)
    state = env.reset(td)
    actions = []
    while not bool(state["done"].all()):
        action = torch.multinomial(state["action_mask"].float(), 1, generator=gen).squeeze(-1)
        state.set("action", action)
        state = env.step(state)["next"]
        actions.append(action)
    return torch.stack(actions, 1), state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="clrp20")
    parser.add_argument("--num-instances", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--out", default="demo_solution.png")
    args = parser.parse_args()

    env = CLRPEnv(generator_params={"preset": args.preset})
    td = generate_dataset(env.generator, args.num_instances, seed=args.seed)
    print(f"{args.num_instances} {args.preset} instances, seed {args.seed}")
    print(
        f"{'policy':<18}{'objective':>10}{'depots':>9}{'vehicles':>10}{'routing':>9}"
        f"{'routes':>8}{'ms/inst':>9}"
    )
    results = {}
    for name, rollout in (
        ("random feasible", lambda t: random_rollout(env, t, args.seed)),
        ("nearest neighbour", lambda t: nearest_neighbor_rollout(env, t)),
    ):
        start = time.perf_counter()
        actions, final = rollout(td.clone())
        elapsed = (time.perf_counter() - start) / args.num_instances * 1000
        env.check_solution_validity(final, actions)
        parts = env.cost_parts(final)
        results[name] = (actions, final)
        print(
            f"{name:<18}{parts['total'].mean():>10.4f}{parts['opening'].mean():>9.4f}"
            f"{parts['vehicles'].mean():>10.4f}{parts['routing'].mean():>9.4f}"
            f"{final['num_routes'].float().mean():>8.2f}{elapsed:>9.2f}"
        )
    actions, final = results["nearest neighbour"]
    fig, ax = plt.subplots(figsize=(6, 6))
    env.render(final, actions, ax=ax)
    fig.savefig(args.out, dpi=120, bbox_inches="tight")
    print(f"picture of instance 0 (nearest neighbour) written to {args.out}")


if __name__ == "__main__":
    main()
