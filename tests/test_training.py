"""End-to-end training with RL4CO's stock POMO / AttentionModel and RL4COTrainer on CPU."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from lightning.pytorch.callbacks import Callback
from rl4co.models import POMO
from rl4co.utils.trainer import RL4COTrainer

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.models import PolicyConfigCallback, build_model, build_policy, load_policy

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(embed_dim=16, num_encoder_layers=1, num_heads=2, feedforward_hidden=32)
DATA = dict(batch_size=4, train_data_size=8, val_data_size=4, test_data_size=4)


class LossRecorder(Callback):
    def __init__(self):
        self.losses = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.losses.append(float(outputs["loss"]))


def _trainer(tmp_path, recorder, **kwargs):
    return RL4COTrainer(
        max_epochs=1,
        accelerator="cpu",
        devices=1,
        precision="32-true",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[recorder, PolicyConfigCallback()],
        default_root_dir=str(tmp_path),
        **kwargs,
    )


@pytest.mark.parametrize(
    "model,algorithm,num_augment",
    [("drlhq", "pomo", 8), ("pomo", "pomo", 1), ("mta", "pomo", 1), ("drlhq", "reinforce", 1)],
)
def test_train_few_steps(tmp_path, model, algorithm, num_augment):
    torch.manual_seed(0)
    env = CLRPEnv(generator_params={"preset": "clrp10"}, check_actions=False)
    policy = build_policy(model, **TINY)
    lit = build_model(env, policy, algorithm=algorithm, num_augment=num_augment, **DATA)
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    recorder = LossRecorder()
    trainer = _trainer(tmp_path, recorder, max_steps=2)
    trainer.fit(lit)
    assert len(recorder.losses) == 2 and all(
        map(torch.isfinite, map(torch.tensor, recorder.losses))
    )
    changed = [k for k, v in policy.state_dict().items() if not torch.equal(v, before[k])]
    assert changed, "no parameter changed"
    results = trainer.test(lit, verbose=False)
    assert torch.isfinite(torch.tensor(results[0]["test/reward"]))
    if num_augment > 1:
        assert "test/max_aug_reward" in results[0]

    # checkpoint round trip: identical greedy solutions
    ckpt = tmp_path / "model.ckpt"
    trainer.save_checkpoint(ckpt)
    loaded = load_policy(ckpt)
    reloaded = type(lit).load_from_checkpoint(ckpt, weights_only=False, load_baseline=False)
    td = env.reset(env.generator(3))
    policy.eval()
    with torch.no_grad():
        a = policy(td.clone(), env, decode_type="greedy")["actions"]
        b = loaded(td.clone(), env, decode_type="greedy")["actions"]
        c = reloaded.policy(td.clone(), env, decode_type="greedy")["actions"]
    assert torch.equal(a, b) and torch.equal(a, c)


def test_pomo_default_policy_kwargs_unchanged():
    """POMO accepts the policy object unchanged and sets multistart decode types on it."""
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    lit = POMO(env, policy=build_policy("drlhq", **TINY), **DATA)
    assert lit.policy.train_decode_type == "multistart_sampling"
    assert lit.policy.val_decode_type == "multistart_greedy"


def _run(cmd, tmp_path, timeout=300):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_train_script_ddp_two_processes(tmp_path):
    """examples/train.py under a 2-process CPU DDP run (a subprocess: DDP relaunches argv)."""
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        str(ROOT / "examples" / "train.py"),
        "--preset",
        "clrp10",
        "--embed-dim",
        "16",
        "--layers",
        "1",
        "--heads",
        "2",
        "--ff",
        "32",
        "--batch-size",
        "4",
        "--train-size",
        "16",
        "--val-size",
        "8",
        "--epochs",
        "1",
        "--max-steps",
        "2",
        "--accelerator",
        "cpu",
        "--devices",
        "2",
        "--strategy",
        "ddp",
        "--threads",
        "1",
        "--no-progress-bar",
        "--out",
        str(out),
    ]
    _run(cmd, tmp_path)
    assert (out / "csv" / "metrics.csv").is_file()
    assert (out / "checkpoints" / "best.ckpt").is_file()
    assert (out / "learning_curve.png").is_file()
    policy = load_policy(out / "policy_best.pt")
    assert policy.config["embed_dim"] == 16


def test_train_script_resume(tmp_path, capsys):
    """examples/train.py in-process: a second call with --resume continues the first run."""
    sys.path.insert(0, str(ROOT / "examples"))
    import train

    out = tmp_path / "run"
    base = [
        "--preset", "clrp10", "--embed-dim", "16", "--layers", "1", "--heads", "2",
        "--ff", "32", "--batch-size", "4", "--train-size", "8", "--val-size", "4",
        "--no-progress-bar", "--out", str(out), "--resume",
    ]  # fmt: skip
    train.main(base + ["--epochs", "1"])
    train.main(base + ["--epochs", "2"])
    assert "resuming from" in capsys.readouterr().out
    ckpt = torch.load(out / "checkpoints" / "last.ckpt", weights_only=False)
    assert ckpt["global_step"] == 4
    assert (out / "learning_curve.png").is_file() and (out / "policy_best.json").is_file()
    # the first part's metrics survive the resume (Lightning's CSVLogger would overwrite them)
    import csv

    def steps(name):
        return {int(row["step"]) for row in csv.DictReader((out / "csv" / name).open())}

    first, second = steps("metrics_part1.csv"), steps("metrics.csv")
    assert first and second and max(first) < min(second)


def test_hydra_run_tiny(tmp_path):
    """run.py with the project's config tree (RL4CO layout)."""
    out = tmp_path / "hydra"
    cmd = [
        sys.executable,
        str(ROOT / "run.py"),
        "experiment=tiny",
        "model=mta",
        "model.policy.embed_dim=16",
        "trainer.max_steps=2",
        f"hydra.run.dir={out}",
        "num_threads=1",
    ]
    _run(cmd, tmp_path)
    assert (out / "checkpoints" / "last.ckpt").is_file()
    policy = load_policy(out / "checkpoints" / "last.ckpt")
    assert type(policy).__name__ == "MTAPolicy"


