"""Hydra entry point in RL4CO's layout: ``python run.py env=clrp model=drlhq``.

Config tree: ``configs/`` (env, model, trainer, callbacks, logger, paths, experiment). Runs go
to ``runs/<date>/<time>/`` (Hydra's output dir) with ``checkpoints/``, ``csv/`` and, after
training, ``policy_best.pt`` + ``policy_best.json``.
"""

from __future__ import annotations

from pathlib import Path

import hydra
import lightning as L
import torch
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf


def _instantiate_dict(cfg: DictConfig | None) -> list:
    if not cfg:
        return []
    return [instantiate(c) for c in cfg.values() if c is not None and "_target_" in c]


def run(cfg: DictConfig) -> dict:
    """Train (and optionally test) the configured model; returns the trainer's metrics."""
    if cfg.get("num_threads"):
        torch.set_num_threads(int(cfg.num_threads))
    if cfg.get("seed") is not None:
        L.seed_everything(cfg.seed, workers=True)
    env = instantiate(cfg.env)
    model = instantiate(cfg.model, env=env, _recursive_=True, _convert_="partial")

    trainer_cfg = OmegaConf.to_container(cfg.trainer, resolve=True)
    if trainer_cfg.get("precision") is None:
        gpu = torch.cuda.is_available() and trainer_cfg.get("accelerator") in (
            "auto",
            "gpu",
            "cuda",
        )
        trainer_cfg["precision"] = "16-mixed" if gpu else "32-true"
    monitor = "val/max_reward" if "POMO" in cfg.model._target_ else "val/reward"
    callbacks = _instantiate_dict(cfg.get("callbacks"))
    for cb in callbacks:
        if isinstance(cb, L.pytorch.callbacks.ModelCheckpoint) and cb.monitor:
            cb.monitor = monitor
    trainer = instantiate(
        trainer_cfg, callbacks=callbacks, logger=_instantiate_dict(cfg.get("logger")) or False
    )

    ckpt_path = cfg.get("ckpt_path")
    if ckpt_path == "last":
        last = Path(trainer.default_root_dir) / "checkpoints" / "last.ckpt"
        ckpt_path = str(last) if last.is_file() else None
    if cfg.get("train", True):
        # RL4COTrainer.fit does not forward weights_only; checkpoints pickle env and policy
        L.Trainer.fit(trainer, model, ckpt_path=ckpt_path, weights_only=False)
    if cfg.get("test", False):
        trainer.test(model)
    if cfg.get("save_policy", True) and trainer.is_global_zero:
        out = Path(trainer.default_root_dir)
        best = next(
            (
                cb.best_model_path
                for cb in callbacks
                if isinstance(cb, L.pytorch.callbacks.ModelCheckpoint) and cb.best_model_path
            ),
            None,
        )
        if best:
            from clrp_rl4co.models import load_policy

            load_policy(best).save_pretrained(out / "policy_best", extra={"checkpoint": best})
        elif hasattr(model.policy, "save_pretrained"):
            model.policy.save_pretrained(out / "policy_last")
    return {k: float(v) for k, v in trainer.callback_metrics.items() if v.numel() == 1}


@hydra.main(version_base="1.3", config_path="configs", config_name="main")
def main(cfg: DictConfig) -> None:
    metrics = run(cfg)
    print(metrics)


if __name__ == "__main__":
    main()
