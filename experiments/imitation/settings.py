"""The two arms and what they share.

Both arms start from :data:`START_MODEL` (``drlhq_clrp50`` as it was shipped when the arms began,
kept beside the report so that the arms, the recipes and the held-out check keep one start when a
better ``drlhq_clrp50`` ships) and are measured in CPU hours of one thread:

- ``pomo``: RL4CO's POMO continued on freshly drawn :data:`PRESET` instances;
- ``imitation``: the expert labels of ``datasets/labels/<preset>`` (their CPU time is charged to
  the arm), :data:`IMITATION_EPOCHS` passes of imitation over them, then the same POMO as the
  ``pomo`` arm;
- ``pomo16``: the same POMO as the ``pomo`` arm with :data:`POMO_STARTS` ``["pomo16"]`` starts
  per instance instead of one per customer (``benchmarks/pomo_step.py``: more instances per CPU
  second; this arm measures whether they teach as much per CPU hour);
- ``pomo-slow``: branches from the ``pomo`` arm's committed state (its weights and counters, so
  its curve continues the ``pomo`` arm's hours) and goes on with Adam at a quarter of the
  learning rate (:data:`POMO_LRS`): whether a lower rate leaves the ``pomo`` arm's plateau;
- ``pomo-slower``: branches from the ``pomo-slow`` arm the same way, at a quarter of its rate
  again (``pomo-slow`` gained about 0.1 in its first two CPU hours, then stayed level);
- ``wide``: the paper's model size from scratch on a GPU (:data:`SCRATCH_ARMS`): whether
  the width and depth leave the plateau of the 128-d arms (it ships nothing yet);
- ``pomo-gpu`` and ``pomo-gpu-slow``: branch from the ``pomo-slow`` arm and train on a GPU
  (``--device cuda``) with :data:`POMO_BATCHES` instances per step (eight times as many per
  gradient step), Adam at ``pomo``'s and at ``pomo-slow``'s rate. Their time is GPU wall time
  (``gpu_hours`` and ``gpu_instances`` in their state), not CPU hours: their points stand at
  their parent's CPU hours with more instances;
- ``leader``: branches from ``pomo-gpu-slow`` (the shipped weights) and goes on on one CPU
  thread at ``pomo-slow``'s rate with the leader reward (:data:`LEADER_WEIGHTS`,
  :class:`clrp_rl4co.models.LeaderRewardPOMO`: each instance's best start weighs more in the
  loss): whether aiming the gradient at the best of the N starts, which multistart decoding
  keeps, leaves the plateau;
- ``pomo-cpu-slow``: the ``leader`` arm's control: the same branch, thread and rate with POMO's
  own loss;
- ``leader8``: branches from ``leader`` with the leader reward at twice its weight, the same
  thread and rate (``leader`` going on beside it is its control): whether a stronger pull
  towards the best start moves the plateau further than the weight that first moved it;
- ``leader16``: branches from ``leader8`` with the leader reward at twice its weight again,
  ``leader8`` going on beside it as its control (at equal hours weight 8 beat weight 4 on the
  held-out instances): whether the pull pays once more;
- ``leader32``: branches from ``leader16`` with the leader reward at twice its weight again,
  ``leader16`` going on beside it as its control (weight 16 stayed below weight 8 at all seven
  evaluations of their first 1.5 CPU hours): where the pull stops paying;
- ``leader16-aug``: branches from ``leader16`` at its weight and rate, each step decoding the
  eight dihedral copies of each instance (:data:`TRAIN_COPIES`; :data:`POMO_BATCHES` instances,
  so as many rollouts a step as ``leader16``'s), all 8 x N rollouts of an instance one group (one
  baseline, one leader: the rollout x8 decoding keeps), ``leader16`` going on beside it as its
  control: whether aiming at what the x8 decoding keeps leaves the plateau that the weight
  doublings and the weight averages reached;
- ``leader16-swa``: branches from ``leader16`` at its weight and four times its rate
  (:data:`POMO_LR`, the rate the line came down from), its committed weights to be averaged
  (``average``; stochastic weight averaging at a higher constant rate, Izmailov et al. 2018):
  whether the mean of weights that move further apart than ``leader16``'s (whose averages along
  its level stretch stayed level with each other) leaves the plateau;
- ``leader16-deep``: branches from ``leader16`` at its weight and rate with its encoder grown
  from 3 to 6 layers (:data:`GROWN_ARMS`, the paper's depth; :func:`.growth.deeper`: the new
  layers start as the identity, so the grown policy decodes as its parent did), the new layers
  at :data:`GROWN_LAYER_LR`, ``leader16`` going on beside it as its control: whether capacity,
  which the weight averages could not add, leaves the plateau (the paper's model is 256-d with
  6 layers; ours 128-d with 3, and a layer of the encoder costs a few per cent of a step).

clrp100 (:func:`use_preset`) has nine arms: ``pomo`` (as clrp50's, from ``drlhq_clrp100``),
``pomo-gpu`` (its branch on a GPU), ``pomo-leader``, which branches from ``pomo`` and goes on
at ``pomo``'s rate with the leader reward (``pomo`` going on beside it is its control), and
``pomo-slow``, which branches from ``pomo`` at a quarter of its rate, as clrp50's did when that
arm's curve flattened, and ``pomo-slower``, which branches from ``pomo-slow`` at a quarter of
its rate again: whether a lower rate stills the swings between ``pomo-slow``'s weights (on the
held-out instances its 8.93 and 9.37 CPU h weights lost to its 7.43 h weights by 0.08-0.09),
and ``leader``, which branches from ``pomo-slow`` at its rate with the leader reward, as clrp50's
``leader`` did from its slow line (there it stayed below its control at all six evaluations),
``pomo-slow`` going on beside it as its control, and ``leader8``, which branches from ``leader``
with the leader reward at twice its weight, as clrp50's did, ``leader`` going on beside it as its
control, and ``leader8-aug``, which branches from ``leader8`` over the dihedral copies of its
instances, as clrp50's ``leader16-aug`` does from ``leader16``, ``leader8`` its control, and
``leader8-deep``, which branches from ``leader8`` with its encoder grown from 3 to 6 layers, as
clrp50's ``leader16-deep`` does from ``leader16`` (whose mean of eight states shipped as
``drlhq_clrp50``), ``leader8`` its control (``leader8-deep``'s means of five states shipped as
``drlhq_clrp100`` three times).

Every :data:`EVAL_EVERY_CPU_HOURS` of training, the arm's policy is decoded with dihedral x8
multistart greedy (as the tables decode it) on the first :data:`EVAL_SIZE` instances of the
paper's own test set of :data:`PRESET`; the evaluation's CPU time is recorded, not charged.
"""

