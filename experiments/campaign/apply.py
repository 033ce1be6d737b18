"""Bring a session's archives into the committed state: curves, shipped models (only
improvements) and ``state.json``."""

from __future__ import annotations

import csv
import json
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from .settings import (
    CAMPAIGN_DIR,
    CAMPAIGN_VAL_SEED,
    SHIPPABLE_SIZES,
    VAL_DECODE,
    reference_lines,
    sha256_file,
    utc_now,
)
from .state import TrackState, load_state, save_state, shipped_stem, state_file

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
    """:func:`apply_archive` for every ``<track>.tar`` in ``folder`` (the output folder of a
    session), in name order."""
    archives = sorted(Path(folder).glob("*.tar"))
    if not archives:
        raise FileNotFoundError(f"folder: no <track>.tar in {folder}")
    return [apply_archive(a, state_dir, pretrained_dir) for a in archives]
