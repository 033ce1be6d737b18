"""A resumable training campaign for the shipped DRLHQ models, made for short GPU loans.

    python -m experiments.campaign run --minutes 9 --out "$OUT"   # on the lent GPU machine
    python -m experiments.campaign apply DIR                      # here, on the files it returned
    python -m experiments.campaign status                         # where each preset stands
    python -m experiments.campaign init                           # state files + validation sets
    python -m experiments.campaign wheels                         # .whl/ for the GPU machine

**Run** continues the training of every preset (clrp10 / 20 / 50 / 100) for ``--minutes`` of
wall time in one process tree, through the package's one training path
(:func:`clrp_rl4co.models.training.train`, i.e. ``python run.py ...`` with Hydra overrides): POMO
with the shared baseline, Adam, precision from
:func:`clrp_rl4co.models.training.training_precision` (bf16 autocast on GPUs that support it,
fp32 on CPU; env costs stay float). What the campaign adds is :class:`CampaignCallback`: it
validates on the campaign's fixed validation set (:data:`CAMPAIGN_VAL_SEED`, decode
:data:`VAL_DECODE`) at the start (the shipped model and the start weights), every
``--val-every`` seconds and at the end; keeps the best validated weights; stops at the planned
time; and after every validation writes ``<out>/<track>.tar`` atomically, so a run killed at its
time limit loses at most the work since the last validation (under a minute).

**Resume scheme.** Per track (``<preset>``, or ``<preset>_<size>`` for another model size) the
committed folder ``results/training/campaign/<track>/`` holds ``state.json`` (cumulative training
instances of the weights in hand, where the learning-rate schedule stands, the latest validation,
every session), ``curve.csv`` / ``curve.png`` and, when the campaign's latest weights were not
shipped, ``resume.pt`` + ``resume.json``. A session starts from ``resume.pt`` if the state says so,
else from the shipped model ``clrp_rl4co/pretrained/drlhq_<preset>`` (or a fresh policy of the
chosen size), **with a fresh Adam optimizer**: the weights travel, the optimizer moments do not
(they would triple the files and cannot come back within the device's file limits at the paper's
size); Adam's bias-corrected first steps are about the size of the learning rate, which may
show as a short bump in the curve (not measured yet). The learning rate follows the paper's
schedule counted in training instances (``configs/model/base.yaml``: 1e-4, x0.1 after
``decay_at`` of the paper's 10 million instances), constant within a session. Each session
draws its training data with its own seed (:data:`TRAIN_SEED_BASE` + the number of earlier
sessions).

**What comes back and what is kept.** A session's candidate is its best validated weights
(validations after the start that beat the start's own value; none if none does, and the
state's weights then stay where they were). ``apply`` ships the
candidate as ``drlhq_<preset>`` (:func:`clrp_rl4co.models.shipping.ship_policy`, provenance:
commands, seeds, cumulative instances, hardware, wall minutes, validation) only if its value is
lower than the shipped model's value measured in the same session on the same set, and the
shipped file is still the one measured; otherwise it keeps the candidate as ``resume.pt``. So
each session adds at most one weights file (about 2.9 MB at 128-d) per preset to the repository.

**Minute split.** The training window is split by the relative gap of each preset's latest
validation value to the paper's DRLHQ x8 figure (:func:`minute_shares`: a floor each, the rest in
proportion to the gaps). On a GPU all presets start together and the ones with smaller shares
stop earlier (:func:`shared_durations`: with equal time slices each process then gets its share
of GPU time); on a CPU they run one after the other.

**Files in the output folder** (:func:`check_out`): ``<track>.tar`` per track (``session.json``,
``weights.pt`` / ``.json`` once a validation improved, the tail of ``train.log``) and
``campaign.json``; with the device command's ``campaign.log`` that is 6 files, within the
device's 8 (16 MiB each, 64 MiB in all, names of letters, digits, ``.``, ``_``, ``-``).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import hashlib
import io
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch import Callback, LightningModule, Trainer
from tensordict import TensorDict

REPO = Path(__file__).resolve().parents[1]

#: Seed of the campaign's validation sets: deliberately not the paper's test seed 1234 (nor the
#: published test sets' 777000), so the paper's test instances never steer training.
CAMPAIGN_VAL_SEED = 20261126

#: The committed campaign state: one folder per track.
CAMPAIGN_DIR = REPO / "results" / "training" / "campaign"

#: The presets the campaign trains by default.
PRESETS = ("clrp10", "clrp20", "clrp50", "clrp100")

#: How validation decodes: multistart greedy over all N starts with RL4CO's dihedral x8
#: augmentation, best per instance (the tables' ``DRLHQ x8`` row, comparable with the paper's
#: DRLHQ-Aug figures).
VAL_DECODE = "multistart_greedy+aug8"

#: The paper's POMO*-Aug figures: the first rung on the way to its DRLHQ-Aug figures
#: (:data:`experiments.headline.PAPER`), drawn as a second reference line.
PAPER_FIRST_RUNG: dict[str, float] = {"clrp50": 27.6849, "clrp100": 55.7038}

#: Training seed of a session: this + the number of the track's earlier sessions.
TRAIN_SEED_BASE = 1000

#: The shipped name of a preset's DRLHQ model.
SHIPPED_NAME = "drlhq_{preset}"


@dataclass(frozen=True)
class PresetSettings:
    """Per-preset sizes on one large GPU (those of ``examples/finetune_all.sh``).

    Attributes:
        batch_size: training instances per optimiser step (each decoded from all N starts).
        epoch_size: training instances drawn per epoch (RL4CO redraws them every epoch).
        val_size: instances of the campaign's validation set.
    """

    batch_size: int
    epoch_size: int
    val_size: int


PRESET_SETTINGS: dict[str, PresetSettings] = {
    "clrp10": PresetSettings(512, 30_720, 1_000),
    "clrp20": PresetSettings(512, 20_480, 1_000),
    "clrp50": PresetSettings(256, 6_400, 500),
    "clrp100": PresetSettings(128, 1_920, 200),
}

#: Rows per validation batch: instances x 8 augmentations x N starts (memory of the decoder).
VAL_ROWS = 20_000

#: Model sizes: ``shipped`` keeps the start weights' architecture (the shipped models: 128-d,
#: 3 layers, 8 heads, FF 512); ``paper`` is the paper's; ``tiny`` is for tests.
MODEL_SIZES: dict[str, dict[str, int] | None] = {
    "shipped": None,
    "paper": {
        "embed_dim": 256,
        "num_encoder_layers": 6,
        "num_heads": 16,
        "feedforward_hidden": 512,
    },
    "tiny": {"embed_dim": 16, "num_encoder_layers": 1, "num_heads": 2, "feedforward_hidden": 32},
}

#: Model sizes whose improvements ``apply`` ships (a ``tiny`` model never replaces one).
SHIPPABLE_SIZES = ("shipped", "paper")

#: How a track resumes: from the shipped model, from its own ``resume.pt``, or a fresh policy.
RESUME_KINDS = ("shipped", "own", "fresh")

#: What the device returns from ``$OUT``: files, bytes per file, bytes in all, folder depth.
OUT_MAX_FILES = 8
OUT_MAX_FILE_BYTES = 16 * 2**20
OUT_MAX_TOTAL_BYTES = 64 * 2**20
OUT_MAX_DEPTH = 2
OUT_NAME = re.compile(r"^[A-Za-z0-9._-]+$")

#: Bytes of a track's training log kept in its archive (the end of it).
LOG_TAIL_BYTES = 200_000

#: Seconds the run keeps free at its end (stopping, final validations, archives).
END_MARGIN_S = 20.0

#: Seconds a track stops before the deadline beyond 1.5 x its longest validation (the last
#: training step and the archive).
STOP_MARGIN_S = 5.0


# --------------------------------------------------------------------------- small rules
def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def session_id() -> str:
    """A session's name: its UTC start, e.g. ``20261127T101500Z``."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def track_name(preset: str, size: str = "shipped") -> str:
    """``clrp50`` for the shipped size, ``clrp50_paper`` for another :data:`MODEL_SIZES` key."""
    if preset not in PRESET_SETTINGS:
        raise ValueError(f"preset: unknown {preset!r}; choose from {list(PRESET_SETTINGS)}")
    if size not in MODEL_SIZES:
        raise ValueError(f"size: unknown {size!r}; choose from {list(MODEL_SIZES)}")
    return preset if size == "shipped" else f"{preset}_{size}"