from __future__ import annotations

from pathlib import Path

#: Where each arm starts: the shipped model's name then, and its weights (relative to the
#: repository; :func:`start_model_path`).
START_NAME = "drlhq_clrp50"
START_MODEL = "results/imitation/clrp50/start/drlhq_clrp50"
#: The instances both arms train on.
PRESET = "clrp50"
#: The arms.
ARMS = (
    "pomo",
    "imitation",
    "pomo16",
    "pomo-slow",
    "pomo-slower",
    "pomo-gpu",
    "pomo-gpu-slow",
    "wide",
    "leader",
    "pomo-cpu-slow",
    "leader8",
    "leader16",
    "leader32",
    "leader16-aug",
    "leader16-swa",
    "leader16-deep",
)
#: Arms that start from another arm's committed state (weights and counters) instead of
#: :data:`START_MODEL`: arm -> the arm it branches from.
BRANCHES = {
    "pomo-slow": "pomo",
    "pomo-slower": "pomo-slow",
    "pomo-gpu": "pomo-slow",
    "pomo-gpu-slow": "pomo-slow",
    "leader": "pomo-gpu-slow",
    "pomo-cpu-slow": "pomo-gpu-slow",
    "leader8": "leader",
    "leader16": "leader8",
    "leader32": "leader16",
    "leader16-aug": "leader16",
    "leader16-swa": "leader16",
    "leader16-deep": "leader16",
}

