"""Instances named on the command line: expand paths, folders and globs, read every file.

Readers by extension: ``.json`` the JSON format (:mod:`clrp_rl4co.data.json_instance`),
``.npz`` a dataset of the package (one job per instance), anything else the Prodhon format
(:func:`clrp_rl4co.data.read_prodhon`). A file that cannot be read becomes a job with an error
(the other files go on).
"""

from __future__ import annotations

import glob
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..data import CLRPInstance, read_prodhon, tensordict_to_instances
from ..data.json_instance import read_json_instance

#: Files a folder contributes: the Prodhon files of the public sets, JSON and datasets.
FOLDER_PATTERNS = ("*.dat", "*.txt", "*.json", "*.npz")
#: Files in benchmark folders that are not instances.
NOT_INSTANCES = ("format.txt", "readme.txt")


@dataclass
class Job:
    """One instance to solve, or the error that stopped reading it.

    Attributes:
        source: the file it comes from.
        stem: the stem of its output files (``coord20-5-1``; ``data-3`` for instance 3 of
            ``data.npz``).
        label: the name shown and written as ``instance`` (the file name; ``data.npz[3]``).
        instance: the instance (None when reading failed).
        error: one line saying what is wrong (None when read).
    """

    source: Path
    stem: str
    label: str
    instance: CLRPInstance | None = None
    error: str | None = None


def expand(paths: list[str] | tuple[str, ...]) -> tuple[list[Path], list[Job]]:
    """Files named by ``paths`` (in order, each once) and error jobs for paths naming nothing."""
    files: list[Path] = []
    errors: list[Job] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found = sorted(
                {f for pattern in FOLDER_PATTERNS for f in path.glob(pattern)}
                - {f for f in path.iterdir() if f.name.lower() in NOT_INSTANCES}
            )
            if not found:
                errors.append(
                    Job(
                        path,
                        path.name,
                        str(path),
                        error=f"{path}: no instance "
                        f"files ({', '.join(FOLDER_PATTERNS)}) in this folder",
                    )
                )
            files += found
        elif path.is_file():
            files.append(path)
        elif glob.has_magic(text):
            found = sorted(Path(f) for f in glob.glob(text) if Path(f).is_file())
            if not found:
                errors.append(Job(path, path.name, text, error=f"{text}: no file matches"))
            files += found
        else:
            errors.append(Job(path, path.name, text, error=f"{text}: no such file or folder"))
    unique = list(dict.fromkeys(files))
    return unique, errors


def read_jobs(path: Path) -> list[Job]:
    """The jobs of one file: one per instance, or one error job naming the file."""
    try:
        if path.suffix.lower() == ".npz":
            from ..envs.clrp import load_dataset

            td = load_dataset(path)
            count = td.batch_size[0]
            labels = [f"{path.name}[{i}]" for i in range(count)]
            instances = tensordict_to_instances(td, names=labels)
            return [
                Job(path, f"{path.stem}-{i}", labels[i], inst) for i, inst in enumerate(instances)
            ]
        if path.suffix.lower() == ".json":
            instance = read_json_instance(path)
        else:
            instance = read_prodhon(path)
    except (ValueError, OSError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if str(path) not in message:
            message = f"{path}: {message}"
        return [Job(path, path.stem, path.name, error=message)]
    return [Job(path, path.stem, path.name, instance)]