def paper_target(preset: str) -> float:
    """The paper's DRLHQ x8 (DRLHQ-Aug) objective on its test set of ``preset``."""
    from .headline import PAPER

    return PAPER[preset]["DRLHQ x8"]


def reference_lines(preset: str) -> dict[str, float]:
    """The paper's figures drawn on a preset's curve (label -> objective)."""
    lines = {"paper DRLHQ x8 (its test set)": paper_target(preset)}
    if preset in PAPER_FIRST_RUNG:
        lines["paper POMO* x8 (its test set)"] = PAPER_FIRST_RUNG[preset]
    return lines


def lr_schedule() -> dict[str, float]:
    """The paper's schedule in training instances, from ``configs/model/base.yaml``: ``lr``,
    ``gamma`` and ``decay_at_instances`` (``decay_at`` x the paper's training instances)."""
    from omegaconf import OmegaConf

    from clrp_rl4co.models.shipping import PAPER_TRAINING_INSTANCES
    from clrp_rl4co.models.training import CONFIG_DIR

    base = OmegaConf.load(CONFIG_DIR / "model" / "base.yaml")
    return {
        "lr": float(base.optimizer_kwargs.lr),
        "gamma": float(base.lr_schedule.gamma),
        "decay_at_instances": int(float(base.lr_schedule.decay_at) * PAPER_TRAINING_INSTANCES),
    }


def learning_rate(instances: int, schedule: dict[str, float] | None = None) -> float:
    """Learning rate of a session whose weights have seen ``instances`` training instances."""
    s = schedule or lr_schedule()
    return s["lr"] * (s["gamma"] if instances >= s["decay_at_instances"] else 1.0)


def relative_gap(value: float | None, target: float) -> float | None:
    """``(value - target) / target`` (None without a value)."""
    return None if value is None else (value - target) / target


def minute_shares(gaps: dict[str, float | None], floor: float = 0.1) -> dict[str, float]:
    """Share of the training time per track: ``floor`` each, the rest in proportion to the
    relative gaps (negative gaps count as 0, an unknown gap as the largest known one, or 1).

    >>> minute_shares({"a": 0.01, "b": 0.03}, floor=0.1)
    {'a': 0.3, 'b': 0.7}
    """
    if not gaps:
        raise ValueError("gaps: no track to share the time between")
    if not 0.0 <= floor * len(gaps) <= 1.0:
        raise ValueError(f"floor: {floor} x {len(gaps)} tracks must be within [0, 1]")
    known = [g for g in gaps.values() if g is not None]
    fallback = max(known) if known else 1.0
    weights = {k: max(0.0, fallback if g is None else g) for k, g in gaps.items()}
    total = sum(weights.values())
    rest = 1.0 - floor * len(gaps)
    return {
        k: round(floor + rest * (w / total if total > 0 else 1.0 / len(gaps)), 12)
        for k, w in weights.items()
    }


def shared_durations(shares: dict[str, float], window: float) -> dict[str, float]:
    """Seconds each track trains when all start together and share one GPU in equal time
    slices, so that track ``i`` gets ``shares[i] x window`` of GPU time: the smallest share
    stops first, at ``k x s_1 x window``; then each next one after ``(k - j) x (s_j+1 - s_j) x
    window`` more. The largest share trains for the whole ``window``."""
    order = sorted(shares, key=shares.__getitem__)
    out, t, previous = {}, 0.0, 0.0
    for j, name in enumerate(order):
        t += (len(order) - j) * (shares[name] - previous) * window
        previous = shares[name]
        out[name] = t
    return out


def sequential_durations(shares: dict[str, float], window: float) -> dict[str, float]:
    """Seconds each track trains when the tracks run one after the other."""
    return {name: share * window for name, share in shares.items()}


def check_out(out: str | Path) -> list[str]:
    """What in ``out`` the device would not return (:data:`OUT_MAX_FILES` files of at most
    :data:`OUT_MAX_FILE_BYTES`, :data:`OUT_MAX_TOTAL_BYTES` in all, at most
    :data:`OUT_MAX_DEPTH` folders down, names matching :data:`OUT_NAME`); ``[]`` if all."""
    out = Path(out)
    problems, total = [], 0
    files = sorted(p for p in out.rglob("*") if p.is_file() or p.is_symlink())
    for path in files:
        rel = path.relative_to(out)
        if path.is_symlink():
            problems.append(f"{rel}: a link")
            continue
        size = path.stat().st_size
        total += size
        if size > OUT_MAX_FILE_BYTES:
            problems.append(f"{rel}: {size} bytes, over {OUT_MAX_FILE_BYTES}")
        if len(rel.parts) - 1 > OUT_MAX_DEPTH:
            problems.append(f"{rel}: more than {OUT_MAX_DEPTH} folders down")
        if not all(OUT_NAME.match(part) for part in rel.parts):
            problems.append(f"{rel}: a name with characters other than letters, digits, . _ -")
    if len(files) > OUT_MAX_FILES:
        problems.append(f"{len(files)} files, over {OUT_MAX_FILES}")
    if total > OUT_MAX_TOTAL_BYTES:
        problems.append(f"{total} bytes in all, over {OUT_MAX_TOTAL_BYTES}")
    return problems


# --------------------------------------------------------------------------- state
@dataclass
class TrackState:
    """``results/training/campaign/<track>/state.json``: where a track stands.

    Attributes:
        preset, size: the track (:func:`track_name`).
        instances: training instances the weights in hand have seen (the start model's
            included).
        resume: where the next session starts (:data:`RESUME_KINDS`).
        value: the latest validation objective of the weights in hand (mean cost,
            :data:`VAL_DECODE`, the campaign set), or before any session a prior estimate.
        value_source: where ``value`` comes from.
        validation: the validation set: seed, size, decode, file (relative to the state
            folder's parent), checksum.
        shipped_value: the shipped model's value on the set, as last measured.
        trained_instances: training instances of all sessions, kept or not (compute spent).
        training_minutes: wall minutes of all sessions' training (validations included).
        sessions: one record per applied session, oldest first.
    """

    preset: str
    size: str
    instances: int
    resume: str
    value: float | None
    value_source: str | None
    validation: dict[str, Any]
    shipped_value: float | None = None
    trained_instances: int = 0
    training_minutes: float = 0.0
    sessions: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.resume not in RESUME_KINDS:
            raise ValueError(f"resume: {self.resume!r} is none of {RESUME_KINDS}")
        if self.resume == "shipped" and self.size != "shipped":
            raise ValueError(f"resume: 'shipped' needs size 'shipped', got size {self.size!r}")

    @property
    def track(self) -> str:
        return track_name(self.preset, self.size)

    def to_json(self) -> str:
        data = asdict(self)
        data["lr_schedule"] = {**lr_schedule(), "current_lr": learning_rate(self.instances)}
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> TrackState:
        data = json.loads(text)
        data.pop("lr_schedule", None)
        return cls(**data)


