"""The official side: train and evaluate with the official code's glue (``glue/``), run as
scripts inside the official checkout."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from .config import CONFIG, OFFICIAL_SET, official_model_params, subprocess_env
from .curves import curve_rows

#: The scripts that run inside the official checkout.
GLUE = Path(__file__).resolve().parent / "glue"


def _run_glue(args, script: Path, cfg: dict) -> None:
    """Run one glue script with its JSON config (raises when it fails)."""
    cmd = [sys.executable, str(script), json.dumps(cfg)]
    subprocess.run(cmd, check=True, env=subprocess_env(args))


def official_run_dir(args, seed: int) -> Path:
    return args.work / "official" / f"seed{seed}"


def official_checkpoints(run_dir: Path) -> dict[int, Path]:
    """``checkpoint-<epoch>.pt`` files of an official run, by instances seen."""
    out = {}
    for p in run_dir.glob("checkpoint-*.pt"):
        m = re.fullmatch(r"checkpoint-(\d+)\.pt", p.name)
        if m:
            out[int(m.group(1))] = p
    return out


def train_official(args, seed: int, init_only: bool = False) -> None:
    """Train (or resume) the official run of ``seed``; ``init_only``: only save its initial
    weights as ``checkpoint-0.pt`` (the model the trainer builds first after seeding)."""
    glue = GLUE / "official_train.py"
    cfg = {
        "init_only": init_only,
        "official": str(args.official),
        "run_dir": str(official_run_dir(args, seed)),
        "seed": seed,
        "threads": args.threads,
        "epochs": args.instances // args.chunk,
        "episodes": args.chunk,
        "batch_size": CONFIG["batch_size"],
        "customers": CONFIG["customers"],
        "depots": CONFIG["depots"],
        "lr": CONFIG["lr"],
        "weight_decay": CONFIG["weight_decay"],
        "model_params": official_model_params(),
    }
    _run_glue(args, glue, cfg)


def eval_official(args, seed: int) -> list[dict]:
    run = official_run_dir(args, seed)
    if run.is_dir() and not (run / "checkpoint-0.pt").is_file():
        train_official(args, seed, init_only=True)
    cache_path = run / f"eval_{args.eval_size}.json"
    cache = json.loads(cache_path.read_text()) if cache_path.is_file() else {}
    ckpts = official_checkpoints(run)
    todo = [str(p) for e, p in sorted(ckpts.items()) if str(p) not in cache]
    if todo:
        glue = GLUE / "official_eval.py"
        out = args.work / "official_eval_out.json"
        cfg = {
            "official": str(args.official),
            "data": str(args.official / OFFICIAL_SET),
            "size": args.eval_size,
            "batch": args.eval_batch,
            "customers": CONFIG["customers"],
            "threads": args.threads,
            "model_params": official_model_params(),
            "checkpoints": todo,
            "out": str(out),
            "instances_out": str(args.work / "official_instances.npz"),
        }
        _run_glue(args, glue, cfg)
        cache.update(json.loads(out.read_text()))
        cache_path.write_text(json.dumps(cache, indent=1))
    return curve_rows("official", seed, ckpts, cache, args)
