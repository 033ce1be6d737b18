"""POMO training time per decoding step: DRLHQ on CLRP20 next to RL4CO's stock POMO on CVRP20.

The CLRP model is the one ``run.py`` trains (``configs/``: env, ``model=drlhq``, built by
``clrp_rl4co.models.build_model``); the CVRP model is RL4CO's ``POMO`` with its default policy
of the same size. One process, same batch, interleaved repetitions. One *training iteration*
is RL4CO POMO's ``shared_step`` on a batch (multistart sampling with N starts, the
shared-baseline loss), backward and an Adam step. Its time is divided by the number of decoding
steps of that batch (CLRP20 has more nodes and steps than CVRP20, so the comparison is per step).

    python benchmarks/train_throughput.py --embed-dim 128 --layers 6 --heads 8 --batch-size 64

Prints a Markdown table and the ratio (target <= 1.3).

**Precision sweep** (``--sweep``): training instances per second of the shipped
``drlhq_<preset>`` models (128-d, 3 layers) for each preset, at the campaign's batch sizes on a
GPU (512 / 512 / 256 / 128; ``--batch-size`` elsewhere), under each setting, with the ratio to
today's fp32 setting on the same device in the same run, then a short learning check:

    python benchmarks/train_throughput.py --sweep --device cuda           # ~2 minutes on a GPU
    python benchmarks/train_throughput.py --sweep --device cpu --batch-size 16 --seconds 2 \
        --presets clrp10 clrp20 --learn-preset clrp10 --learn-steps 10 --learn-val 100

Settings: ``fp32 strict`` (``torch.set_float32_matmul_precision('highest')``); ``fp32 today``
(``'medium'``: what RL4COTrainer sets, i.e. TF32 matmuls on CUDA; the shipped models were
fine-tuned so); ``bf16 autocast`` (``'medium'`` + ``torch.autocast(bfloat16)``, what
Lightning's ``bf16-mixed`` does, the campaign's setting on GPUs; the env's costs and the reward
stay float: checked); ``+ compile`` (the same with ``torch.compile`` on the policy's encoder;
on a GPU or with ``--compile``); ``batch x2`` (bf16 with twice the batch; GPU). The whole sweep
keeps to ``--budget-s``: rows that would not fit are printed as skipped. Each row trains a fresh
copy of the shipped weights (Adam, lr 1e-4, the shared-baseline POMO loss) on batches drawn
beforehand; the time of an iteration includes the env and the optimiser step.

Learning check: from the shipped model of ``--learn-preset``, ``--learn-steps`` POMO steps on
the same batches with fp32 today (seed 0), fp32 today (seed 1: other batches and sampling, the
run-to-run noise) and bf16 autocast (seed 0); then the mean objective (multistart greedy, x8 on
a GPU) on the first ``--learn-val`` instances of the campaign's validation set, in fp32. bf16
is "within noise" if its distance to fp32 seed 0 is at most the larger of the seed-to-seed
distance and twice the paired standard error over the validation instances.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from lightning.pytorch import LightningModule
from rl4co.envs import CVRPEnv
from rl4co.models import POMO
from rl4co.models.zoo.am import AttentionModelPolicy

from clrp_rl4co.reporting import provenance
from clrp_rl4co.reporting.markdown import markdown_table

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
if str(CONFIG_DIR.parent) not in sys.path:  # the sweep reads experiments.campaign's settings
    sys.path.insert(0, str(CONFIG_DIR.parent))


def train_iteration(model: LightningModule, td, optimizer) -> tuple[float, int]:
    """(seconds, decoding steps) of one POMO training iteration on the batch ``td``."""
    steps: list[int] = []
    hook = model.policy.register_forward_hook(lambda m, i, o: steps.append(o["actions"].shape[1]))
    start = time.perf_counter()
    loss = model.shared_step(td, 0, phase="train")["loss"]
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    seconds = time.perf_counter() - start
    hook.remove()
    return seconds, steps[0]


# --------------------------------------------------------------------------- precision sweep
#: Settings of the sweep: (matmul precision, autocast to bf16, compile the encoder, batch x).
SETTINGS: dict[str, tuple[str, bool, bool, int]] = {
    "fp32 strict": ("highest", False, False, 1),
    "fp32 today": ("medium", False, False, 1),
    "bf16 autocast": ("medium", True, False, 1),
    "bf16 autocast + compile": ("medium", True, True, 1),
    "bf16 autocast, batch x2": ("medium", True, False, 2),
}
BASELINE = "fp32 today"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _autocast(device: torch.device, on: bool):
    if not on:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


def sweep_model(preset: str, device: torch.device, seed: int = 0):
    """(POMO training model of the shipped ``drlhq_<preset>``, its env) on ``device``."""
    from clrp_rl4co.models import load_policy

    torch.manual_seed(seed)
    overrides = ["model=drlhq", f"env.generator_params.preset={preset}"]
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("main", overrides)
    env = instantiate(cfg.env, device=str(device))
    policy = load_policy(f"drlhq_{preset}")
    model = instantiate(cfg.model, env=env, policy=policy, _convert_="all")
    return model.to(device).train(), env


def draw_batches(env, batch: int, count: int, seed: int, device: torch.device) -> list:
    torch.manual_seed(seed)
    return [env.generator(batch).to(device) for _ in range(count)]


def train_steps(model, batches, device, autocast: bool, seconds: float | None = None) -> dict:
    """POMO steps over ``batches`` (cycled while ``seconds`` last, else once each):
    iterations, seconds, dtype of the rewards."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    dtypes: set[str] = set()
    hook = model.policy.register_forward_hook(lambda m, i, o: dtypes.add(str(o["reward"].dtype)))
    _sync(device)
    start = time.perf_counter()
    done = 0
    while True:
        td = batches[done % len(batches)]
        with _autocast(device, autocast):
            loss = model.shared_step(td.clone(), 0, phase="train")["loss"]
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        done += 1
        if seconds is None and done == len(batches):
            break
        if seconds is not None and done >= 2:
            _sync(device)
            if time.perf_counter() - start >= seconds:
                break
    _sync(device)
    hook.remove()
    return {"iterations": done, "seconds": time.perf_counter() - start, "reward": dtypes}