def state_file(state_dir: Path, track: str) -> Path:
    return Path(state_dir) / track / "state.json"


def val_file_name(preset: str, size: int, seed: int = CAMPAIGN_VAL_SEED) -> str:
    return f"val/{preset}_seed{seed}_n{size}.npz"


def draw_val_set(preset: str, size: int, seed: int = CAMPAIGN_VAL_SEED) -> TensorDict:
    from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset

    return generate_dataset(CLRPGenerator(preset=preset), size, seed)


def load_val_set(state_dir: Path, validation: dict[str, Any]) -> TensorDict:
    """The validation set a state names (drawn and written when missing); its checksum must
    be the state's."""
    from clrp_rl4co.data import load_or_draw

    preset, size, seed = validation["preset"], int(validation["size"]), int(validation["seed"])
    return load_or_draw(
        Path(state_dir) / validation["file"],
        lambda: draw_val_set(preset, size, seed),
        seed,
        validation.get("checksum"),
    )


def prior_value(preset: str, results_dir: Path = REPO / "results") -> tuple[float, str] | None:
    """The tables' DRLHQ x8 objective of ``preset`` (published test set), as a first estimate
    of its gap before any campaign validation; None if the table is not there."""
    path = results_dir / preset / f"{preset}.csv"
    if not path.is_file():
        return None
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            if (row.get("method") or row.get("Method")) == "DRLHQ x8":
                source = f"prior: DRLHQ x8 in {path.relative_to(results_dir.parent)}"
                return float(row["objective"]), source + " (published test set, not this set)"
    return None


def shipped_stem(preset: str, pretrained_dir: Path) -> Path:
    return Path(pretrained_dir) / SHIPPED_NAME.format(preset=preset)


def _training_instances(meta: dict[str, Any]) -> int:
    """Training instances a saved policy's JSON says it has seen (its start model's included)."""
    for key in ("training_instances_including_init", "training_instances"):
        if meta.get(key) is not None:
            return int(meta[key])
    return 0


def init_state(
    preset: str,
    size: str,
    state_dir: Path,
    pretrained_dir: Path,
    val_size: int | None = None,
) -> TrackState:
    """A new track's state (not written): from the shipped model for the shipped size, fresh
    otherwise; the validation set is drawn (and written) now and its checksum pinned."""
    from clrp_rl4co.data import instances_checksum

    val_size = int(val_size or PRESET_SETTINGS[preset].val_size)
    validation = {
        "preset": preset,
        "seed": CAMPAIGN_VAL_SEED,
        "size": val_size,
        "decode": VAL_DECODE,
        "file": val_file_name(preset, val_size),
    }
    validation["checksum"] = instances_checksum(load_val_set(state_dir, validation))
    instances, resume, value, source = 0, "fresh", None, None
    if size == "shipped":
        stem = shipped_stem(preset, pretrained_dir)
        if not stem.with_suffix(".json").is_file():
            raise FileNotFoundError(f"preset: no shipped model {stem}.pt/.json to start from")
        instances = _training_instances(json.loads(stem.with_suffix(".json").read_text()))
        resume = "shipped"
        prior = prior_value(preset)
        value, source = prior if prior else (None, None)
    return TrackState(preset, size, instances, resume, value, source, validation)


def load_state(
    preset: str,
    size: str,
    state_dir: Path,
    pretrained_dir: Path,
    val_size: int | None = None,
) -> TrackState:
    """A track's committed state, or a new one (:func:`init_state`) when there is none. A
    ``val_size`` other than the state's is refused (curves must stay on one set)."""
    path = state_file(state_dir, track_name(preset, size))
    if not path.is_file():
        return init_state(preset, size, state_dir, pretrained_dir, val_size)
    state = TrackState.from_json(path.read_text())
    if (state.preset, state.size) != (preset, size):
        raise ValueError(f"{path}: holds track {state.track!r}, not {track_name(preset, size)!r}")
    if val_size is not None and int(val_size) != int(state.validation["size"]):
        raise ValueError(
            f"val_size: {val_size} differs from the {state.validation['size']} validation "
            f"instances of {path} (a track keeps one validation set)"
        )
    return state


def save_state(state: TrackState, state_dir: Path) -> Path:
    path = state_file(state_dir, state.track)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(state.to_json())
    return path


def start_weights(state: TrackState, state_dir: Path, pretrained_dir: Path) -> Path | None:
    """The ``.pt`` a session of ``state`` starts from (None: a fresh policy)."""
    if state.resume == "fresh":
        return None
    if state.resume == "shipped":
        stem = shipped_stem(state.preset, pretrained_dir)
    else:
        stem = Path(state_dir) / state.track / "resume"
    pt = stem.with_suffix(".pt")
    if not (pt.is_file() and stem.with_suffix(".json").is_file()):
        raise FileNotFoundError(f"resume: {state.track} resumes from {pt}, which is missing")
    return pt


# --------------------------------------------------------------------------- validation
@contextlib.contextmanager
def autocast_for(precision: str, device: torch.device) -> Iterator[None]:
    """The autocast of a Lightning precision (``bf16-mixed`` / ``16-mixed``) on ``device``;
    none for full precision."""
    dtype = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}.get(str(precision))
    if dtype is None:
        yield
        return
    with torch.autocast(device_type=device.type, dtype=dtype):
        yield