#: POMO (both arms): instances per step, Adam's learning rate and weight decay (the paper's),
#: the gradient's norm clip.
POMO_BATCH = 64
POMO_LR = 1e-4
WEIGHT_DECAY = 1e-6
GRAD_CLIP = 1.0
#: POMO starts per instance of the arms that do not start from every customer (the others: one
#: per customer, RL4CO POMO's default).
POMO_STARTS = {"pomo16": 16}
#: POMO's learning rate of the arms that do not use :data:`POMO_LR`.
POMO_LRS = {
    "pomo-slow": 2.5e-5,
    "pomo-slower": 6.25e-6,
    "pomo-gpu-slow": 2.5e-5,
    "leader": 2.5e-5,
    "pomo-cpu-slow": 2.5e-5,
    "leader8": 2.5e-5,
    "leader16": 2.5e-5,
    "leader32": 2.5e-5,
    "leader16-aug": 2.5e-5,
    "leader8-aug": 2.5e-5,
    "leader16-deep": 2.5e-5,
    "leader8-deep": 2.5e-5,
}
#: The leader reward's weight of the arms that train with it (``build_model``'s
#: ``leader_weight``; the others: POMO's loss).
LEADER_WEIGHTS = {
    "leader": 4.0,
    "pomo-leader": 4.0,
    "leader8": 8.0,
    "leader16": 16.0,
    "leader32": 32.0,
    "leader16-aug": 16.0,
    "leader8-aug": 8.0,
    "leader16-swa": 16.0,
    "leader16-deep": 16.0,
    "leader8-deep": 8.0,
}
#: Copies of each instance a training step decodes, of the arms that decode more than the
#: instance as drawn (``build_model``'s ``train_augment``: the dihedral eight, all of an
#: instance's rollouts on them one group).
TRAIN_COPIES = {"leader16-aug": 8, "leader8-aug": 8}
#: Arms whose difference from another arm is one change (same branch point, thread and rate):
#: arm -> its control, compared from the branch point on (:func:`.curve.control_comparison`);
#: the preset in use's entry of :data:`PRESET_CONTROLS`.
CONTROLS = {
    "leader": "pomo-cpu-slow",
    "leader8": "leader",
    "leader16": "leader8",
    "leader32": "leader16",
    "leader16-aug": "leader16",
    "leader16-deep": "leader16",
}
#: POMO's instances per step of the arms that do not use :data:`POMO_BATCH` (an arm with
#: :data:`TRAIN_COPIES` copies takes :data:`POMO_BATCH` / copies: as many rollouts a step).
POMO_BATCHES = {
    "pomo-gpu": 512,
    "pomo-gpu-slow": 512,
    "wide": 512,
    "leader16-aug": 8,
    "leader8-aug": 8,
}
#: The arms that train on a GPU (``--device cuda``).
GPU_ARMS = ("pomo-gpu", "pomo-gpu-slow", "wide")
#: Arms that start from scratch (seeded random weights) with their own architecture instead of
#: :data:`START_MODEL`: arm -> DRLHQ's constructor arguments. ``wide`` is the paper's model
#: size (256-d, 6 layers, 16 heads, feed-forward 512; the shipped models are 128-d, 3 layers
#: (6 for clrp50 and clrp100, grown by the ``-deep`` arms), 8 heads), trained on a GPU, where a
#: step of either size is bound by kernel launches.
SCRATCH_ARMS = {
    "wide": {"embed_dim": 256, "num_encoder_layers": 6, "num_heads": 16, "feedforward_hidden": 512}
}
#: Arms whose model is their parent's with a deeper encoder (:func:`.growth.deeper`): arm ->
#: (the parent's encoder layers, the arm's). The new layers train at :data:`GROWN_LAYER_LR`, the
#: others at the arm's POMO rate; a new layer's output layers start at zero, so at the rate the
#: parent came down to they would stay near the identity for hundreds of steps.
GROWN_ARMS = {"leader16-deep": (3, 6), "leader8-deep": (3, 6)}
GROWN_LAYER_LR = POMO_LR

#: Imitation (the ``imitation`` arm's first phase): labels per step, learning rate, passes over
#: the labels, what the loss scores (``clrp_rl4co.models.imitation.LIKELIHOODS``).
IMITATION_BATCH = 32
IMITATION_LR = 1e-5
IMITATION_EPOCHS = 1
IMITATION_LIKELIHOOD = "solution"

#: Evaluation: CPU hours of training between two points of the curve (per preset: a clrp100
#: evaluation costs about four times a clrp50 one); instances of the paper's test set (its first
#: ones); the decoding.
EVAL_EVERY_CPU_HOURS = 0.25
EVAL_EVERY_CPU_HOURS_BY_PRESET = {"clrp100": 0.5}
EVAL_SIZE = 200
EVAL_DECODE = "multistart_greedy+aug8"
EVAL_BATCH = 10
#: On a GPU: instances per evaluation batch, and minutes of GPU wall time between evaluations.
EVAL_BATCH_GPU = 200
EVAL_EVERY_GPU_MINUTES = 2.0

#: Seconds between two local checkpoints.
SAVE_EVERY_S = 900.0

ROOT = Path(__file__).resolve().parents[2]
#: The labels the ``imitation`` arm reads.
LABELS_DIR = ROOT / "datasets" / "labels" / PRESET
#: The committed states (one folder per arm) and the curve.
REPORT_DIR = ROOT / "results" / "imitation" / PRESET
#: The local checkpoints (optimizer included; not committed).
WORK_DIR = ROOT / "runs" / "imitation-work"

