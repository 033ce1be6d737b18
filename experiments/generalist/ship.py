"""Ship the generalist's weights as ``drlhqcf_mixed`` when they beat the shipped generalist.

Both models are validated in the same call on the same sets (:func:`.validation.validate`); the
run's weights ship when their mean gap to PyVRP over the OOD families is lower and they stay
within :data:`PAPER_TOLERANCE` of the paper-faithful ``drlhq_clrp50`` on the paper's own clrp50
test set (first ``paper_instances``, x8, decoded in the same call). The comparison is written to
``ship.md`` in the run's report folder either way, one section per check added to those before it.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.models import decode_batch, load_policy
from clrp_rl4co.policies import build_policy
from clrp_rl4co.pretrained import PRETRAINED_DIR
from clrp_rl4co.reporting.markdown import append_entry, markdown_table
from clrp_rl4co.reporting.provenance import commit_line

from ..training.state import load_committed
from . import settings
from .validation import FAMILY_COUNT_TARGET, PRINS_GAP_TARGET, X8, validate

log = logging.getLogger(__name__)

NAME = "drlhqcf_mixed"
PAPER_MODEL = "drlhq_clrp50"
PAPER_PRESET = "clrp50"
#: A generalist's x8 on the paper's clrp50 set may be at most this much above the paper model's.
PAPER_TOLERANCE = 0.05


def _paper_mean(policy, env: CLRPEnv, instances) -> float:
    _, parts, _ = decode_batch(policy, env, instances, X8)
    return parts["total"].mean().item()


def ship(paper_instances: int = 200) -> str:
    """Compare, write ``ship.md``, ship if better; returns a one-line verdict."""
    from experiments.paper_sets import draw_drlhq_test_set

    committed = load_committed(settings.STATE_DIR)
    if committed is None:
        raise FileNotFoundError(f"{settings.STATE_DIR}: no generalist state to ship")
    state, weights = committed
    candidate = build_policy(settings.POLICY, **settings.ARCHITECTURE)
    candidate.load_state_dict(weights)
    shipped_name = NAME if (PRETRAINED_DIR / f"{NAME}.pt").is_file() else settings.START_MODEL
    shipped = load_policy(shipped_name)
    env = CLRPEnv(check_actions=False)
    records = {"run": validate(candidate, env), shipped_name: validate(shipped, env)}
    paper = draw_drlhq_test_set(PAPER_PRESET)[:paper_instances]
    paper_means = {
        "run": _paper_mean(candidate, env, paper),
        shipped_name: _paper_mean(shipped, env, paper),
        PAPER_MODEL: _paper_mean(load_policy(PAPER_MODEL), env, paper),
    }
    lower = records["run"]["family_gap_mean"] < records[shipped_name]["family_gap_mean"]
    paper_excess = paper_means["run"] / paper_means[PAPER_MODEL] - 1
    within = paper_excess <= PAPER_TOLERANCE
    better = lower and within
    rows = []
    for label in ("run", shipped_name):
        rec = records[label]
        rows.append(
            [
                label,
                f"{rec['families_met']:.0f} / 22 (target {FAMILY_COUNT_TARGET})",
                f"{rec['family_gap_mean']:+.2f}",
                f"{rec['prins_gap_paper_bks']:+.2f}" if "prins_gap_paper_bks" in rec else "",
                f"{paper_means[label]:.4f}",
                f"{(paper_means[label] / paper_means[PAPER_MODEL] - 1) * 100:+.2f}",
            ]
        )
    header = [
        "model",
        "OOD families within 15% of PyVRP 10 s (x8)",
        "mean family gap %",
        f"Prins x8 gap to paper BKS % (target {PRINS_GAP_TARGET})",
        f"paper {PAPER_PRESET} x8 (first {paper_instances})",
        f"vs {PAPER_MODEL} % (limit +{PAPER_TOLERANCE * 100:.0f})",
    ]
    verdict = (
        f"run ({state.instances:,} instances, {state.cpu_hours:.2f} CPU h) "
        f"{'beats' if lower else 'does not beat'} {shipped_name} on the mean family gap"
    )
    if not within:
        verdict += (
            f"{' but' if lower else ' and'} is {paper_excess * 100:+.2f}% against {PAPER_MODEL} "
            f"on the paper's {PAPER_PRESET} set (limit +{PAPER_TOLERANCE * 100:.0f}%)"
        )
    verdict += f": shipped as {NAME}" if better else ": nothing shipped"
    entry = [
        f"## {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC: the run at {state.cpu_hours:.2f} CPU h",
        "",
        f"- command: `{settings.command('ship')}`",
        f"- commit: {commit_line()}",
        f"- {PAPER_MODEL} x8 on the paper's {PAPER_PRESET} set (first {paper_instances}): "
        f"{paper_means[PAPER_MODEL]:.4f}",
        f"- verdict: {verdict}",
        "",
        markdown_table(header, rows),
    ]
    intro = "Each check of the generalist's run against the shipped one, oldest first."
    title = "The generalist against the shipped generalist"
    append_entry(settings.REPORT_DIR / "ship.md", title, intro, entry)
    if better:
        candidate.save_pretrained(PRETRAINED_DIR / NAME, extra=_provenance(state, records))
    return verdict


def _provenance(state, records: dict[str, Any]) -> dict[str, Any]:
    return {
        "algorithm": "pomo",
        "preset": "mixed",
        "training": [*state.commands, settings.command("ship")],
        "commits": state.commits,
        "hardware": "; ".join(state.hardware),
        "training_instances": state.instances,
        "start_model": state.start_model,
        "start_instances": state.start_instances,
        "cpu_hours": round(state.cpu_hours, 3),
        "wall_hours": round(state.wall_hours, 3),
        "gpu_hours": round(state.gpu_hours, 3),
        "curriculum": [{"num_loc": list(s.num_loc), "until": s.until} for s in settings.CURRICULUM],
        "validation": records["run"],
        "note": "DRLHQ-CF trained on the mixed preset by experiments/generalist "
        "(results/generalist/README.md)",
    }
