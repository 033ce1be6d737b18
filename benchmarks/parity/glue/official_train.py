"""The official DRLHQ trainer on the CPU, resumable after every epoch.

Runs inside a checkout of the official code (``JackeyMiao/DRLHQ``, fetched at run time, never
part of this repository): ``python official_train.py '<json config>'`` with the keys that
:func:`benchmarks.parity.official.train_official` writes. Saves ``checkpoint-<epoch>.pt`` (the
trainer's own), ``rng-<epoch>.pt`` (torch's RNG state after the epoch, so a resumed run draws
what an uninterrupted one would) and one line of ``epochs.jsonl`` per epoch.
"""

import json
import os
import re
import sys
import time

cfg = json.loads(sys.argv[1])
os.chdir(cfg["official"])
sys.path.insert(0, cfg["official"])

import my_utils  # noqa: E402  (the official code, importable only after the chdir)
import torch  # noqa: E402

torch.set_num_threads(cfg["threads"])
run = cfg["run_dir"]
os.makedirs(run, exist_ok=True)
my_utils.set_result_folder(run)
my_utils.create_logger(log_file={"filepath": run, "filename": "run_log"})
from LRP_Trainer import LRPTrainer  # noqa: E402


def saved(pattern: str) -> dict[int, str]:
    """Files of the run folder whose name matches ``pattern`` (one group: the epoch)."""
    out = {}
    for name in os.listdir(run):
        m = re.fullmatch(pattern, name)
        if m:
            out[int(m.group(1))] = os.path.join(run, name)
    return out


init = os.path.join(run, "checkpoint-0.pt")
if not os.path.isfile(init):  # the initial weights (the trainer's first draw from the seed)
    from LRP_Model import LRPModel

    torch.manual_seed(cfg["seed"])
    state = LRPModel(**cfg["model_params"]).state_dict()
    torch.save({"epoch": 0, "model_state_dict": state}, init)
if cfg.get("init_only"):
    sys.exit(0)
done = sorted(set(saved(r"checkpoint-(\d+)\.pt")) & set(saved(r"rng-(\d+)\.pt")))
last = done[-1] if done else 0
if last >= cfg["epochs"]:
    print("official run complete:", run, flush=True)
    sys.exit(0)
torch.manual_seed(cfg["seed"])
env_params = {
    "customer_size": cfg["customers"],
    "mt_size": cfg["customers"],
    "depot_size": cfg["depots"],
    "depot_capacity_min": 100,
    "depot_capacity_max": 300,
    "depot_cost_min": 1,
    "depot_cost_max": 5,
    "vehicle_capacity": 70,
    "vehicle_cost": 1,
    "demand_min": 10,
    "demand_max": 20,
}
optimizer_params = {
    "optimizer": {"lr": cfg["lr"], "weight_decay": cfg["weight_decay"]},
    "scheduler": {"milestones": [10**9], "gamma": 0.1},  # no decay within the budget
}
style = {"json_foldername": "log_image_style"}
trainer_params = {
    "use_cuda": False,
    "cuda_device_num": 0,
    "epochs": cfg["epochs"],
    "episodes": cfg["episodes"],
    "batch_size": cfg["batch_size"],
    "logging": {
        "model_save_interval": 1,
        "img_save_interval": 10**9,
        "log_image_params_1": dict(style, filename="unlimited.json"),
        "log_image_params_2": dict(style, filename="style_loss_1.json"),
    },
    "model_load": {"enable": last > 0, "path": run, "epoch": last},
}


class ResumableTrainer(LRPTrainer):
    """The official trainer, saving the RNG state and a log line after every epoch."""

    def train_1_epoch(self, epoch):
        start = time.time()
        score, loss = super().train_1_epoch(epoch)
        torch.save(torch.get_rng_state(), os.path.join(run, f"rng-{epoch}.pt"))
        record = {
            "epoch": epoch,
            "instances": epoch * cfg["episodes"],
            "seconds": time.time() - start,
            "train_score": score,
            "loss": loss,
        }
        with open(os.path.join(run, "epochs.jsonl"), "a") as f:
            f.write(json.dumps(record) + "\n")
        return score, loss


trainer = ResumableTrainer(
    env_params=env_params,
    model_params=cfg["model_params"],
    optimizer_params=optimizer_params,
    trainer_params=trainer_params,
)
if last > 0:
    torch.set_rng_state(torch.load(os.path.join(run, f"rng-{last}.pt")))
    print("official run resumed after epoch", last, flush=True)
trainer.run()
