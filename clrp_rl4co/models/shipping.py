"""Shipping a training run's policy as a pretrained model of the package.

    python -m clrp_rl4co.models.shipping runs/drlhq_clrp50 drlhq_clrp50_mine

writes ``clrp_rl4co/pretrained/<name>.pt`` (the policy ``state_dict``, loadable with
``weights_only=True``) and ``<name>.json`` (class, constructor config and the run's provenance,
:func:`run_provenance`: the exact training commands, seed, commit, hardware, steps, training
instances, wall minutes and the validation score the checkpoint was selected on). The run's
``policy_best.json`` records the same provenance.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from omegaconf import OmegaConf

from clrp_rl4co.policies import PRETRAINED_DIR, load_policy

from .curves import ProgressLog
from .runs import RunFolder

#: Largest shipped ``.pt`` (MB).
MAX_SHIPPED_MB = 20.0

#: Training instances of the paper's models (1,000 epochs x 10,000), for comparison.
PAPER_TRAINING_INSTANCES = 10_000_000


def _validation(checkpoint: dict, config: Any) -> dict[str, Any]:
    """The score of the monitored checkpoint callback at the checkpoint's last validation."""
    for key, state in checkpoint.get("callbacks", {}).items():
        if str(key).startswith(ModelCheckpoint.__name__) and state.get("monitor"):
            score = state.get("current_score")
            return {
                "metric": state["monitor"],
                "value": None if score is None else float(score),
                "instances": int(config.model.val_data_size),
                "val_seed": config.get("val_seed"),
                "augment": int(config.model.get("num_augment", 1)),
            }
    return {}


def run_provenance(run: RunFolder, checkpoint: str | Path) -> dict[str, Any]:
    """What a policy saved from ``checkpoint`` of ``run`` records next to its config: preset,
    algorithm, seed, ``init``, the exact commands of every invocation (``training``), commits,
    hardware, epoch, global step, training instances (batch x processes x steps, from the
    checkpoint), training wall minutes (validation included, over all resumed parts) and the
    validation score (``validation``: metric, value, instances, seed, augmentation); for
    imitation the expert data's config (``expert_data``, None otherwise)."""
    config = run.config()
    ckpt = torch.load(checkpoint, map_location="cpu", weights_only=False)
    progress = ProgressLog.from_checkpoint(ckpt) or {}
    invocations = run.invocations()
    seconds = progress.get("seconds")
    return {
        "preset": str(config.env.generator_params.preset),
        "algorithm": str(config.model.algorithm),
        "seed": config.get("seed"),
        "init": config.get("init"),
        "training": [r["command"] for r in invocations],
        "commits": sorted({str(r["commit"]) for r in invocations if r.get("commit")}),
        "hardware": sorted({r["hardware"] for r in invocations}),
        "precision": sorted({r["precision"] for r in invocations}),
        "checkpoint": str(checkpoint),
        "epoch": int(ckpt["epoch"]),
        "global_step": int(ckpt["global_step"]),
        "training_instances": progress.get("instances"),
        "paper_training_instances": PAPER_TRAINING_INSTANCES,
        "wall_minutes": None if seconds is None else round(seconds / 60, 2),
        "validation": _validation(ckpt, config),
        # imitation: where its expert data came from (model.dataset of the config)
        "expert_data": (
            OmegaConf.to_container(config.model.dataset, resolve=True)
            if "dataset" in config.model
            else None
        ),
    }


def ship_run(
    run_dir: str | Path,
    name: str,
    checkpoint: str | Path | None = None,
    dest: str | Path = PRETRAINED_DIR,
    hardware: str | None = None,
    note: str | None = None,
    force: bool = False,
) -> Path:
    """Ship ``checkpoint`` (default: the run's ``best.ckpt``, else ``last.ckpt``) of the run in
    ``run_dir`` as ``<dest>/<name>.pt`` + ``.json`` with :func:`run_provenance`; ``hardware``
    (a description replacing the detected one) and ``note`` are added. Returns the ``.pt``."""
    run = RunFolder(Path(run_dir))
    ckpt = Path(checkpoint) if checkpoint else run.best_checkpoint()
    if ckpt is None or not ckpt.is_file():
        raise FileNotFoundError(f"checkpoint: none at {checkpoint or run.checkpoints}")
    _check_name(name, dest, force)
    extra = run_provenance(run, ckpt)
    if hardware:
        extra["hardware"] = hardware
    if note:
        extra["note"] = note
    return ship_policy(ckpt, name, extra, dest, force)


def _check_name(name: str, dest: str | Path, force: bool) -> Path:
    """``<dest>/<name>`` after checking that ``name`` is a bare stem and, unless ``force``, that
    no model of that name exists."""
    if not name or Path(name).name != name or name.endswith((".pt", ".json")):
        raise ValueError(f"name: {name!r} must be a bare file stem such as drlhq_clrp50_mine")
    stem = Path(dest) / name
    if not force and (stem.with_suffix(".pt").exists() or stem.with_suffix(".json").exists()):
        raise FileExistsError(f"name: {stem}.pt/.json exists (pass force=True / --force)")
    return stem


def ship_policy(
    source: str | Path,
    name: str,
    provenance: dict[str, Any],
    dest: str | Path = PRETRAINED_DIR,
    force: bool = False,
) -> Path:
    """Ship the policy saved at ``source`` (a Lightning ``.ckpt``, or a saved ``.pt`` + ``.json``
    such as a training campaign's weights) as ``<dest>/<name>.pt`` + ``.json``, the JSON holding
    ``provenance`` next to the class and config. Refused over :data:`MAX_SHIPPED_MB`, or when
    the name exists and not ``force``. Returns the ``.pt``."""
    stem = _check_name(name, dest, force)
    weights, meta = load_policy(source).save_pretrained(stem, extra=provenance)
    size = weights.stat().st_size / 2**20
    if size > MAX_SHIPPED_MB:
        weights.unlink()
        meta.unlink()
        raise ValueError(f"{weights}: {size:.1f} MB is over the {MAX_SHIPPED_MB:g} MB limit")
    return weights


def main(argv: Sequence[str] | None = None) -> Path:
    p = argparse.ArgumentParser(
        prog="python -m clrp_rl4co.models.shipping",
        description="Ship a training run's best policy as a pretrained model.",
    )
    p.add_argument("run", help="run folder (runs/<run_name>)")
    p.add_argument("name", help="shipped name, e.g. drlhq_clrp50_mine (<model>_<preset>...)")
    p.add_argument("--checkpoint", default=None, help="default: the run's best.ckpt")
    p.add_argument("--hardware", default=None, help="default: detected at training time")
    p.add_argument("--note", default=None)
    p.add_argument("--dest", default=str(PRETRAINED_DIR), help="default: the package's models")
    p.add_argument("--force", action="store_true", help="replace an existing model")
    args = p.parse_args(argv)
    weights = ship_run(
        args.run, args.name, args.checkpoint, args.dest, args.hardware, args.note, args.force
    )
    size = weights.stat().st_size / 2**20
    print(f"shipped {weights} ({size:.1f} MB) and {weights.with_suffix('.json')}")
    return weights


if __name__ == "__main__":
    main()
