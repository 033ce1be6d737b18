"""One arm's training, resumable: :func:`train` continues an arm for a wall-clock budget.

It resumes from the local checkpoint or the committed state (as the generalist does), trains
by the arm's phase (imitation passes over the labels, then POMO), evaluates every
:data:`.settings.EVAL_EVERY_CPU_HOURS` of training CPU time and at the end, saves the local
checkpoint every :data:`.settings.SAVE_EVERY_S` seconds, stops cleanly at the deadline or on
SIGTERM / SIGINT (the step in progress finishes), and writes the committed state back at every
evaluation (with the local checkpoint, so that both agree) and at the end: a call that is killed
keeps what it evaluated in the working tree, its curve's points and its state together.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from clrp_rl4co.envs import CLRPEnv, CLRPGenerator
from clrp_rl4co.envs.clrp import generate_dataset
from clrp_rl4co.models import build_model
from clrp_rl4co.models.imitation import imitation_loss
from clrp_rl4co.models.training import compile_decoder, training_compile
from clrp_rl4co.reporting.provenance import command_line, commit_line, machine

from ..background import StopFlag
from ..training.precision import COMPILED_NOTE, MixedPrecision
from ..training.state import choose_resume, load_committed, load_local, save_committed, save_local
from . import settings
from .curve import append_point, write_curve_png
from .growth import deeper, encoder_layers, grown_parameters
from .state import ArmState, committed_arm, start_policy

log = logging.getLogger(__name__)


@dataclass
class ArmOptions:
    """Options of one ``train`` call.

    Attributes:
        arm: ``pomo`` or ``imitation``.
        hours: wall-clock budget of this call, in hours.
        threads: torch threads.
        nice: added to the process's niceness (0 leaves it).
        seed: seed of the arm's data (POMO's instances, the imitation's orders).
        max_steps: stop after this many steps of this call (tests), None for no limit.
        label_limit: labels the imitation arm reads when it starts (None: all there are then).
        eval_every_cpu_hours, save_every_s: as in :mod:`.settings` (None: the preset's
            :func:`.settings.eval_every_cpu_hours`).
        report_dir / work_dir / labels_dir: the committed states and curve, the local
            checkpoints, the labels (None: the preset's, :mod:`.settings`).
        evaluate_fn: the evaluation (tests replace it with a cheap one): policy -> x8 mean.
        start_model: the shipped model (or path) the arms start from (None: the preset's).
        command: the command line recorded in the state (default: this process's).
        pomo_batch / imitation_batch / imitation_epochs: as in :mod:`.settings` (tests make
            them small; ``pomo_batch`` None: the arm's, :func:`.settings.pomo_batch`).
        device: torch device of the training and the evaluations (``cpu``, ``cuda``). On an
            accelerator the training's wall time counts as ``gpu_hours`` (not CPU hours) and
            the evaluations come every ``eval_every_gpu_minutes`` of it.
        precision: the POMO steps' precision (None: the package's rule for the device).
        compile: whether the POMO steps run the decoder's step compiled (None: the package's
            rule, :func:`clrp_rl4co.models.training.training_compile`: on a CPU with a C++
            compiler); the evaluations decode eagerly either way.
    """

    arm: str
    hours: float
    threads: int = 1
    nice: int = 19
    seed: int = 0
    max_steps: int | None = None
    label_limit: int | None = None
    eval_every_cpu_hours: float | None = None
    save_every_s: float = settings.SAVE_EVERY_S
    report_dir: Path | None = None
    work_dir: Path | None = None
    labels_dir: Path | None = None
    evaluate_fn: Callable[[torch.nn.Module], float] | None = None
    start_model: str | None = None
    command: str | None = None
    pomo_batch: int | None = None
    imitation_batch: int = settings.IMITATION_BATCH
    imitation_epochs: int = settings.IMITATION_EPOCHS
    device: str = "cpu"
    eval_every_gpu_minutes: float = settings.EVAL_EVERY_GPU_MINUTES
    precision: str | None = None
    compile: bool | None = None


def evaluate_paper_set(policy: torch.nn.Module) -> float:
    """Mean x8 objective of ``policy`` on the first :data:`.settings.EVAL_SIZE` instances of
    the paper's test set of :data:`.settings.PRESET`."""
    from ..campaign.validation import validate
    from ..paper_sets import load_drlhq_test_set

    device = next(policy.parameters()).device
    batch = settings.EVAL_BATCH if device.type == "cpu" else settings.EVAL_BATCH_GPU
    instances = load_drlhq_test_set(settings.PRESET)[: settings.EVAL_SIZE]  # the preset's set
    return validate(policy, CLRPEnv(check_actions=False, device=device), instances, batch)


def _fresh_state(options: ArmOptions) -> tuple[ArmState, dict[str, torch.Tensor] | None]:
    """A new arm's state and the weights it starts from (None: the start model's).

    An arm of :data:`.settings.BRANCHES` starts from its parent's committed state and weights.

    Raises:
        ValueError: the parent has no committed state, or the imitation arm has no labels.
    """
    from ..labels.shards import labels_charge

    parent = settings.BRANCHES.get(options.arm)
    if parent is not None:
        loaded = committed_arm(options.report_dir, parent)
        if loaded is None:
            raise ValueError(
                f"arm: {options.arm!r} branches from the {parent!r} arm, which has no committed "
                f"state under {options.report_dir}"
            )
        state, weights = loaded
        state.arm = options.arm
        state.eval_at_cpu_hours = None  # the branch's curve starts with its parent's weights
        grown = settings.GROWN_ARMS.get(options.arm)
        if grown is not None:  # the parent's weights in the grown encoder
            parent_policy = start_policy(parent, options.start_model)
            parent_policy.load_state_dict(weights)
            parent_layers = len(encoder_layers(parent_policy))
            if parent_layers != grown[0]:
                raise ValueError(
                    f"arm: {options.arm!r} grows {grown[0]} encoder layers; its parent "
                    f"{parent!r} has {parent_layers}"
                )
            weights = deeper(parent_policy, grown[1], options.seed).state_dict()
        return state, weights
    scratch = options.arm in settings.SCRATCH_ARMS
    state = ArmState(arm=options.arm, start_model="scratch" if scratch else options.start_model)
    state.phase = "imitation" if options.arm == "imitation" else "pomo"
    if options.arm == "imitation":
        charge = labels_charge(options.labels_dir, options.label_limit)
        if charge["count"] == 0:
            raise ValueError(f"{options.labels_dir}: no labels for the imitation arm")
        state.label_count = int(charge["count"])
        state.label_cpu_hours = charge["cpu_hours"]
        state.label_mean_objective = charge["mean_objective"]
    return state, None


def _optimizer(policy: torch.nn.Module, phase: str, arm: str) -> torch.optim.Optimizer:
    """Adam at the phase's rate; an arm of :data:`.settings.GROWN_ARMS` trains its new encoder
    layers at :data:`.settings.GROWN_LAYER_LR` (a second parameter group)."""
    lr = settings.IMITATION_LR if phase == "imitation" else settings.pomo_lr(arm)
    grown = settings.GROWN_ARMS.get(arm)
    if grown is None:
        return torch.optim.Adam(policy.parameters(), lr=lr, weight_decay=settings.WEIGHT_DECAY)
    new = grown_parameters(policy, grown[0])
    named = list(policy.named_parameters())
    groups = [
        {"params": [p for name, p in named if name not in new], "lr": lr},
        {"params": [p for name, p in named if name in new], "lr": settings.GROWN_LAYER_LR},
    ]
    return torch.optim.Adam(groups, weight_decay=settings.WEIGHT_DECAY)


def train(options: ArmOptions) -> ArmState:
    """Continue ``options.arm`` for ``options.hours``; returns the state written back."""
    settings.check_arm(options.arm)
    options = dataclasses.replace(
        options,
        report_dir=Path(options.report_dir or settings.REPORT_DIR),
        work_dir=Path(options.work_dir or settings.WORK_DIR),
        labels_dir=Path(options.labels_dir or settings.LABELS_DIR),
        start_model=options.start_model or settings.START_MODEL,
        eval_every_cpu_hours=(
            settings.eval_every_cpu_hours()
            if options.eval_every_cpu_hours is None
            else options.eval_every_cpu_hours
        ),
    )
    evaluate = options.evaluate_fn or evaluate_paper_set
    if options.nice:
        os.nice(options.nice)
    torch.set_num_threads(options.threads)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    deadline = wall0 + options.hours * 3600.0
    state_dir = options.report_dir / options.arm
    work_dir = options.work_dir / options.arm

    origin, state, weights, optimizer_state = choose_resume(
        load_committed(state_dir, ArmState), load_local(work_dir, ArmState)
    )
    policy = start_policy(options.arm, options.start_model, options.seed)
    if origin == "fresh":
        state, weights = _fresh_state(options)
    if weights is not None:
        policy.load_state_dict(weights)
    log.info(
        "%s arm, resuming from %s (%s phase): %.2f CPU h charged",
        options.arm,
        origin,
        state.phase,
        state.charged_cpu_hours,
    )
    state.resumes += 1
    commit = commit_line()  # the code this call runs, whatever the checkout moves to meanwhile
    if commit not in state.commits:
        state.commits.append(commit)
    state.commands.append(options.command or command_line(prog="python -m experiments.imitation"))
    device = torch.device(options.device)
    on_accelerator = device.type != "cpu"
    if on_accelerator and state.phase == "imitation":
        raise ValueError(f"device: {options.device!r}; the imitation phase trains on the CPU")
    mixed = MixedPrecision.for_device(device, options.precision)
    full_precision = MixedPrecision.for_device(device, "32-true")  # the imitation phase's
    compiled = training_compile(device.type, options.compile)
    hardware = machine(options.device) + mixed.hardware_note + (COMPILED_NOTE if compiled else "")
    if hardware not in state.hardware:
        state.hardware.append(hardware)
    pomo_batch = options.pomo_batch or settings.pomo_batch(options.arm)

    env = CLRPEnv(check_actions=False, device=options.device)
    pomo = build_model(
        env,
        policy.to(device),
        algorithm="pomo",
        num_augment=1,
        num_starts=settings.POMO_STARTS.get(options.arm),
        leader_weight=settings.LEADER_WEIGHTS.get(options.arm),
        train_augment=settings.train_augment(options.arm),
    ).to(device)
    if compiled and state.phase == "pomo":
        compile_decoder(policy)
    optimizer = _optimizer(policy, state.phase, options.arm)
    if optimizer_state is not None:
        optimizer.load_state_dict(optimizer_state)
    torch.manual_seed(options.seed * 7919 + state.resumes)
    generator = CLRPGenerator(preset=settings.PRESET)
    labels = None
    if state.phase == "imitation":
        from ..labels.shards import expert_dataset

        labels = expert_dataset(options.labels_dir, limit=state.label_count)

    def account(training: bool) -> None:
        nonlocal wall0, cpu0
        now_wall, now_cpu = time.perf_counter(), time.process_time()
        state.wall_hours += (now_wall - wall0) / 3600.0
        if training and on_accelerator:
            state.gpu_hours += (now_wall - wall0) / 3600.0
        elif training:
            state.cpu_hours += (now_cpu - cpu0) / 3600.0
        else:
            state.eval_cpu_hours += (now_cpu - cpu0) / 3600.0
        wall0, cpu0 = now_wall, now_cpu

    steps_since_evaluation = 0
    last_gpu_evaluation = [state.gpu_hours]

    def evaluation_due() -> bool:
        if on_accelerator:
            return (state.gpu_hours - last_gpu_evaluation[0]) * 60.0 >= (
                options.eval_every_gpu_minutes
            )
        return state.cpu_hours - state.eval_at_cpu_hours >= options.eval_every_cpu_hours

    def run_evaluation() -> None:
        nonlocal steps_since_evaluation
        steps_since_evaluation = 0
        account(training=True)
        began = time.process_time()
        with torch.compiler.set_stance("force_eager"):  # the curve's decoding as it was
            value = evaluate(policy)
        policy.train()
        account(training=False)
        state.eval_at_cpu_hours = state.cpu_hours
        last_gpu_evaluation[0] = state.gpu_hours
        state.last_validation = {"instances": state.instances, "x8": value}
        append_point(options.report_dir, state, value, time.process_time() - began, commit)
        save_local(state, policy.state_dict(), optimizer.state_dict(), work_dir)
        save_committed(state, policy.state_dict(), state_dir)
        log.info(
            "%s arm at %.3f CPU h charged (%s phase): x8 %.4f",
            options.arm,
            state.charged_cpu_hours,
            state.phase,
            value,
        )

    def imitation_step() -> int:
        size = len(labels)
        epoch, position = divmod(state.examples, size)
        order = torch.randperm(size, generator=torch.Generator().manual_seed(options.seed + epoch))
        take = order[position : position + options.imitation_batch].tolist()
        loss = imitation_loss(
            policy, env, labels.__getitems__(take), likelihood=settings.IMITATION_LIKELIHOOD
        )["loss"]
        full_precision.apply(loss, optimizer, policy.parameters(), settings.GRAD_CLIP)
        state.examples += len(take)
        return len(take)

    def pomo_step() -> int:
        step_seed = options.seed * 1_000_003 + state.steps
        batch = generate_dataset(generator, pomo_batch, step_seed).to(device)
        with mixed.autocast():
            loss = pomo.shared_step(batch, 0, phase="train")["loss"]
        mixed.apply(loss, optimizer, policy.parameters(), settings.GRAD_CLIP)
        if on_accelerator:
            state.gpu_instances += pomo_batch
        return pomo_batch

    with StopFlag() as stop:
        if state.eval_at_cpu_hours is None:
            run_evaluation()
        last_saved = time.perf_counter()
        steps_this_call = 0
        policy.train()
        while time.perf_counter() < deadline and stop.signal is None:
            if options.max_steps is not None and steps_this_call >= options.max_steps:
                break
            if state.phase == "imitation":
                state.instances += imitation_step()
                if state.examples >= options.imitation_epochs * len(labels):
                    state.phase = "pomo"
                    optimizer = _optimizer(policy, "pomo", options.arm)
                    if compiled:
                        compile_decoder(policy)
                    labels = None
                    log.info("imitation arm: %d examples done, POMO from here", state.examples)
            else:
                state.instances += pomo_step()
            state.steps += 1
            steps_this_call += 1
            steps_since_evaluation += 1
            account(training=True)
            if evaluation_due():
                run_evaluation()
            if time.perf_counter() - last_saved >= options.save_every_s:
                save_local(state, policy.state_dict(), optimizer.state_dict(), work_dir)
                last_saved = time.perf_counter()
    if steps_since_evaluation:
        run_evaluation()
    account(training=True)
    save_local(state, policy.state_dict(), optimizer.state_dict(), work_dir)
    save_committed(state, policy.state_dict(), state_dir)
    write_curve_png(options.report_dir)
    return state
