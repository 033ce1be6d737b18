"""One campaign session: plan every track's time, run ``python run.py`` per track (the
package's training path with :class:`.callback.CampaignCallback`) and summarise the archives."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from clrp_rl4co.reporting import provenance

from .schedule import minute_shares, relative_gap, sequential_durations, shared_durations
from .settings import (
    CAMPAIGN_DIR,
    MODEL_SIZES,
    PRESET_SETTINGS,
    PRESETS,
    REPO,
    TRAIN_SEED_BASE,
    learning_rate,
    paper_target,
    session_id,
    sha256_file,
    utc_now,
)
from .state import load_state, load_val_set, shipped_stem, start_weights
from .validation import val_batch_size

#: Seconds the run keeps free at its end (stopping, final validations, archives).
END_MARGIN_S = 20.0


@dataclass
class RunOptions:
    """What ``run`` takes (the command's flags; see :func:`main`)."""

    minutes: float
    out: Path
    presets: tuple[str, ...] = PRESETS
    size: str = "shipped"
    state_dir: Path = CAMPAIGN_DIR
    pretrained_dir: Path | None = None
    work: Path | None = None
    concurrent: bool | None = None
    in_process: bool = False
    val_every_s: float = 50.0
    floor: float = 0.1
    accelerator: str = "auto"
    precision: str | None = None
    compile: bool | None = None
    threads: int | None = None
    batch_size: int | None = None
    epoch_size: int | None = None
    val_size: int | None = None
    startup_s: float | None = None
    command: str | None = None
    dry_run: bool = False


def _hydra_path(path: str | Path) -> str:
    """A path as a Hydra override value: bare when Hydra's grammar takes it as is, else
    single-quoted."""
    text = str(path)
    return text if re.fullmatch(r"[A-Za-z0-9/._-]+", text) else "'" + text.replace("'", "\\'") + "'"


def run_overrides(
    plan_file: Path,
    plan: dict[str, Any],
    options: RunOptions,
    architecture: dict[str, int] | None,
    threads: int | None,
) -> list[str]:
    """The ``python run.py`` overrides of one track's session: the package's training path
    with the campaign's callback, no Lightning validation or checkpoints (the callback keeps
    the weights), a constant learning rate, no schedule."""
    settings = PRESET_SETTINGS[plan["preset"]]
    batch = options.batch_size or settings.batch_size
    epoch = options.epoch_size or settings.epoch_size
    work = Path(plan["work_dir"])
    overrides = [
        "model=drlhq",
        f"env.generator_params.preset={plan['preset']}",
        f"run_name={plan['track']}",
        f"paths.log_dir={_hydra_path(work.parent)}",
        f"paths.output_dir={_hydra_path(work)}",
        f"seed={plan['seed']}",
        "val_seed=null",
        "save_policy=false",
        f"model.batch_size={batch}",
        f"model.train_data_size={epoch}",
        "model.val_data_size=4",
        "model.val_batch_size=4",
        "model.num_augment=1",
        "model.lr_schedule=null",
        f"model.optimizer_kwargs.lr={plan['lr']}",
        "trainer.max_epochs=100000000",
        "++trainer.limit_val_batches=0",
        "trainer.enable_progress_bar=false",
        "++trainer.enable_model_summary=false",
        f"trainer.accelerator={options.accelerator}",
        "trainer.devices=1",
        f"trainer.precision={options.precision or 'null'}",
        f"compile={'null' if options.compile is None else str(options.compile).lower()}",
        "callbacks.model_checkpoint=null",
        "callbacks.latest_checkpoint=null",
        "+callbacks.campaign._target_=experiments.campaign.callback.CampaignCallback",
        f"+callbacks.campaign.plan={_hydra_path(plan_file)}",
    ]
    if threads:
        overrides.append(f"num_threads={threads}")
    if plan["start"]["weights"]:
        overrides.append(f"init={_hydra_path(plan['start']['weights'])}")
    elif architecture:
        overrides += [f"model.policy.{k}={v}" for k, v in architecture.items()]
    return overrides


def _train_in_process(overrides: list[str], command: str) -> None:
    from hydra import compose, initialize_config_dir

    from clrp_rl4co.models.training import CONFIG_DIR, train

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("main", overrides)
    train(cfg, command=command)


def _start_meta(weights: Path | None) -> dict[str, Any]:
    """The start weights' JSON without class and config (their provenance)."""
    if weights is None:
        return {}
    meta = json.loads(weights.with_suffix(".json").read_text())
    return {k: v for k, v in meta.items() if k not in ("class", "config")}


def _cuda() -> bool:
    return torch.cuda.is_available()


def plan_session(options: RunOptions, session: str, t0: float) -> dict[str, Any]:
    """Every track's plan (written to ``<work>/<track>/plan.json``) and the shared schedule."""
    from clrp_rl4co.policies import PRETRAINED_DIR

    pretrained = Path(options.pretrained_dir or PRETRAINED_DIR)
    gpu = options.accelerator in ("gpu", "cuda") or (options.accelerator == "auto" and _cuda())
    concurrent = gpu if options.concurrent is None else options.concurrent
    if options.in_process and concurrent:
        raise ValueError("in_process: runs the tracks one after the other; drop --concurrent")
    startup = options.startup_s if options.startup_s is not None else (45.0 if gpu else 5.0)
    deadline = t0 + 60.0 * options.minutes - END_MARGIN_S
    window = deadline - time.time() - startup
    if window <= 0:
        raise ValueError(f"minutes: {options.minutes} leaves no training time after start-up")
    states = {}
    for preset in options.presets:
        state = load_state(preset, options.size, options.state_dir, pretrained, options.val_size)
        states[state.track] = state
    gaps = {t: relative_gap(s.value, paper_target(s.preset)) for t, s in states.items()}
    shares = minute_shares(gaps, options.floor if len(states) > 1 else 0.0)
    durations = (shared_durations if concurrent else sequential_durations)(shares, window)
    work = Path(options.work)
    plans = {}
    for track, state in states.items():
        weights = start_weights(state, options.state_dir, pretrained)
        stem = shipped_stem(state.preset, pretrained)
        exists = stem.with_suffix(".pt").is_file() and stem.with_suffix(".json").is_file()
        plans[track] = {
            "session": session,
            "track": track,
            "preset": state.preset,
            "size": state.size,
            "seed": TRAIN_SEED_BASE + len(state.sessions),
            "lr": learning_rate(state.instances),
            "command": options.command,
            "state_sessions": len(state.sessions),
            "validation": state.validation,
            "val_file": str(Path(options.state_dir) / state.validation["file"]),
            "val_batch": val_batch_size(state.preset),
            "val_every_s": options.val_every_s,
            "start": {
                "kind": state.resume,
                "weights": str(weights) if weights else None,
                "sha256": sha256_file(weights) if weights else None,
                "instances": state.instances,
                "value": state.value,
                "meta": _start_meta(weights),
            },
            "shipped": {
                "stem": str(stem),
                "weights": str(stem.with_suffix(".pt")),
                "exists": exists,
                "sha256": sha256_file(stem.with_suffix(".pt")) if exists else None,
            },
            "gap": gaps[track],
            "shares": shares,
            "train_seconds": durations[track],
            "deadline_unix": deadline,
            "processes": len(states) if concurrent else 1,
            "work_dir": str(work / track),
            "pack_dir": str(work / track / "pack"),
            "log_file": str(work / f"{track}.log"),
            "out_tar": str(Path(options.out) / f"{track}.tar"),
        }
        load_val_set(options.state_dir, state.validation)  # present, checksum as pinned
    return {
        "concurrent": concurrent,
        "deadline_unix": deadline,
        "window_s": window,
        "plans": plans,
        "states": states,
    }


def run(options: RunOptions) -> dict[str, Any]:
    """One campaign session (see :mod:`experiments.campaign`); returns what ``campaign.json``
    says."""
    t0 = time.time()
    session = session_id()
    options.work = Path(options.work or REPO / "runs" / "campaign" / session)
    options.out = Path(options.out)
    if not options.dry_run:
        options.out.mkdir(parents=True, exist_ok=True)
    options.work.mkdir(parents=True, exist_ok=True)
    schedule = plan_session(options, session, t0)
    plans, states = schedule["plans"], schedule["states"]
    threads = options.threads
    if threads is None and schedule["concurrent"]:
        threads = max(1, (os.cpu_count() or 1) // len(plans))
    summary: dict[str, Any] = {
        "session": session,
        "command": options.command,
        "started_utc": utc_now(),
        "device": provenance.machine("cuda:0" if _cuda() else "cpu"),
        "concurrent": schedule["concurrent"],
        "minutes": options.minutes,
        "window_s": round(schedule["window_s"], 1),
        "tracks": {},
    }
    for track, plan in plans.items():
        architecture = MODEL_SIZES[states[track].size]
        plan_file = Path(plan["work_dir"]) / "plan.json"
        plan_file.parent.mkdir(parents=True, exist_ok=True)
        overrides = run_overrides(plan_file, plan, options, architecture, threads)
        plan["run_command"] = shlex.join(["python", "run.py", *overrides])
        plan_file.write_text(json.dumps(plan, indent=2))
        summary["tracks"][track] = {
            "gap": plan["gap"],
            "share": plan["shares"][track],
            "train_seconds": round(plan["train_seconds"], 1),
            "start": plan["start"]["kind"],
            "instances": plan["start"]["instances"],
            "lr": plan["lr"],
            "overrides": overrides,
        }
    if options.dry_run:  # the plan only: shares, durations, starts (nothing in out)
        _write_summary(options.work, summary)
        print((options.work / "campaign.json").read_text(), flush=True)
        return summary
    _write_summary(options.out, summary)
    order = sorted(plans, key=lambda t: -plans[t]["train_seconds"])
    if options.in_process:
        for track in order:
            overrides = summary["tracks"][track]["overrides"]
            print(f"[campaign] {track}: {plans[track]['train_seconds']:.0f} s", flush=True)
            _train_in_process(overrides, plans[track]["run_command"])
            summary["tracks"][track]["exit"] = 0
    else:
        _run_processes(plans, summary, schedule, options)
    summary["ended_utc"] = utc_now()
    summary["wall_seconds"] = round(time.time() - t0, 1)
    for track in plans:
        summary["tracks"][track]["result"] = archive_line(options.out / f"{track}.tar")
        print(f"[campaign] {track}: {summary['tracks'][track]['result']}", flush=True)
    _write_summary(options.out, summary)
    return summary


def archive_line(tar_path: Path) -> str:
    """One line on a track's archive: shipped model's and start's values, best validation,
    steps, instances, whether the session completed."""
    if not tar_path.is_file():
        return "no archive"
    with tarfile.open(tar_path) as tar:
        record = json.load(tar.extractfile("session.json"))
    points, best = record["points"], record["best"]
    start = f"{points[0]['value']:.4f}" if points else "n/a"
    shipped = record["shipped"]["value"]
    shipped_text = "n/a" if shipped is None else f"{shipped:.4f}"
    best_text = "none better"
    if best is not None:
        best_text = f"{best['value']:.4f} at step {best['step']} ({best['instances']:,} instances)"
    return (
        f"shipped {shipped_text}, start {start}, best {best_text}; {record['steps']} steps, "
        f"{len(points)} validations, {record['wall_seconds']:.0f} s, "
        + ("complete" if record["complete"] else "incomplete")
    )


def _write_summary(out: Path, summary: dict[str, Any]) -> None:
    tmp = out / "campaign.json.part"
    data = {k: v for k, v in summary.items()}
    data["tracks"] = {
        t: {k: v for k, v in info.items() if k != "overrides"}
        for t, info in summary["tracks"].items()
    }
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, out / "campaign.json")


def _run_processes(
    plans: dict[str, dict[str, Any]],
    summary: dict[str, Any],
    schedule: dict[str, Any],
    options: RunOptions,
) -> None:
    """``python run.py`` per track: all at once (concurrent) or one after the other; children
    still running past the deadline are stopped (terminate, then kill)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "HYDRA_FULL_ERROR": "1"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    waiting = sorted(plans, key=lambda t: -plans[t]["train_seconds"])
    running: dict[str, tuple[subprocess.Popen, Any]] = {}
    hard_stop = schedule["deadline_unix"] + END_MARGIN_S / 2
    while waiting or running:
        while waiting and (schedule["concurrent"] or not running):
            track = waiting.pop(0)
            overrides = summary["tracks"][track]["overrides"]
            log = Path(plans[track]["log_file"]).open("w")
            cmd = [sys.executable, str(REPO / "run.py"), *overrides]
            running[track] = (subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=log), log)
            print(
                f"[campaign] {track}: started ({plans[track]['train_seconds']:.0f} s)", flush=True
            )
        time.sleep(1.0)
        for track, (proc, log) in list(running.items()):
            if proc.poll() is not None:
                log.close()
                summary["tracks"][track]["exit"] = proc.returncode
                print(f"[campaign] {track}: exit {proc.returncode}", flush=True)
                del running[track]
        if time.time() > hard_stop:
            for proc, _ in running.values():
                proc.terminate()
            for track, (proc, log) in running.items():
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                log.close()
                summary["tracks"][track]["exit"] = f"stopped at the deadline ({proc.returncode})"
            running.clear()
            waiting.clear()
        _write_summary(Path(options.out), summary)
