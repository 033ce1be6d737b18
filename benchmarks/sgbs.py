"""SGBS benchmark: greedy, x8-augmented greedy and SGBS(+x8) next to a reference solver.

For each preset, on seeded instances: the objective and time per instance of multistart greedy,
multistart greedy with dihedral x8 augmentation, and SGBS(beta, gamma) with x8 augmentation
(both the SGBS paper's 4x4 and the DRLHQ evaluator's 4x3, greedy child included); the reference
is PyVRP (one-model encoding + depot-set search) at a fixed time per instance, cached in
``results/``. Prints how much of the gap between augmented greedy and the reference SGBS closes,
and its time relative to augmented greedy.

    python benchmarks/sgbs.py --policy runs/drlhq_clrp20_e128/checkpoints/best.ckpt \\
        --presets clrp20,clrp50 --num 100 --ref-time 2,5
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from clrp_rl4co import CLRPEnv
from clrp_rl4co.data import tensordict_to_instances
from clrp_rl4co.envs.clrp import generate_dataset
from clrp_rl4co.models import load_policy
from clrp_rl4co.models.decoding import decode_batch
from clrp_rl4co.reporting import provenance
from clrp_rl4co.reporting.markdown import markdown_table
from clrp_rl4co.search.sgbs import sgbs
from clrp_rl4co.solving import solve_many


def reference_costs(td, preset: str, seed: int, seconds: float, procs: int) -> list[float]:
    """PyVRP costs per instance, cached in results/cache/."""
    path = (
        Path("results/cache")
        / f"sgbs_reference_{preset}_{td.batch_size[0]}_{seed}_{seconds:g}s.json"
    )
    if path.is_file():
        return json.loads(path.read_text())["costs"]
    instances = tensordict_to_instances(td)
    results = solve_many(instances, "pyvrp", seconds, seed=seed, workers=procs)
    costs = [r.objective for r in results]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"costs": costs, "seconds": seconds, "solver": "pyvrp+ds"}))
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", required=True, help="checkpoint (.ckpt) or pretrained model")
    parser.add_argument("--presets", default="clrp20,clrp50")
    parser.add_argument("--num", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--ref-time", default="2,5", help="reference seconds per instance")
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-batch", type=int, default=2048)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    policy = load_policy(args.policy).eval()
    print(
        f"policy {args.policy}; {args.num} instances per preset, seed {args.seed}; torch "
        f"threads {args.threads}; {provenance.machine()}"
    )
    ref_times = [float(x) for x in args.ref_time.split(",")]
    for k, preset in enumerate(args.presets.split(",")):
        env = CLRPEnv(generator_params={"preset": preset})
        td = generate_dataset(env.generator, args.num, seed=args.seed)
        ref_seconds = ref_times[min(k, len(ref_times) - 1)]
        ref = torch.tensor(
            reference_costs(td, preset, args.seed, ref_seconds, args.procs), dtype=torch.float64
        )
        rows = []
        for spec in ("multistart_greedy", "multistart_greedy+aug8"):
            actions, parts, seconds = decode_batch(policy, env, td, spec)
            env.check_solution_validity(env.reset(td.clone()), actions)
            rows.append((spec, parts["total"], seconds))
        for beta, gamma in ((4, 4), (4, 3)):
            start = time.perf_counter()
            result = sgbs(
                env, policy, td, beta=beta, gamma=gamma, augment=8, max_batch=args.max_batch
            )
            seconds = time.perf_counter() - start
            env.check_solution_validity(env.reset(td.clone()), result.actions)
            cost = env.cost_parts(env.rollout_actions(td, result.actions))["total"]
            rows.append((f"sgbs({beta},{gamma})+aug8", cost, seconds))
        rows.append((f"pyvrp+ds {ref_seconds:g}s (reference)", ref, ref_seconds * args.num))
        aug_cost, aug_time = rows[1][1].mean().item(), rows[1][2]
        print(f"\n{preset}: {args.num} instances")
        table = []
        for name, cost, seconds in rows:
            gap = ((cost - ref) / ref * 100).mean().item()
            closed = (aug_cost - cost.mean().item()) / max(aug_cost - ref.mean().item(), 1e-12)
            table.append([name, f"{cost.mean().item():.4f}", f"{gap:.2f}",
                          f"{seconds / args.num:.4f}", f"{closed:.2f}",
                          f"{seconds / aug_time:.1f}x"])  # fmt: skip
        header = ["method", "objective", "gap to ref %", "s/instance", "gap closed", "time / aug"]
        print(markdown_table(header, table))


if __name__ == "__main__":
    main()
