"""Train DRLHQ (or POMO* / MTA*) on the CLRP with RL4CO's POMO and RL4COTrainer.

Example (CPU, small model, resumable, cut after two hours)::

    python examples/train.py --preset clrp20 --model drlhq --embed-dim 128 --layers 3 \
        --heads 8 --ff 512 --batch-size 64 --epochs 100 --train-size 6400 \
        --out runs/drlhq_clrp20 --max-time 120 --resume

Outputs in ``--out``: ``checkpoints/`` (``best.ckpt`` by validation reward, ``last.ckpt``,
``latest.ckpt`` every ``--ckpt-every`` steps), ``val.npz`` (the fixed validation set),
``csv/metrics.csv`` (Lightning's CSV logger), ``learning_curve.png``, ``policy_best.pt`` +
``policy_best.json`` (the best policy, loadable with ``DRLHQPolicy.from_pretrained``) and
``config.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import timedelta
from pathlib import Path

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from rl4co.utils.trainer import RL4COTrainer

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.models import (
    PolicyConfigCallback,
    build_model,
    build_policy,
    fixed_dataset,
    monitor_metric,
    paper_lr_schedule,
)
from clrp_rl4co.policies import POLICIES


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--preset", default="clrp20", help="clrp10 ... clrp100 (generator preset)")
    p.add_argument("--model", default="drlhq", choices=list(POLICIES))
    p.add_argument("--algorithm", default="pomo", choices=["pomo", "reinforce"])
    p.add_argument("--embed-dim", type=int, default=256)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--ff", type=int, default=512)
    p.add_argument("--epochs", type=int, default=1000)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--train-size", type=int, default=10_000, help="instances per epoch")
    p.add_argument("--val-size", type=int, default=1000, help="fixed validation instances")
    p.add_argument("--val-batch-size", type=int, default=None)
    p.add_argument("--val-seed", type=int, default=1234)
    p.add_argument("--val-augment", type=int, default=1, help="1 or 8 (POMO x8 at validation)")
    p.add_argument("--augment", default="dihedral8", choices=["dihedral8", "rotate45"])
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--weight-decay", type=float, default=1e-6)
    p.add_argument("--lr-decay-at", type=float, default=0.7, help="x0.1 after this epoch share")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--accelerator", default="auto")
    p.add_argument("--devices", default="1", help="int, list (0,1) or auto")
    p.add_argument("--strategy", default="auto", help="auto, ddp, ddp_spawn, ...")
    p.add_argument("--precision", default=None, help="default: 32-true on CPU, 16-mixed on GPU")
    p.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    p.add_argument("--max-time", type=float, default=None, help="minutes; stops cleanly")
    p.add_argument("--max-steps", type=int, default=-1)
    p.add_argument("--resume", action="store_true", help="resume from the newest checkpoint")
    p.add_argument(
        "--init",
        default=None,
        help="start from this policy's weights (shipped name, .pt or .ckpt; e.g. fine-tune the "
        "clrp20 model on clrp50); its architecture replaces --embed-dim/--layers/--heads/--ff",
    )
    p.add_argument("--ckpt-every", type=int, default=50, help="train steps between latest.ckpt")
    p.add_argument("--out", default=None, help="run folder (default runs/<model>_<preset>)")
    p.add_argument("--no-progress-bar", action="store_true")
    return p.parse_args(argv)


def _devices(value: str):
    if value == "auto":
        return "auto"
    if "," in value:
        return [int(v) for v in value.split(",") if v]
    return int(value)


class EpochLog(Callback):
    """One line per validation: epoch, step, elapsed minutes, validation / train reward."""

    def __init__(self):
        self.start = time.time()

    def on_validation_epoch_end(self, trainer, pl_module):
        if trainer.sanity_checking or not trainer.is_global_zero:
            return
        m = {k: float(v) for k, v in trainer.callback_metrics.items() if v.numel() == 1}
        parts = " ".join(f"{k}={v:.4f}" for k, v in sorted(m.items()))
        minutes = (time.time() - start_time(self)) / 60
        print(
            f"[epoch {trainer.current_epoch} step {trainer.global_step} {minutes:.1f} min] {parts}",
            flush=True,
        )


def start_time(cb: EpochLog) -> float:
    return cb.start


def newest_checkpoint(ckpt_dir: Path) -> Path | None:
    files = [p for p in (ckpt_dir / "last.ckpt", ckpt_dir / "latest.ckpt") if p.is_file()]
    return max(files, key=lambda p: p.stat().st_mtime) if files else None


def keep_earlier_metrics(csv_dir: Path) -> Path | None:
    """Lightning's CSVLogger overwrites ``metrics.csv`` when a run resumes: move the earlier
    part to ``metrics_part<k>.csv`` first (the learning curve reads all parts)."""
    current = csv_dir / "metrics.csv"
    if not current.is_file():
        return None
    k = 1
    while (csv_dir / f"metrics_part{k}.csv").exists():
        k += 1
    return current.rename(csv_dir / f"metrics_part{k}.csv")


def plot_learning_curve(metrics_csv: Path, png: Path) -> bool:
    """Validation and training reward (negative cost) against the training step, over
    ``metrics.csv`` and the ``metrics_part<k>.csv`` of earlier parts of a resumed run."""
    import csv

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parts = sorted(metrics_csv.parent.glob("metrics_part*.csv"))
    files = [f for f in (*parts, metrics_csv) if f.is_file()]
    if not files:
        return False
    rows = [row for f in files for row in csv.DictReader(f.open())]
    series: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        for key in ("val/reward", "val/max_reward", "val/max_aug_reward", "train/reward"):
            if row.get(key):
                series.setdefault(key, []).append((int(row["step"]), -float(row[key])))
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    for key, points in series.items():
        steps, costs = zip(*sorted(points))
        ax.plot(steps, costs, label=key.replace("reward", "cost"), lw=1.2)
    ax.set_xlabel("training step")
    ax.set_ylabel("objective (cost)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)
    return True


def main(argv: list[str] | None = None) -> Path:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    L.seed_everything(args.seed, workers=True)
    out = Path(args.out or f"runs/{args.model}_{args.preset}")
    ckpt_dir = out / "checkpoints"
    out.mkdir(parents=True, exist_ok=True)

    cuda = torch.cuda.is_available() and args.accelerator in ("auto", "gpu", "cuda")
    precision = args.precision or ("16-mixed" if cuda else "32-true")

    env = CLRPEnv(generator_params={"preset": args.preset}, check_actions=False)
    fixed_dataset(env, args.val_size, args.val_seed, out / "val.npz")
    env.val_file = str((out / "val.npz").resolve())

    policy_config = dict(
        model=args.model,
        embed_dim=args.embed_dim,
        num_encoder_layers=args.layers,
        num_heads=args.heads,
        feedforward_hidden=args.ff,
    )
    if args.init:
        from clrp_rl4co.models import load_policy

        policy = load_policy(args.init)
        if not isinstance(policy, POLICIES[args.model]):
            raise SystemExit(f"--init: {args.init} holds a {type(policy).__name__}, not --model "
                             f"{args.model}")  # fmt: skip
        cfg = policy.config
        args.embed_dim, args.layers = cfg["embed_dim"], cfg["num_encoder_layers"]
        args.heads, args.ff = cfg["num_heads"], cfg["feedforward_hidden"]
    else:
        policy = build_policy(**policy_config)
    model = build_model(
        env,
        policy,
        algorithm=args.algorithm,
        num_augment=args.val_augment,
        augment=args.augment,
        batch_size=args.batch_size,
        val_batch_size=args.val_batch_size or args.batch_size,
        train_data_size=args.train_size,
        val_data_size=args.val_size,
        test_data_size=args.val_size,
        optimizer_kwargs={"lr": args.lr, "weight_decay": args.weight_decay},
        **paper_lr_schedule(args.epochs, args.lr_decay_at),
    )
    (out / "config.json").write_text(json.dumps({**vars(args), "precision": precision}, indent=2))

    monitor = monitor_metric(args.algorithm)
    best = ModelCheckpoint(
        dirpath=ckpt_dir,
        filename="best",
        monitor=monitor,
        mode="max",
        save_top_k=1,
        save_last=True,
        auto_insert_metric_name=False,
    )
    latest = ModelCheckpoint(
        dirpath=ckpt_dir,
        filename="latest",
        every_n_train_steps=args.ckpt_every,
        save_top_k=1,
        enable_version_counter=False,
    )
    trainer = RL4COTrainer(
        max_epochs=args.epochs,
        max_steps=args.max_steps,
        max_time=timedelta(minutes=args.max_time) if args.max_time else None,
        accelerator=args.accelerator,
        devices=_devices(args.devices),
        strategy=args.strategy,
        precision=precision,
        logger=CSVLogger(str(out), name="csv", version=""),
        callbacks=[best, latest, EpochLog(), PolicyConfigCallback()],
        enable_progress_bar=not args.no_progress_bar,
        log_every_n_steps=10,
    )
    ckpt = newest_checkpoint(ckpt_dir) if args.resume else None
    if ckpt is not None:
        print(f"resuming from {ckpt}", flush=True)
        kept = keep_earlier_metrics(out / "csv")
        if kept:
            print(f"earlier metrics kept in {kept}", flush=True)
    # RL4COTrainer.fit does not forward weights_only; the checkpoint pickles env and policy.
    L.Trainer.fit(trainer, model, ckpt_path=str(ckpt) if ckpt else None, weights_only=False)

    if trainer.is_global_zero:
        if plot_learning_curve(out / "csv" / "metrics.csv", out / "learning_curve.png"):
            print(f"learning curve: {out / 'learning_curve.png'}")
        best_path = best.best_model_path or (str(ckpt_dir / "last.ckpt"))
        if best_path and Path(best_path).is_file():
            from clrp_rl4co.models import load_policy

            best_policy = load_policy(best_path)
            best_policy.save_pretrained(
                out / "policy_best",
                extra={
                    "preset": args.preset,
                    "checkpoint": str(best_path),
                    monitor: float(best.best_model_score or float("nan")),
                },
            )
            print(f"best checkpoint: {best_path} (val/reward {best.best_model_score})")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
