"""Instances named on the command line: expand paths, folders and globs
(:func:`clrp_rl4co.data.files.find_instance_files`), read every file
(:func:`clrp_rl4co.data.files.read_instances`) into jobs, and give each job output names that no
other job of the run shares.

A file that cannot be read becomes a job with an error (the other files go on).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from ..data.files import find_instance_files, read_instances
from ..data.instance import CLRPInstance


@dataclass
class Job:
    """One instance to solve, or the error that stopped reading it.

    Attributes:
        source: the file it comes from.
        stem: the stem of its output files (``coord20-5-1``; ``data-3`` for instance 3 of
            ``data.npz``), unique within the run.
        label: the name shown and written as ``instance`` (the file name; ``data.npz[3]``).
        instance: the instance (None when reading failed).
        error: one line saying what is wrong (None when read).
    """

    source: Path
    stem: str
    label: str
    instance: CLRPInstance | None = None
    error: str | None = None


def read_jobs(path: Path) -> list[Job]:
    """The jobs of one file: one per instance, or one error job naming the file."""
    try:
        found = read_instances(path)
    except (ValueError, OSError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if str(path) not in message:
            message = f"{path}: {message}"
        return [Job(path, path.stem, path.name, error=message)]
    return [Job(path, f.stem, f.label, f.instance) for f in found]


def unique_stems(jobs: list[Job]) -> list[Job]:
    """``jobs`` with output stems that no two share: a stem shared by several jobs becomes the
    file's name with its extension (``r30.dat`` / ``r30.json``), then the folders above it are
    added (``a-r30.dat`` / ``b-r30.dat``) until the names differ."""
    counts = Counter(job.stem for job in jobs)
    out = []
    for job in jobs:
        if counts[job.stem] > 1:
            suffix = job.stem.removeprefix(job.source.stem)  # "-3" of a dataset row
            job = replace(job, stem=f"{job.source.name}{suffix}")
        out.append(job)
    for depth in range(1, 64):
        counts = Counter(job.stem for job in out)
        clashing = [k for k, job in enumerate(out) if counts[job.stem] > 1]
        if not clashing:
            return out
        for k in clashing:
            job = out[k]
            parents = job.source.resolve().parts[-1 - depth : -1]
            suffix = job.stem.removeprefix(job.source.name).removeprefix(job.source.stem)
            out[k] = replace(job, stem="-".join([*parents, job.source.name]) + suffix)
    raise AssertionError("unreachable: resolved paths differ")


def collect_jobs(paths: list[str] | tuple[str, ...]) -> list[Job]:
    """Every job of ``paths`` in order: error jobs for paths naming nothing, one job per
    instance of every file found (or one error job for a file that cannot be read)."""
    files, errors = find_instance_files(paths)
    jobs = [Job(Path(text), Path(text).name, text, error=error) for text, error in errors]
    for path in files:
        jobs += read_jobs(path)
    return unique_stems(jobs)
