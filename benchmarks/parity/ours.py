"""This package's side: train with ``run.py`` at the common configuration and evaluate every
checkpoint with :func:`clrp_rl4co.models.decode_batch`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from .config import CONFIG, PAPER_SET, ROOT, subprocess_env
from .curves import curve_rows


def ours_run_dir(args, seed: int) -> Path:
    return args.work / "ours" / f"seed{seed}"


def ours_overrides(args, seed: int) -> list[str]:
    """``run.py`` overrides of our run of ``seed`` (the shipped CPU setup, ``experiment=
    cpu_clrp20``, at the common configuration; one checkpoint per chunk of instances)."""
    run = ours_run_dir(args, seed)
    return [
        "experiment=cpu_clrp20",
        "model=drlhq",
        f"seed={seed}",
        f"paths.log_dir={run.parent}",
        f"run_name={run.name}",
        f"num_threads={args.threads}",
        f"model.policy.embed_dim={CONFIG['embed_dim']}",
        f"model.policy.num_encoder_layers={CONFIG['num_encoder_layers']}",
        f"model.policy.num_heads={CONFIG['num_heads']}",
        f"model.policy.feedforward_hidden={CONFIG['feedforward_hidden']}",
        f"model.batch_size={CONFIG['batch_size']}",
        f"model.optimizer_kwargs.lr={CONFIG['lr']}",
        f"model.optimizer_kwargs.weight_decay={CONFIG['weight_decay']}",
        f"model.train_data_size={args.chunk}",
        f"trainer.max_epochs={args.instances // args.chunk}",
        "model.lr_schedule.gamma=1.0",  # no decay within this budget (as the official run)
        f"model.val_data_size={args.ours_val_size}",
        f"model.val_batch_size={args.ours_val_size}",
        "callbacks.model_checkpoint.save_top_k=-1",
        "callbacks.model_checkpoint.filename='ep{epoch:03d}'",
        "ckpt_path=last",
    ]


def ours_checkpoints(run_dir: Path) -> dict[int, Path]:
    """``ep<epoch>.ckpt`` files of our run, by epoch (1-based, as the official ones)."""
    out = {}
    for p in (run_dir / "checkpoints").glob("ep*.ckpt"):
        m = re.fullmatch(r"ep(\d+)\.ckpt", p.name)
        if m:
            out[int(m.group(1)) + 1] = p
    return out


#: Cache key of our runs' initial weights (instances seen 0).
INITIAL = "initial"


def initial_policy(run: Path):
    """The initial weights of our run in ``run``: its config's policy built as training builds
    it (seed, then the env, then the model), as ``benchmarks/learning_check.py`` does."""
    import lightning as L
    from hydra.utils import instantiate

    from clrp_rl4co.models.runs import RunFolder

    config = RunFolder(run).config()
    L.seed_everything(int(config.seed), workers=True)
    instantiate(config.env)
    return instantiate(config.model.policy)


def train_ours(args, seed: int) -> None:
    if len(ours_checkpoints(ours_run_dir(args, seed))) >= args.instances // args.chunk:
        print(f"our run complete: {ours_run_dir(args, seed)}", flush=True)
        return
    cmd = [sys.executable, str(ROOT / "run.py"), *ours_overrides(args, seed)]
    subprocess.run(cmd, check=True, env=subprocess_env(args) | {"PYTHONPATH": ""}, cwd=ROOT)


def paper_instances(size: int):
    from clrp_rl4co.envs.clrp import load_dataset

    return load_dataset(PAPER_SET)[:size]


def eval_ours(args, seed: int) -> list[dict]:
    import torch

    from clrp_rl4co.envs import CLRPEnv
    from clrp_rl4co.models import decode_batch, load_policy

    torch.set_num_threads(args.threads)
    run = ours_run_dir(args, seed)
    cache_path = run / f"eval_{args.eval_size}.json"
    cache = json.loads(cache_path.read_text()) if cache_path.is_file() else {}
    ckpts = ours_checkpoints(run)
    if ckpts:
        ckpts[0] = INITIAL
    todo = [p for e, p in sorted(ckpts.items()) if str(p) not in cache]
    if todo:
        data = paper_instances(args.eval_size)
        env = CLRPEnv(generator_params={"preset": "clrp20"}, check_actions=False)
        for p in todo:
            policy = (initial_policy(run) if p == INITIAL else load_policy(p)).eval()
            totals = [
                decode_batch(policy, env, data[i : i + args.eval_batch], "multistart_greedy")[1][
                    "total"
                ]
                for i in range(0, args.eval_size, args.eval_batch)
            ]
            cache[str(p)] = float(torch.cat(totals).mean())
            print(p, cache[str(p)], flush=True)
            cache_path.write_text(json.dumps(cache, indent=1))
    return curve_rows("ours", seed, ckpts, cache, args)


def instance_check(args) -> float | None:
    """Largest absolute difference between the official pickle's first instances (dumped by
    the official evaluation) and ours (None before the official evaluation ran)."""
    import numpy as np

    path = args.work / "official_instances.npz"
    if not path.is_file():
        return None
    theirs = np.load(path)
    ours = paper_instances(theirs["depot_x_y"].shape[0])
    d = CONFIG["depots"]
    pairs = [
        (theirs["depot_x_y"], ours["locs"][:, :d]),
        (theirs["customer_x_y"], ours["locs"][:, d:]),
        (theirs["depot_capacity"], ours["depot_capacity"]),
        (theirs["depot_cost"], ours["opening_cost"]),
        (theirs["customer_demand"], ours["demand"]),
    ]
    return float(max(np.abs(a - b.numpy()).max() for a, b in pairs))