def val_batch_size(preset: str) -> int:
    """Validation instances per batch: :data:`VAL_ROWS` rows of 8 augmentations x N starts."""
    from clrp_rl4co.envs.clrp import CLRPGenerator

    return max(1, VAL_ROWS // (8 * CLRPGenerator(preset=preset).num_loc))


@torch.no_grad()
def validate(
    policy: torch.nn.Module,
    env: Any,
    instances: TensorDict,
    batch_size: int,
    precision: str = "32-true",
) -> float:
    """Mean objective (cost, float64 from the env's ``cost_parts``) of ``policy`` on
    ``instances`` ``[B]`` under :data:`VAL_DECODE`, ``batch_size`` instances at a time, on the
    policy's device and under the autocast of ``precision``. The policy's train / eval mode is
    restored."""
    from clrp_rl4co.models import decode_batch

    device = next(policy.parameters()).device
    was_training = policy.training
    policy.eval()
    total, count = 0.0, 0
    try:
        with autocast_for(precision, device):
            for start in range(0, instances.batch_size[0], batch_size):
                chunk = instances[start : start + batch_size].to(device)
                _, parts, _ = decode_batch(policy, env, chunk, VAL_DECODE)
                total += float(parts["total"].double().sum())
                count += chunk.batch_size[0]
    finally:
        policy.train(was_training)
    return total / count


# --------------------------------------------------------------------------- the callback
def _hardware(device: torch.device, processes: int) -> str:
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        shared = f", shared by {processes} campaign processes" if processes > 1 else ""
        return f"1 x {name}{shared}, torch {torch.__version__}"
    threads = torch.get_num_threads()
    return f"CPU ({threads} threads, {os.cpu_count()} cores), torch {torch.__version__}"


class CampaignCallback(Callback):
    """The campaign's part of a training run (named in the run's Hydra config as
    ``callbacks.campaign``; ``plan``: the JSON file :func:`run` wrote for the track).

    At the start it validates the shipped model and the start weights; then every
    ``plan["val_every_s"]`` seconds and when training stops it validates the current weights,
    keeps them (``weights.pt`` / ``.json``) when they are the best so far and rewrites the
    track's archive (:meth:`pack`). It stops training at ``plan["train_seconds"]`` after the
    start, or earlier so that the final validation ends before ``plan["deadline_unix"]``."""

    def __init__(self, plan: str) -> None:
        self.plan_file = Path(plan)
        self.plan: dict[str, Any] = json.loads(self.plan_file.read_text())
        self.pack_dir = Path(self.plan["pack_dir"])
        self.points: list[dict[str, Any]] = []
        self.best: dict[str, Any] | None = None
        self.bar: float | None = None  # the value a candidate must beat (the start's)
        self.shipped_value: float | None = None
        self.instances = int(self.plan["start"]["instances"])
        self.steps = 0
        self.t_start = time.time()
        self.val_seconds = 0.0
        self.next_val = math.inf
        self.stop_at = math.inf
        self.precision = "32-true"
        self.hardware = ""
        self.complete = False
        self.val_set: TensorDict | None = None

    # -- hooks
    def on_train_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        from clrp_rl4co.envs.clrp import load_dataset
        from clrp_rl4co.policies import load_policy

        self.t_start = time.time()
        self.precision = str(trainer.precision)
        device = pl_module.device
        self.hardware = _hardware(device, int(self.plan.get("processes", 1)))
        self.val_set = load_dataset(self.plan["val_file"])
        self.pack_dir.mkdir(parents=True, exist_ok=True)
        shipped = self.plan["shipped"]
        if shipped["exists"]:
            policy = load_policy(shipped["weights"]).to(device)  # the .pt: a bare stem would
            # resolve to the package's model of that name first
            self.shipped_value = self._validate(policy, pl_module)
            del policy
        if self.plan["start"]["kind"] == "shipped" and self.shipped_value is not None:
            start_value = self.shipped_value
        else:
            start_value = self._validate(pl_module.policy, pl_module)
        self.bar = start_value
        self._point("start", start_value)
        self.stop_at = min(
            self.t_start + float(self.plan["train_seconds"]),
            float(self.plan["deadline_unix"]) - 1.5 * self.val_seconds - STOP_MARGIN_S,
        )
        self.next_val = time.time() + float(self.plan["val_every_s"])
        self.pack()
        if time.time() >= self.stop_at:
            trainer.should_stop = True

    def on_train_batch_end(
        self, trainer: Trainer, pl_module: LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        size = batch.batch_size[0] if hasattr(batch, "batch_size") else len(batch)
        self.instances += int(size) * trainer.world_size
        self.steps += 1
        now = time.time()
        if now >= self.stop_at:
            trainer.should_stop = True
        elif now >= self.next_val:
            self._validate_and_keep(pl_module, "periodic")
            self.pack()
            self.next_val = time.time() + float(self.plan["val_every_s"])

    def on_train_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if self.points and self.points[-1]["step"] != self.steps:
            self._validate_and_keep(pl_module, "final")
        self.complete = True
        self.pack()

    def on_exception(
        self, trainer: Trainer, pl_module: LightningModule, exception: BaseException
    ) -> None:
        """Keep what was validated so far (a kill by signal skips this: the last archive
        stands)."""
        if self.val_set is not None:
            self.pack()

    # -- work
    def _validate(self, policy: torch.nn.Module, pl_module: LightningModule) -> float:
        start = time.time()
        value = validate(
            policy,
            pl_module.env,
            self.val_set,
            int(self.plan["val_batch"]),
            self.precision,
        )
        self.val_seconds = max(self.val_seconds, time.time() - start)
        return value

    def _point(self, kind: str, value: float) -> dict[str, Any]:
        point = {
            "kind": kind,
            "step": self.steps,
            "instances": self.instances,
            "seconds": round(time.time() - self.t_start, 1),
            "value": value,
        }
        self.points.append(point)
        print(
            f"[campaign {self.plan['track']}] {kind} step {self.steps} instances "
            f"{self.instances} value {value:.4f}",
            flush=True,
        )
        return point

    def _validate_and_keep(self, pl_module: LightningModule, kind: str) -> None:
        point = self._point(kind, self._validate(pl_module.policy, pl_module))
        best = self.best["value"] if self.best else self.bar
        if best is None or point["value"] < best:
            self.best = dict(point)
            pl_module.policy.save_pretrained(self.pack_dir / "weights", extra=self._provenance())

    def _provenance(self) -> dict[str, Any]:
        """What the candidate's JSON records (``apply`` completes it when shipping)."""
        return {
            "preset": self.plan["preset"],
            "campaign_session": self.plan["session"],
            "training_instances": self.instances,
            "seed": self.plan["seed"],
            "hardware": self.hardware,
            "precision": self.precision,
        }

    def session_record(self) -> dict[str, Any]:
        """``session.json`` of the archive: the plan's identity plus what happened."""
        keys = ("session", "track", "preset", "size", "seed", "lr", "command", "run_command",
                "state_sessions", "validation", "start", "train_seconds", "shares")  # fmt: skip
        return {
            **{k: self.plan.get(k) for k in keys},
            "shipped": {**self.plan["shipped"], "value": self.shipped_value},
            "hardware": self.hardware,
            "precision": self.precision,
            "points": self.points,
            "best": self.best,
            "steps": self.steps,
            "instances_end": self.instances,
            "wall_seconds": round(time.time() - self.t_start, 1),
            "complete": self.complete,
            "updated_utc": utc_now(),
        }

    def pack(self) -> Path:
        """Rewrite ``<out>/<track>.tar`` (``session.json``, the candidate ``weights.pt`` /
        ``.json`` once there is one, the end of ``train.log``): written beside, then renamed."""
        target = Path(self.plan["out_tar"])
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.stem}.part")
        with tarfile.open(tmp, "w") as tar:
            _add_bytes(tar, "session.json", json.dumps(self.session_record(), indent=2).encode())
            for name in ("weights.pt", "weights.json"):
                if self.best is not None and (self.pack_dir / name).is_file():
                    tar.add(self.pack_dir / name, arcname=name)
            log = Path(self.plan.get("log_file") or "")
            if log.is_file():
                with log.open("rb") as f:
                    f.seek(max(0, log.stat().st_size - LOG_TAIL_BYTES))
                    _add_bytes(tar, "train.log", f.read())
        os.replace(tmp, target)
        return target


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    tar.addfile(info, io.BytesIO(data))


# --------------------------------------------------------------------------- run
@dataclass
class RunOptions:
    """What ``run`` takes (the command's flags; see :func:`main`)."""

    minutes: float
    out: Path
    presets: tuple[str, ...] = PRESETS
    size: str = "shipped"
    state_dir: Path = CAMPAIGN_DIR
    pretrained_dir: Path | None = None
    work: Path | None = None
    concurrent: bool | None = None
    in_process: bool = False
    val_every_s: float = 50.0
    floor: float = 0.1
    accelerator: str = "auto"
    precision: str | None = None
    threads: int | None = None
    batch_size: int | None = None
    epoch_size: int | None = None
    val_size: int | None = None
    startup_s: float | None = None
    command: str | None = None
    dry_run: bool = False


def _hydra_path(path: str | Path) -> str:
    """A path as a Hydra override value: bare when Hydra's grammar takes it as is, else
    single-quoted."""
    text = str(path)
    return text if re.fullmatch(r"[A-Za-z0-9/._-]+", text) else "'" + text.replace("'", "\\'") + "'"


def run_overrides(
    plan_file: Path,
    plan: dict[str, Any],
    options: RunOptions,
    architecture: dict[str, int] | None,
    threads: int | None,
) -> list[str]:
    """The ``python run.py`` overrides of one track's session: the package's training path
    with the campaign's callback, no Lightning validation or checkpoints (the callback keeps
    the weights), a constant learning rate, no schedule."""
    settings = PRESET_SETTINGS[plan["preset"]]
    batch = options.batch_size or settings.batch_size
    epoch = options.epoch_size or settings.epoch_size
    work = Path(plan["work_dir"])
    overrides = [
        "model=drlhq",
        f"env.generator_params.preset={plan['preset']}",
        f"run_name={plan['track']}",
        f"paths.log_dir={_hydra_path(work.parent)}",
        f"paths.output_dir={_hydra_path(work)}",
        f"seed={plan['seed']}",
        "val_seed=null",
        "save_policy=false",
        f"model.batch_size={batch}",
        f"model.train_data_size={epoch}",
        "model.val_data_size=4",
        "model.val_batch_size=4",
        "model.num_augment=1",
        "model.lr_schedule=null",
        f"model.optimizer_kwargs.lr={plan['lr']}",
        "trainer.max_epochs=100000000",
        "++trainer.limit_val_batches=0",
        "trainer.enable_progress_bar=false",
        "++trainer.enable_model_summary=false",
        f"trainer.accelerator={options.accelerator}",
        "trainer.devices=1",
        f"trainer.precision={options.precision or 'null'}",
        "callbacks.model_checkpoint=null",
        "callbacks.latest_checkpoint=null",
        "+callbacks.campaign._target_=experiments.campaign.CampaignCallback",
        f"+callbacks.campaign.plan={_hydra_path(plan_file)}",
    ]
    if threads:
        overrides.append(f"num_threads={threads}")
    if plan["start"]["weights"]:
        overrides.append(f"init={_hydra_path(plan['start']['weights'])}")
    elif architecture:
        overrides += [f"model.policy.{k}={v}" for k, v in architecture.items()]
    return overrides


def _train_in_process(overrides: list[str], command: str) -> None:
    from hydra import compose, initialize_config_dir

    from clrp_rl4co.models.training import CONFIG_DIR, train

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("main", overrides)
    train(cfg, command=command)


def _start_meta(weights: Path | None) -> dict[str, Any]:
    """The start weights' JSON without class and config (their provenance)."""
    if weights is None:
        return {}
    meta = json.loads(weights.with_suffix(".json").read_text())
    return {k: v for k, v in meta.items() if k not in ("class", "config")}


def _cuda() -> bool:
    return torch.cuda.is_available()


def plan_session(options: RunOptions, session: str, t0: float) -> dict[str, Any]:
    """Every track's plan (written to ``<work>/<track>/plan.json``) and the shared schedule."""
    from clrp_rl4co.policies import PRETRAINED_DIR

    pretrained = Path(options.pretrained_dir or PRETRAINED_DIR)
    gpu = options.accelerator in ("gpu", "cuda") or (options.accelerator == "auto" and _cuda())
    concurrent = gpu if options.concurrent is None else options.concurrent
    if options.in_process and concurrent:
        raise ValueError("in_process: runs the tracks one after the other; drop --concurrent")
    startup = options.startup_s if options.startup_s is not None else (45.0 if gpu else 5.0)
    deadline = t0 + 60.0 * options.minutes - END_MARGIN_S
    window = deadline - time.time() - startup
    if window <= 0:
        raise ValueError(f"minutes: {options.minutes} leaves no training time after start-up")
    states = {}
    for preset in options.presets:
        state = load_state(preset, options.size, options.state_dir, pretrained, options.val_size)
        states[state.track] = state
    gaps = {t: relative_gap(s.value, paper_target(s.preset)) for t, s in states.items()}
    shares = minute_shares(gaps, options.floor if len(states) > 1 else 0.0)
    durations = (shared_durations if concurrent else sequential_durations)(shares, window)
    work = Path(options.work)
    plans = {}
    for track, state in states.items():
        weights = start_weights(state, options.state_dir, pretrained)
        stem = shipped_stem(state.preset, pretrained)
        exists = stem.with_suffix(".pt").is_file() and stem.with_suffix(".json").is_file()
        plans[track] = {
            "session": session,
            "track": track,
            "preset": state.preset,
            "size": state.size,
            "seed": TRAIN_SEED_BASE + len(state.sessions),
            "lr": learning_rate(state.instances),
            "command": options.command,
            "state_sessions": len(state.sessions),
            "validation": state.validation,
            "val_file": str(Path(options.state_dir) / state.validation["file"]),
            "val_batch": val_batch_size(state.preset),
            "val_every_s": options.val_every_s,
            "start": {
                "kind": state.resume,
                "weights": str(weights) if weights else None,
                "sha256": sha256_file(weights) if weights else None,
                "instances": state.instances,
                "value": state.value,
                "meta": _start_meta(weights),
            },
            "shipped": {
                "stem": str(stem),
                "weights": str(stem.with_suffix(".pt")),
                "exists": exists,
                "sha256": sha256_file(stem.with_suffix(".pt")) if exists else None,
            },
            "gap": gaps[track],
            "shares": shares,
            "train_seconds": durations[track],
            "deadline_unix": deadline,
            "processes": len(states) if concurrent else 1,
            "work_dir": str(work / track),
            "pack_dir": str(work / track / "pack"),
            "log_file": str(work / f"{track}.log"),
            "out_tar": str(Path(options.out) / f"{track}.tar"),
        }
        load_val_set(options.state_dir, state.validation)  # present, checksum as pinned
    return {
        "concurrent": concurrent,
        "deadline_unix": deadline,
        "window_s": window,
        "plans": plans,
        "states": states,
    }


def run(options: RunOptions) -> dict[str, Any]:
    """One campaign session (see the module docstring); returns what ``campaign.json`` says."""
    t0 = time.time()
    session = session_id()
    options.work = Path(options.work or REPO / "runs" / "campaign" / session)
    options.out = Path(options.out)
    if not options.dry_run:
        options.out.mkdir(parents=True, exist_ok=True)
    options.work.mkdir(parents=True, exist_ok=True)
    schedule = plan_session(options, session, t0)
    plans, states = schedule["plans"], schedule["states"]
    threads = options.threads
    if threads is None and schedule["concurrent"]:
        threads = max(1, (os.cpu_count() or 1) // len(plans))
    summary: dict[str, Any] = {
        "session": session,
        "command": options.command,
        "started_utc": utc_now(),
        "device": torch.cuda.get_device_name(0) if _cuda() else "cpu",
        "concurrent": schedule["concurrent"],
        "minutes": options.minutes,
        "window_s": round(schedule["window_s"], 1),
        "tracks": {},
    }
    for track, plan in plans.items():
        architecture = MODEL_SIZES[states[track].size]
        plan_file = Path(plan["work_dir"]) / "plan.json"
        plan_file.parent.mkdir(parents=True, exist_ok=True)
        overrides = run_overrides(plan_file, plan, options, architecture, threads)
        plan["run_command"] = shlex.join(["python", "run.py", *overrides])
        plan_file.write_text(json.dumps(plan, indent=2))
        summary["tracks"][track] = {
            "gap": plan["gap"],
            "share": plan["shares"][track],
            "train_seconds": round(plan["train_seconds"], 1),
            "start": plan["start"]["kind"],
            "instances": plan["start"]["instances"],
            "lr": plan["lr"],
            "overrides": overrides,
        }
    if options.dry_run:  # the plan only: shares, durations, starts (nothing in out)
        summary["out_problems"] = []
        _write_summary(options.work, summary)
        print((options.work / "campaign.json").read_text(), flush=True)
        return summary
    _write_summary(options.out, summary)
    order = sorted(plans, key=lambda t: -plans[t]["train_seconds"])
    if options.in_process:
        for track in order:
            overrides = summary["tracks"][track]["overrides"]
            print(f"[campaign] {track}: {plans[track]['train_seconds']:.0f} s", flush=True)
            _train_in_process(overrides, plans[track]["run_command"])
            summary["tracks"][track]["exit"] = 0
    else:
        _run_processes(plans, summary, schedule, options)
    summary["ended_utc"] = utc_now()
    summary["wall_seconds"] = round(time.time() - t0, 1)
    summary["out_problems"] = check_out(options.out)
    for track in plans:
        summary["tracks"][track]["result"] = archive_line(options.out / f"{track}.tar")
        print(f"[campaign] {track}: {summary['tracks'][track]['result']}", flush=True)
    _write_summary(options.out, summary)
    for problem in summary["out_problems"]:
        print(f"[campaign] $OUT limit: {problem}", flush=True)
    return summary


def archive_line(tar_path: Path) -> str:
    """One line on a track's archive: shipped model's and start's values, best validation,
    steps, instances, whether the session completed."""
    if not tar_path.is_file():
        return "no archive"
    with tarfile.open(tar_path) as tar:
        record = json.load(tar.extractfile("session.json"))
    points, best = record["points"], record["best"]
    start = f"{points[0]['value']:.4f}" if points else "n/a"
    shipped = record["shipped"]["value"]
    shipped_text = "n/a" if shipped is None else f"{shipped:.4f}"
    best_text = "none better"
    if best is not None:
        best_text = f"{best['value']:.4f} at step {best['step']} ({best['instances']:,} instances)"
    return (
        f"shipped {shipped_text}, start {start}, best {best_text}; {record['steps']} steps, "
        f"{len(points)} validations, {record['wall_seconds']:.0f} s, "
        + ("complete" if record["complete"] else "incomplete")
    )


def _write_summary(out: Path, summary: dict[str, Any]) -> None:
    tmp = out / "campaign.json.part"
    data = {k: v for k, v in summary.items()}
    data["tracks"] = {
        t: {k: v for k, v in info.items() if k != "overrides"}
        for t, info in summary["tracks"].items()
    }
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, out / "campaign.json")


def _run_processes(
    plans: dict[str, dict[str, Any]],
    summary: dict[str, Any],
    schedule: dict[str, Any],
    options: RunOptions,
) -> None:
    """``python run.py`` per track: all at once (concurrent) or one after the other; children
    still running past the deadline are stopped (terminate, then kill)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "HYDRA_FULL_ERROR": "1"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    waiting = sorted(plans, key=lambda t: -plans[t]["train_seconds"])
    running: dict[str, tuple[subprocess.Popen, Any]] = {}
    hard_stop = schedule["deadline_unix"] + END_MARGIN_S / 2
    while waiting or running:
        while waiting and (schedule["concurrent"] or not running):
            track = waiting.pop(0)
            overrides = summary["tracks"][track]["overrides"]
            log = Path(plans[track]["log_file"]).open("w")
            cmd = [sys.executable, str(REPO / "run.py"), *overrides]
            running[track] = (subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=log), log)
            print(
                f"[campaign] {track}: started ({plans[track]['train_seconds']:.0f} s)", flush=True
            )
        time.sleep(1.0)
        for track, (proc, log) in list(running.items()):
            if proc.poll() is not None:
                log.close()
                summary["tracks"][track]["exit"] = proc.returncode
                print(f"[campaign] {track}: exit {proc.returncode}", flush=True)
                del running[track]
        if time.time() > hard_stop:
            for proc, _ in running.values():
                proc.terminate()
            for track, (proc, log) in running.items():
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                log.close()
                summary["tracks"][track]["exit"] = f"stopped at the deadline ({proc.returncode})"
            running.clear()
            waiting.clear()
        _write_summary(Path(options.out), summary)


# --------------------------------------------------------------------------- apply
CURVE_COLUMNS = ("session", "kind", "step", "instances", "seconds", "value", "lr", "precision",
                 "hardware")  # fmt: skip


def read_curve(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def write_curve_png(state: TrackState, state_dir: Path) -> Path | None:
    """``curve.png`` of a track: validation objective against training instances, with the
    paper's figures as horizontal lines; None without points."""
    from clrp_rl4co.models.curves import plot_curves

    folder = Path(state_dir) / state.track
    rows = read_curve(folder / "curve.csv")
    if not rows:
        return None
    xs = [int(r["instances"]) for r in rows]
    ys = [float(r["value"]) for r in rows]
    label = f"validation x8, {state.validation['size']} instances, seed {CAMPAIGN_VAL_SEED}"
    return plot_curves(
        {label: (xs, ys)},
        folder / "curve.png",
        ylabel=f"{state.preset} objective (mean cost)",
        hlines=reference_lines(state.preset),
    )


def _extract(tar_path: Path, into: Path) -> dict[str, Any]:
    with tarfile.open(tar_path) as tar:
        for member in tar.getmembers():
            if not member.isfile() or Path(member.name).name != member.name:
                raise ValueError(f"{tar_path}: unexpected member {member.name!r}")
        tar.extractall(into, filter="data")
    if not (into / "session.json").is_file():
        raise ValueError(f"{tar_path}: no session.json in it")
    return json.loads((into / "session.json").read_text())


def _ship_provenance(session: dict[str, Any], state: TrackState) -> dict[str, Any]:
    """Provenance of a shipped campaign model: the start model's record, continued."""
    from clrp_rl4co.models.shipping import PAPER_TRAINING_INSTANCES

    start = session["start"].get("meta") or {}
    earlier = start.get("training") or []
    earlier = [earlier] if isinstance(earlier, str) else list(earlier)
    best = session["best"]
    minutes = float(start.get("wall_minutes") or 0.0) + best["seconds"] / 60
    return {
        "preset": session["preset"],
        "algorithm": "pomo",
        "seed": session["seed"],
        "init": f"{Path(session['start']['weights'] or 'fresh').stem} "
        f"({session['start']['kind']}, {session['start']['instances']} instances)",
        "training": [
            *earlier,
            f"{session['command']} (session {session['session']}) -> {session['run_command']}",
        ],  # fmt: skip
        "hardware": session["hardware"],
        "precision": session["precision"],
        "training_instances": best["instances"],
        "paper_training_instances": PAPER_TRAINING_INSTANCES,
        "wall_minutes": round(minutes, 2),
        "validation": {
            "metric": "mean cost",
            "value": best["value"],
            "decode": VAL_DECODE,
            "instances": state.validation["size"],
            "val_seed": state.validation["seed"],
            "checksum": state.validation["checksum"],
            "shipped_model_value": session["shipped"]["value"],
        },
        "campaign": {
            "session": session["session"],
            "state": str(Path("results/training/campaign") / state.track / "state.json"),
            "optimizer": "Adam, fresh at each session (weights-only resume)",
            "lr": session["lr"],
        },
    }


def apply_archive(
    tar_path: Path, state_dir: Path = CAMPAIGN_DIR, pretrained_dir: Path | None = None
) -> dict[str, Any]:
    """Bring one returned ``<track>.tar`` into the committed state: append its validation
    points to ``curve.csv`` (and redraw ``curve.png``); ship its candidate when it beat the
    shipped model in the session (and the shipped file is still the one measured), else keep
    it as ``resume.pt``; advance ``state.json``. A session already applied is skipped; one that
    did not start from the state as it is now is refused. Returns what was done."""
    from clrp_rl4co.models.shipping import ship_policy
    from clrp_rl4co.policies import PRETRAINED_DIR

    pretrained = Path(pretrained_dir or PRETRAINED_DIR)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        session = _extract(Path(tar_path), folder)
        val_size = int(session["validation"]["size"])
        state = load_state(session["preset"], session["size"], state_dir, pretrained, val_size)
        if state.validation != session["validation"]:
            raise ValueError(
                f"{tar_path}: validation: the session validated on {session['validation']}, "
                f"the state names {state.validation}"
            )
        done = {"track": state.track, "session": session["session"]}
        if any(s["session"] == session["session"] for s in state.sessions):
            return {**done, "action": "skipped: already applied"}
        if session["state_sessions"] != len(state.sessions):
            raise ValueError(
                f"{tar_path}: state_sessions: the session started from {session['state_sessions']}"
                f" applied sessions, {state_file(state_dir, state.track)} now has "
                f"{len(state.sessions)} (apply sessions in the order they ran)"
            )
        track_dir = Path(state_dir) / state.track
        track_dir.mkdir(parents=True, exist_ok=True)
        rows = read_curve(track_dir / "curve.csv")
        rows += [
            {"session": session["session"], "lr": session["lr"], "precision": session["precision"],
             "hardware": session["hardware"], **{k: p[k] for k in
                                                 ("kind", "step", "instances", "seconds", "value")}}
            for p in session["points"]
        ]  # fmt: skip
        with (track_dir / "curve.csv").open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=CURVE_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)

        best, shipped = session["best"], session["shipped"]
        candidate = folder / "weights.pt"
        action = "no validation improved on the start: resume unchanged"
        if best is not None and candidate.is_file():
            stem = shipped_stem(state.preset, pretrained)
            still = shipped["exists"] and stem.with_suffix(".pt").is_file() and (
                sha256_file(stem.with_suffix(".pt")) == shipped["sha256"])  # fmt: skip
            beats = shipped["value"] is None or best["value"] < shipped["value"]
            if beats and (still or not shipped["exists"]) and state.size in SHIPPABLE_SIZES:
                provenance = _ship_provenance(session, state)
                ship_policy(candidate, stem.name, provenance, pretrained, force=True)
                for suffix in (".pt", ".json"):
                    (track_dir / f"resume{suffix}").unlink(missing_ok=True)
                state.resume = "shipped" if state.size == "shipped" else "own"
                state.shipped_value = best["value"]
                bar = "none" if shipped["value"] is None else f"{shipped['value']:.4f}"
                action = f"shipped {stem.name} ({best['value']:.4f}; the shipped model's: {bar})"
                if state.resume == "own":  # another size: keep its weights to resume from
                    shutil.copy(candidate, track_dir / "resume.pt")
                    shutil.copy(folder / "weights.json", track_dir / "resume.json")
            else:
                shutil.copy(candidate, track_dir / "resume.pt")
                shutil.copy(folder / "weights.json", track_dir / "resume.json")
                state.resume = "own"
                if not beats:
                    why = f"not better than the shipped model's {shipped['value']:.4f}"
                elif state.size not in SHIPPABLE_SIZES:
                    why = f"a {state.size} model is never shipped"
                else:
                    why = "the shipped model changed since it was measured"
                action = f"kept as resume.pt ({best['value']:.4f}; {why})"
                if shipped["value"] is not None and still:
                    state.shipped_value = shipped["value"]
            state.instances = int(best["instances"])
            state.value = float(best["value"])
            state.value_source = f"campaign session {session['session']}"
        elif session["points"]:
            state.value = float(session["points"][0]["value"])
            state.value_source = f"campaign session {session['session']} (start)"
            if shipped["value"] is not None:
                state.shipped_value = shipped["value"]
        trained = int(session["instances_end"]) - int(session["start"]["instances"])
        state.trained_instances += trained
        state.training_minutes = round(state.training_minutes + session["wall_seconds"] / 60, 2)
        state.sessions.append(
            {
                "session": session["session"],
                "command": session["command"],
                "run_command": session["run_command"],
                "seed": session["seed"],
                "lr": session["lr"],
                "hardware": session["hardware"],
                "precision": session["precision"],
                "start": {k: session["start"][k] for k in ("kind", "instances", "value")},
                "shipped_value": shipped["value"],
                "best": best,
                "steps": session["steps"],
                "trained_instances": trained,
                "wall_seconds": session["wall_seconds"],
                "complete": session["complete"],
                "action": action,
                "applied_utc": utc_now(),
            }
        )
        save_state(state, state_dir)
        write_curve_png(state, state_dir)
        return {**done, "action": action, "complete": session["complete"]}


