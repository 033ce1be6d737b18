"""Ship an arm's weights as the package's ``drlhq_<preset>`` when they beat the shipped model.

    python -m experiments.imitation ship --arm pomo --count 800

The arm's committed weights (with ``--average``, the mean of its weights at several commits
that :mod:`.average` wrote) and the shipped ``drlhq_<preset>`` are decoded (dihedral x8
multistart greedy) on the held-out instances of :func:`.heldout.heldout_instances`, which no
evaluation of the curve has seen; the arm ships when the paired difference's 95% t interval
lies below 0. ``ship.md`` beside the arms' report records the comparison either way, one
section per check added to those before it.

The new JSON names the recipe and keeps the arm's start's provenance under ``continued_from``
(its GPU fine-tune: command, steps, validation), so that the whole training of the shipped
weights is one record: the start's instances plus the arm's, the arm's CPU hours, commands,
commits and hardware, and the held-out figures it shipped on.
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import torch
from tensordict import TensorDict

from clrp_rl4co.models import load_policy
from clrp_rl4co.models.shipping import PAPER_TRAINING_INSTANCES
from clrp_rl4co.pretrained import PRETRAINED_DIR, pretrained_files
from clrp_rl4co.reporting.markdown import append_entry, markdown_table
from clrp_rl4co.reporting.provenance import commit_line

from . import settings
from .average import AVERAGE_DIR, committed_average, hours_list
from .heldout import EQUAL, heldout_instances, paired_row, per_instance_x8

SHIP_MD = "ship.md"
#: What the arms that start from the shipped model did, for the JSON's ``recipe``.
ROOT_RECIPES = {
    "pomo": "POMO continued on one CPU thread (batch {batch}, Adam {lr:g})",
    "imitation": "PyVRP labels and imitation ({examples:,} examples), then POMO on one CPU "
    "thread (batch {batch}, Adam {lr:g})",
    "pomo16": "POMO with 16 starts per instance continued on one CPU thread (batch {batch}, "
    "Adam {lr:g})",
}


def branch_clause(branch: str) -> str:
    """How ``branch`` trains from its parent's committed state (:data:`.settings.BRANCHES`):
    POMO with its device, batch and rate, then each other difference (leader reward weight,
    dihedral grouping, grown encoder), e.g. ``POMO on one CPU thread (batch 64, Adam 2.5e-05,
    leader reward weight 16)``; one wording for :func:`arm_recipe` and the report's intro."""
    where = "a GPU" if branch in settings.GPU_ARMS else "one CPU thread"
    details = [f"batch {settings.pomo_batch(branch)}", f"Adam {settings.pomo_lr(branch):g}"]
    leader = settings.LEADER_WEIGHTS.get(branch)
    if leader is not None:
        details.append(f"leader reward weight {leader:g}")
    copies = settings.train_augment(branch)
    if copies > 1:
        details.append(f"each instance's {copies} dihedral copies one group")
    grown = settings.GROWN_ARMS.get(branch)
    if grown is not None:
        details.append(
            f"the encoder grown from {grown[0]} to {grown[1]} layers, the new ones starting as "
            f"the identity at Adam {settings.GROWN_LAYER_LR:g}"
        )
    return f"POMO on {where} ({', '.join(details)})"


def arm_recipe(arm: str, examples: int = 0) -> str:
    """What ``arm`` did after the shipped start: its root arm's recipe, then one
    :func:`branch_clause` per branch on the way to ``arm`` (:data:`.settings.BRANCHES`)."""
    chain = [arm]
    while chain[-1] in settings.BRANCHES:
        chain.append(settings.BRANCHES[chain[-1]])
    root, *branches = reversed(chain)
    text = ROOT_RECIPES[root].format(
        batch=settings.pomo_batch(root), lr=settings.pomo_lr(root), examples=examples
    )
    for branch in branches:
        text += (
            f", then from the {settings.BRANCHES[branch]} arm's committed state "
            + branch_clause(branch)
        )
    return text


