"""What the generalist run is: model size, curriculum in N, batch rule, optimizer, paths.

The model size and the curriculum were chosen from the CPU throughput measurement in
``results/generalist/README.md`` (``python -m experiments.generalist throughput``): on one
CPU thread a 64-d / 2-layer DRLHQ-CF trains about four times as many instances per hour as the
128-d / 3-layer model, and at a few hundred thousand instances (what CPU hours buy) the smaller
model is the better use of them. On a CPU bf16 autocast costs more than it saves, with or
without bf16 units (``results/training/throughput.md``), so training stays in float32.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: The committed, resumable state (weights in fp32, counters, curve): updated once per resume.
STATE_DIR = REPO / "results" / "generalist" / "state"
#: The run's report folder (curve.csv / curve.png / README.md).
REPORT_DIR = REPO / "results" / "generalist"
#: Where ``report`` writes the targets and their extrapolation (the OOD results' folder).
OOD_DIR = REPO / "results" / "ood"
#: Local working folder (git-ignored): the 15-minute checkpoints with the optimizer.
WORK_DIR = REPO / "runs" / "generalist-work"

#: The policy class (``clrp_rl4co.policies`` registry name) and its architecture.
POLICY = "drlhqcf"
ARCHITECTURE = {
    "embed_dim": 64,
    "num_encoder_layers": 2,
    "num_heads": 4,
    "feedforward_hidden": 128,
    "normalization": "instance",
    "tanh_clipping": 10.0,
}
#: The run starts from this shipped model (same architecture) when there is no state yet.
START_MODEL = "drlhqcf_mixed50_cpu"

#: The runs (``python -m experiments.generalist --run NAME``): ``plain`` is the run above;
#: ``bias`` adds the size-aware distance bias (``DRLHQCostPolicy(distance_bias=True)``,
#: :mod:`clrp_rl4co.policies.distance_attention`) and starts from the ``plain`` run's committed
#: state (weights and counters, every ``alpha`` at 0, so it starts decoding as that state does):
#: the two runs' curves compare the bias at equal training instances.
RUNS = ("plain", "bias")
#: The run in use (:func:`use_run`) and the committed state a fresh one starts from (None: the
#: shipped :data:`START_MODEL`).
RUN = "plain"
BRANCH_FROM: Path | None = None


def command(verb: str) -> str:
    """The command line of ``verb`` on the run in use, as the results record it: ``python -m
    experiments.generalist ship`` for the plain run, ``... --run bias ship`` for the bias run."""
    flag = "" if RUN == "plain" else f" --run {RUN}"
    return f"python -m experiments.generalist{flag} {verb}"


def use_run(name: str) -> None:
    """Point this module's run constants (:data:`STATE_DIR`, :data:`REPORT_DIR`,
    :data:`WORK_DIR`, :data:`ARCHITECTURE`, :data:`BRANCH_FROM`) at run ``name``; ``bias``
    keeps its state, curve and local checkpoints in ``bias/`` folders beside the plain run's.

    Raises:
        ValueError: naming the run and the choices.
    """
    global RUN, STATE_DIR, REPORT_DIR, WORK_DIR, ARCHITECTURE, BRANCH_FROM
    if name not in RUNS:
        raise ValueError(f"run: {name!r} is not one of {RUNS}")
    plain_report = REPO / "results" / "generalist"
    ARCHITECTURE = {k: v for k, v in ARCHITECTURE.items() if k != "distance_bias"}
    RUN, REPORT_DIR = name, plain_report
    WORK_DIR, BRANCH_FROM = REPO / "runs" / "generalist-work", None
    if name == "bias":
        ARCHITECTURE["distance_bias"] = True
        REPORT_DIR = plain_report / "bias"
        WORK_DIR = WORK_DIR / "bias"
        BRANCH_FROM = plain_report / "state"
    STATE_DIR = REPORT_DIR / "state"


#: Adam; the optimizer restarts fresh at a resume from the committed state (weights only),
#: and continues from the local checkpoint when that is newer.
LEARNING_RATE = 1e-4
WEIGHT_DECAY = 1e-6
GRAD_CLIP = 1.0
#: Labels per step of ``imitate``'s pass (the imitation arms' batch, with the same Adam and clip).
IMITATION_BATCH = 32

#: Customer nodes per training batch: a batch of N-customer instances holds
#: ``round(NODES_PER_BATCH / N)`` instances (clamped to ``BATCH_BOUNDS``), so a step costs about
#: the same at every N (POMO runs N starts per instance). On a GPU, where a step of this size
#: is bound by kernel-launch latency rather than arithmetic, ``train --batch-scale K`` multiplies
#: both (K = 8 gives 128 instances at N = 100, twice POMO's batch of 64).
NODES_PER_BATCH = 1600
BATCH_BOUNDS = (8, 64)

#: Seconds of training between local checkpoints.
SAVE_EVERY_S = 15 * 60
#: Training instances between validations (also done at the start of a fresh run and at the end
#: of every resume).
VALIDATE_EVERY = 20_000


@dataclass(frozen=True)
class Stage:
    """One curriculum stage: customers per instance drawn uniformly in ``num_loc`` while the
    run's instance count is below ``until`` (None: the last stage)."""

    num_loc: tuple[int, int]
    until: int | None


#: The curriculum in N: the start model saw 20-50; widen to 100, then to the mixed preset's 200.
CURRICULUM = (Stage((20, 100), 200_000), Stage((20, 200), None))


def stage_at(instances: int) -> tuple[int, Stage]:
    """``(index, stage)`` of the curriculum stage in force after ``instances`` instances."""
    for index, stage in enumerate(CURRICULUM):
        if stage.until is None or instances < stage.until:
            return index, stage
    raise AssertionError("the last curriculum stage has no end")


def batch_size(num_loc: int, scale: int = 1) -> int:
    """Instances per training batch of ``num_loc``-customer instances, ``scale`` times the CPU
    rule (nodes per batch and both bounds)."""
    if num_loc < 1:
        raise ValueError(f"num_loc: must be >= 1, got {num_loc}")
    if scale < 1:
        raise ValueError(f"batch scale: must be >= 1, got {scale}")
    low, high = (bound * scale for bound in BATCH_BOUNDS)
    return int(min(high, max(low, math.floor(NODES_PER_BATCH * scale / num_loc + 0.5))))
