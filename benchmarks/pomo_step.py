"""Training instances per CPU second of one POMO step, under each candidate speed-up.

The shipped ``drlhq_<preset>`` policy (fp32 master weights, Adam in fp32) trains on the same
batch of instances with RL4CO's POMO ``shared_step``, backward, gradient clipping and Adam,
one thread, under each setting, interleaved round by round so that a change in the machine's
load hits all alike (median of ``--rounds``):

- ``fp32``: the eager step (``torch.set_float32_matmul_precision("highest")``, N starts);
- ``bf16 autocast``: the same under bf16 autocast, as the background training loops run it
  (``--precision bf16-mixed``, :class:`experiments.training.precision.MixedPrecision`);
- ``starts S``: fp32 with S POMO starts per instance instead of N (fewer rollouts per
  instance: more instances per CPU second, a different estimate of the gradient);
- ``compile encoder`` (``--compile``): fp32 with ``torch.compile`` on the policy's encoder;
- ``compile decoder`` (``--compile-decoder``): fp32 with the decoder's step compiled as the
  training commands compile it by default on the CPU
  (:func:`clrp_rl4co.models.training.compile_decoder`: the query, the glimpse and the
  pointer's logits up to RL4CO's NaN check, a graph break; one graph replayed at every action,
  forward and backward); the compilation untimed (with ``--explicit-attention`` also under bf16
  autocast with unfused attention);
- ``leader reward W`` (``--leader W``): fp32 POMO with the leader reward
  (:class:`clrp_rl4co.models.LeaderRewardPOMO`), whose loss differs, not its rollouts;
- ``... explicit attention`` (``--explicit-attention``): fp32 and bf16 autocast with every
  attention of the policy (encoder layers and the decoder's glimpse) computed as two matrix
  products and a softmax (RL4CO's ``scaled_dot_product_attention_simple``) instead of torch's
  fused ``scaled_dot_product_attention`` kernel, whose bf16 backward on the CPU is the slow part
  of a bf16 step.

``--decoding N`` adds decoding alone: x8 multistart greedy of the first N instances of the
paper's test set of the preset in batches of 10 (the arms' evaluation), eager against the
compiled decoder step, CPU seconds of each round and the mean objective of each.

Prints the CPU's vector units as torch reports them, the load average before and after, and a
Markdown table with each setting's ratio to ``fp32``; ``--profile K`` adds, for each setting,
the K operators of one more step that took the most CPU time themselves (``torch.profiler``).

    python benchmarks/pomo_step.py --preset clrp50 --batch 64 --rounds 3 --starts 25 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from rl4co.models.nn.attention import scaled_dot_product_attention_simple

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp import generate_dataset
from clrp_rl4co.models import build_model, load_policy
from clrp_rl4co.models.training import compile_decoder
from clrp_rl4co.reporting.markdown import markdown_table

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the step is the training loops' (experiments.training)
    sys.path.insert(0, str(ROOT))

from experiments.training.precision import MixedPrecision, cpu_units  # noqa: E402


def explicit_attention(q, k, v, attn_mask=None, dmat=None, dropout_p=0.0, is_causal=False):
    """RL4CO's unfused attention with the signature of its modules' ``sdpa_fn`` (``dmat`` is
    never given by the CLRP policies)."""
    return scaled_dot_product_attention_simple(q, k, v, attn_mask, dropout_p, is_causal)


def with_explicit_attention(policy: torch.nn.Module) -> torch.nn.Module:
    """``policy`` with every module's ``sdpa_fn`` replaced by :func:`explicit_attention`."""
    for module in policy.modules():
        if hasattr(module, "sdpa_fn"):
            module.sdpa_fn = explicit_attention
    return policy


def make_step(
    policy: torch.nn.Module,
    env: CLRPEnv,
    batch,
    starts: int | None,
    precision: str = "32-true",
    leader_weight: float | None = None,
) -> Callable[[], float]:
    """One timed POMO training step (CPU seconds) on a copy of ``batch``, in ``precision`` as
    the background training loops take it (:class:`MixedPrecision`), with the leader reward
    where ``leader_weight`` is given."""
    model = build_model(
        env, policy, algorithm="pomo", num_augment=1, num_starts=starts, leader_weight=leader_weight
    )
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-7)
    mixed = MixedPrecision.for_device("cpu", precision)

    def step() -> float:
        start = time.process_time()
        with mixed.autocast():
            loss = model.shared_step(batch.clone(), 0, phase="train")["loss"]
        mixed.apply(loss, optimizer, policy.parameters(), max_grad_norm=1.0)
        return time.process_time() - start

    return step