def beats(candidate: list[float], shipped: list[float]) -> bool:
    """Whether ``candidate``'s per-instance costs are lower than ``shipped``'s: the upper end of
    the paired difference's 95% t interval below 0."""
    from clrp_rl4co.evaluation.report import mean_ci95

    mean, half = mean_ci95([c - s for c, s in zip(candidate, shipped, strict=True)])
    return mean + half < 0


def ship_command(arm: str, count: int, average: bool = False, jobs: int = 1) -> str:
    """The command line of a ship of ``arm`` (its average with ``average``) on ``count``
    held-out instances in ``jobs`` processes, as ``ship.md`` and the shipped JSON's
    ``training`` record it."""
    return (
        f"python -m experiments.imitation{settings.preset_flag()} ship --arm {arm} --count {count}"
        + (" --average" if average else "")
        + (f" --jobs {jobs}" if jobs != 1 else "")
    )


def shipped_x8(path: Path, instances: TensorDict, threads: int) -> list[float]:
    """:func:`.heldout.per_instance_x8` of the model saved at ``path`` on ``threads`` torch
    threads: the shipped side of a check, in a process of its own when ``jobs`` is 2."""
    torch.set_num_threads(threads)
    return per_instance_x8(load_policy(path), instances)


def provenance(
    state,
    start_meta: dict[str, Any],
    heldout: dict[str, Any],
    count: int,
    average_of: Sequence[float] | None = None,
    jobs: int = 1,
) -> dict[str, Any]:
    """The shipped JSON's fields (besides class and config) for ``state``'s arm, started from
    the model whose JSON is ``start_meta`` and shipped on ``count`` held-out instances in
    ``jobs`` processes; ``average_of``: the arm's CPU hours whose weights' mean ships
    (:mod:`.average`)."""
    pomo_instances = state.instances - state.examples
    start = {k: v for k, v in start_meta.items() if k not in ("class", "config")}
    recipe = arm_recipe(state.arm, state.examples)
    if average_of:
        recipe += f", then the mean of its weights at {hours_list(average_of)} CPU h"
    return {
        "preset": settings.PRESET,
        "recipe": f"{settings.START_NAME} as shipped when the arms began (continued_from), "
        f"then {recipe}: the {state.arm} arm of experiments/imitation",
        "training": [
            *state.commands,
            ship_command(state.arm, count, average=bool(average_of), jobs=jobs),
        ],
        "commits": state.commits,
        "hardware": "; ".join(state.hardware),
        "cpu_hours": round(state.charged_cpu_hours, 3),
        "gpu_hours": round(state.gpu_hours, 3),
        "label_cpu_hours": round(state.label_cpu_hours, 3),
        "imitation_examples": state.examples,
        "training_instances": int(start["training_instances"]) + pomo_instances,
        "training_instances_including_init": int(
            start.get("training_instances_including_init", start["training_instances"])
        )
        + pomo_instances,
        "paper_training_instances": PAPER_TRAINING_INSTANCES,
        "x8_curve": (state.last_validation or {}).get("x8"),
        "heldout": heldout,
        "seed": start.get("seed"),
        "continued_from": start,
    }


