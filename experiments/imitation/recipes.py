"""What one imitation pass does to a trained policy, recipe by recipe.

``python -m experiments.imitation recipes --labels K --recipe LIKELIHOOD,AUGMENT,LR ...``: from
a start (the shipped :data:`.settings.START_MODEL`, or an arm's committed weights), one pass over
the first ``K`` expert labels by imitation (:mod:`experiments.training.imitation_pass`, batch
:data:`.settings.IMITATION_BATCH`, Adam, the gradient's norm clipped as the arms do), then
the arms' evaluation (dihedral x8 multistart greedy on the paper's test set). Every recipe starts
again from the same weights and the same label order. A row per recipe is appended to
``recipes.csv`` beside the arms' curve, and ``recipes.md`` is written from all rows.

A recipe (:class:`experiments.training.imitation_pass.Recipe`) reads ``solution,dihedral,1e-5``:
the likelihood, the augmentation and Adam's learning rate (0: no step, the start's own x8 through
the same code).
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import torch

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.models import load_policy
from clrp_rl4co.reporting.markdown import markdown_table
from clrp_rl4co.reporting.provenance import commit_line

from ..training.imitation_pass import LOSS_WINDOW, Recipe, imitation_pass
from . import settings

RECIPES_CSV = "recipes.csv"
RECIPES_MD = "recipes.md"
COLUMNS = (
    "start",
    "likelihood",
    "augment",
    "lr",
    "labels",
    "steps",
    "train_cpu_hours",
    "loss_first",
    "loss_last",
    "x8",
    "commit",
)


def start_weights(
    start: str,
    report_dir: Path | None = None,
    start_model: str | None = None,
) -> dict[str, torch.Tensor]:
    """The weights a pass starts from: ``shipped`` (``start_model``, the arms' start) or an
    arm's committed weights.

    Raises:
        ValueError: an unknown start, or an arm with no committed state (naming its folder).
    """
    report_dir = Path(report_dir or settings.REPORT_DIR)
    if start == "shipped":
        start_model = start_model or settings.START_MODEL
        return load_policy(settings.start_model_path(start_model)).state_dict()
    settings.check_arm(start)
    from .state import committed_arm

    loaded = committed_arm(report_dir, start)
    if loaded is None:
        raise ValueError(f"start: arm {start!r} has no committed state in {report_dir / start}")
    return loaded[1]


def run_recipes(
    recipes: list[Recipe],
    label_count: int,
    start: str = "shipped",
    report_dir: Path | None = None,
    labels_dir: Path | None = None,
    evaluate_fn: Callable[[torch.nn.Module], float] | None = None,
    start_model: str | None = None,
) -> list[dict]:
    """Each recipe from the same start over the same first ``label_count`` labels; a row each,
    appended to ``recipes.csv``. ``evaluate_fn``: policy -> x8 (default: the arms')."""
    from ..labels.shards import expert_dataset
    from .loop import evaluate_paper_set

    evaluate = evaluate_fn or evaluate_paper_set
    report_dir = report_dir or settings.REPORT_DIR
    start_model = start_model or settings.START_MODEL
    labels = expert_dataset(labels_dir or settings.LABELS_DIR, limit=label_count)
    weights = start_weights(start, report_dir, start_model)
    env = CLRPEnv(check_actions=False)
    commit = commit_line()
    rows = []
    for recipe in recipes:
        torch.manual_seed(0)
        policy = load_policy(settings.start_model_path(start_model))
        policy.load_state_dict(weights)
        done = imitation_pass(
            policy,
            env,
            labels,
            recipe,
            batch=settings.IMITATION_BATCH,
            weight_decay=settings.WEIGHT_DECAY,
            grad_clip=settings.GRAD_CLIP,
        )
        row = {
            "start": start,
            "likelihood": recipe.likelihood,
            "augment": recipe.augment,
            "lr": recipe.lr,
            "labels": len(labels),
            **done,
            "x8": float(evaluate(policy)),
            "commit": commit,
        }
        append_row(report_dir, row)
        rows.append(row)
    return rows


def append_row(report_dir: Path, row: dict) -> Path:
    """Append ``row`` to ``recipes.csv`` (header with the first row)."""
    from .curve import append_csv_row

    return append_csv_row(Path(report_dir) / RECIPES_CSV, COLUMNS, row)


def write_recipes_report(report_dir: Path | None = None) -> Path | None:
    """``recipes.md`` from every row of ``recipes.csv`` (None: no rows yet)."""
    report_dir = report_dir or settings.REPORT_DIR
    path = Path(report_dir) / RECIPES_CSV
    if not path.is_file():
        return None
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    own = {r["start"]: float(r["x8"]) for r in rows if float(r["lr"]) == 0}

    def against_start(r: dict) -> str:
        if r["start"] not in own:
            return ""
        return f"{float(r['x8']) - own[r['start']]:+.4f}"

    table = [
        [
            r["start"],
            r["likelihood"],
            r["augment"],
            f"{float(r['lr']):g}",
            r["labels"],
            f"{float(r['train_cpu_hours']):.3f}",
            f"{float(r['loss_first']):.1f}",
            f"{float(r['loss_last']):.1f}",
            f"{float(r['x8']):.4f}",
            against_start(r),
            r["commit"],
        ]
        for r in rows
    ]
    text = [
        f"# One imitation pass from a trained policy ({settings.PRESET})",
        "",
        "Each row: from the start's weights, one pass over the first labels of "
        f"`datasets/labels/{settings.PRESET}` by imitation (batch {settings.IMITATION_BATCH}, "
        "Adam, a fresh optimizer each row, the same label order), then dihedral x8 multistart "
        f"greedy on the first {settings.EVAL_SIZE} instances of the paper's {settings.PRESET} "
        "test set. Learning rate 0: the start itself (the last column compares with it). "
        "Loss: mean minus log-likelihood per solution over the pass's first and last "
        f"{LOSS_WINDOW} steps.",
        "",
        "```bash",
        "python -m experiments.imitation recipes --labels 1200 --start shipped \\",
        "    --recipe solution,dihedral,0 --recipe solution,dihedral,1e-4",
        "```",
        "",
        *markdown_table(
            [
                "start",
                "likelihood",
                "augment",
                "lr",
                "labels",
                "train CPU h",
                "loss (first steps)",
                "loss (last steps)",
                "x8",
                "x8 minus the start's",
                "commit",
            ],
            table,
        ).splitlines(),
    ]
    out = Path(report_dir) / RECIPES_MD
    out.write_text("\n".join(text) + "\n")
    return out
