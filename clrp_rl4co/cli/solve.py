"""``clrp-rl4co solve``: read every instance, solve each within ``--time``, write the outputs.

A file that cannot be read, or an instance whose run fails, gets one error line on stderr and
a ``failed`` row in ``summary.csv``; the others go on, and the exit status is 1 if any failed.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import sys
from concurrent.futures import ProcessPoolExecutor

from .args import SolveOptions, parse_args
from .inputs import Job, expand, read_jobs
from .outputs import BestKnown, summary_row, summary_table, write_solution, write_summary
from .run import Outcome, solve_instance

#: Instances at least this long (seconds) get a progress bar of their own (one worker only).
LONG_INSTANCE_SECONDS = 5.0


def _worker_init() -> None:
    import torch

    torch.set_num_threads(1)


def _solve_job(args: tuple) -> tuple[Outcome | None, str | None]:
    job, options, progress = args
    try:
        outcome = solve_instance(
            job.instance,
            options.method,
            options.seconds,
            seed=options.seed,
            model=options.model,
            progress=progress,
        )
    except Exception as exc:  # noqa: BLE001 (one instance failing must not stop the others)
        text = str(exc).splitlines()[0] if str(exc) else ""
        if not isinstance(exc, ValueError | OSError):
            text = f"{type(exc).__name__}: {text}"
        return None, f"{job.label}: {text}"
    if outcome.solution is None:
        note = outcome.details.get("note", "no solution found")
        return outcome, f"{job.label}: {outcome.method}: {note} within {options.seconds:g} s"
    return outcome, None


def _run(jobs: list[Job], options: SolveOptions):
    """Yield ``(job, outcome, error)`` for every readable job, in order."""
    from tqdm.auto import tqdm

    inner = not options.quiet and options.workers == 1 and options.seconds >= LONG_INSTANCE_SECONDS
    tasks = [(job, options, inner) for job in jobs]
    with tqdm(total=len(jobs), desc="instances", disable=options.quiet, unit="inst") as bar:
        if options.workers == 1 or len(jobs) <= 1:
            _worker_init()
            for job, task in zip(jobs, tasks):
                yield (job, *_solve_job(task))
                bar.update(1)
            return
        context = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        with ProcessPoolExecutor(
            options.workers, mp_context=context, initializer=_worker_init
        ) as pool:
            for job, result in zip(jobs, pool.map(_solve_job, tasks)):
                yield (job, *result)
                bar.update(1)


def solve_command(options: SolveOptions) -> int:
    """Run ``clrp-rl4co solve`` with parsed options; returns the exit status."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    try:
        bks = BestKnown.read(options.bks)
    except (ValueError, OSError) as exc:
        print(f"error: --bks: {exc}", file=sys.stderr)
        return 2
    files, bad = expand(options.paths)
    jobs: list[Job] = list(bad)
    for path in files:
        jobs += read_jobs(path)
    rows, failed = [], 0
    readable = [job for job in jobs if job.error is None]
    for job in jobs:
        if job.error is not None:
            print(f"error: {job.error}", file=sys.stderr)
            rows.append(summary_row(job, None, None, job.error))
            failed += 1
    for job, outcome, error in _run(readable, options):
        if error is None:
            try:
                write_solution(job, outcome, options.seed, options.out, options.plot)
            except (ValueError, OSError) as exc:
                error = f"{job.label}: writing the outputs: {exc}"
        if error is not None:
            print(f"error: {error}", file=sys.stderr)
            failed += 1
        rows.append(summary_row(job, outcome, bks.lookup(job), error))
    summary = write_summary(rows, options.out / "summary.csv")
    if not options.quiet:
        print(summary_table(rows))
        print(
            f"\n{len(rows) - failed} solved, {failed} failed; outputs in {options.out}/ "
            f"({summary.name})"
        )
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``clrp-rl4co`` and ``python -m clrp_rl4co``; returns the exit status."""
    options = parse_args(argv)
    return solve_command(options)
