"""``clrp-rl4co solve``: read every instance, solve each within ``--time`` with
:func:`clrp_rl4co.solve_many`, write the outputs.

A file that cannot be read, or an instance whose run fails, gets one error line on stderr and
a ``failed`` row in ``summary.csv``; the others go on, and the exit status is 1 if any failed.
Ctrl-C stops the runs within about a second: each running instance keeps its best solution so
far (status ``interrupted``), the ones not started get the status ``not run`` (the same word
on the terminal, in ``summary.csv`` and in the printed table), ``summary.csv`` is written and
the exit status is 130. Option errors (a bad ``--bks`` file, an unknown ``--model``, an
``--out`` that would overwrite an input or an earlier run without ``--overwrite``) exit with 2
before anything is solved or written; a run where no file could be read writes nothing.
"""

from __future__ import annotations

import logging
import sys

from .args import SolveOptions

#: Instances at least this long (seconds) get a progress bar of their own (one worker, on a
#: terminal only).
LONG_INSTANCE_SECONDS = 5.0
#: Exit status after Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED_STATUS = 130


def check_model(model: str | None) -> str | None:
    """Why ``--model`` is unusable (None: the library finds it: a shipped model, a bare preset
    such as ``clrp20``, a saved policy's pair of files or a checkpoint), by the library's own
    rule and in its words (:func:`clrp_rl4co.pretrained.model_files`), without importing
    torch."""
    if model is None:
        return None
    from ..pretrained import model_files

    try:
        model_files(model)
    except FileNotFoundError as exc:
        return f"--model: {exc}"
    return None


def _result_text(result, error: str | None) -> str:
    if result is not None and result.status == "not run":
        return f"not run: {result.error}" if result.error else "not run"
    if error is not None:
        return f"failed: {error}"
    if result.solution is None:
        return f"{result.status} ({result.method})"
    note = ", interrupted" if result.interrupted else ""
    return f"{result.objective:.10g} ({result.method}, {result.seconds:.1f} s{note})"


def solve_command(options: SolveOptions, started: float | None = None) -> int:
    """Run ``clrp-rl4co solve`` with parsed options; returns the exit status. ``started``: the
    ``time.perf_counter()`` reading the first instances' budgets count from (the process's
    start; None: when they start)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    problem = check_model(options.model)  # torch-free: refused at once
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    from ..data.bks import BestKnown

    try:
        bks = BestKnown.read(options.bks)
    except (ValueError, OSError) as exc:
        print(f"error: --bks: {exc}", file=sys.stderr)
        return 2

    from .. import interrupt
    from ..solving import solve_many
    from .inputs import collect_jobs
    from .outputs import (
        SUMMARY_NAME,
        check_outputs,
        summary_row,
        summary_table,
        write_solution,
        write_summary,
    )

    jobs = collect_jobs(options.paths)
    rows: list[dict | None] = [None] * len(jobs)
    failed = 0
    for k, job in enumerate(jobs):
        if job.error is not None:
            print(f"error: {job.error}", file=sys.stderr)
            rows[k] = summary_row(job, None, None, job.error)
            failed += 1
    readable = [k for k, job in enumerate(jobs) if job.error is None]
    if not readable:
        print(
            f"nothing to solve: no file could be read; nothing written to {options.out}/",
            file=sys.stderr,
        )
        return 1
    problem = check_outputs(jobs, options.out, options.plot, options.overwrite)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    from .progress import Progress

    progress = Progress(len(readable), quiet=options.quiet)
    repeatable = options.iterations is not None
    budget_text = f"{options.iterations} iterations" if repeatable else f"{options.seconds:g} s"

    def finished(index: int, result) -> None:
        nonlocal failed
        job = jobs[readable[index]]
        error = result.error if result.status in ("failed", "not run") else None
        if error is None and result.solution is None:
            note = result.details.get("note", "no solution found")
            error = f"{result.method}: {note} within {budget_text}"
        if error is None:
            try:
                write_solution(job, result, options.seed, options.out, options.plot)
            except (ValueError, OSError) as exc:
                error = f"writing the outputs: {exc}"
        if error is not None and result.status != "not run":
            print(f"error: {job.label}: {error}", file=sys.stderr)
            failed += 1
        rows[readable[index]] = summary_row(
            job, result, bks.lookup(job.source, job.label, job.instance), error
        )
        progress.finished(job.label, _result_text(result, error))

    inner = progress.terminal and not options.quiet and options.workers == 1
    inner = inner and not repeatable and options.seconds >= LONG_INSTANCE_SECONDS
    interrupt.clear()
    with interrupt.catch_sigint():
        if options.workers == 1:
            import torch

            torch.set_num_threads(1)
        solve_many(
            [jobs[k].instance for k in readable],
            method=options.method,
            seconds=options.seconds,
            model=options.model,
            seed=options.seed,
            workers=options.workers,
            on_result=finished,
            iterations=options.iterations,
            started=started,
            progress=inner,
        )
    progress.close()
    done = [row for row in rows if row is not None]
    summary = write_summary(done, options.out / SUMMARY_NAME)
    if not options.quiet:
        print(summary_table(done))
    if interrupt.requested():
        not_run = sum(1 for row in done if row["status"] == "not run")
        print(
            f"interrupted: {len(done) - not_run - failed} solved (running ones with their best "
            f"so far), {not_run} not run; {summary}",
            file=sys.stderr,
        )
        return INTERRUPTED_STATUS
    if not options.quiet:
        print(
            f"\n{len(done) - failed} solved, {failed} failed; outputs in {options.out}/ "
            f"({summary.name})"
        )
    return 1 if failed else 0
