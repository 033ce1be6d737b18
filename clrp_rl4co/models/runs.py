"""The layout of a training run folder (``paths.output_dir``, ``runs/<run_name>/`` by default).

Written by :func:`clrp_rl4co.models.training.train`, read by shipping
(:mod:`clrp_rl4co.models.shipping`) and the learning curves (:mod:`clrp_rl4co.models.curves`):

- ``checkpoints/``: ``best.ckpt`` (best validation reward), ``last.ckpt``, ``latest.ckpt``
  (every ``callbacks.latest_checkpoint.every_n_train_steps`` training steps);
- ``csv/metrics.csv``: Lightning's CSV log, kept across resumed parts;
- ``val.npz``: the fixed validation set (``val_seed``);
- ``config.yaml``: the resolved config of the latest invocation;
- ``provenance.json``: one record per invocation (exact command, start time, commit, hardware,
  precision, world size, the checkpoint it resumed from);
- ``learning_curve.png`` and ``policy_best.pt`` + ``policy_best.json`` after training.

``configs/callbacks/default.yaml`` and ``configs/logger/csv.yaml`` name the same folders;
training refuses a config whose checkpoints or CSV log would land elsewhere.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf


@dataclass(frozen=True)
class RunFolder:
    """Paths of one training run folder (see the module docstring)."""

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

    @property
    def checkpoints(self) -> Path:
        return self.path / "checkpoints"

    @property
    def csv_dir(self) -> Path:
        return self.path / "csv"

    @property
    def metrics(self) -> Path:
        return self.csv_dir / "metrics.csv"

    @property
    def val_set(self) -> Path:
        return self.path / "val.npz"

    @property
    def config_file(self) -> Path:
        return self.path / "config.yaml"

    @property
    def provenance_file(self) -> Path:
        return self.path / "provenance.json"

    @property
    def learning_curve(self) -> Path:
        return self.path / "learning_curve.png"

    @property
    def policy_best(self) -> Path:
        """Stem of ``policy_best.pt`` / ``policy_best.json``."""
        return self.path / "policy_best"

    def checkpoint_files(self) -> list[Path]:
        return sorted(self.checkpoints.glob("*.ckpt")) if self.checkpoints.is_dir() else []

    def newest_checkpoint(self) -> Path | None:
        """The most recently written checkpoint (``last.ckpt`` after a validation,
        ``latest.ckpt`` between validations), or None."""
        files = self.checkpoint_files()
        return max(files, key=lambda p: p.stat().st_mtime_ns) if files else None

    def best_checkpoint(self) -> Path | None:
        """``best.ckpt`` (best validation reward), else ``last.ckpt``, else None."""
        for name in ("best.ckpt", "last.ckpt"):
            if (self.checkpoints / name).is_file():
                return self.checkpoints / name
        return None

    def config(self) -> DictConfig:
        """The resolved config of the run's latest invocation."""
        if not self.config_file.is_file():
            raise FileNotFoundError(f"{self.path}: no config.yaml; not a training run folder")
        return OmegaConf.load(self.config_file)

    def invocations(self) -> list[dict[str, Any]]:
        """The run's invocation records, oldest first (``[]`` if none)."""
        if not self.provenance_file.is_file():
            return []
        return json.loads(self.provenance_file.read_text())["invocations"]

    def record_invocation(self, record: dict[str, Any]) -> None:
        """Append one invocation record to ``provenance.json``."""
        records = [*self.invocations(), record]
        self.path.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"invocations": records}, indent=2) + "\n"
        self.provenance_file.write_text(text)

    def instances_per_step(self) -> int:
        """Training instances per optimiser step: ``model.batch_size`` x the world size (DDP
        processes) of the latest invocation."""
        batch = int(self.config().model.batch_size)
        world = max((int(r.get("world_size", 1)) for r in self.invocations()[-1:]), default=1)
        return batch * world
