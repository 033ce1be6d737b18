"""The arms' weights on instances their curve never saw.

The curve decodes the first :data:`.settings.EVAL_SIZE` instances of the paper's test set of
:data:`.settings.PRESET` at every point; whether an arm's gain holds beyond them is measured here,
on the next ``count`` instances of the same set: dihedral x8 multistart greedy per instance for
the start model and each arm's committed weights, and each arm minus the start, paired on the
instances (mean, 95% t interval, lower / equal / higher).

    python -m experiments.imitation heldout --count 800

writes ``heldout.md`` beside the arms' report.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import torch
from tensordict import TensorDict

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.evaluation.report import mean_ci95
from clrp_rl4co.models import decode_batch, load_policy
from clrp_rl4co.reporting.markdown import markdown_table
from clrp_rl4co.reporting.provenance import commit_line

from . import settings

HELDOUT_MD = "heldout.md"
#: Costs closer than this count as equal (the tables' rounding is 4 decimals).
EQUAL = 5e-5


def heldout_instances(count: int) -> TensorDict:
    """Instances ``EVAL_SIZE .. EVAL_SIZE + count`` of the paper's test set of ``PRESET``.

    Raises:
        ValueError: ``count`` below 1 or beyond the set (naming the set's size).
    """
    from ..paper_sets import load_drlhq_test_set

    every = load_drlhq_test_set(settings.PRESET)
    size = every.batch_size[0]
    if count < 1 or settings.EVAL_SIZE + count > size:
        raise ValueError(
            f"count: {count} held-out instances asked; the paper's {settings.PRESET} set has "
            f"{size}, of which the first {settings.EVAL_SIZE} are the curve's"
        )
    return every[settings.EVAL_SIZE : settings.EVAL_SIZE + count]


def per_instance_x8(
    policy: torch.nn.Module, instances: TensorDict, batch_size: int = settings.EVAL_BATCH
) -> list[float]:
    """The x8 objective (the curve's decoding) of each instance ``[B]``, in order."""
    env = CLRPEnv(check_actions=False)
    policy.eval()
    costs: list[float] = []
    with torch.no_grad():
        for start in range(0, instances.batch_size[0], batch_size):
            chunk = instances[start : start + batch_size]
            _, parts, _ = decode_batch(policy, env, chunk, settings.EVAL_DECODE)
            costs += [float(c) for c in parts["total"].double()]
    return costs


def paired_row(label: str, costs: list[float], reference: list[float]) -> list[str]:
    """A table row: ``label``, its mean, and its per-instance difference to ``reference``."""
    diffs = [c - r for c, r in zip(costs, reference, strict=True)]
    mean, half = mean_ci95(diffs)
    lower = sum(d < -EQUAL for d in diffs)
    higher = sum(d > EQUAL for d in diffs)
    return [
        label,
        f"{sum(costs) / len(costs):.4f}",
        f"{mean:+.4f} ± {half:.4f}",
        f"[{mean - half:+.4f}, {mean + half:+.4f}]",
        f"{lower} / {len(diffs) - lower - higher} / {higher}",
    ]


def write_heldout(
    count: int,
    report_dir: Path | None = None,
    start_model: str | None = None,
    instances: TensorDict | None = None,
) -> Path:
    """Decode the held-out instances (``instances`` in place of :func:`heldout_instances`, for
    tests) with ``start_model`` and each arm's committed weights; write ``heldout.md`` and
    return its path."""
    from .state import arm_policy, committed_arm, hours_label

    report_dir = report_dir or settings.REPORT_DIR
    start_model = start_model or settings.START_MODEL
    if instances is None:
        instances = heldout_instances(count)
    count = instances.batch_size[0]
    start_costs = per_instance_x8(load_policy(settings.start_model_path(start_model)), instances)
    start_label = f"`{Path(start_model).name}` (the start)"
    rows = [[start_label, f"{sum(start_costs) / count:.4f}", "", "", ""]]
    arm_costs: dict[str, list[float]] = {}
    for arm in settings.ARMS:
        loaded = committed_arm(report_dir, arm)
        if loaded is None:
            continue
        state, weights = loaded
        policy = arm_policy(weights, start_model, arm)
        label = (
            f"{arm} arm at {hours_label(state)} "
            f"({state.instances - state.examples:,} POMO instances)"
        )
        arm_costs[arm] = per_instance_x8(policy, instances)
        rows.append(paired_row(label, arm_costs[arm], start_costs))
    between = []
    if len(arm_costs) == 2:
        first_arm, second_arm = arm_costs
        row = paired_row("", arm_costs[second_arm], arm_costs[first_arm])
        between = [
            "",
            f"{second_arm} arm minus {first_arm} arm (each at its committed CPU hours above): "
            f"{row[2]}, interval {row[3]}, lower / equal / higher {row[4]}.",
        ]
    first, last = settings.EVAL_SIZE, settings.EVAL_SIZE + count
    text = [
        f"# The arms on held-out instances ({settings.PRESET})",
        "",
        f"Instances {first}-{last - 1} of the paper's {settings.PRESET} test set (the curve "
        f"decodes the first {first}), dihedral x8 multistart greedy as the curve; each arm minus "
        f"the start on the same instances (95% t interval; lower / equal / higher: how often "
        "the arm's cost is).",
        "",
        "```bash",
        f"python -m experiments.imitation heldout --count {count}",
        "```",
        "",
        f"- commit: {commit_line()}; date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        "",
        markdown_table(
            ["weights", "mean x8", "minus the start", "95% interval", "lower / equal / higher"],
            rows,
        ),
        *between,
        "",
    ]
    path = Path(report_dir) / HELDOUT_MD
    path.write_text("\n".join(text))
    return path
