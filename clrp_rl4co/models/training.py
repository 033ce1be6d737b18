"""The one training implementation: a composed Hydra config in, a trained run folder out.

:func:`main` is the ``@hydra.main`` over :func:`train` on the repository's ``configs/``
(:data:`CONFIG_DIR`, which holds every setting); ``run.py`` calls it
(``python run.py experiment=... key=value ...``, RL4CO's layout). What :func:`train` does, in
order:

1. ``num_threads`` (``torch.set_num_threads``) and ``seed`` (``L.seed_everything``);
2. the env (``env``) and, with ``val_seed`` set, the fixed validation set ``val.npz`` of
   ``model.val_data_size`` instances in the run folder;
3. the model (``model``: :func:`clrp_rl4co.models.build_model`, algorithm ``model.algorithm``);
   ``init`` (a shipped name, ``.pt`` or ``.ckpt``) starts from that policy, whose architecture
   replaces ``model.policy``'s;
4. callbacks (``callbacks``; a checkpoint with ``monitor: auto`` selects on the algorithm's
   :func:`clrp_rl4co.models.monitor_metric`), loggers (``logger``) and the trainer
   (``trainer``; ``trainer.precision: null`` is :func:`training_precision`); ``compile``
   (null: :func:`training_compile`) compiles the decoder's step (:func:`compile_decoder`);
5. ``ckpt_path``: null starts fresh (refused if the run folder holds checkpoints), ``last``
   continues from the run folder's newest checkpoint (fresh if there is none), a path continues
   from that checkpoint; ``trainer.max_time`` counts over all parts;
6. fit, then (``test: true``) test the best checkpoint;
7. on rank 0: ``learning_curve.png`` and (``save_policy: true``) ``policy_best.pt/.json`` from
   the best checkpoint, with the run's provenance (:func:`.shipping.run_provenance`).

The run folder's files: :class:`clrp_rl4co.models.runs.RunFolder`.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hydra
import lightning as L
import torch
from hydra.utils import get_class, instantiate
from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO
from lightning.pytorch.callbacks import Callback, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger, Logger
from omegaconf import DictConfig, OmegaConf

from clrp_rl4co.policies import load_policy, unpickling
from clrp_rl4co.reporting import provenance

from .build import algorithm_of, fixed_dataset, monitor_metric
from .curves import plot_run
from .runs import RunFolder
from .shipping import run_provenance

#: The Hydra config tree: the repository's ``configs/`` (the package is installed editable).
CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"

#: ``monitor`` value of a checkpoint callback that selects on the algorithm's metric.
AUTO_MONITOR = "auto"

_GPU_ACCELERATORS = ("gpu", "cuda")


def _on_gpu(accelerator: str) -> bool:
    """Whether a run on Lightning's ``accelerator`` trains on a CUDA GPU (``gpu`` / ``cuda``, or
    ``auto`` with one available): the device the rules below decide by."""
    return accelerator in _GPU_ACCELERATORS or (accelerator == "auto" and torch.cuda.is_available())


log = logging.getLogger(__name__)


def training_precision(accelerator: str = "auto", precision: str | int | None = None) -> str:
    """Lightning precision of a run: ``precision`` if given; else ``32-true`` on CPU and, on a
    CUDA GPU (``accelerator`` ``gpu`` / ``cuda``, or ``auto`` with one available),
    ``bf16-mixed`` where the GPU supports bf16, ``16-mixed`` otherwise."""
    if precision is not None:
        return str(precision)
    if not _on_gpu(accelerator):
        return "32-true"
    return "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"


def training_matmul_precision(accelerator: str = "auto", given: str | None = None) -> str | None:
    """torch's float32 matmul precision for a run: ``given`` if set; ``"highest"`` on CPU (true
    fp32: RL4COTrainer's default ``"medium"`` lets oneDNN compute fp32 matmuls in bf16 on CPUs
    with AMX / AVX512-BF16); None on a GPU (RL4COTrainer's ``"medium"``, TF32 matmuls)."""
    if given is not None:
        return given
    return None if _on_gpu(accelerator) else "highest"


def training_compile(accelerator: str = "auto", given: bool | None = None) -> bool:
    """Whether a run compiles its decoder's step (:func:`compile_decoder`): ``given`` if set;
    else on the CPU where a C++ compiler is found (torch's inductor builds its CPU kernels with
    the one ``CXX`` names, else ``g++``; ``clang++`` on macOS; none on Windows), and not on a GPU,
    where it has not been measured. On one CPU thread the compiled step trained 1.18x / 1.14x /
    1.04x the POMO instances per CPU second of the eager one at clrp20 / 50 / 100
    (``benchmarks/pomo_step.py --compile-decoder``), with the same rollouts and gradients up to
    float rounding."""
    if given is not None:
        return bool(given)
    if _on_gpu(accelerator) or sys.platform == "win32":
        return False
    default = "clang++" if sys.platform == "darwin" else "g++"
    return shutil.which(os.environ.get("CXX") or default) is not None


def compile_decoder(policy: torch.nn.Module) -> torch.nn.Module:
    """``policy`` with its decoder's step compiled in place (``nn.Module.compile``, static
    shapes: one graph per batch shape, a rollout's replayed at each of its actions, forward and
    backward), its ``state_dict`` and its pickling unchanged. Inductor compiles in this process on
    one thread, so that a one-thread run's CPU time holds its compilation; a step that fails to
    compile runs eagerly (torch logs why) instead of stopping the run.

    Args:
        policy: an RL4CO constructive policy with a ``decoder`` module.

    Returns:
        ``policy`` itself.
    """
    import torch._dynamo.config as dynamo_config
    import torch._inductor.config as inductor_config

    inductor_config.compile_threads = 1
    dynamo_config.suppress_errors = True
    policy.decoder.compile(dynamic=False)
    return policy


@dataclass
class TrainResult:
    """What :func:`train` leaves: the run folder, the final scalar metrics, the checkpoint it
    resumed from (None for a fresh start), the best checkpoint and ``policy_best.pt`` (None on
    ranks other than 0, or when nothing was saved)."""

    run: RunFolder
    metrics: dict[str, float]
    resumed_from: Path | None
    best_checkpoint: Path | None
    policy_best: Path | None


def resume_checkpoint(ckpt_path: str | None, run: RunFolder) -> Path | None:
    """The checkpoint a run continues from: None (fresh), ``"last"`` (the run folder's newest
    checkpoint; None if it has none) or a checkpoint file."""
    if ckpt_path is None:
        return None
    if ckpt_path == "last":
        return run.newest_checkpoint()
    path = Path(ckpt_path)
    if not path.is_file():
        raise FileNotFoundError(f"ckpt_path: {ckpt_path!r} is no file (or use ckpt_path=last)")
    return path


class MovedClassesCheckpointIO(TorchCheckpointIO):
    """Lightning's checkpoint reader, but a resumed checkpoint (read with
    ``weights_only=False``: it pickles env and policy) finds the classes that moved since it
    was written at their home (:mod:`clrp_rl4co.policies.unpickling`)."""

    def load_checkpoint(
        self, path, map_location=lambda storage, loc: storage, weights_only: bool | None = None
    ):
        if weights_only is not False:
            return super().load_checkpoint(path, map_location, weights_only)
        if not Path(path).is_file():
            raise FileNotFoundError(f"Checkpoint file not found: {path}")
        return torch.load(
            path, map_location=map_location, weights_only=False, pickle_module=unpickling
        )


def _instantiate_group(group: DictConfig | None) -> dict[str, Any]:
    """Instantiate every entry with a ``_target_`` of a callbacks / logger group."""
    if not group:
        return {}
    return {k: instantiate(v) for k, v in group.items() if v is not None and "_target_" in v}


def _policy(cfg: DictConfig) -> torch.nn.Module | None:
    """The ``init`` policy (None without ``init``), checked against ``model.policy``."""
    if not cfg.get("init"):
        return None
    policy = load_policy(cfg.init)
    expected = get_class(cfg.model.policy._target_)
    if type(policy) is not expected:
        raise ValueError(
            f"init: {cfg.init} holds a {type(policy).__name__}, but the model config builds a "
            f"{expected.__name__} (choose the matching model=...)"
        )
    return policy


def _check_layout(run: RunFolder, callbacks: list[Callback], loggers: list[Logger]) -> None:
    for cb in callbacks:
        if isinstance(cb, ModelCheckpoint) and Path(cb.dirpath or "").resolve() != run.checkpoints:
            raise ValueError(
                f"callbacks: a ModelCheckpoint writes to {cb.dirpath}; run folders keep "
                f"checkpoints in {run.checkpoints} (resume and shipping look there)"
            )
    for lg in loggers:
        if isinstance(lg, CSVLogger) and Path(lg.log_dir).resolve() != run.csv_dir:
            raise ValueError(
                f"logger: a CSVLogger writes to {lg.log_dir}; run folders keep it in "
                f"{run.csv_dir} (learning curves read it there)"
            )


def _trainer_config(cfg: DictConfig) -> dict:
    """``cfg.trainer`` as a dict with the run's precision and float32 matmul precision
    (:func:`training_precision`, :func:`training_matmul_precision`)."""
    trainer_cfg = OmegaConf.to_container(cfg.trainer, resolve=True)
    accelerator = str(trainer_cfg.get("accelerator", "auto"))
    trainer_cfg["precision"] = training_precision(accelerator, trainer_cfg.get("precision"))
    matmul = training_matmul_precision(accelerator, trainer_cfg.get("matmul_precision"))
    if matmul is not None:
        trainer_cfg["matmul_precision"] = matmul
    return trainer_cfg


def _open_run_folder(
    cfg, run, trainer, trainer_cfg, loggers, resumed_from, command, compiled
) -> None:
    """Rank 0: refuse a folder holding an earlier run (unless resuming), drop a crashed run's
    log, write the config and record this invocation's provenance (``compiled``: whether the
    decoder's step is compiled, :func:`training_compile`)."""
    if cfg.get("train", True) and resumed_from is None and run.checkpoint_files():
        raise ValueError(
            f"{run.path} holds checkpoints of an earlier run: continue it with "
            f"ckpt_path=last, or start another with run_name=<new name>"
        )
    if resumed_from is None:  # a crashed run's log without checkpoints is not continued
        for lg in loggers:
            if isinstance(lg, CSVLogger):
                Path(lg.log_dir, "metrics.csv").unlink(missing_ok=True)
    run.path.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(cfg, run.config_file, resolve=True)
    run.record_invocation(
        {
            "command": command,
            "started_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "commit": provenance.git_commit(),
            "uncommitted_changes": provenance.uncommitted_changes(),
            "resumed_from": str(resumed_from) if resumed_from else None,
            "hardware": provenance.accelerator(trainer.strategy.root_device, trainer.world_size),
            "precision": str(trainer_cfg["precision"]),
            "compiled_decoder": compiled,
            "world_size": trainer.world_size,
        }
    )
    log.info("run folder %s%s", run.path, f", resuming from {resumed_from}" if resumed_from else "")


def train(cfg: DictConfig, command: str | None = None) -> TrainResult:
    """Train as ``cfg`` (the composed ``configs/main.yaml``) says; see the module docstring.

    ``command``: the exact command line of this invocation, recorded in ``provenance.json``.
    Every DDP process runs this function; files are written by rank 0 only."""
    if cfg.get("num_threads"):
        torch.set_num_threads(int(cfg.num_threads))
    if cfg.get("seed") is not None:
        L.seed_everything(int(cfg.seed), workers=True)
    run = RunFolder(Path(cfg.paths.output_dir).resolve())

    env = instantiate(cfg.env)
    if cfg.get("val_seed") is not None:
        fixed_dataset(env, int(cfg.model.val_data_size), int(cfg.val_seed), run.val_set)
        env.val_file = str(run.val_set.resolve())
    init = _policy(cfg)
    extra = {"policy": init} if init is not None else {}
    model = instantiate(cfg.model, env=env, _convert_="all", **extra)
    algorithm = algorithm_of(model)
    trainer_cfg = _trainer_config(cfg)
    compiled = training_compile(str(trainer_cfg.get("accelerator", "auto")), cfg.get("compile"))
    if compiled:
        compile_decoder(model.policy)

    callbacks = list(_instantiate_group(cfg.get("callbacks")).values())
    for cb in callbacks:
        if isinstance(cb, ModelCheckpoint) and cb.monitor == AUTO_MONITOR:
            cb.monitor = monitor_metric(algorithm)
    loggers = list(_instantiate_group(cfg.get("logger")).values())
    _check_layout(run, callbacks, loggers)
    trainer = instantiate(
        trainer_cfg,
        callbacks=callbacks,
        logger=loggers or False,
        plugins=[MovedClassesCheckpointIO()],
        _convert_="all",
    )

    resumed_from = resume_checkpoint(cfg.get("ckpt_path"), run)
    if trainer.is_global_zero:
        _open_run_folder(cfg, run, trainer, trainer_cfg, loggers, resumed_from, command, compiled)

    if cfg.get("train", True):
        # RL4COTrainer.fit does not forward weights_only; checkpoints pickle env and policy
        L.Trainer.fit(trainer, model, ckpt_path=resumed_from, weights_only=False)
    best = _best_checkpoint(callbacks, run)
    if cfg.get("test", False):
        trainer.test(model, ckpt_path=best, weights_only=False)
    metrics = {k: float(v) for k, v in trainer.callback_metrics.items() if v.numel() == 1}
    if not trainer.is_global_zero:
        return TrainResult(run, metrics, resumed_from, best, None)

    if plot_run(run.metrics, run.learning_curve):
        log.info("learning curve: %s", run.learning_curve)
    policy_best = None
    if cfg.get("save_policy", True) and best is not None:
        policy_best, _ = load_policy(best).save_pretrained(
            run.policy_best, extra=run_provenance(run, best)
        )
        log.info("best checkpoint %s -> %s", best, policy_best)
    return TrainResult(run, metrics, resumed_from, best, policy_best)


def _best_checkpoint(callbacks: list[Callback], run: RunFolder) -> Path | None:
    """The monitored checkpoint callback's best checkpoint, else the run's ``best.ckpt`` /
    ``last.ckpt``."""
    for cb in callbacks:
        if isinstance(cb, ModelCheckpoint) and cb.monitor and cb.best_model_path:
            return Path(cb.best_model_path)
    return run.best_checkpoint()


def _command_line() -> str:
    """This process's command line as a user types it (``python run.py ...``)."""
    script = Path(sys.argv[0]).name
    return provenance.command_line(prog=None if script == "run.py" else f"python -m {__name__}")


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="main")
def main(cfg: DictConfig) -> None:
    """``python run.py key=value ...``: :func:`train` on the composed ``configs/main.yaml``."""
    result = train(cfg, command=_command_line())
    if result.policy_best is not None:
        print({k: round(v, 4) for k, v in sorted(result.metrics.items())}, flush=True)


if __name__ == "__main__":
    main()