def apply(
    folder: str | Path, state_dir: Path = CAMPAIGN_DIR, pretrained_dir: Path | None = None
) -> list[dict[str, Any]]:
    """:func:`apply_archive` for every ``<track>.tar`` in ``folder`` (the files the device
    returned), in name order."""
    archives = sorted(Path(folder).glob("*.tar"))
    if not archives:
        raise FileNotFoundError(f"folder: no <track>.tar in {folder}")
    return [apply_archive(a, state_dir, pretrained_dir) for a in archives]


# --------------------------------------------------------------------------- status, wheels
def status(state_dir: Path = CAMPAIGN_DIR, size: str = "shipped") -> list[str]:
    """One line per track: instances, latest value, gap to the paper, sessions, resume."""
    lines = []
    for preset in PRESETS:
        path = state_file(state_dir, track_name(preset, size))
        if not path.is_file():
            lines.append(f"{track_name(preset, size)}: no state")
            continue
        s = TrackState.from_json(path.read_text())
        gap = relative_gap(s.value, paper_target(preset))
        value = "n/a" if s.value is None else f"{s.value:.4f}"
        gap_text = "n/a" if gap is None else f"{100 * gap:+.2f}%"
        lines.append(
            f"{s.track}: {s.instances:,} instances, value {value} ({s.value_source}), gap to "
            f"paper {gap_text}, {len(s.sessions)} sessions, resume from {s.resume}, "
            f"lr {learning_rate(s.instances):g}"
        )
    return lines


