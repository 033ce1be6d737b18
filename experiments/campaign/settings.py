"""What a campaign is made of: its presets, model sizes, seeds, validation decode, learning-rate
schedule and the names of its tracks."""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

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

#: Bytes of a track's training log kept in its archive (the end of it).
LOG_TAIL_BYTES = 200_000


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def session_id() -> str:
    """A session's name: its UTC start, e.g. ``20261127T101500Z``."""
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")


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
    from ..headline import PAPER

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