def compare_decoding(preset: str, count: int, rounds: int) -> None:
    """Print the CPU seconds of x8 multistart greedy on the first ``count`` instances of the
    paper's ``preset`` test set, eager and with the compiled decoder step, interleaved round by
    round (the compilation, on the first batch, timed apart), and each one's mean objective."""
    from experiments.campaign.validation import validate
    from experiments.paper_sets import load_drlhq_test_set

    instances = load_drlhq_test_set(preset)[:count]
    env = CLRPEnv(check_actions=False)
    policies = {
        "eager": load_policy(f"drlhq_{preset}").eval(),
        "compiled decoder": compile_decoder(load_policy(f"drlhq_{preset}").eval()),
    }
    start = time.process_time()
    validate(policies["compiled decoder"], env, instances[:10], 10)  # compile
    compile_seconds = time.process_time() - start
    seconds: dict[str, list[float]] = {name: [] for name in policies}
    objective = {}
    for _ in range(rounds):
        for name, policy in policies.items():
            start = time.process_time()
            objective[name] = validate(policy, env, instances, 10)
            seconds[name].append(time.process_time() - start)
    print(
        f"\ndecoding x8, the first {count} instances of the paper's {preset} set, batches of "
        f"10 (compiling and decoding the first batch: {compile_seconds:.2f} CPU s):"
    )
    for name in policies:
        rounds_s = ", ".join(f"{s:.2f}" for s in seconds[name])
        print(f"- {name}: CPU s {rounds_s}; mean objective {objective[name]:.4f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="clrp50")
    parser.add_argument("--batch", type=int, default=64, help="instances per step")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--starts", type=int, nargs="*", default=[25, 10], help="start counts")
    parser.add_argument("--no-bf16", action="store_true", help="leave out bf16 autocast")
    parser.add_argument("--compile", action="store_true", help="add torch.compile (encoder)")
    parser.add_argument(
        "--compile-decoder", action="store_true", help="add torch.compile (the decoder's step)"
    )
    parser.add_argument(
        "--decoding", type=int, default=0, metavar="N", help="add decoding N paper instances"
    )
    parser.add_argument(
        "--profile", type=int, default=0, metavar="K", help="the K costliest operators of a step"
    )
    parser.add_argument(
        "--explicit-attention", action="store_true", help="add fp32 / bf16 with unfused attention"
    )
    parser.add_argument(
        "--leader", type=float, default=None, help="add POMO with the leader reward of this weight"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.set_float32_matmul_precision("highest")

    env = CLRPEnv(generator_params={"preset": args.preset}, check_actions=False)
    batch = generate_dataset(env.generator, args.batch, 12345)
    policy = load_policy(f"drlhq_{args.preset}").train()
    settings: dict[str, Callable[[], float]] = {"fp32": make_step(policy, env, batch, None)}
    if not args.no_bf16:
        settings["bf16 autocast"] = make_step(policy, env, batch, None, "bf16-mixed")
    for starts in args.starts:
        settings[f"starts {starts}"] = make_step(policy, env, batch, starts)
    if args.leader is not None:
        settings[f"leader reward {args.leader:g}"] = make_step(
            policy, env, batch, None, leader_weight=args.leader
        )
    if args.explicit_attention:
        explicit = with_explicit_attention(load_policy(f"drlhq_{args.preset}").train())
        settings["fp32, explicit attention"] = make_step(explicit, env, batch, None)
        if not args.no_bf16:
            settings["bf16 autocast, explicit attention"] = make_step(
                explicit, env, batch, None, "bf16-mixed"
            )
    if args.compile:
        compiled = load_policy(f"drlhq_{args.preset}").train()
        compiled.encoder = torch.compile(compiled.encoder)
        settings["compile encoder"] = make_step(compiled, env, batch, None)
    if args.compile_decoder:
        decoder = compile_decoder(load_policy(f"drlhq_{args.preset}").train())
        settings["compile decoder"] = make_step(decoder, env, batch, None)
        if args.explicit_attention and not args.no_bf16:
            both = compile_decoder(
                with_explicit_attention(load_policy(f"drlhq_{args.preset}").train())
            )
            settings["bf16 autocast, explicit attention, compile decoder"] = make_step(
                both, env, batch, None, "bf16-mixed"
            )

    load_before = os.getloadavg()
    for step in settings.values():  # warm-up (and compilation), untimed
        step()
    seconds: dict[str, list[float]] = {name: [] for name in settings}
    for _ in range(args.rounds):
        for name, step in settings.items():
            seconds[name].append(step())
    load_after = os.getloadavg()
    rate = {name: args.batch / statistics.median(s) for name, s in seconds.items()}
    rows = [
        [name, f"{statistics.median(seconds[name]):.2f}", f"{rate[name]:.2f}",
         f"{rate[name] / rate['fp32']:.2f}"]
        for name in settings
    ]  # fmt: skip
    print(
        f"{args.preset}, drlhq_{args.preset}, batch {args.batch}, 1 thread, CPU capability "
        f"{cpu_units()}, median of {args.rounds} interleaved rounds; load average "
        f"{load_before[0]:.2f} before, {load_after[0]:.2f} after"
    )
    print(markdown_table(["setting", "CPU s / step", "instances / CPU s", "ratio to fp32"], rows))
    if args.decoding:
        compare_decoding(args.preset, args.decoding, args.rounds)
    for name, step in settings.items() if args.profile else ():
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
            step()
        print(f"\n{name}: the {args.profile} operators with the most CPU time of their own")
        print(
            profiler.key_averages().table(
                sort_by="self_cpu_time_total", row_limit=args.profile, max_name_column_width=48
            )
        )


if __name__ == "__main__":
    main()