def measure(preset, setting, batch, device, warmup, seconds) -> dict:
    """Instances per second of one preset under one :data:`SETTINGS` row."""
    precision, autocast, compiled, scale = SETTINGS[setting]
    torch.set_float32_matmul_precision(precision)
    model, env = sweep_model(preset, device)
    if compiled:
        model.policy.encoder = torch.compile(model.policy.encoder)
    size = batch * scale
    batches = draw_batches(env, size, 4, seed=1, device=device)
    t0 = time.perf_counter()
    train_steps(model, batches[:warmup], device, autocast)  # warm-up (and compilation)
    warm_s = time.perf_counter() - t0
    run = train_steps(model, batches, device, autocast, seconds=seconds)
    del model, env, batches
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return {
        "instances_per_s": run["iterations"] * size / run["seconds"],
        "iterations": run["iterations"],
        "batch": size,
        "warmup_s": warm_s,
        "reward_dtype": sorted(run["reward"]),
    }


@torch.no_grad()
def per_instance_cost(policy, env, instances, decode: str, chunk: int) -> torch.Tensor:
    from clrp_rl4co.models import decode_batch

    policy.eval()
    costs = [
        decode_batch(policy, env, instances[i : i + chunk], decode)[1]["total"].double().cpu()
        for i in range(0, instances.batch_size[0], chunk)
    ]
    return torch.cat(costs)


