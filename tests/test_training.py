"""Training: build_model with RL4CO's POMO / AttentionModel, and the one training path
(clrp_rl4co.models.training, what `python run.py ...` runs) end to end on tiny sizes."""

import csv
import json
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from lightning.pytorch.callbacks import Callback
from omegaconf import OmegaConf
from rl4co.models import POMO
from rl4co.utils.trainer import RL4COTrainer

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.models import (
    PolicyConfigCallback,
    algorithm_of,
    build_model,
    build_policy,
    load_policy,
    monitor_metric,
    shipping,
    step_lr_schedule,
    training,
)
from clrp_rl4co.models.curves import ProgressLog
from clrp_rl4co.models.runs import RunFolder
from clrp_rl4co.policies import POLICIES
from experiments import compare_runs

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(embed_dim=16, num_encoder_layers=1, num_heads=2, feedforward_hidden=32)
DATA = dict(batch_size=4, train_data_size=8, val_data_size=4, test_data_size=4)

# keep equal to README (training commands, run in order)
README_COMMANDS = [
    "python run.py experiment=cpu_clrp20 trainer.max_time=00:02:00:00",
    "python run.py experiment=cpu_clrp20 trainer.max_time=00:04:00:00 ckpt_path=last",
    "python run.py experiment=cpu_clrp20 model=pomo trainer.max_time=00:02:00:00",
    'python -m experiments.compare_runs --out runs/clrp20 DRLHQ=runs/drlhq_clrp20 "POMO*=runs/pomo_clrp20"',  # noqa: E501
    "python run.py experiment=cpu_clrp20 env.generator_params.preset=clrp50 init=drlhq_clrp20 trainer.max_time=00:01:00:00",  # noqa: E501
    "python -m clrp_rl4co.models.shipping runs/drlhq_clrp50 drlhq_clrp50_mine",
]

#: Appended to the README's `run.py` commands: tiny sizes (the README's are CPU hours).
TINY_TAIL = [
    "model.policy.embed_dim=16",
    "model.policy.num_encoder_layers=1",
    "model.policy.num_heads=2",
    "model.policy.feedforward_hidden=32",
    "model.batch_size=4",
    "model.train_data_size=8",
    "model.val_data_size=4",
    "model.val_batch_size=4",
]


# --- build_model and RL4CO's trainer --------------------------------------------------------


class LossRecorder(Callback):
    def __init__(self):
        self.losses = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.losses.append(float(outputs["loss"]))


@pytest.mark.parametrize(
    "model,algorithm,num_augment",
    [("drlhq", "pomo", 8), ("pomo", "pomo", 1), ("mta", "pomo", 1), ("drlhq", "reinforce", 1)],
)
def test_train_few_steps(tmp_path, model, algorithm, num_augment):
    torch.manual_seed(0)
    env = CLRPEnv(generator_params={"preset": "clrp10"}, check_actions=False)
    policy = build_policy(model, **TINY)
    lit = build_model(env, policy, algorithm=algorithm, num_augment=num_augment, **DATA)
    assert algorithm_of(lit) == algorithm
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    recorder = LossRecorder()
    trainer = RL4COTrainer(
        max_steps=2,
        accelerator="cpu",
        devices=1,
        precision="32-true",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[recorder, PolicyConfigCallback()],
        default_root_dir=str(tmp_path),
    )
    trainer.fit(lit)
    assert len(recorder.losses) == 2 and all(map(math.isfinite, recorder.losses))
    assert any(not torch.equal(v, before[k]) for k, v in policy.state_dict().items())
    results = trainer.test(lit, verbose=False)
    assert math.isfinite(results[0]["test/reward"])
    assert ("test/max_aug_reward" in results[0]) == (num_augment > 1)

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


