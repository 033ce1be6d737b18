"""The main job: solve generated CLRP20 instances and one Prins instance with a shipped DRLHQ
model (the Prins solution then refined by PyVRP local search), print the objective table and
write a picture of the solutions; write instance 0 as ``demo_instance.json`` for the command
(``clrp-rl4co solve demo_instance.json``).

    python examples/demo.py --num-instances 64 --seed 1234 --out demo_solution.png

The Prins instance is read from ``$CLRP_BENCHMARKS_DIR/prins``; when it is not there the demo
says so in a banner (what was skipped, where the public files are, which variable to set).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch
from matplotlib.figure import Figure

from clrp_rl4co import CLRPEnv
from clrp_rl4co.data import (
    instances_to_tensordict,
    prins_bks,
    read_prodhon,
    tensordict_to_instances,
    write_json_instance,
)
from clrp_rl4co.envs.clrp import generate_dataset
from clrp_rl4co.models import decode_batch, load_policy
from clrp_rl4co.pretrained import PRETRAINED_DIR
from clrp_rl4co.solvers import local_search_td
from clrp_rl4co.solvers.nearest_neighbor import nearest_neighbor_rollout

#: Shipped models, preferred first.
MODELS = ("drlhq_clrp20", "drlhq_clrp20_samebudget")


def default_model() -> str:
    for name in MODELS:
        if (PRETRAINED_DIR / f"{name}.pt").is_file():
            return name
    raise FileNotFoundError(f"no shipped model among {MODELS} in {PRETRAINED_DIR}")


def print_row(name: str, parts: dict, routes: float, ms: float, gap: float | None = None) -> None:
    gap_text = f"{gap:>8.2f}" if gap is not None else f"{'':>8}"
    values = "".join(
        f"{parts[k].mean().item():>11.6g}" for k in ("total", "opening", "vehicles", "routing")
    )
    print(f"{name:<30}{values}{routes:>8.2f}{ms:>9.1f}{gap_text}")


def header() -> None:
    print(
        f"{'method':<30}{'objective':>11}{'depots':>11}{'vehicles':>11}{'routing':>11}"
        f"{'routes':>8}{'ms/inst':>9}{'gap %':>8}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="clrp20")
    parser.add_argument("--num-instances", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--model", default=None, help=f"shipped name or path ({MODELS})")
    parser.add_argument("--prins", default="coord50-5-1", help="Prins instance (file stem)")
    parser.add_argument("--refine-seconds", type=float, default=2.0)
    parser.add_argument("--out", default="demo_solution.png")
    parser.add_argument("--instance-out", default="demo_instance.json")
    args = parser.parse_args()
    torch.manual_seed(args.seed)

    model = args.model or default_model()
    policy = load_policy(model).eval()
    env = CLRPEnv(generator_params={"preset": args.preset})
    td = generate_dataset(env.generator, args.num_instances, seed=args.seed)
    print(f"{args.num_instances} {args.preset} instances (seed {args.seed}); model {model}")
    header()
    start = time.perf_counter()
    actions, final = nearest_neighbor_rollout(env, td.clone())
    ms = (time.perf_counter() - start) / args.num_instances * 1000
    env.check_solution_validity(final, actions)
    print_row("nearest neighbour", env.cost_parts(final), final["num_routes"].float().mean(), ms)
    best = None
    for spec in ("multistart_greedy", "multistart_greedy+aug8"):
        actions, parts, seconds = decode_batch(policy, env, td, spec)
        env.check_solution_validity(env.reset(td.clone()), actions)
        routes = env.rollout_actions(td, actions)["num_routes"].float().mean()
        print_row(f"DRLHQ {spec}", parts, routes, seconds / args.num_instances * 1000)
        best = actions

    fig = Figure(figsize=(12, 6))  # no pyplot: the picture goes to a file, any backend works
    axes = fig.subplots(1, 2)
    env.render(env.rollout_actions(td, best), best, ax=axes[0])
    axes[0].set_title(f"{args.preset} instance 0, DRLHQ\n" + axes[0].get_title(), fontsize=9)

    root = os.environ.get("CLRP_BENCHMARKS_DIR", "")
    path = os.path.join(root, "prins", f"{args.prins}.dat")
    if root and os.path.isfile(path):
        inst = read_prodhon(path)
        bks = prins_bks()[args.prins]
        prins_td = instances_to_tensordict([inst])
        print(
            f"\nPrins {bks.instance} ({args.prins}.dat): BKS {bks.current}, DRLHQ table {bks.drlhq}"
        )
        header()
        for spec in ("multistart_greedy", "multistart_greedy+aug8"):
            actions, parts, seconds = decode_batch(policy, env, prins_td, spec)
            routes = env.rollout_actions(prins_td, actions)["num_routes"].float().mean()
            gap = (parts["total"].item() / bks.current - 1) * 100
            print_row(f"DRLHQ {spec}", parts, routes, seconds * 1000, gap)
        start = time.perf_counter()
        refined = local_search_td(prins_td, actions, seconds=args.refine_seconds, seed=0)
        seconds = time.perf_counter() - start
        final = env.rollout_actions(prins_td, refined)
        parts = env.cost_parts(final)
        gap = (parts["total"].item() / bks.current - 1) * 100
        label = f"+ refinement {args.refine_seconds:g} s"
        print_row(label, parts, final["num_routes"].float().mean(), seconds * 1000, gap)
        env.render(final, refined, ax=axes[1])
    else:
        axes[1].axis("off")
        axes[1].text(0.5, 0.5, "set CLRP_BENCHMARKS_DIR for a Prins instance", ha="center")
        print(skipped_banner(path), file=sys.stderr)
    fig.savefig(args.out, dpi=110, bbox_inches="tight")
    print(f"\npicture written to {args.out}")
    (instance,) = tensordict_to_instances(td[:1], names=[f"{args.preset}-seed{args.seed}-0"])
    write_json_instance(instance, args.instance_out)
    print(
        f"instance 0 written to {args.instance_out}; solve it with the command:\n"
        f"  .venv/bin/clrp-rl4co solve {args.instance_out} --time 5 --out solutions"
    )


def skipped_banner(path: str) -> str:
    """What the demo skipped without the Prins files, and how to get them."""
    rule = "!" * 78
    return (
        f"\n{rule}\nSKIPPED: the Prins instance part of the demo ({path} not found).\n"
        "The 30 Prins et al. instances are public: alberto-santini/lrp-instances (prins/)\n"
        "or inria-UFF/location-routing (data/LRP/SetP/) on GitHub. Put them in a folder\n"
        "DIR/prins/ and run: CLRP_BENCHMARKS_DIR=DIR make demo\n"
        f"{rule}"
    )


if __name__ == "__main__":
    main()
