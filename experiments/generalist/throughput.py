"""Training throughput of the candidate generalist sizes, measured side by side.

Each candidate (DRLHQ-CF at a model size) runs POMO training steps on the same mixed-preset
batches, interleaved round by round so that a change in the machine's load hits every candidate
alike; the result is instances per second and the ratio to the first candidate.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import torch

from clrp_rl4co.envs import CLRPEnv, CLRPGenerator
from clrp_rl4co.envs.clrp import generate_dataset
from clrp_rl4co.models import build_model
from clrp_rl4co.policies import build_policy

from ..training.precision import cpu_units
from . import settings

#: Candidate sizes: the run's and the 128-d / 3-layer model of the shipped same-budget runs.
CANDIDATES = {
    "64-d / 2 layers": settings.ARCHITECTURE,
    "128-d / 3 layers": {
        **settings.ARCHITECTURE,
        "embed_dim": 128,
        "num_encoder_layers": 3,
        "num_heads": 8,
        "feedforward_hidden": 512,
    },
}


def measure(seconds: float = 60.0, sizes: Sequence[int] = (50, 100)) -> list[str]:
    """Lines of a report: per N, each candidate's training instances / s and the ratio."""
    torch.set_num_threads(1)
    torch.set_float32_matmul_precision("highest")
    env = CLRPEnv(check_actions=False)
    lines = [f"torch CPU capability: {cpu_units()}; 1 thread, float32"]
    for num_loc in sizes:
        generator = CLRPGenerator(preset="mixed", num_loc=num_loc)
        batch = settings.batch_size(num_loc)
        models, optimizers, totals = {}, {}, {}
        for name, arch in CANDIDATES.items():
            torch.manual_seed(0)
            policy = build_policy(settings.POLICY, **arch)
            models[name] = build_model(env, policy, algorithm="pomo", num_augment=1)
            optimizers[name] = torch.optim.Adam(policy.parameters(), lr=settings.LEARNING_RATE)
            totals[name] = [0.0, 0]
        deadline = time.perf_counter() + seconds
        round_index = 0
        while time.perf_counter() < deadline or round_index < 2:
            td = generate_dataset(generator, batch, seed=round_index)
            for name, model in models.items():
                start = time.perf_counter()
                loss = model.shared_step(td.clone(), 0, phase="train")["loss"]
                optimizers[name].zero_grad()
                loss.backward()
                optimizers[name].step()
                totals[name][0] += time.perf_counter() - start
                totals[name][1] += batch
            round_index += 1
        first = None
        for name, (spent, count) in totals.items():
            rate = count / spent
            first = first or rate
            lines.append(
                f"N={num_loc} batch {batch}: {name}: {rate:.2f} instances/s "
                f"(x{rate / first:.2f} of the first; {round_index} rounds)"
            )
    return lines
