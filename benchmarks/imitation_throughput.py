"""Training instances per CPU second: a teacher-forced imitation step next to a POMO step.

Both train the same policy (the shipped ``drlhq_<preset>`` by default) on the same instances,
interleaved round by round so that a change in the machine's load hits both alike:

- *imitation*: :func:`clrp_rl4co.models.imitation.imitation_loss` on a batch of expert sequences
  (one teacher-forced rollout each, random equivalent forms; or, ``solution``, the rollout that
  stays on each solution in the policy's preferred order), backward, Adam;
- *POMO*: RL4CO POMO's ``shared_step`` (N sampled rollouts per instance, one per start),
  backward, Adam.

The expert sequences are the labels of ``--labels`` (a ``datasets/labels/<preset>`` folder),
else the policy's own sampled solutions (the step's cost depends on the sequence length only).
Time is the process's CPU time; ``--profile`` adds the functions that dominate each step
(cProfile, cumulative time). ``--stock-decoder`` adds each step once more with RL4CO's
``AttentionModelDecoder`` step in place of this package's shortcuts (which unbatchify only the
state entries the query reads and skip adding a zero dynamic embedding): same logits, the
ratio says what the shortcuts buy.

    python benchmarks/imitation_throughput.py --preset clrp50 --rounds 3 --imitation-batch 32 \
        --pomo-batch 8 --labels datasets/labels/clrp50 --profile
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pstats
import statistics
import sys
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import torch
from rl4co.models.zoo.am.decoder import AttentionModelDecoder

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.models import ExpertDataset, build_model, load_policy
from clrp_rl4co.models.imitation import imitation_loss
from clrp_rl4co.reporting.markdown import markdown_table

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # --labels reads experiments.labels
    sys.path.insert(0, str(ROOT))


def expert_batch(args, env: CLRPEnv, policy: torch.nn.Module) -> ExpertDataset:
    """``--imitation-batch`` expert sequences: labels, or the policy's sampled solutions."""
    if args.labels:
        from experiments.labels.shards import expert_dataset

        return expert_dataset(args.labels, limit=args.imitation_batch)
    torch.manual_seed(0)
    instances = env.generator(args.imitation_batch)
    with torch.no_grad():
        out = policy(env.reset(instances), env, decode_type="sampling")
    return ExpertDataset(instances, out["actions"])


@contextlib.contextmanager
def stock_decoder(policy: torch.nn.Module) -> Iterator[None]:
    """Within the block, ``policy.decoder`` steps as RL4CO's ``AttentionModelDecoder``."""
    decoder = policy.decoder
    for name in ("forward", "_compute_kvl"):
        setattr(decoder, name, types.MethodType(getattr(AttentionModelDecoder, name), decoder))
    try:
        yield
    finally:
        del decoder.forward, decoder._compute_kvl


def with_stock_decoder(step: Callable[[], torch.Tensor], policy) -> Callable[[], torch.Tensor]:
    def step_with_stock_decoder() -> torch.Tensor:
        with stock_decoder(policy):
            return step()

    return step_with_stock_decoder


def timed(step: Callable[[], torch.Tensor], optimizer, profile: cProfile.Profile | None) -> float:
    """CPU seconds of one step: loss, backward, gradient clipping, Adam."""
    start = time.process_time()
    if profile is not None:
        profile.enable()
    loss = step()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for g in optimizer.param_groups for p in g["params"]], 1.0)
    optimizer.step()
    if profile is not None:
        profile.disable()
    return time.process_time() - start


def top_functions(profile: cProfile.Profile, count: int = 12) -> str:
    stream = io.StringIO()
    pstats.Stats(profile, stream=stream).sort_stats("cumulative").print_stats(count)
    return stream.getvalue()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="clrp50")
    parser.add_argument("--model", default=None, help="default: drlhq_<preset>")
    parser.add_argument("--imitation-batch", type=int, default=32)
    parser.add_argument("--pomo-batch", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--labels", type=Path, default=None)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--profile-lines", type=int, default=12, help="functions per profile")
    parser.add_argument(
        "--stock-decoder", action="store_true", help="add each step with RL4CO's decoder step"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.set_float32_matmul_precision("highest")

    env = CLRPEnv(generator_params={"preset": args.preset}, check_actions=False)
    policy = load_policy(args.model or f"drlhq_{args.preset}").train()
    experts = expert_batch(args, env, policy)
    torch.manual_seed(1)
    pomo_instances = env.generator(args.pomo_batch)
    pomo = build_model(env, policy, algorithm="pomo", num_augment=1)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-6)

    def imitation_step() -> torch.Tensor:
        return imitation_loss(policy, env, experts.data)["loss"]

    def solution_step() -> torch.Tensor:
        return imitation_loss(policy, env, experts.data, likelihood="solution")["loss"]

    def pomo_step() -> torch.Tensor:
        return pomo.shared_step(pomo_instances.clone(), 0, phase="train")["loss"]

    steps = {
        "imitation (sequence)": (imitation_step, len(experts)),
        "imitation (solution)": (solution_step, len(experts)),
        "POMO": (pomo_step, args.pomo_batch),
    }
    if args.stock_decoder:
        for name, (step, size) in list(steps.items()):
            steps[f"{name}, RL4CO's decoder step"] = (with_stock_decoder(step, policy), size)
    profiles = {name: cProfile.Profile() if args.profile else None for name in steps}
    rates: dict[str, list[float]] = {name: [] for name in steps}
    for step, _ in steps.values():  # warm-up, untimed
        timed(step, optimizer, None)
    for _ in range(args.rounds):
        for name, (step, size) in steps.items():
            rates[name].append(size / timed(step, optimizer, profiles[name]))
    median = {name: statistics.median(r) for name, r in rates.items()}
    rows = [
        [name, size, f"{median[name]:.2f}", f"{median[name] / median['POMO']:.2f}"]
        for name, (_, size) in steps.items()
    ]
    print(
        f"{args.preset}, {args.model or f'drlhq_{args.preset}'}, 1 thread, fp32, median of "
        f"{args.rounds} interleaved rounds; expert sequences: "
        f"{args.labels or 'the policy’s sampled solutions'}, length {experts.actions.shape[1]}"
    )
    print(markdown_table(["step", "instances / batch", "instances / CPU s", "ratio to POMO"], rows))
    for name, profile in profiles.items():
        if profile is not None:
            print(
                f"\n### {name} step profile\n\n```\n{top_functions(profile, args.profile_lines)}```"
            )


if __name__ == "__main__":
    main()