#: Python packages the GPU machine lacks (its image has torch, lightning, numpy, scipy,
#: matplotlib, ...; /work/.library/device/KINDS.md): carried as wheels for its Python 3.12, in
#: the versions installed here. antlr4-python3-runtime has no wheel on the index: built here.
DEVICE_WHEELS = ("rl4co", "tensordict", "torchrl", "hydra-core", "hydra-colorlog", "omegaconf",
                 "pyvers", "hoptorch", "colorlog", "robust-downloader", "pyrootutils",
                 "python-dotenv", "pyvrp", "vrplib", "highspy", "orjson",
                 "importlib_metadata")  # fmt: skip
SDIST_ONLY_WHEELS = ("antlr4-python3-runtime",)
DEVICE_PYTHON = "3.12"
DEVICE_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
                    "manylinux2014_x86_64", "manylinux1_x86_64")  # fmt: skip


def wheels(dest: Path = REPO / ".whl") -> list[Path]:
    """Download (``pip download``) the :data:`DEVICE_WHEELS` for the device's Python and build
    the :data:`SDIST_ONLY_WHEELS` into ``dest`` (git-ignored), pinned to the versions installed
    here; returns the wheel files."""
    from importlib.metadata import version

    dest.mkdir(parents=True, exist_ok=True)
    pins = [f"{name}=={version(name)}" for name in DEVICE_WHEELS]
    platforms = [arg for p in DEVICE_PLATFORMS for arg in ("--platform", p)]
    pip = [sys.executable, "-m", "pip"]
    subprocess.run([*pip, "download", "--no-deps", "--only-binary=:all:", "--python-version",
                    DEVICE_PYTHON, "--implementation", "cp", *platforms, "-d", str(dest), *pins],
                   check=True)  # fmt: skip
    built = [f"{name}=={version(name)}" for name in SDIST_ONLY_WHEELS]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(dest), *built], check=True)
    return sorted(dest.glob("*.whl"))