def learning_check(preset, batch, steps, val_size, device) -> dict:
    """fp32 today (seeds 0, 1) and bf16 autocast (seed 0), ``steps`` POMO steps each from
    the shipped model, then the validation objective in fp32 (see the module docstring)."""
    from clrp_rl4co.policies import PRETRAINED_DIR
    from experiments.campaign.settings import CAMPAIGN_DIR
    from experiments.campaign.state import load_state, load_val_set
    from experiments.campaign.validation import val_batch_size

    state = load_state(preset, "shipped", CAMPAIGN_DIR, PRETRAINED_DIR)
    val = load_val_set(CAMPAIGN_DIR, state.validation)[:val_size].to(device)
    gpu = device.type == "cuda"
    decode = "multistart_greedy+aug8" if gpu else "multistart_greedy"
    chunk = val_batch_size(preset) if gpu else 50
    torch.set_float32_matmul_precision("medium")
    runs = {}
    for name, seed, autocast in (
        ("start", 0, False),
        ("fp32 today, seed 0", 0, False),
        ("fp32 today, seed 1", 1, False),
        ("bf16 autocast, seed 0", 0, True),
    ):
        model, env = sweep_model(preset, device, seed=seed)
        if name != "start":
            batches = draw_batches(env, batch, steps, seed=100 + seed, device=device)
            torch.manual_seed(seed)
            took = train_steps(model, batches, device, autocast)
        else:
            took = {"seconds": 0.0, "reward": set()}
        costs = per_instance_cost(model.policy, env, val, decode, chunk)
        runs[name] = {
            "costs": costs,
            "mean": float(costs.mean()),
            "train_s": took["seconds"],
            "reward": sorted(took["reward"]),
        }
    base, other, bf16 = (runs[k]["costs"] for k in list(runs)[1:])
    diff = bf16 - base
    se = float(diff.std() / math.sqrt(len(diff)))
    seed_gap = abs(float(other.mean() - base.mean()))
    gap = abs(float(diff.mean()))
    return {
        "preset": preset,
        "decode": decode,
        "steps": steps,
        "batch": batch,
        "instances": steps * batch,
        "val_size": int(val.batch_size[0]),
        "runs": {k: {kk: vv for kk, vv in v.items() if kk != "costs"} for k, v in runs.items()},
        "bf16_minus_fp32": float(diff.mean()),
        "paired_se": se,
        "seed_gap": seed_gap,
        "within_noise": gap <= max(seed_gap, 2 * se),
    }


