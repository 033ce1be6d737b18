"""What one imitation pass over expert labels does to the generalist.

``python -m experiments.generalist imitate --labels datasets/labels/mixed --recipe R``: from the
run's committed weights, one pass over the labels by imitation
(:func:`experiments.training.imitation_pass.imitation_pass`: the labels' instance sizes in
batches of :data:`.settings.IMITATION_BATCH` of one size each, the batches in a seeded random
order), then the run's own validation (:func:`.validation.validate`: OOD families, Prins, the
mixed sets). The committed weights' validation is the curve's row at the state's instances (the
same deterministic decoding), or measured when the curve has none. The comparison goes to
``imitation.md`` beside the curve, one section per call (the file keeps earlier calls); ``--save
PATH`` also writes the weights as a policy (``PATH.pt`` / ``PATH.json``), which ``python run.py
... init=PATH.pt`` or a fresh generalist run (``train --init``) continues from. The committed
state is left as it is.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.policies import build_policy
from clrp_rl4co.reporting.markdown import markdown_table
from clrp_rl4co.reporting.provenance import commit_line

from ..training.imitation_pass import Recipe, imitation_pass
from ..training.state import load_committed
from . import settings
from .report import read_curve
from .validation import FAMILY_COUNT_TARGET, FAMILY_GAP_TARGET, validate

log = logging.getLogger(__name__)

REPORT = "imitation.md"
#: The validation entries the report compares: (key, label, lower is better).
METRICS = (
    ("family_gap_mean", "mean OOD family gap to PyVRP 10 s, %", True),
    ("families_met", f"families within {FAMILY_GAP_TARGET:g}% (target {FAMILY_COUNT_TARGET})",
     False),
    ("prins_gap_paper_bks", "Prins x8 above the paper's BKS, %", True),
    ("mixed_n20", "mixed N20, multistart greedy", True),
    ("mixed_n50", "mixed N50, multistart greedy", True),
    ("mixed_n100", "mixed N100, multistart greedy", True),
    ("mixed_n200", "mixed N200, multistart greedy", True),
)  # fmt: skip


def committed_validation(instances: int, report_dir: Path) -> dict[str, float] | None:
    """The curve's row at ``instances`` (the committed weights' validation), or None."""
    rows = [r for r in read_curve(report_dir) if int(r["instances"]) == instances]
    return rows[-1] if rows else None


def imitate(
    labels_dir: Path,
    recipe: str,
    limit: int | None = None,
    seed: int = 0,
    save: Path | None = None,
    state_dir: Path = settings.STATE_DIR,
    report_dir: Path = settings.REPORT_DIR,
    validate_fn: Callable[[torch.nn.Module], dict[str, Any]] = validate,
    command: str = "",
) -> Path:
    """One pass of ``recipe`` (``LIKELIHOOD,AUGMENT,LR``) over the labels of ``labels_dir``
    from the committed weights; returns the report's path.

    Raises:
        FileNotFoundError: no committed state in ``state_dir``.
        ValueError: a bad recipe or labels folder (the message names it).
    """
    from ..labels.shards import expert_datasets, labels_charge

    parsed = Recipe.parse(recipe)
    committed = load_committed(state_dir)
    if committed is None:
        raise FileNotFoundError(f"{state_dir}: no committed generalist state to start from")
    state, weights = committed
    datasets = expert_datasets(labels_dir, limit=limit)
    charge = labels_charge(labels_dir, limit=limit)
    policy = build_policy(settings.POLICY, **settings.ARCHITECTURE)
    policy.load_state_dict(weights)
    env = CLRPEnv(check_actions=False)
    before = committed_validation(state.instances, report_dir)
    if before is None:
        log.info("no curve row at %d instances: validating the committed weights", state.instances)
        before = validate_fn(policy)
    torch.manual_seed(seed)
    done = imitation_pass(
        policy,
        env,
        [datasets[n] for n in sorted(datasets)],
        parsed,
        batch=settings.IMITATION_BATCH,
        weight_decay=settings.WEIGHT_DECAY,
        grad_clip=settings.GRAD_CLIP,
        seed=seed,
    )
    after = validate_fn(policy)
    if save is not None:
        policy.save_pretrained(save, extra={
            "note": "the generalist's committed weights after one imitation pass "
                    "(python -m experiments.generalist imitate)",
            "start_instances": state.instances, "recipe": recipe, "labels": charge["count"],
            "labels_folder": Path(labels_dir).as_posix(), "command": command,
        })  # fmt: skip
    return _append_report(report_dir, state.instances, recipe, datasets, charge, done,
                          before, after, command)  # fmt: skip


def _append_report(
    report_dir: Path, instances: int, recipe: str, datasets: dict, charge: dict, done: dict,
    before: dict, after: dict, command: str,
) -> Path:  # fmt: skip
    rows = []
    for key, label, lower in METRICS:
        if key not in before or key not in after:
            continue
        change = after[key] - before[key]
        better = change < 0 if lower else change > 0
        rows.append([label, f"{before[key]:.4f}", f"{after[key]:.4f}", f"{change:+.4f}",
                     "better" if better else "same" if change == 0 else "worse"])  # fmt: skip
    sizes = ", ".join(
        f"{len(d):,} of N{n} with {k} depots" for (n, k), d in sorted(datasets.items())
    )
    section = "\n".join([
        f"## `{recipe}` over {charge['count']:,} labels, from {instances:,} instances",
        "",
        f"- command: `{command}`",
        f"- {commit_line()}; date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- labels: {sizes}; their solver's CPU time {charge['cpu_hours']:.3f} h; the pass: "
        f"{done['steps']} steps, {done['train_cpu_hours']:.3f} CPU h, loss (minus "
        f"log-likelihood per solution) {done['loss_first']:.1f} -> {done['loss_last']:.1f}",
        "",
        markdown_table(["validation", "committed weights", "after the pass", "change", ""],
                       rows, align="lrrrl"),
        "",
    ])  # fmt: skip
    path = Path(report_dir) / REPORT
    head = (
        "# One imitation pass from the generalist's committed weights\n\n"
        "Written by `python -m experiments.generalist imitate` (module "
        "`experiments/generalist/imitate.py`); one section per call, newest last.\n\n"
    )
    text = path.read_text() if path.is_file() else head
    path.write_text(text + section)
    return path
