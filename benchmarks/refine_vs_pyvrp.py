"""DRLHQ + refinement against PyVRP at the same total time per instance, side by side.

The evaluation tables run each row on its own, possibly hours apart under another machine load,
which biases a comparison of two time-limited methods. This script measures both in one process,
instance by instance and in alternating order, on the first ``--num`` instances of a preset's
published test set (the tables' instances):

1. the policy decodes all of them (``--decode``, default x8 multistart greedy) in batches of
   ``--batch-size``; decode time per instance = batch wall time / batch size;
2. per instance, PyVRP (depot-set search) runs ``--seconds`` and refinement runs
   ``--seconds`` minus that instance's decode time, starting from the policy's solution
   (order alternates: PyVRP first on even instances, refinement first on odd ones);
3. both solutions are checked with ``CLRPSolution.check``; costs are in instance units.

Printed: the mean of each method, the paired mean difference (refinement minus PyVRP) with its
95% t interval, and how often refinement is lower / equal / higher; plus the load average at
the start and the end. Example (about 2 x 30 x 5 s)::

    python -m benchmarks.refine_vs_pyvrp --preset clrp50 --num 30 --seconds 5
"""

from __future__ import annotations

import argparse
import time

import torch

from clrp_rl4co.reporting import provenance


def pyvrp_cost(instance, seconds: float, seed: int) -> float:
    """PyVRP (depot-set search) for ``seconds``; the checked solution's cost."""
    from benchmarks.hybrid.runs import priced
    from clrp_rl4co.solvers import solve_pyvrp

    res = solve_pyvrp(instance, seconds=seconds, seed=seed)
    return priced(instance, res.solution, "pyvrp")


def refine_cost(instance, start, seconds: float, seed: int) -> float:
    """Refinement of ``start`` for ``seconds``; the checked solution's cost."""
    from benchmarks.hybrid.runs import priced
    from clrp_rl4co.solvers import refine_solution

    solution = refine_solution(instance, start, seconds=seconds, seed=seed)
    return priced(instance, solution, "refine")


def main(argv: list[str] | None = None) -> dict:
    from clrp_rl4co.data import CLRPSolution, tensordict_to_instances
    from clrp_rl4co.envs.clrp import CLRPEnv
    from clrp_rl4co.evaluation import mean_ci95
    from clrp_rl4co.models import decode_batch, load_policy
    from experiments.published_sets import load_test_set

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="clrp50")
    p.add_argument("--num", type=int, default=30, help="first instances of the test set")
    p.add_argument("--seconds", type=float, default=5.0, help="total time per instance")
    p.add_argument("--model", default=None, help="default: the shipped drlhq_<preset>")
    p.add_argument("--decode", default="multistart_greedy+aug8")
    p.add_argument("--batch-size", type=int, default=10)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0, help="PyVRP seed of both methods")
    args = p.parse_args(argv)
    if args.num < 1:
        raise SystemExit(f"--num: must be >= 1, got {args.num}")
    if args.seconds <= 0:
        raise SystemExit(f"--seconds: must be > 0, got {args.seconds}")
    torch.set_num_threads(args.threads)

    model = args.model or f"drlhq_{args.preset}"
    td = load_test_set(args.preset)[: args.num]
    instances = tensordict_to_instances(td)
    env = CLRPEnv(generator_params={"preset": args.preset})
    policy = load_policy(model).eval()
    load_start = provenance.load_average()

    starts, decode_seconds = [], []
    with torch.inference_mode():
        for k in range(0, args.num, args.batch_size):
            batch = td[k : k + args.batch_size]
            actions, _, seconds = decode_batch(policy, env, batch, args.decode)
            per = seconds / batch.batch_size[0]
            for row, instance in zip(actions.tolist(), instances[k : k + args.batch_size]):
                starts.append(CLRPSolution.from_actions(row, instance.num_depots))
                decode_seconds.append(per)

    pyvrp_costs, refine_costs = [], []
    for i, instance in enumerate(instances):
        budget = args.seconds - decode_seconds[i]
        if i % 2:  # refinement first on odd instances
            b = refine_cost(instance, starts[i], budget, args.seed)
            a = pyvrp_cost(instance, args.seconds, args.seed)
        else:
            a = pyvrp_cost(instance, args.seconds, args.seed)
            b = refine_cost(instance, starts[i], budget, args.seed)
        pyvrp_costs.append(a)
        refine_costs.append(b)
        print(f"{i:3d} pyvrp {a:10.4f} refine {b:10.4f} (decode {decode_seconds[i]:.3f} s, "
              f"start {starts[i].cost(instance).total:.4f})", flush=True)  # fmt: skip

    diffs = [b - a for a, b in zip(pyvrp_costs, refine_costs)]
    tol = 1e-9
    summary = {
        "pyvrp": mean_ci95(pyvrp_costs)[0],
        "refine": mean_ci95(refine_costs)[0],
        "diff": mean_ci95(diffs),
        "lower": sum(d < -tol for d in diffs),
        "equal": sum(abs(d) <= tol for d in diffs),
        "higher": sum(d > tol for d in diffs),
    }
    print(
        f"\n{args.preset}, first {args.num} test instances, {args.seconds:g} s per instance, "
        f"model {model}, decode {args.decode}, {args.threads} torch thread(s), one process; "
        f"load average {load_start} at the start, {provenance.load_average()} at the end\n"
        f"PyVRP {summary['pyvrp']:.4f}, DRLHQ + refinement {summary['refine']:.4f}; paired "
        f"refinement minus PyVRP = {summary['diff'][0]:+.4f} ± {summary['diff'][1]:.4f} "
        f"(95% CI); refinement lower on {summary['lower']}, equal on {summary['equal']}, "
        f"higher on {summary['higher']}; mean decode time {sum(decode_seconds) / args.num:.3f} s"
    )
    return summary


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"wall time {time.perf_counter() - start:.0f} s")