def sweep(args: argparse.Namespace) -> dict:
    """The precision sweep and the learning check (see the module docstring)."""
    from experiments.campaign.settings import PRESET_SETTINGS

    t_start = time.perf_counter()
    device = torch.device(
        ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    )
    gpu = device.type == "cuda"
    name = provenance.machine(device) + ("" if gpu else f", {args.threads} thread(s)")
    rows = ["fp32 strict", BASELINE, "bf16 autocast"]
    extra = []
    if gpu:
        extra.append("bf16 autocast, batch x2")
    if gpu or args.compile:
        extra.append("bf16 autocast + compile")  # last: compilation takes the longest
    warmup = args.warmup if args.warmup is not None else (3 if gpu else 1)
    print(
        f"device {name}; torch {torch.__version__}; commit {provenance.commit_line()}; "
        f"{args.rounds} x {args.seconds:g} s per row, each after {warmup} warm-up "
        f"iteration(s); budget {args.budget_s:g} s",
        flush=True,
    )
    results: dict = {"device": name, "commit": provenance.commit_line(), "rows": {}}
    row_cost: dict[str, float] = {}

    acc: dict[tuple[str, str], dict] = {}

    def measure_once(preset: str, setting: str) -> None:
        """One timed slice of ``setting`` on ``preset``, added to ``acc`` (or a note)."""
        batch = args.batch_size or (PRESET_SETTINGS[preset].batch_size if gpu else 16)
        spent = time.perf_counter() - t_start
        if spent + row_cost.get(setting, args.seconds + 5) > args.budget_s:
            acc.setdefault((preset, setting), {"note": "skipped (budget)", "batch": batch})
            return
        t0 = time.perf_counter()
        try:
            r = measure(preset, setting, batch, device, warmup, args.seconds)
        except Exception as e:  # noqa: BLE001 - a failed setting is a result, not a crash
            note = f"failed: {type(e).__name__}: {str(e)[:120]}"
            acc[(preset, setting)] = {"note": note, "batch": batch}
            return
        row_cost[setting] = time.perf_counter() - t0
        a = acc.setdefault((preset, setting), {"iterations": 0, "seconds": 0.0, "warmup_s": []})
        if "note" in a:
            return
        a["batch"] = r["batch"]
        a["iterations"] += r["iterations"]
        a["seconds"] += r["iterations"] * r["batch"] / r["instances_per_s"]
        a["warmup_s"].append(r["warmup_s"])
        a["reward_dtype"] = r["reward_dtype"]

    def table_row(preset: str, setting: str) -> list:
        a = acc.get((preset, setting), {"note": "not run", "batch": ""})
        if "note" in a:
            return [preset, setting, a["batch"], "", a["note"], "", "", ""]
        rate = a["iterations"] * a["batch"] / a["seconds"]
        base = results["rows"].get((preset, BASELINE))
        ratio = (
            1.0 if setting == BASELINE else (rate / base["instances_per_s"] if base else math.nan)
        )
        results["rows"][(preset, setting)] = {**a, "instances_per_s": rate, "ratio": ratio}
        return [preset, setting, a["batch"], a["iterations"], f"{rate:,.0f}", f"{ratio:.2f}",
                f"{max(a['warmup_s']):.1f}", ", ".join(a["reward_dtype"])]  # fmt: skip

    order = [BASELINE] + [s for s in rows if s != BASELINE]
    table = []
    for preset in args.presets:  # rounds interleave the settings (load drifts)
        for _ in range(args.rounds):
            for setting in order:
                measure_once(preset, setting)
        table += [table_row(preset, setting) for setting in order]
    header = ["preset", "setting", "batch", "iterations", "instances / s", "ratio to fp32 today",
              "warm-up s", "reward dtype"]  # fmt: skip
    print(markdown_table(header, table), flush=True)
    learn_batch = args.batch_size or (PRESET_SETTINGS[args.learn_preset].batch_size if gpu else 16)
    if args.learn_steps > 0:
        t0 = time.perf_counter()
        lc = learning_check(
            args.learn_preset, learn_batch, args.learn_steps, args.learn_val, device
        )
        results["learning"] = lc
        print(
            f"\nlearning check ({time.perf_counter() - t0:.0f} s): {lc['preset']}, "
            f"{lc['steps']} steps x {lc['batch']} = {lc['instances']:,} instances from the "
            f"shipped model, {lc['decode']} on {lc['val_size']} validation instances (fp32)"
        )
        for k, v in lc["runs"].items():
            print(
                f"  {k}: {v['mean']:.4f} (training {v['train_s']:.1f} s, reward "
                f"{', '.join(v['reward']) or '-'})"
            )
        print(
            f"  bf16 - fp32 (seed 0) = {lc['bf16_minus_fp32']:+.4f} (paired SE "
            f"{lc['paired_se']:.4f}); seed 1 - seed 0 = {lc['seed_gap']:.4f} in absolute value: "
            f"{'within' if lc['within_noise'] else 'NOT within'} noise",
            flush=True,
        )
    if extra:
        more = []
        for setting in extra:
            for preset in args.presets:
                measure_once(preset, setting)
                more.append(table_row(preset, setting))
        print(markdown_table(header, more), flush=True)
    print(f"\nsweep wall time {time.perf_counter() - t_start:.0f} s", flush=True)
    torch.set_float32_matmul_precision("highest")
    return results


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--embed-dim", type=int, default=128)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--ff", type=int, default=512)
    p.add_argument("--batch-size", type=int, help="64; with --sweep: 512/512/256/128 on GPU, 16")
    p.add_argument("--repeats", type=int, default=6)
    p.add_argument("--warmup", type=int, help="1; with --sweep: 3 on GPU")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    p.add_argument("--sweep", action="store_true", help="precision sweep + learning check")
    p.add_argument("--presets", nargs="+", default=["clrp10", "clrp20", "clrp50", "clrp100"])
    p.add_argument("--seconds", type=float, default=3.0, help="sweep: timed seconds per slice")
    p.add_argument("--rounds", type=int, default=2, help="sweep: interleaved slices per row")
    p.add_argument("--budget-s", type=float, default=120.0, help="sweep: wall seconds in all")
    p.add_argument("--compile", action="store_true", help="sweep: the compile row on CPU too")
    p.add_argument("--learn-preset", default="clrp20")
    p.add_argument("--learn-steps", type=int, default=40, help="sweep: 0 skips the check")
    p.add_argument("--learn-val", type=int, default=1000)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    warnings.filterwarnings("ignore", message=".*self.log.*")  # shared_step outside a Trainer
    if args.sweep:
        warnings.filterwarnings("ignore", message=".*is an instance of `nn.Module`.*")
        return sweep(args)
    args.batch_size = args.batch_size or 64
    args.warmup = 1 if args.warmup is None else args.warmup
    overrides = [
        "model=drlhq",
        "env.generator_params.preset=clrp20",
        f"model.policy.embed_dim={args.embed_dim}",
        f"model.policy.num_encoder_layers={args.layers}",
        f"model.policy.num_heads={args.heads}",
        f"model.policy.feedforward_hidden={args.ff}",
    ]
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("main", overrides)
    clrp_env = instantiate(cfg.env, device=args.device)
    clrp_model = instantiate(cfg.model, env=clrp_env, _convert_="all")
    size = dict(clrp_model.policy.config)
    cvrp_env = CVRPEnv(generator_params={"num_loc": 20}, check_solution=False, device=args.device)
    # RL4CO's stock POMO policy (what POMO builds without a policy), same size and settings
    cvrp_model = POMO(cvrp_env, policy_kwargs=size)
    assert type(cvrp_model.policy) is AttentionModelPolicy
    cases = {
        "DRLHQ / CLRP20": (clrp_model, clrp_env),
        "RL4CO POMO / CVRP20": (cvrp_model, cvrp_env),
    }
    for model, _ in cases.values():
        model.to(args.device).train()
    optimizers = {k: torch.optim.Adam(m.parameters(), lr=1e-4) for k, (m, _) in cases.items()}
    times: dict[str, list[float]] = {k: [] for k in cases}
    steps: dict[str, list[int]] = {k: [] for k in cases}
    for rep in range(args.warmup + args.repeats):
        for name, (model, env) in cases.items():
            td = env.generator(args.batch_size).to(args.device)
            seconds, num_steps = train_iteration(model, td, optimizers[name])
            if rep >= args.warmup:
                times[name].append(seconds)
                steps[name].append(num_steps)
    rows = {}
    print(
        f"policy {size}, batch {args.batch_size} x N starts, {args.repeats} iterations, "
        f"{args.threads} thread(s), device {args.device}"
    )
    table = []
    for name in cases:
        per_step = [t / s for t, s in zip(times[name], steps[name])]
        rows[name] = statistics.median(per_step)
        median_s, mean_steps = statistics.median(times[name]), statistics.mean(steps[name])
        table.append([name, f"{median_s:.3f}", f"{mean_steps:.1f}", f"{1000 * rows[name]:.2f}"])
    header = ["case", "s / iteration (median)", "decoding steps (mean)", "ms / decoding step"]
    print(markdown_table(header, table))
    names = list(cases)
    ratio = rows[names[0]] / rows[names[1]]
    print(f"ratio per decoding step (DRLHQ/CLRP20 : POMO/CVRP20) = {ratio:.3f} (target <= 1.3)")
    return {"per_step": rows, "ratio": ratio}


if __name__ == "__main__":
    main()
