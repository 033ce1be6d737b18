"""Ship a training run's best checkpoint as a package model (``clrp_rl4co/pretrained/``).

    python examples/ship_model.py runs/pomo_clrp20_e128 pomo_clrp20 \\
        --hardware "one CPU thread on a shared 2-core VM" --wall-minutes 80

Writes ``<name>.pt`` (the policy ``state_dict``, loadable with ``weights_only=True``) and
``<name>.json`` (class, constructor config and provenance: the training command rebuilt from the
run's ``config.json``, seed, steps, training instances, the validation score it was selected
on, hardware and wall time).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from clrp_rl4co.models import load_policy
from clrp_rl4co.policies.pretrained import PRETRAINED_DIR

#: Arguments of examples/train.py that do not change what is trained.
RUNTIME_ONLY = {"resume", "no_progress_bar", "out", "max_time", "accelerator", "devices"}


def training_command(config: dict) -> str:
    parts = ["python examples/train.py"]
    for key, value in config.items():
        if key in RUNTIME_ONLY or value is None or key == "precision":
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            parts.append(flag)
        elif value is not False:
            parts.append(f"{flag} {value}")
    return " ".join(parts)


def main(argv=None) -> Path:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", help="run folder of examples/train.py")
    p.add_argument("name", help="shipped name, e.g. pomo_clrp20")
    p.add_argument("--checkpoint", default="checkpoints/best.ckpt", help="relative to the run")
    p.add_argument("--hardware", required=True)
    p.add_argument("--wall-minutes", type=float, required=True)
    p.add_argument("--note", default="a CPU-budget model: far below the paper's training budget")
    p.add_argument("--dest", default=str(PRETRAINED_DIR))
    args = p.parse_args(argv)

    run = Path(args.run)
    config = json.loads((run / "config.json").read_text())
    ckpt_path = run / args.checkpoint
    ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=False)
    score = None
    for state in ckpt.get("callbacks", {}).values():
        if isinstance(state, dict) and state.get("monitor") and state.get("best_model_score"):
            score = float(state["best_model_score"])
    policy = load_policy(ckpt_path)
    steps = int(ckpt["global_step"])
    extra = {
        "preset": config["preset"],
        "epoch": int(ckpt["epoch"]),
        "global_step": steps,
        "training_instances": steps * int(config["batch_size"]),
        "paper_training_instances": 10_000_000,
        "training": training_command(config),
        "seed": config["seed"],
        "hardware": args.hardware,
        "wall_minutes": args.wall_minutes,
        "note": args.note,
        f"val/max_reward ({config['val_size']} fixed instances, seed {config['val_seed']}, "
        "multistart greedy)": score,
    }
    weights, meta = policy.save_pretrained(Path(args.dest) / args.name, extra=extra)
    size = weights.stat().st_size / 2**20
    if size > 20:
        raise SystemExit(f"{weights}: {size:.1f} MB is over the 20 MB limit of shipped models")
    print(f"shipped {weights} ({size:.1f} MB) and {meta}: step {steps}, val {score}")
    return weights


if __name__ == "__main__":
    main()
