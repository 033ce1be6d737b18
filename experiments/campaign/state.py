"""A track's committed state (``results/training/campaign/<track>/state.json``), its validation
set and the weights its next session starts from."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tensordict import TensorDict

from .schedule import relative_gap
from .settings import (
    CAMPAIGN_DIR,
    CAMPAIGN_VAL_SEED,
    PRESET_SETTINGS,
    PRESETS,
    REPO,
    RESUME_KINDS,
    SHIPPED_NAME,
    VAL_DECODE,
    learning_rate,
    lr_schedule,
    paper_target,
    track_name,
)


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
    from ..published_sets import load_or_draw

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
    from clrp_rl4co.envs.clrp import instances_checksum

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
