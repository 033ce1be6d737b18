"""The configuration both implementations train at, and where the data and runs live."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAPER_SET = ROOT / "datasets" / "drlhq_clrp20_test_1000_seed1234.npz"
OFFICIAL_SET = "data/5_20_1000.pkl"
IMPLEMENTATIONS = ("official", "ours")
CSV_FIELDS = ["implementation", "seed", "instances_seen", "val_objective", "eval_instances"]

#: The common configuration (clrp20, the shipped CPU models' size).
CONFIG = {
    "customers": 20,
    "depots": 5,
    "embed_dim": 128,
    "num_encoder_layers": 3,
    "num_heads": 8,
    "feedforward_hidden": 512,
    "batch_size": 64,
    "lr": 1e-4,
    "weight_decay": 1e-6,
    "tanh_clipping": 10,
}


def official_model_params() -> dict:
    e, h = CONFIG["embed_dim"], CONFIG["num_heads"]
    return {
        "embedding_dim": e,
        "sqrt_embedding_dim": e**0.5,
        "encoder_layer_num": CONFIG["num_encoder_layers"],
        "qkv_dim": e // h,
        "head_num": h,
        "clip": CONFIG["tanh_clipping"],
        "ff_hidden_dim": CONFIG["feedforward_hidden"],
        "mlp_hidden_size": [128, 64, 32],
    }


def subprocess_env(args) -> dict:
    """The environment of a training or evaluation process: ``--threads`` OpenMP threads and
    ``--pythonpath`` in front of ``PYTHONPATH``."""
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    if args.pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([args.pythonpath, env.get("PYTHONPATH", "")])
    return env