def test_build_conventions_and_bad_input():
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    assert (
        monitor_metric("pomo") == "val/max_reward" and monitor_metric("reinforce") == "val/reward"
    )
    schedule = step_lr_schedule(epochs=35, decay_at=0.7)
    assert schedule["lr_scheduler_kwargs"] == {"milestones": [24], "gamma": 0.1}
    lit = build_model(env, build_policy("drlhq", **TINY), lr_schedule={"epochs": 10}, **DATA)
    assert lit.hparams["lr_scheduler_kwargs"]["milestones"] == [7]
    policy = build_policy("drlhq", **TINY)
    with pytest.raises(ValueError, match="algorithm: unknown 'ppo'"):
        build_model(env, policy, algorithm="ppo")
    with pytest.raises(ValueError, match="augment: unknown 'flip'"):
        build_model(env, policy, augment="flip")
    with pytest.raises(ValueError, match="lr_schedule.decay_at"):
        build_model(env, policy, lr_schedule={"epochs": 10, "decay_at": 1.5})
    with pytest.raises(ValueError, match="algorithm: unknown"):
        monitor_metric("POMO")


def test_precision_one_rule(monkeypatch):
    assert training.training_precision("cpu") == "32-true"
    assert training.training_precision("gpu", "16-mixed") == "16-mixed"  # an explicit one wins
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert training.training_precision("auto") == "bf16-mixed"
    assert training.training_precision("cpu") == "32-true"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert training.training_precision("gpu") == "16-mixed"


def test_compile_one_rule(monkeypatch):
    monkeypatch.setattr(training.sys, "platform", "linux")
    monkeypatch.setenv("CXX", sys.executable)  # an executable the CPU default finds
    assert training.training_compile("cpu") is True
    assert training.training_compile("cpu", False) is False  # a given one wins
    monkeypatch.setenv("CXX", "/no/such/compiler")  # no C++ compiler: inductor could not build
    assert training.training_compile("cpu") is False
    assert training.training_compile("cpu", True) is True
    monkeypatch.setenv("CXX", sys.executable)
    assert training.training_compile("gpu") is False  # not measured on a GPU
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert training.training_compile("auto") is False
    assert training.training_compile("cpu") is True
    monkeypatch.setattr(training.sys, "platform", "win32")
    assert training.training_compile("cpu") is False
    # without CXX: inductor's own default compiler, clang++ on macOS, g++ elsewhere
    monkeypatch.delenv("CXX")
    monkeypatch.setattr(training.shutil, "which", lambda name: name if name == "clang++" else None)
    monkeypatch.setattr(training.sys, "platform", "darwin")
    assert training.training_compile("cpu") is True
    monkeypatch.setattr(training.sys, "platform", "linux")
    assert training.training_compile("cpu") is False


def test_a_compiled_decoder_trains_as_the_eager_one(tmp_path):
    # the same POMO step (same weights, same instances, same sampling seed) with the decoder's
    # step compiled: the same rollouts, loss and gradients up to float rounding, and a policy
    # whose weights and pickle are those of an eager one
    env = CLRPEnv(generator_params={"preset": "clrp10"}, check_actions=False)
    torch.manual_seed(0)
    eager = build_policy("drlhq", **TINY)
    compiled = build_policy("drlhq", **TINY)
    compiled.load_state_dict(eager.state_dict())
    assert training.compile_decoder(compiled) is compiled
    assert (
        compiled.decoder._compiled_call_impl is not None
        and eager.decoder._compiled_call_impl is None
    )
    batch = env.generator(4)
    results = []
    for policy in (eager, compiled):
        lit = build_model(env, policy, algorithm="pomo", num_augment=1)
        torch.manual_seed(7)
        out = lit.shared_step(batch.clone(), 0, phase="train")
        out["loss"].backward()
        grads = {k: p.grad.clone() for k, p in policy.named_parameters() if p.grad is not None}
        results.append((out["loss"].detach(), out["train/reward"], grads))
    (loss0, reward0, grads0), (loss1, reward1, grads1) = results
    assert torch.equal(reward0, reward1)  # the same sampled rollouts (their mean cost)
    assert torch.allclose(loss0, loss1, rtol=1e-5, atol=1e-6)
    assert grads0.keys() == grads1.keys() and len(grads0) > 0
    for name in grads0:
        assert torch.allclose(grads0[name], grads1[name], rtol=1e-4, atol=1e-6), name
    assert compiled.state_dict().keys() == eager.state_dict().keys()
    torch.save(compiled, tmp_path / "policy.pt")  # checkpoints pickle the policy
    restored = torch.load(tmp_path / "policy.pt", weights_only=False)
    assert restored.decoder._compiled_call_impl is None  # the compiled step is not pickled


