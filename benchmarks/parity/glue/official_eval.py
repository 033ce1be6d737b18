"""The official DRLHQ evaluator on saved official checkpoints: multistart greedy, no augmentation.

Runs inside a checkout of the official code (``JackeyMiao/DRLHQ``, fetched at run time, never
part of this repository): ``python official_eval.py '<json config>'`` with the keys that
:func:`benchmarks.parity.official.eval_official` writes. Writes the mean objective per
checkpoint to ``cfg["out"]`` and the evaluated instances to ``cfg["instances_out"]`` (so they
can be compared with this package's regenerated copy).
"""

import json
import os
import sys

cfg = json.loads(sys.argv[1])
os.chdir(cfg["official"])
sys.path.insert(0, cfg["official"])

import my_utils  # noqa: E402  (the official code, importable only after the chdir)
import numpy as np  # noqa: E402
import torch  # noqa: E402
from LRP_Evaluator import LRPEvaluator  # noqa: E402

torch.set_num_threads(cfg["threads"])
dataset = my_utils.load_dataset(cfg["data"])[: cfg["size"]]
keys = ("depot_x_y", "depot_capacity", "depot_cost", "customer_x_y", "customer_demand")
np.savez(cfg["instances_out"], **{k: np.stack([d[k].numpy() for d in dataset]) for k in keys})
results = {}
for ckpt in cfg["checkpoints"]:
    folder, name = os.path.split(ckpt)
    epoch = name[len("checkpoint-") : -len(".pt")]
    eval_params = {
        "use_cuda": False,
        "cuda_device_num": 0,
        "model_load": {"path": folder, "epoch": epoch},
        "episodes": cfg["size"],
        "eval_batch_size": cfg["batch"],
        "augmentation": None,
        "sgbs_beta": 4,
        "sgbs_gamma_minus1": 3,
        "mode": "origin",
    }
    evaluator = LRPEvaluator(
        env_params={"sample_size": cfg["customers"], "load_path": cfg["data"]},
        model_params=dict(cfg["model_params"], sample=False),
        eval_params=eval_params,
    )
    total = 0.0
    with torch.no_grad():
        for i in range(0, len(dataset), cfg["batch"]):
            batch = dataset[i : i + cfg["batch"]]
            evaluator.sample_size = len(batch)
            _, score = evaluator._test_one_batch(batch)  # best of the N starts, no augmentation
            total += score * len(batch)
    results[ckpt] = total / len(dataset)
    print(ckpt, results[ckpt], flush=True)
with open(cfg["out"], "w") as f:
    json.dump(results, f, indent=1)
