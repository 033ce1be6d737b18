"""Acceptance and value of refining policy solutions with ``local_search_td`` (a script).

For each case (preset, number of instances, policy), the script

1. draws ``generate_dataset(CLRPGenerator(preset), num, seed)``;
2. decodes greedily with the policy (an untrained ``DRLHQPolicy()`` of the default paper size
   built after ``torch.manual_seed(--torch-seed)``, or a trained checkpoint);
3. refines every solution with ``local_search_td(td, actions, seconds=t, mode=m)`` for each
   budget ``t`` (seconds per instance) and mode ``m`` (``"full"``: depots and routes;
   ``"routes"``: routes on the open depots only);
4. checks every refined solution with ``env.check_solution_validity`` and that no instance got
   worse, and that ``max_iterations=0`` gives the input back unchanged.

Printed per row: mean cost before and after (instance units, the env's ``get_reward``), the
drop of the mean cost (``drop %``) and the mean per-instance drop (``inst %``), the number of
instances improved, the wall seconds spent per instance (one process), the improvement per
second (mean cost drop / seconds per instance, instance units per s) and, with
``--reference-time T``, the mean per-instance gap (%) before (``gap0``) and after (``gap``) to
``solve_td`` (PyVRP with depot-set search, ``T`` s per instance, one process). The acceptance
target of the solver issue: a mean cost drop of at least 10 % at 1 s per instance on
untrained-policy clrp20 solutions.

Example (about 3 minutes on one core):
    python benchmarks/refine.py --cases clrp20:20,clrp100:10 \
        --checkpoint runs/drlhq_clrp20_e128/checkpoints/best.ckpt --budgets 1
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from tensordict import TensorDict

from clrp_rl4co import CLRPEnv
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
from clrp_rl4co.envs.clrp.validity import pad_actions
from clrp_rl4co.solvers import local_search_td, solve_td

MODES = ("full", "routes")


@dataclass
class Row:
    """One line of the table (costs in instance units, times in seconds)."""

    case: str
    policy: str
    mode: str
    budget: float
    before: float
    after: float
    drop_pct: float
    improved: int
    num: int
    sec_per_inst: float
    gap_before: float = float("nan")
    gap_after: float = float("nan")

    @property
    def mean_drop_pct(self) -> float:
        """Drop of the mean cost (%): ``100 (before - after) / before``."""
        return 100.0 * (self.before - self.after) / self.before

    @property
    def gain_per_sec(self) -> float:
        """Mean cost drop per second spent on one instance (instance units / s)."""
        return (self.before - self.after) / self.sec_per_inst if self.sec_per_inst else 0.0


def costs_of(env: CLRPEnv, td: TensorDict, actions: torch.Tensor) -> torch.Tensor:
    """Positive total costs [B] (float64, instance units) of ``actions`` replayed from ``td``."""
    final = env.rollout_actions(td, actions)
    return env.cost_parts(final)["total"]


def untrained_policy(torch_seed: int) -> torch.nn.Module:
    """A default-size (paper) ``DRLHQPolicy`` with weights drawn after ``manual_seed``."""
    from clrp_rl4co.policies import DRLHQPolicy

    torch.manual_seed(torch_seed)
    return DRLHQPolicy().eval()


def trained_policy(path: Path) -> tuple[torch.nn.Module, str]:
    """The policy of a Lightning checkpoint (copied first: a training run may rewrite it)."""
    from clrp_rl4co.models import load_policy

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / path.name
        shutil.copyfile(path, copy)
        meta = torch.load(copy, map_location="cpu", weights_only=False)
        where = f"ep{meta.get('epoch')} step{meta.get('global_step')}"
        policy = load_policy(copy).eval()
    return policy, where


def decode(policy: torch.nn.Module, env: CLRPEnv, td: TensorDict) -> torch.Tensor:
    """Greedy action sequences [B, T] of ``policy`` on the instances ``td``."""
    with torch.inference_mode():
        out = policy(env.reset(td.clone()), env, decode_type="greedy", return_actions=True)
    return out["actions"].clone()


def run_case(
    preset: str,
    num: int,
    policy: torch.nn.Module,
    policy_name: str,
    args: argparse.Namespace,
    references: dict[str, torch.Tensor],
) -> list[Row]:
    """Decode, check the identity at zero iterations, then refine at every budget and mode.

    ``references`` caches per case the costs [B] of ``solve_td`` (PyVRP with the depot-set
    search, ``args.reference_time`` s per instance); the gaps (%) are to those costs.
    """
    env = CLRPEnv(generator_params={"preset": preset}, check_solution=False)
    td = generate_dataset(CLRPGenerator(preset=preset), num, args.data_seed)
    key = f"{preset}:{num}"
    if args.reference_time > 0 and key not in references:
        t0 = time.perf_counter()
        _, references[key] = solve_td(td, args.reference_time, num_procs=1, seed=args.seed)
        print(
            f"\n{preset} x{num}: reference solve_td (pyvrp+ds, {args.reference_time:g} s/inst) "
            f"mean cost {references[key].mean():.4f} in {time.perf_counter() - t0:.0f} s"
        )
    ref = references.get(key)

    def gap(costs: torch.Tensor) -> float:
        return float("nan") if ref is None else float((100.0 * (costs - ref) / ref).mean())

    t0 = time.perf_counter()
    actions = decode(policy, env, td)
    decode_s = time.perf_counter() - t0
    reset = env.reset(td.clone())
    before = costs_of(env, td, actions)
    dead = int(env.rollout_actions(td, actions)["infeasible"].sum())
    print(
        f"\n{preset} x{num}, {policy_name}: greedy decode {decode_s:.2f} s, mean cost "
        f"{before.mean():.4f}, dead ends {dead}"
    )
    same = local_search_td(td, actions, seconds=1.0, max_iterations=0)
    width = max(same.shape[-1], actions.shape[-1])
    identical = torch.equal(pad_actions(same, width), pad_actions(actions, width))
    print(f"max_iterations=0 returns the input unchanged: {identical}")
    if not identical:
        raise SystemExit("max_iterations=0 changed the actions")
    rows = []
    for budget in args.budgets:
        for mode in args.modes:
            t0 = time.perf_counter()
            refined = local_search_td(
                td, actions, seconds=budget, mode=mode, num_procs=1, seed=args.seed
            )
            spent = (time.perf_counter() - t0) / num
            env.check_solution_validity(reset, refined)
            after = costs_of(env, td, refined)
            reward = env.get_reward(reset, refined).double()
            torch.testing.assert_close(-reward, after, rtol=1e-5, atol=1e-4)
            worse = after > before + 1e-6 * before.abs().clamp_min(1.0)
            if worse.any():
                raise SystemExit(f"{mode} {budget}s made rows {worse.nonzero().tolist()} worse")
            drops = 100.0 * (before - after) / before
            rows.append(
                Row(
                    case=f"{preset} x{num}",
                    policy=policy_name,
                    mode=mode,
                    budget=budget,
                    before=float(before.mean()),
                    after=float(after.mean()),
                    drop_pct=float(drops.mean()),
                    improved=int((after < before - 1e-9).sum()),
                    num=num,
                    sec_per_inst=spent,
                    gap_before=gap(before),
                    gap_after=gap(after),
                )
            )
            print(format_row(rows[-1]), flush=True)
    return rows


HEADER = (
    f"{'case':<12} {'policy':<26} {'mode':<6} {'s budget':>8} {'cost before':>11} "
    f"{'cost after':>10} {'drop %':>7} {'inst %':>7} {'improved':>8} {'s/inst':>7} {'drop/s':>8} "
    f"{'gap0 %':>7} {'gap %':>7}"
)


def format_row(r: Row) -> str:
    """One table line (see :data:`HEADER`)."""
    return (
        f"{r.case:<12} {r.policy:<26} {r.mode:<6} {r.budget:>8.2f} {r.before:>11.4f} "
        f"{r.after:>10.4f} {r.mean_drop_pct:>7.2f} {r.drop_pct:>7.2f} "
        f"{f'{r.improved}/{r.num}':>8} "
        f"{r.sec_per_inst:>7.2f} {r.gain_per_sec:>8.4f} {r.gap_before:>7.2f} {r.gap_after:>7.2f}"
    )


def main(argv: list[str] | None = None) -> None:
    """Command line entry point (see the module docstring)."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--cases", default="clrp20:20,clrp100:10", help="preset:num,...")
    p.add_argument("--budgets", default="1", help="seconds per instance, comma separated")
    p.add_argument("--modes", default="full,routes")
    p.add_argument("--data-seed", type=int, default=2024, help="generate_dataset seed")
    p.add_argument("--torch-seed", type=int, default=0, help="untrained policy weights")
    p.add_argument("--seed", type=int, default=0, help="PyVRP seed")
    p.add_argument(
        "--checkpoint",
        default="runs/drlhq_clrp20_e128/checkpoints/best.ckpt",
        help="trained policy (.ckpt or pretrained .pt); skipped when missing",
    )
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument(
        "--reference-time",
        type=float,
        default=0.0,
        help="s per instance of a reference solve_td (pyvrp+ds) for the gap columns; 0: off",
    )
    args = p.parse_args(argv)
    args.budgets = [float(x) for x in args.budgets.split(",") if x]
    args.modes = [m for m in args.modes.split(",") if m]
    if any(m not in MODES for m in args.modes):
        p.error(f"modes must be in {MODES}")
    torch.set_num_threads(args.threads)

    policies: list[tuple[str, torch.nn.Module]] = [
        (f"untrained(seed {args.torch_seed})", untrained_policy(args.torch_seed))
    ]
    ckpt = Path(args.checkpoint) if args.checkpoint else None
    if ckpt is not None and ckpt.is_file():
        policy, where = trained_policy(ckpt)
        policies.append((f"trained {where}", policy))
    else:
        print(f"no checkpoint at {ckpt}: trained policy skipped")

    rows: list[Row] = []
    references: dict[str, torch.Tensor] = {}
    t0 = time.perf_counter()
    for case in args.cases.split(","):
        preset, num = case.split(":")
        for name, policy in policies:
            rows += run_case(preset, int(num), policy, name, args, references)
    print("\n" + HEADER)
    for r in rows:
        print(format_row(r))
    clrp20 = [
        r
        for r in rows
        if r.case.startswith("clrp20 ")
        and r.policy.startswith("untrained")
        and r.mode == "full"
        and r.budget == 1.0
    ]
    for r in clrp20:
        verdict = "met" if r.mean_drop_pct >= 10.0 else "NOT met"
        print(f"target (clrp20, untrained, full, 1 s: mean drop >= 10 %): {verdict}")
    print(f"total wall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