def test_a_decoder_step_that_cannot_compile_trains_eagerly(monkeypatch):
    import torch._inductor.config as inductor_config

    # no C++ compiler where inductor looks (and no cached kernels): the step runs as the eager
    # one does instead of stopping the run
    monkeypatch.setattr(inductor_config.cpp, "cxx", (None, "/no/such/compiler"))
    monkeypatch.setattr(inductor_config, "fx_graph_cache", False)
    torch._dynamo.reset()  # no graph an earlier test compiled
    env = CLRPEnv(generator_params={"preset": "clrp10"}, check_actions=False)
    torch.manual_seed(0)
    eager = build_policy("drlhq", **TINY)
    failing = build_policy("drlhq", **TINY)
    failing.load_state_dict(eager.state_dict())
    training.compile_decoder(failing)
    batch = env.generator(4)
    losses = []
    try:
        for policy in (eager, failing):
            torch.manual_seed(7)
            lit = build_model(env, policy, algorithm="pomo", num_augment=1)
            losses.append(lit.shared_step(batch.clone(), 0, phase="train")["loss"].detach())
    finally:
        torch._dynamo.reset()  # forget the failed frame for the tests that compile after
    assert torch.equal(losses[0], losses[1])


def test_cpu_training_keeps_true_fp32_matmuls(in_tmp, monkeypatch):
    # RL4COTrainer's default "medium" would let oneDNN run fp32 matmuls in bf16 on CPUs with
    # AMX / AVX512-BF16: CPU runs ask for "highest", GPU runs keep RL4CO's TF32 default
    assert training.training_matmul_precision("cpu") == "highest"
    assert training.training_matmul_precision("cpu", "medium") == "medium"  # a given one wins
    assert training.training_matmul_precision("gpu") is None
    torch.set_float32_matmul_precision("medium")  # as an earlier trainer in the process leaves it
    run_py(monkeypatch, "experiment=tiny", "trainer.max_epochs=1", "trainer.max_steps=1")
    assert torch.get_float32_matmul_precision() == "highest"


# --- the config tree --------------------------------------------------------------------------


def _compose(overrides):
    with initialize_config_dir(config_dir=str(training.CONFIG_DIR), version_base="1.3"):
        return compose("main", overrides)


def test_model_configs_share_one_block_and_name_the_registry_classes():
    """configs/model/<name>.yaml for each registry name, each naming its class, otherwise the
    same composed config (the block they share, base.yaml)."""
    composed = {}
    for name, cls in POLICIES.items():
        model = OmegaConf.to_container(_compose([f"model={name}"]).model)
        assert model["policy"].pop("_target_") == f"clrp_rl4co.policies.{cls.__name__}"
        composed[name] = model
    first = composed["drlhq"]
    assert all(model == first for model in composed.values())
    assert first["_target_"] == "clrp_rl4co.models.build_model" and first["algorithm"] == "pomo"
    assert first["policy"]["embed_dim"] == 256 and first["lr_schedule"]["decay_at"] == 0.7


def test_config_keys_of_every_former_flag():
    """Each setting of the former examples/train.py flags is one config key."""
    cfg = _compose(
        [
            "experiment=cpu_clrp20",
            "model=mta",
            "model.algorithm=reinforce",
            "env.generator_params.preset=clrp50",
            "model.augment=rotate45",
            "model.optimizer_kwargs.lr=3e-4",
            "model.lr_schedule.decay_at=0.5",
            "trainer.max_time={minutes:7.5}",
            "init=drlhq_clrp20",
            "val_seed=7",
        ]
    )
    assert cfg.model.policy.embed_dim == 128 and cfg.model.num_augment == 1
    assert cfg.model.policy._target_.endswith("MTAPolicy") and cfg.model.algorithm == "reinforce"
    assert cfg.env.generator_params.preset == "clrp50" and cfg.model.augment == "rotate45"
    assert cfg.model.optimizer_kwargs.lr == 3e-4 and cfg.model.lr_schedule.decay_at == 0.5
    assert cfg.model.lr_schedule.epochs == cfg.trainer.max_epochs == 35
    assert cfg.trainer.max_time == {"minutes": 7.5} and cfg.init == "drlhq_clrp20"
    assert cfg.callbacks.latest_checkpoint.every_n_train_steps == 25 and cfg.num_threads == 1
    assert cfg.val_seed == 7 and cfg.model.val_data_size == 500