def test_model_configs_share_one_block_and_name_the_registry_classes():
    """configs/model/{drlhq,pomo,mta}.yaml: the registry's names, each naming its class, and
    otherwise the same composed config (the block they share through Hydra's defaults)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from clrp_rl4co.policies import POLICIES

    composed = {}
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        for name, cls in POLICIES.items():
            model = OmegaConf.to_container(compose("main", [f"model={name}"]).model)
            assert model["policy"].pop("_target_") == f"clrp_rl4co.policies.{cls.__name__}"
            composed[name] = model
    first = composed["drlhq"]
    assert all(model == first for model in composed.values())
    assert first["_target_"] == "rl4co.models.POMO" and first["policy"]["embed_dim"] == 256


def test_evaluate_script(tmp_path, benchmarks_root, monkeypatch):
    sys.path.insert(0, str(ROOT / "examples"))
    import evaluate

    torch.manual_seed(0)
    build_policy("drlhq", **TINY).save_pretrained(tmp_path / "tiny")
    rows = evaluate.main(
        [
            "--checkpoint",
            str(tmp_path / "tiny.pt"),
            "--data",
            "clrp10:6",
            "--batch-size",
            "3",
            "--decode",
            "greedy",
            "multistart_greedy+rot8",
            "--out",
            str(tmp_path / "table"),
        ]
    )
    assert [r["decode"] for r in rows] == ["greedy", "multistart_greedy+rot8"]
    assert all(math.isfinite(r["objective"]) and r["penalty"] == 0 for r in rows)
    assert (tmp_path / "table.md").is_file() and (tmp_path / "table.csv").is_file()
    monkeypatch.setenv("CLRP_BENCHMARKS_DIR", str(benchmarks_root))
    rows = evaluate.main(
        [
            "--checkpoint",
            str(tmp_path / "tiny.pt"),
            "--data",
            "prins:coord20-5-1",
            "--decode",
            "greedy",
        ]
    )
    assert rows[0]["instances"] == 1 and rows[0]["gap_%"] > 0


def test_train_script_init_and_ship_model(tmp_path):
    """--init starts from a saved policy (its architecture wins); ship_model.py exports the run."""
    sys.path.insert(0, str(ROOT / "examples"))
    import ship_model
    import train

    from clrp_rl4co.models import build_policy

    torch.manual_seed(0)
    start = build_policy("drlhq", embed_dim=16, num_encoder_layers=1, num_heads=2,
                         feedforward_hidden=32)  # fmt: skip
    start.save_pretrained(tmp_path / "start")
    out = tmp_path / "run"
    base = [
        "--preset", "clrp10", "--batch-size", "4", "--train-size", "8", "--val-size", "4",
        "--no-progress-bar", "--out", str(out), "--epochs", "1",
        "--init", str(tmp_path / "start.pt"),
    ]  # fmt: skip
    with pytest.raises(SystemExit, match="not --model pomo"):
        train.main([*base, "--model", "pomo"])
    train.main(base)
    config = json.loads((out / "config.json").read_text())
    assert config["embed_dim"] == 16 and config["init"].endswith("start.pt")
    weights = ship_model.main(
        [str(out), "tiny_clrp10", "--dest", str(tmp_path / "ship"), "--hardware", "test",
         "--wall-minutes", "0.1"]
    )  # fmt: skip
    meta = json.loads(weights.with_suffix(".json").read_text())
    assert meta["global_step"] == 2 and meta["training_instances"] == 8
    assert "--init" in meta["training"] and meta["config"]["embed_dim"] == 16
    shipped = torch.load(weights, weights_only=True)
    trained = dict(start.state_dict())
    assert shipped.keys() == trained.keys()
    assert not all(torch.equal(shipped[k], trained[k]) for k in trained)
