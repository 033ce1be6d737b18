"""The generalist's training loop: RL4CO's POMO step on mixed-preset batches, resumable.

One call of :func:`train` continues the run for a wall-clock budget: it picks up the local
checkpoint or the committed state (:func:`.state.choose_resume`), trains with the curriculum of
:mod:`.settings`, validates every ``validate_every`` instances and at the end, saves the local
checkpoint every ``save_every_s`` seconds, and stops cleanly at the deadline or on SIGTERM /
SIGINT (the step in progress finishes first), then writes the committed state back once.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from clrp_rl4co.data.prodhon import BENCHMARKS_ENV_VAR, benchmarks_dir
from clrp_rl4co.envs import CLRPEnv, CLRPGenerator
from clrp_rl4co.envs.clrp import generate_dataset
from clrp_rl4co.models import build_model, load_policy
from clrp_rl4co.policies import build_policy
from clrp_rl4co.reporting.provenance import accelerator, command_line, commit_line, machine

from ..background import StopFlag
from ..training.precision import MixedPrecision
from ..training.state import (
    RunState,
    choose_resume,
    load_committed,
    load_local,
    save_committed,
    save_local,
)
from . import settings
from .report import CURVE, append_curve, read_curve, write_curve_png
from .validation import validate

log = logging.getLogger(__name__)


@dataclass
class TrainOptions:
    """Options of one ``train`` call.

    Attributes:
        hours: wall-clock budget of this call, in hours.
        device: torch device (``cpu``, ``cuda``).
        threads: torch threads (CPU).
        nice: added to the process's niceness (0 leaves it).
        seed: seed of the training data stream (combined with the step count, so a resume
            continues the stream rather than repeating it).
        save_every_s: seconds between local checkpoints.
        validate_every: training instances between validations.
        batch_scale: multiplies the batch rule (:func:`.settings.batch_size`), for GPUs.
        max_steps: stop after this many steps of this call (tests), None for no limit.
        init: start a fresh run from this policy (a shipped name, ``.pt`` or ``.ckpt``) instead
            of :data:`.settings.START_MODEL`; refused when a state exists.
        init_instances: instances the ``init`` policy has seen (its provenance).
        state_dir / work_dir: the committed state and the local checkpoint folders.
        validate_fn: the validation (tests replace it with a cheap one).
        command: the command line recorded in the state (default: this process's).
        precision: the training steps' precision (:mod:`..training.precision`; None: the
            package's rule for ``device``, float32 on the CPU, bf16 autocast on a GPU with
            bf16); the validations run in float32.
    """

    hours: float
    device: str = "cpu"
    threads: int = 1
    nice: int = 19
    seed: int = 0
    save_every_s: float = settings.SAVE_EVERY_S
    validate_every: int = settings.VALIDATE_EVERY
    batch_scale: int = 1
    max_steps: int | None = None
    init: str | None = None
    init_instances: int | None = None
    state_dir: Path = settings.STATE_DIR
    work_dir: Path = settings.WORK_DIR
    report_dir: Path = settings.REPORT_DIR
    validate_fn: Callable[[torch.nn.Module], dict[str, Any]] = validate
    command: str | None = None
    precision: str | None = None


def _branch_policy(parent_dir: Path) -> tuple[torch.nn.Module, RunState]:
    """A fresh run's policy and state from the committed state in ``parent_dir``: its weights
    (only the parameters the parent lacks, the distance bias's ``alpha``s, keep their start
    at 0) and its counters.

    Raises:
        ValueError: the parent has no committed state, or its weights do not fit.
    """
    loaded = load_committed(parent_dir)
    if loaded is None:
        raise ValueError(f"run: {settings.RUN!r} branches from {parent_dir}, which has no state")
    state, weights = loaded
    policy = build_policy(settings.POLICY, **settings.ARCHITECTURE)
    missing, unexpected = policy.load_state_dict(weights, strict=False)
    if unexpected or any("alpha" not in key.rsplit(".", 1)[-1] for key in missing):
        raise ValueError(
            f"{parent_dir}: its weights do not fit run {settings.RUN!r} (missing "
            f"{sorted(missing)}, unexpected {sorted(unexpected)})"
        )
    folder = Path(parent_dir)
    if folder.is_relative_to(settings.REPO):  # the record names the repository's folder
        folder = folder.relative_to(settings.REPO)
    state.start_model = f"{folder.as_posix()} at {state.instances} instances"
    state.last_validation = None
    return policy, state


def _start_policy(options: TrainOptions) -> tuple[torch.nn.Module, RunState]:
    """A fresh run's policy and state (from ``init``, the run's parent state or the start
    model)."""
    if options.init is None and settings.BRANCH_FROM is not None:
        return _branch_policy(settings.BRANCH_FROM)
    source = options.init or settings.START_MODEL
    start = load_policy(source)
    config = dict(getattr(start, "config", {}))
    wanted = {k: config.get(k) for k in settings.ARCHITECTURE}
    if wanted != settings.ARCHITECTURE:
        raise ValueError(
            f"init: {source} has the architecture {wanted}, the run uses {settings.ARCHITECTURE}"
        )
    policy = build_policy(settings.POLICY, **settings.ARCHITECTURE)
    policy.load_state_dict(start.state_dict())
    if options.init is not None:
        if options.init_instances is None:
            raise ValueError("init_instances: required with init (instances that model has seen)")
        seen = int(options.init_instances)
    else:
        seen = int(_shipped_meta(settings.START_MODEL).get("training_instances", 0))
    state = RunState(instances=seen, start_instances=seen, start_model=source)
    return policy, state


def _shipped_meta(name: str) -> dict[str, Any]:
    import json

    from clrp_rl4co.pretrained import PRETRAINED_DIR

    return json.loads((PRETRAINED_DIR / f"{name}.json").read_text())


def _note_once(values: list[str], value: str) -> None:
    if value not in values:
        values.append(value)


def check_validation_inputs(report_dir: Path) -> None:
    """Refuse a call whose validation could not fill the curve's Prins column (it would fail
    only at the end of the call, after the training).

    Raises:
        FileNotFoundError: ``curve.csv`` has a Prins column and ``$CLRP_BENCHMARKS_DIR`` is unset.
    """
    rows = read_curve(report_dir)
    if rows and "prins_gap_paper_bks" in rows[-1] and benchmarks_dir(required=False) is None:
        raise FileNotFoundError(
            f"{report_dir / CURVE}: the curve has a Prins column but {BENCHMARKS_ENV_VAR} is "
            "unset; set it to the folder that holds prins/ (see README.md)"
        )


def train(options: TrainOptions) -> RunState:
    """Continue the generalist run for ``options.hours``; returns the state written back."""
    if options.validate_fn is validate:
        check_validation_inputs(options.report_dir)
    if options.nice:
        os.nice(options.nice)
    torch.set_num_threads(options.threads)
    torch.set_float32_matmul_precision("highest")
    wall0, cpu0 = time.perf_counter(), time.process_time()
    deadline = wall0 + options.hours * 3600.0

    committed = load_committed(options.state_dir)
    local = load_local(options.work_dir)
    origin, state, weights, optimizer_state = choose_resume(committed, local)
    if origin == "fresh":
        policy, state = _start_policy(options)
    else:
        if options.init is not None:
            raise ValueError(f"init: the run already has a state in {options.state_dir}")
        policy = build_policy(settings.POLICY, **settings.ARCHITECTURE)
        policy.load_state_dict(weights)
    log.info(
        "resuming from %s: %d instances, %.2f CPU hours", origin, state.instances, state.cpu_hours
    )
    state.resumes += 1
    _note_once(state.commits, commit_line())
    state.commands.append(options.command or command_line(prog="python -m experiments.generalist"))
    mixed = MixedPrecision.for_device(options.device, options.precision)
    _note_once(
        state.hardware,
        f"{machine(options.device)}; {accelerator(options.device)}{mixed.hardware_note}",
    )

    device = torch.device(options.device)
    on_accelerator = device.type != "cpu"
    env = CLRPEnv(check_actions=False, device=options.device)
    model = build_model(env, policy.to(device), algorithm="pomo", num_augment=1).to(device)
    optimizer = torch.optim.Adam(
        policy.parameters(), lr=settings.LEARNING_RATE, weight_decay=settings.WEIGHT_DECAY
    )
    if optimizer_state is not None:
        optimizer.load_state_dict(optimizer_state)
    torch.manual_seed(options.seed * 7919 + state.resumes)
    generators: dict[int, CLRPGenerator] = {}

    def account() -> None:
        nonlocal wall0, cpu0
        now_wall, now_cpu = time.perf_counter(), time.process_time()
        state.wall_hours += (now_wall - wall0) / 3600.0
        if on_accelerator:
            state.gpu_hours += (now_wall - wall0) / 3600.0
        state.cpu_hours += (now_cpu - cpu0) / 3600.0
        wall0, cpu0 = now_wall, now_cpu

    def run_validation() -> None:
        record = options.validate_fn(policy)
        policy.train()
        account()
        stage_index, _ = settings.stage_at(state.instances)
        state.last_validation = {"instances": state.instances, **record}
        gap = record.get("family_gap_mean")
        if gap is not None and (state.best_family_gap is None or gap < state.best_family_gap):
            state.best_family_gap = gap
        append_curve(options.report_dir, state, stage_index, record)
        log.info(
            "validation at %d instances: %s",
            state.instances,
            ", ".join(f"{k}={v:.4g}" for k, v in record.items() if not k.startswith("gap_")),
        )

    with StopFlag() as stop:
        if state.last_validation is None:
            run_validation()
        last_saved = time.perf_counter()
        next_validation = state.instances + options.validate_every
        steps_this_call = 0
        policy.train()
        while time.perf_counter() < deadline and stop.signal is None:
            if options.max_steps is not None and steps_this_call >= options.max_steps:
                break
            _, stage = settings.stage_at(state.instances)
            low, high = stage.num_loc
            step_seed = options.seed * 1_000_003 + state.steps
            draw = torch.Generator().manual_seed(step_seed)
            num_loc = int(torch.randint(low, high + 1, (1,), generator=draw))
            if num_loc not in generators:
                generators[num_loc] = CLRPGenerator(preset="mixed", num_loc=num_loc)
            batch = generate_dataset(
                generators[num_loc], settings.batch_size(num_loc, options.batch_scale), step_seed
            )
            with mixed.autocast():
                loss = model.shared_step(batch.to(device), 0, phase="train")["loss"]
            mixed.apply(loss, optimizer, policy.parameters(), settings.GRAD_CLIP)
            state.steps += 1
            steps_this_call += 1
            state.instances += batch.batch_size[0]
            if on_accelerator:
                state.gpu_instances += batch.batch_size[0]
            if state.instances >= next_validation:
                run_validation()
                next_validation = state.instances + options.validate_every
            if time.perf_counter() - last_saved >= options.save_every_s:
                account()
                save_local(state, policy.state_dict(), optimizer.state_dict(), options.work_dir)
                last_saved = time.perf_counter()
                log.info("local checkpoint at %d instances", state.instances)
    if state.last_validation is None or state.last_validation["instances"] < state.instances:
        run_validation()
    account()
    save_local(state, policy.state_dict(), optimizer.state_dict(), options.work_dir)
    save_committed(state, policy.state_dict(), options.state_dir)
    write_curve_png(options.report_dir)
    return state
