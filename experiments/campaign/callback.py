"""The campaign's part of a training run: validate, keep the best weights, stop in time, and
write the track's archive after every validation."""

from __future__ import annotations

import io
import json
import math
import os
import tarfile
import time
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch import Callback, LightningModule, Trainer
from tensordict import TensorDict

from clrp_rl4co.reporting import provenance

from .settings import LOG_TAIL_BYTES, utc_now
from .validation import validate

#: Seconds a track stops before the deadline beyond 1.5 x its longest validation (the last
#: training step and the archive).
STOP_MARGIN_S = 5.0


def _hardware(device: torch.device, processes: int) -> str:
    shared = f", shared by {processes} campaign processes" if processes > 1 else ""
    return provenance.accelerator(device) + shared


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
