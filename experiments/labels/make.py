"""The label-making loop: draw a shard's instances, solve each with PyVRP at a fixed budget,
save the shard every few minutes; resumable and stopped cleanly by SIGTERM / SIGINT.

Each call continues the last shard of ``<out>/<preset>/`` if it is unfinished, then opens the
next one, until ``hours`` of wall time (or ``max_instances``) are spent. One instance at a time
on one thread; the wall and CPU seconds of each solve are stored beside its label.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from clrp_rl4co.data import tensordict_to_instances
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
from clrp_rl4co.reporting.provenance import commit_line, machine, software
from clrp_rl4co.solvers import solve_pyvrp

from ..background import StopFlag
from .shards import (
    Shard,
    list_shards,
    read_shard,
    shard_num_loc,
    shard_path,
    shard_seed,
    write_shard,
)

log = logging.getLogger(__name__)

#: Where the shards live, one folder per preset.
LABELS_DIR = Path(__file__).resolve().parents[2] / "datasets" / "labels"
#: Instances per shard (about 0.2 MB per 1,000 clrp50 instances, compressed).
SHARD_SIZE = 512


@dataclass
class MakeOptions:
    """Options of one ``make`` call.

    Attributes:
        preset: the generator preset of the instances (a key of ``PRESET_SEEDS``).
        iterations: PyVRP's iteration budget per instance (deterministic: the same commit,
            seed and budget give the same label on any machine and under any load).
        seconds: PyVRP's wall-time budget per instance (instead of ``iterations``; the label
            then depends on the machine's speed and load).
        hours: wall time of this call.
        out: the labels folder (shards go to ``out/<preset>/``).
        shard_size: instances per shard (a resumed shard keeps its own size).
        save_every_s: seconds between saves of the shard in progress.
        max_instances: stop after this many new labels (None: only the clock).
        nice: added to the process's niceness (0 leaves it).
        threads: torch threads.
    """

    preset: str
    hours: float
    iterations: int | None = None
    seconds: float | None = None
    out: Path = LABELS_DIR
    shard_size: int = SHARD_SIZE
    save_every_s: float = 300.0
    max_instances: int | None = None
    nice: int = 19
    threads: int = 1
    extra: dict = field(default_factory=dict)


def _new_shard(options: MakeOptions, index: int) -> Shard:
    num_loc = shard_num_loc(options.preset, index)
    kwargs = {} if num_loc is None else {"num_loc": num_loc}
    generator = CLRPGenerator(preset=options.preset, **kwargs)
    seed = shard_seed(options.preset, index)
    instances = generate_dataset(generator, options.shard_size, seed)
    provenance = {
        "preset": options.preset,
        "num_loc": int(instances["demand"].shape[-1]),
        "generator_seed": seed,
        "draw": "clrp_rl4co.envs.clrp.generate_dataset(CLRPGenerator(preset, num_loc), size, seed)",
        "size": options.shard_size,
        "solver": "clrp_rl4co.solvers.solve_pyvrp (depot-set search), seed = instance index",
        "budget": budget(options),
        "commit": commit_line(),
        "software": software(),
        "machine": machine(),
    }
    return Shard(instances, [], [], [], [], provenance)


def _resume_point(options: MakeOptions) -> tuple[int, Shard | None]:
    """``(index, shard)`` of the shard to work on: the last one if unfinished, else a new one
    (``shard`` None)."""
    folder = Path(options.out) / options.preset
    shards = list_shards(folder)
    if not shards:
        return 0, None
    last = shards[-1]
    index = int(last.stem.split("_")[1])
    shard = read_shard(last)
    if shard.complete:
        return index + 1, None
    if shard.provenance.get("budget") != budget(options):
        raise ValueError(
            f"budget: {last} is being labelled with {shard.provenance.get('budget')}, "
            f"not {budget(options)}; finish it with its own budget"
        )
    return index, shard


def budget(options: MakeOptions) -> dict:
    """The solver budget as stored in a shard's provenance."""
    if (options.iterations is None) == (options.seconds is None):
        raise ValueError("give exactly one of iterations and seconds")
    if options.iterations is not None:
        if options.iterations < 1:
            raise ValueError(f"iterations: must be >= 1, got {options.iterations}")
        return {"iterations": int(options.iterations)}
    if not options.seconds > 0:
        raise ValueError(f"seconds: must be > 0, got {options.seconds}")
    return {"seconds": float(options.seconds)}


def make_labels(options: MakeOptions) -> int:
    """Label instances for ``options.hours``; returns the number of new labels."""
    budget(options)
    if options.nice:
        os.nice(options.nice)
    torch.set_num_threads(options.threads)
    deadline = time.perf_counter() + options.hours * 3600.0
    folder = Path(options.out) / options.preset
    index, shard = _resume_point(options)
    made = 0
    with StopFlag() as stop:
        while time.perf_counter() < deadline and stop.signal is None:
            if options.max_instances is not None and made >= options.max_instances:
                break
            if shard is None:
                shard = _new_shard(options, index)
            instances = tensordict_to_instances(shard.instances)
            last_save = time.perf_counter()
            while not shard.complete:
                if time.perf_counter() >= deadline or stop.signal is not None:
                    break
                if options.max_instances is not None and made >= options.max_instances:
                    break
                k = shard.count
                wall0, cpu0 = time.perf_counter(), time.process_time()
                result = solve_pyvrp(
                    instances[k], seconds=options.seconds, max_iterations=options.iterations, seed=k
                )
                wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
                if result.solution is None:
                    raise RuntimeError(
                        f"{shard_path(folder, index)}: instance {k}: no solution within "
                        f"{budget(options)}; raise the budget"
                    )
                num_depots = instances[k].num_depots
                shard.actions.append(result.solution.to_actions(num_depots))
                shard.objective.append(float(result.objective))
                shard.cpu_seconds.append(cpu)
                shard.wall_seconds.append(wall)
                made += 1
                if time.perf_counter() - last_save >= options.save_every_s:
                    write_shard(shard, shard_path(folder, index))
                    last_save = time.perf_counter()
                    log.info("%s: %d / %d labelled", shard_path(folder, index), k + 1, shard.size)
            path = shard_path(folder, index)
            write_shard(shard, path)
            log.info("%s: %d / %d labelled (saved)", path, shard.count, shard.size)
            if shard.complete:
                index, shard = index + 1, None
            else:
                break
    log.info("stopped: %d new labels", made)
    return made