# --------------------------------------------------------------------------- command
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(
        prog="python -m experiments.campaign",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run", help="one campaign session (on the GPU machine)")
    r.add_argument("--minutes", type=float, required=True, help="wall minutes of the whole run")
    r.add_argument("--out", default=os.environ.get("OUT") or "runs/campaign-out",
                   help="archives and campaign.json (default: $OUT)")  # fmt: skip
    r.add_argument("--presets", nargs="+", default=list(PRESETS), choices=list(PRESET_SETTINGS))
    r.add_argument(
        "--size",
        default="shipped",
        choices=list(MODEL_SIZES),
        help="model size: shipped (128-d, 3 layers; default), paper (256-d, 6 layers)",
    )
    r.add_argument("--work", default=None, help="run folders and logs (default runs/campaign/ID)")
    r.add_argument(
        "--concurrent",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="all tracks at once (default on a GPU) or one after the other",
    )
    r.add_argument("--in-process", action="store_true", help="train in this process (tests)")
    r.add_argument("--val-every", type=float, default=50.0, help="seconds between validations")
    r.add_argument("--floor", type=float, default=0.1, help="least share of time per preset")
    r.add_argument("--accelerator", default="auto", help="Lightning accelerator (cpu, gpu, auto)")
    r.add_argument("--precision", default=None, help="default: training_precision's rule")
    r.add_argument("--threads", type=int, default=None, help="torch threads per process")
    r.add_argument("--batch-size", type=int, default=None, help="instead of the preset's")
    r.add_argument("--epoch-size", type=int, default=None, help="instead of the preset's")
    r.add_argument("--val-size", type=int, default=None, help="a new track's validation size")
    r.add_argument("--startup", type=float, default=None, help="seconds before training starts")
    r.add_argument("--dry-run", action="store_true", help="print the plan, train nothing")
    for name, help_text in (("--state-dir", "committed state"), ("--pretrained-dir", "models")):
        r.add_argument(name, default=None, help=help_text)
    a = sub.add_parser("apply", help="bring a returned folder into the committed state")
    a.add_argument("folder")
    a.add_argument("--state-dir", default=None)
    a.add_argument("--pretrained-dir", default=None)
    i = sub.add_parser("init", help="write missing state files and validation sets")
    i.add_argument("--presets", nargs="+", default=list(PRESETS), choices=list(PRESET_SETTINGS))
    i.add_argument("--size", default="shipped", choices=list(MODEL_SIZES))
    i.add_argument("--state-dir", default=None)
    s = sub.add_parser("status", help="where each preset stands")
    s.add_argument("--size", default="shipped", choices=list(MODEL_SIZES))
    s.add_argument("--state-dir", default=None)
    w = sub.add_parser("wheels", help="download the device's missing packages into .whl/")
    w.add_argument("--dest", default=str(REPO / ".whl"))
    args = p.parse_args(argv)
    state_dir = Path(args.state_dir) if getattr(args, "state_dir", None) else CAMPAIGN_DIR
    pretrained = getattr(args, "pretrained_dir", None)
    pretrained = Path(pretrained) if pretrained else None
    if args.verb == "run":
        options = RunOptions(
            minutes=args.minutes, out=Path(args.out), presets=tuple(args.presets), size=args.size,
            state_dir=state_dir, pretrained_dir=pretrained,
            work=Path(args.work) if args.work else None, concurrent=args.concurrent,
            in_process=args.in_process, val_every_s=args.val_every, floor=args.floor,
            accelerator=args.accelerator, precision=args.precision, threads=args.threads,
            batch_size=args.batch_size, epoch_size=args.epoch_size, val_size=args.val_size,
            startup_s=args.startup, dry_run=args.dry_run,
            command=shlex.join(["python", "-m", "experiments.campaign", *argv]),
        )  # fmt: skip
        summary = run(options)
        if options.dry_run:
            return 0
        failed = {t: i.get("exit") for t, i in summary["tracks"].items() if i.get("exit") != 0}
        print(json.dumps({"tracks": list(summary["tracks"]), "not clean": failed}), flush=True)
        return 1 if summary["out_problems"] or failed else 0
    if args.verb == "apply":
        for done in apply(args.folder, state_dir, pretrained):
            print(f"{done['track']} {done['session']}: {done['action']}")
        for line in status(state_dir):
            print(line)
        return 0
    if args.verb == "init":
        from clrp_rl4co.policies import PRETRAINED_DIR

        for preset in args.presets:
            path = state_file(state_dir, track_name(preset, args.size))
            if path.is_file():
                print(f"{path}: exists")
                continue
            state = init_state(preset, args.size, state_dir, PRETRAINED_DIR)
            print(f"{save_state(state, state_dir)}: written")
        return 0
    if args.verb == "status":
        print("\n".join(status(state_dir, args.size)))
        return 0
    files = wheels(Path(args.dest))
    size = sum(f.stat().st_size for f in files) / 2**20
    print(f"{len(files)} wheels, {size:.1f} MiB in {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