#: The presets with arms, and each one's arms (clrp50 first: the module's constants above).
PRESET_ARMS = {
    "clrp50": ARMS,
    "clrp100": (
        "pomo",
        "pomo-gpu",
        "pomo-leader",
        "pomo-slow",
        "pomo-slower",
        "leader",
        "leader8",
        "leader8-aug",
        "leader8-deep",
    ),
}
#: Each preset's :data:`BRANCHES` (clrp100's other arms branch from its ``pomo`` arm, its
#: ``pomo-slower`` and ``leader`` from ``pomo-slow``, as clrp50's do from their slow lines, and
#: its ``leader8`` from ``leader``).
PRESET_BRANCHES = {
    "clrp50": BRANCHES,
    "clrp100": {
        "pomo-gpu": "pomo",
        "pomo-leader": "pomo",
        "pomo-slow": "pomo",
        "pomo-slower": "pomo-slow",
        "leader": "pomo-slow",
        "leader8": "leader",
        "leader8-aug": "leader8",
        "leader8-deep": "leader8",
    },
}
#: Each preset's :data:`CONTROLS` (clrp100's ``leader`` is ``pomo-slow`` going on from the
#: branch point, as clrp50's ``pomo-cpu-slow`` is for clrp50's).
PRESET_CONTROLS = {
    "clrp50": CONTROLS,
    "clrp100": {
        "pomo-leader": "pomo",
        "leader": "pomo-slow",
        "leader8": "leader",
        "leader8-aug": "leader8",
        "leader8-deep": "leader8",
    },
}


def use_preset(preset: str) -> None:
    """Point this module's preset constants (:data:`PRESET`, :data:`START_NAME`,
    :data:`START_MODEL`, :data:`LABELS_DIR`, :data:`REPORT_DIR`, :data:`WORK_DIR`,
    :data:`BRANCHES`, :data:`CONTROLS`) at ``preset``: its start pinned under
    ``results/imitation/<preset>/start/``, its local checkpoints under
    ``runs/imitation-work/<preset>/`` (clrp50's stay where they were).

    Raises:
        ValueError: naming the preset and the choices.
    """
    global PRESET, START_NAME, START_MODEL, LABELS_DIR, REPORT_DIR, WORK_DIR, BRANCHES, CONTROLS
    if preset not in PRESET_ARMS:
        raise ValueError(f"preset: {preset!r} is not one of {tuple(PRESET_ARMS)}")
    PRESET = preset
    START_NAME = f"drlhq_{preset}"
    START_MODEL = f"results/imitation/{preset}/start/{START_NAME}"
    LABELS_DIR = ROOT / "datasets" / "labels" / preset
    REPORT_DIR = ROOT / "results" / "imitation" / preset
    first = next(iter(PRESET_ARMS))
    WORK_DIR = ROOT / "runs" / "imitation-work" / ("" if preset == first else preset)
    BRANCHES = PRESET_BRANCHES[preset]
    CONTROLS = PRESET_CONTROLS[preset]


def preset_flag() -> str:
    """`` --preset <preset>`` for the command lines of a preset other than the default (the
    first of :data:`PRESET_ARMS`), else ``""``."""
    return "" if PRESET == next(iter(PRESET_ARMS)) else f" --preset {PRESET}"


def all_arms() -> tuple[str, ...]:
    """Every preset's arms, each once, in :data:`PRESET_ARMS`' order: the command line's
    choices (:func:`check_arm` then holds an arm to the preset in use)."""
    return tuple(dict.fromkeys(arm for arms in PRESET_ARMS.values() for arm in arms))


def preset_arms() -> tuple[str, ...]:
    """The arms of the preset in use (:data:`ARMS` for a preset without its own, as the tests
    set a small one by hand)."""
    return PRESET_ARMS.get(PRESET, ARMS)


def shipped_name() -> str:
    """The shipped model an arm of the preset in use replaces: ``drlhq_<preset>``."""
    return f"drlhq_{PRESET}"


def eval_every_cpu_hours() -> float:
    """CPU hours of training between two evaluations of the preset in use."""
    return EVAL_EVERY_CPU_HOURS_BY_PRESET.get(PRESET, EVAL_EVERY_CPU_HOURS)


def start_model_path(model: str = START_MODEL) -> str:
    """``model`` as :func:`clrp_rl4co.models.load_policy` takes it: a path relative to the
    repository made absolute where that file is; anything else (a shipped name, an absolute
    path) unchanged."""
    under_root = ROOT / model
    if not Path(model).is_absolute() and under_root.with_suffix(".pt").is_file():
        return str(under_root)
    return model


def pomo_lr(arm: str) -> float:
    """Adam's learning rate of ``arm``'s POMO phase."""
    return POMO_LRS.get(arm, POMO_LR)


def pomo_batch(arm: str) -> int:
    """POMO's instances per step of ``arm``."""
    return POMO_BATCHES.get(arm, POMO_BATCH)


def train_augment(arm: str) -> int:
    """Copies of each instance ``arm``'s training steps decode (1: the instance as drawn)."""
    return TRAIN_COPIES.get(arm, 1)


def check_arm(arm: str) -> str:
    """``arm`` if it is one of the arms of the preset in use (:func:`preset_arms`).

    Raises:
        ValueError: naming the arm and the choices.
    """
    if arm not in preset_arms():
        raise ValueError(f"arm: {arm!r} is not one of {PRESET}'s arms {preset_arms()}")
    return arm
