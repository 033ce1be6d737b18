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

from ..status import Status
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
    if result is not None and result.status == Status.NOT_RUN:
        return f"{Status.NOT_RUN}: {result.error}" if result.error else str(Status.NOT_RUN)
    if error is not None:
        return f"failed: {error}"
    if result.solution is None:
        return f"{result.status} ({result.method})"
    note = ", interrupted" if result.interrupted else ""
    return f"{result.objective:.10g} ({result.method}, {result.seconds:.1f} s{note})"


class _Run:
    """One run of the command over its jobs: the summary rows, the failures, the progress.

    Args:
        options: the parsed options.
        jobs: every job, read or not (:func:`.inputs.collect_jobs`).
        bks: the best-known values.
    """

    def __init__(self, options: SolveOptions, jobs: list, bks) -> None:
        from .outputs import summary_row

        self.options, self.jobs, self.bks = options, jobs, bks
        self.rows: list[dict | None] = [None] * len(jobs)
        self.failed = 0
        for k, job in enumerate(jobs):
            if job.error is not None:
                print(f"error: {job.error}", file=sys.stderr)
                self.rows[k] = summary_row(job, None, None, job.error)
                self.failed += 1
        self.readable = [k for k, job in enumerate(jobs) if job.error is None]
        self.progress = None
        if options.iterations is not None:
            self.budget_text = f"{options.iterations} iterations"
        else:
            self.budget_text = f"{options.seconds:g} s"

    def finished(self, index: int, result) -> None:
        """``solve_many``'s ``on_result``: write the instance's outputs and its row."""
        from .outputs import summary_row, write_solution

        options, job = self.options, self.jobs[self.readable[index]]
        error = result.error if result.status in (Status.FAILED, Status.NOT_RUN) else None
        if error is None and result.solution is None:
            note = result.details.get("note", "no solution found")
            error = f"{result.method}: {note} within {self.budget_text}"
        if error is None:
            try:
                write_solution(job, result, options.seed, options.out, options.plot)
            except (ValueError, OSError) as exc:
                error = f"writing the outputs: {exc}"
        if error is not None and result.status != Status.NOT_RUN:
            print(f"error: {job.label}: {error}", file=sys.stderr)
            self.failed += 1
        best_known = self.bks.lookup(job.source, job.label, job.instance)
        self.rows[self.readable[index]] = summary_row(job, result, best_known, error)
        self.progress.finished(job.label, _result_text(result, error))

    def solve(self, started: float | None) -> None:
        """Solve the readable jobs with :func:`clrp_rl4co.solve_many`; Ctrl-C stops them."""
        from ..execution import interrupt
        from ..solving import solve_many
        from .progress import Progress

        options = self.options
        self.progress = Progress(len(self.readable), quiet=options.quiet)
        inner = self.progress.terminal and not options.quiet and options.workers == 1
        inner = inner and options.iterations is None and options.seconds >= LONG_INSTANCE_SECONDS
        interrupt.clear()
        with interrupt.catch_sigint():
            if options.workers == 1:
                import torch

                torch.set_num_threads(1)
            solve_many(
                [self.jobs[k].instance for k in self.readable],
                method=options.method,
                seconds=options.seconds,
                model=options.model,
                seed=options.seed,
                workers=options.workers,
                on_result=self.finished,
                iterations=options.iterations,
                started=started,
                progress=inner,
            )
        self.progress.close()

    def report(self) -> int:
        """Write ``summary.csv``, print the table and the counts; returns the exit status."""
        from ..execution import interrupt
        from .outputs import SUMMARY_NAME, summary_table, write_summary

        options = self.options
        done = [row for row in self.rows if row is not None]
        summary = write_summary(done, options.out / SUMMARY_NAME)
        if not options.quiet:
            print(summary_table(done))
        if interrupt.requested():
            not_run = sum(1 for row in done if row["status"] == Status.NOT_RUN)
            print(
                f"interrupted: {len(done) - not_run - self.failed} solved (running ones with "
                f"their best so far), {not_run} not run; {summary}",
                file=sys.stderr,
            )
            return INTERRUPTED_STATUS
        if not options.quiet:
            print(
                f"\n{len(done) - self.failed} solved, {self.failed} failed; outputs in "
                f"{options.out}/ ({summary.name})"
            )
        return 1 if self.failed else 0


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
    from .inputs import collect_jobs
    from .outputs import check_outputs

    jobs = collect_jobs(options.paths)
    run = _Run(options, jobs, bks)
    if not run.readable:
        print(
            f"nothing to solve: no file could be read; nothing written to {options.out}/",
            file=sys.stderr,
        )
        return 1
    problem = check_outputs(jobs, options.out, options.plot, options.overwrite)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    run.solve(started)
    return run.report()