# --- the training path, in this process ----------------------------------------------------


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Run folders under tmp_path/runs; errors raised as themselves (not Hydra's exit)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PROJECT_ROOT", raising=False)
    monkeypatch.setenv("HYDRA_FULL_ERROR", "1")
    return tmp_path


def run_py(monkeypatch, *overrides: str) -> None:
    """``python run.py <overrides>`` in this process."""
    monkeypatch.setattr(sys, "argv", ["run.py", *overrides])
    training.main()


def _steps(csv_path: Path, key: str) -> list[int]:
    with csv_path.open(newline="") as f:
        return [int(row["step"]) for row in csv.DictReader(f) if row.get(key)]


def _ckpt(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=False)


def _policy_state(ckpt: dict) -> dict:
    return {
        k[len("policy.") :]: v for k, v in ckpt["state_dict"].items() if k.startswith("policy.")
    }


@pytest.mark.parametrize("algorithm", ["pomo", "reinforce"])
def test_best_checkpoint_by_the_algorithms_metric_becomes_policy_best(
    in_tmp, monkeypatch, algorithm
):
    run_py(monkeypatch, "experiment=tiny", f"model.algorithm={algorithm}", "trainer.max_epochs=3")
    run = RunFolder(in_tmp / "runs" / "tiny_drlhq")
    metric = monitor_metric(algorithm)
    with run.metrics.open(newline="") as f:
        scores = [float(row[metric]) for row in csv.DictReader(f) if row.get(metric)]
    assert len(scores) == 3  # one validation per epoch
    best = _ckpt(run.checkpoints / "best.ckpt")
    state = next(s for k, s in best["callbacks"].items() if k.startswith("ModelCheckpoint"))
    assert state["monitor"] == metric and float(state["best_model_score"]) == pytest.approx(
        max(scores)
    )
    saved = torch.load(run.policy_best.with_suffix(".pt"), weights_only=True)
    expected = _policy_state(best)
    assert saved.keys() == expected.keys() and all(
        torch.equal(saved[k], expected[k]) for k in saved
    )
    meta = json.loads(run.policy_best.with_suffix(".json").read_text())
    assert meta["validation"]["metric"] == metric and meta["algorithm"] == algorithm
    assert meta["validation"]["value"] == pytest.approx(max(scores))
    assert meta["training"] == [
        f"python run.py experiment=tiny model.algorithm={algorithm} trainer.max_epochs=3"
    ]
    assert run.learning_curve.stat().st_size > 1000
    assert run.val_set.is_file()


def test_resume_continues_steps_time_and_metrics(in_tmp, monkeypatch):
    args = ["experiment=tiny", "trainer.max_epochs=5"]
    run_py(monkeypatch, *args, "trainer.max_steps=2")
    run = RunFolder(in_tmp / "runs" / "tiny_drlhq")
    first_steps = _steps(run.metrics, "val/reward")
    first = ProgressLog.from_checkpoint(_ckpt(run.checkpoints / "last.ckpt"))
    assert _ckpt(run.checkpoints / "last.ckpt")["global_step"] == 2 and first["instances"] == 8

    # a fresh start into a run folder with checkpoints is refused
    with pytest.raises(ValueError, match="ckpt_path=last"):
        run_py(monkeypatch, *args, "trainer.max_steps=4")
    run_py(monkeypatch, *args, "trainer.max_steps=4", "ckpt_path=last")
    last = _ckpt(run.checkpoints / "last.ckpt")
    assert last["global_step"] == 4
    second = ProgressLog.from_checkpoint(last)
    assert second["instances"] == 16 and second["seconds"] > first["seconds"]
    steps = _steps(run.metrics, "val/reward")  # the first part's rows are kept
    assert steps[: len(first_steps)] == first_steps and len(steps) == len(first_steps) + 1
    assert max(steps) > max(first_steps)
    records = run.invocations()
    assert [r["resumed_from"] for r in records] == [None, str(run.checkpoints / "last.ckpt")]
    assert records[1]["command"].endswith("trainer.max_steps=4 ckpt_path=last")
    meta = json.loads(run.policy_best.with_suffix(".json").read_text())
    assert len(meta["training"]) == 2  # the refused start left no record


def test_newest_checkpoint_includes_the_periodic_one(tmp_path):
    run = RunFolder(tmp_path)
    assert run.newest_checkpoint() is None and training.resume_checkpoint("last", run) is None
    run.checkpoints.mkdir()
    for i, name in enumerate(["best.ckpt", "last.ckpt", "latest.ckpt"]):
        (run.checkpoints / name).write_text(name)
        os.utime(run.checkpoints / name, ns=(10**18 + i, 10**18 + i))
    assert training.resume_checkpoint("last", run) == run.checkpoints / "latest.ckpt"
    assert training.resume_checkpoint(None, run) is None
    with pytest.raises(FileNotFoundError, match="ckpt_path: 'nope.ckpt'"):
        training.resume_checkpoint("nope.ckpt", run)


def test_max_time_stops_cleanly(in_tmp, monkeypatch):
    run_py(
        monkeypatch, "experiment=tiny", "trainer.max_epochs=100000", "trainer.max_time={seconds:1}"
    )
    run = RunFolder(in_tmp / "runs" / "tiny_drlhq")
    steps = _ckpt(run.checkpoints / "last.ckpt")["global_step"]
    assert 0 < steps < 200_000
    assert run.policy_best.with_suffix(".pt").is_file() and run.learning_curve.is_file()


def test_init_from_a_saved_policy_its_architecture_wins(in_tmp, monkeypatch):
    torch.manual_seed(0)
    start = build_policy(
        "drlhq", embed_dim=8, num_encoder_layers=2, num_heads=1, feedforward_hidden=16
    )
    start.save_pretrained(in_tmp / "start")
    with pytest.raises(ValueError, match="init: .*DRLHQPolicy.*POMOStarPolicy"):
        run_py(monkeypatch, "experiment=tiny", "model=pomo", f"init={in_tmp / 'start.pt'}")
    run_py(monkeypatch, "experiment=tiny", f"init={in_tmp / 'start.pt'}")
    run = RunFolder(in_tmp / "runs" / "tiny_drlhq")
    trained = load_policy(run.policy_best.with_suffix(".pt"))
    assert trained.config == start.config  # not experiment=tiny's 16-d, 1 layer
    before, after = start.state_dict(), trained.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    assert json.loads(run.policy_best.with_suffix(".json").read_text())["init"].endswith("start.pt")


def test_ship_a_run(in_tmp, monkeypatch):
    run_py(monkeypatch, "experiment=tiny", "trainer.max_epochs=2")
    run = RunFolder(in_tmp / "runs" / "tiny_drlhq")
    weights = shipping.ship_run(run.path, "tiny_clrp10", dest=in_tmp / "ship", hardware="a test")
    meta = json.loads(weights.with_suffix(".json").read_text())
    assert meta["class"] == "DRLHQPolicy" and meta["config"]["embed_dim"] == 16
    assert meta["training"] == ["python run.py experiment=tiny trainer.max_epochs=2"]
    assert meta["seed"] == 0 and meta["preset"] == "clrp10" and meta["hardware"] == "a test"
    best = _ckpt(run.checkpoints / "best.ckpt")
    assert meta["global_step"] == best["global_step"]
    assert meta["training_instances"] == 4 * best["global_step"]
    assert meta["validation"]["metric"] == "val/max_reward" and meta["validation"]["instances"] == 4
    shipped = torch.load(weights, weights_only=True)
    assert all(torch.equal(shipped[k], v) for k, v in _policy_state(best).items())
    with pytest.raises(FileExistsError, match="force"):
        shipping.ship_run(run.path, "tiny_clrp10", dest=in_tmp / "ship")
    with pytest.raises(ValueError, match="name: 'a/b'"):
        shipping.ship_run(run.path, "a/b", dest=in_tmp / "ship")


def test_readme_commands(in_tmp, monkeypatch):
    """The README's training commands, in order, with tiny sizes appended."""
    steps = iter(
        ["trainer.max_steps=2", "trainer.max_steps=4", "trainer.max_steps=2", "trainer.max_steps=1"]
    )
    for command in README_COMMANDS:
        argv = shlex.split(command)
        if argv[:2] == ["python", "run.py"]:
            run_py(monkeypatch, *argv[2:], *TINY_TAIL, next(steps))
        elif argv[:3] == ["python", "-m", "clrp_rl4co.models.shipping"]:
            shipping.main([*argv[3:], "--dest", str(in_tmp / "shipped")])
        else:
            assert argv[:3] == ["python", "-m", "experiments.compare_runs"], command
            compare_runs.main(argv[3:])
    runs = in_tmp / "runs"
    assert _ckpt(runs / "drlhq_clrp20" / "checkpoints" / "last.ckpt")["global_step"] == 4
    invocations = RunFolder(runs / "drlhq_clrp20").invocations()
    assert len(invocations) == 2
    # the CPU experiment compiles the decoder's step where the rule says so (a C++ compiler),
    # through a checkpoint, a resume and shipping
    assert [i["compiled_decoder"] for i in invocations] == [training.training_compile("cpu")] * 2
    with (runs / "clrp20.csv").open(newline="") as f:
        labels = {row["label"] for row in csv.DictReader(f)}
    assert labels == {"DRLHQ", "POMO*"} and (runs / "clrp20.png").is_file()
    finetuned = load_policy(runs / "drlhq_clrp50" / "policy_best.pt")
    assert finetuned.config == load_policy("drlhq_clrp20").config  # the shipped architecture
    meta = json.loads((in_tmp / "shipped" / "drlhq_clrp50_mine.json").read_text())
    assert meta["preset"] == "clrp50" and meta["init"] == "drlhq_clrp20"
    assert meta["training"][0].startswith(README_COMMANDS[4])


# --- run.py as a program: DDP with two CPU processes -----------------------------------------


def test_run_py_ddp_two_cpu_processes(tmp_path):
    """`python run.py` end to end under 2-process CPU DDP (a subprocess: DDP relaunches it)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HYDRA_FULL_ERROR": "1"}
    env.pop("PROJECT_ROOT", None)
    cmd = [
        sys.executable,
        str(ROOT / "run.py"),
        "experiment=tiny",
        "trainer=ddp",
        "trainer.accelerator=cpu",
    ]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run = RunFolder(tmp_path / "runs" / "tiny_drlhq")
    (record,) = run.invocations()
    assert record["world_size"] == 2 and record["precision"] == "32-true"
    meta = json.loads(run.policy_best.with_suffix(".json").read_text())
    # 8 instances per epoch shared by 2 processes: one step of 4 instances each
    assert meta["global_step"] == 1 and meta["training_instances"] == 8
    assert run.metrics.is_file() and run.learning_curve.is_file()


def test_the_leader_reward_is_one_config_key():
    """``model.leader_weight`` (null in base.yaml: POMO's loss) builds the leader-reward POMO."""
    from hydra.utils import instantiate

    from clrp_rl4co.models import LeaderRewardPOMO

    assert _compose(["model=drlhq"]).model.leader_weight is None
    cfg = _compose(["model=drlhq", "model.leader_weight=4.0", "model.policy.embed_dim=16",
                    "model.policy.num_heads=2", "model.policy.num_encoder_layers=1"])  # fmt: skip
    model = instantiate(cfg.model, env=CLRPEnv(generator_params={"preset": "clrp10"}),
                        _convert_="all")  # fmt: skip
    assert isinstance(model, LeaderRewardPOMO) and model.leader_weight == 4.0