def ship(
    arm: str,
    count: int,
    report_dir: Path | None = None,
    pretrained_dir: Path = PRETRAINED_DIR,
    instances=None,
    average: bool = False,
    jobs: int = 1,
) -> str:
    """Compare ``arm``'s committed weights (with ``average``, the mean that
    :func:`.average.average` wrote) with the shipped ``drlhq_<preset>`` on ``count`` held-out
    instances (``instances`` in their place, for tests), write ``ship.md``, ship when better;
    returns a one-line verdict. ``jobs``: 1 decodes the two models one after the other, 2 side
    by side (the shipped one in a second process, on as many torch threads as this one).

    Raises:
        ValueError: an unknown arm, an arm without a committed state or average (naming its
            folder), or ``jobs`` other than 1 or 2.
    """
    from .state import arm_policy, arm_start, committed_arm, hours_label

    settings.check_arm(arm)
    if jobs not in (1, 2):
        raise ValueError(f"jobs: {jobs!r}; a check decodes two models, one after the other (1) "
                         "or side by side (2)")  # fmt: skip
    commit = commit_line()  # the code this call runs, whatever the checkout moves to meanwhile
    if arm in settings.SCRATCH_ARMS:
        raise ValueError(f"arm: {arm!r} trains from scratch; ship takes arms continued from a "
                         "shipped model")  # fmt: skip
    report_dir = report_dir or settings.REPORT_DIR
    shipped_name = settings.shipped_name()
    average_of, label = None, f"{arm} arm"
    if average:
        loaded = committed_average(report_dir, arm)
        if loaded is None:
            folder = Path(report_dir) / arm / AVERAGE_DIR
            raise ValueError(f"arm: {arm!r} has no average in {folder}")
        state, weights, sources = loaded
        average_of = sources["cpu_hours"]
        label = f"{arm} arm's mean of {len(average_of)} weights"
    else:
        loaded = committed_arm(report_dir, arm)
        if loaded is None:
            raise ValueError(f"arm: {arm!r} has no committed state in {Path(report_dir) / arm}")
        state, weights = loaded
    if instances is None:
        instances = heldout_instances(count)
    count = instances.batch_size[0]
    shipped_path = Path(pretrained_dir) / shipped_name
    start = arm_start(state)
    candidate = arm_policy(weights, start, arm)
    threads = torch.get_num_threads()
    if jobs == 2:
        spawn = multiprocessing.get_context("spawn")  # a fork would copy this process's threads
        with ProcessPoolExecutor(1, mp_context=spawn) as pool:
            shipped = pool.submit(shipped_x8, shipped_path, instances, threads)
            arm_costs = per_instance_x8(candidate, instances)
            shipped_costs = shipped.result()
    else:
        shipped_costs = shipped_x8(shipped_path, instances, threads)
        arm_costs = per_instance_x8(candidate, instances)
    better = beats(arm_costs, shipped_costs)
    row = paired_row(label, arm_costs, shipped_costs)
    shipped_mean = sum(shipped_costs) / count
    verdict = (
        f"{label} ({hours_label(state)}, "
        f"{state.instances - state.examples:,} POMO instances) "
        + ("beats" if better else "does not beat")
        + f" the shipped {shipped_name} on {count} held-out instances"
        + (f": shipped as {shipped_name}" if better else ": nothing shipped")
    )
    entry = [
        f"## {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC: the {arm} arm at {hours_label(state)}"
        + (f" (the mean of its weights at {hours_list(average_of)} CPU h)" if average_of else ""),
        "",
        "```bash",
        ship_command(arm, count, average, jobs),
        "```",
        "",
        f"- commit: {commit}",
        f"- verdict: {verdict}",
        "",
        markdown_table(
            ["weights", "mean x8", "minus the shipped", "95% interval", "lower / equal / higher"],
            [[f"`{shipped_name}` (shipped before)", f"{shipped_mean:.4f}", "", "", ""], row],
        ),
    ]
    intro = (
        f"Dihedral x8 multistart greedy on held-out instances of the paper's {settings.PRESET} "
        f"test set (those after the curve's first {settings.EVAL_SIZE}); an arm ships when its "
        "paired difference's 95% t interval lies below 0. One section per check, oldest first."
    )
    title = f"Arms against the shipped `{shipped_name}`"
    append_entry(Path(report_dir) / SHIP_MD, title, intro, entry)
    if better:
        _, start_json = pretrained_files(start)
        heldout = {
            "instances": f"paper {settings.PRESET} test set, {settings.EVAL_SIZE}-"
            f"{settings.EVAL_SIZE + count - 1}",
            "decode": settings.EVAL_DECODE,
            "mean": round(sum(arm_costs) / count, 6),
            "replaced_mean": round(shipped_mean, 6),
            "difference": row[2],
            "equal_below": EQUAL,
        }
        extra = provenance(
            state, json.loads(start_json.read_text()), heldout, count, average_of, jobs
        )
        candidate.save_pretrained(shipped_path, extra=extra)
    return verdict
