"""Instance files by extension and, for JSON, by layout: the one place that maps a path to
its reader.

* ``.json``: parsed once (:func:`.json_text.read_json_text`); an object of Schneider &
  Löffler's layout (:func:`.schneider.is_schneider_layout`: ``vehicle_costs``, ``type``,
  entries with ``index``) is built by :mod:`.schneider`, anything else by
  :mod:`.json_instance`;
* ``.npz``: a dataset of the package (one instance per row);
* anything else: the Prodhon format (:mod:`.prodhon`).
"""

from __future__ import annotations

import glob
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .instance import CLRPInstance

#: Files a folder contributes: the Prodhon files of the public sets, JSON and datasets.
FOLDER_PATTERNS = ("*.dat", "*.txt", "*.json", "*.npz")
#: Files in benchmark folders that are not instances.
NOT_INSTANCES = ("format.txt", "readme.txt")


@dataclass(frozen=True)
class FileInstance:
    """One instance read from a file.

    Attributes:
        instance: the instance.
        label: the name shown for it (the file name; ``data.npz[3]`` for row 3 of a dataset).
        stem: the stem of files written for it (``coord20-5-1``; ``data-3``).
    """

    instance: CLRPInstance
    label: str
    stem: str


def read_instances(path: str | Path) -> list[FileInstance]:
    """Every instance of the file ``path`` (one, except for ``.npz`` datasets).

    Raises:
        ValueError: the file is not a valid instance file; the message starts with the path.
        OSError: the file cannot be read.
    """
    path = Path(path)
    try:
        if path.suffix.lower() == ".npz":
            from ..envs.clrp import load_dataset
            from .instance import tensordict_to_instances

            td = load_dataset(path)
            labels = [f"{path.name}[{i}]" for i in range(td.batch_size[0])]
            instances = tensordict_to_instances(td, names=labels)
            return [
                FileInstance(inst, labels[i], f"{path.stem}-{i}")
                for i, inst in enumerate(instances)
            ]
        if path.suffix.lower() == ".json":
            instance = _read_json(path)
        else:
            from .prodhon import read_prodhon

            instance = read_prodhon(path)
    except (KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path}: {str(exc) or type(exc).__name__}") from exc
    return [FileInstance(instance, path.name, path.stem)]


def _read_json(path: Path) -> CLRPInstance:
    """The instance of a ``.json`` file, by its layout (the module doc), parsed once; errors
    start with the path and the line."""
    from .json_instance import instance_from_json_text
    from .json_text import read_json_text
    from .schneider import is_schneider_layout, schneider_from_json_text

    text, data = read_json_text(path)
    if is_schneider_layout(data):
        return schneider_from_json_text(path, text, data)
    return instance_from_json_text(path, text, data)


def read_instance(path: str | Path) -> CLRPInstance:
    """The one instance of the file ``path``.

    Raises:
        ValueError: the file is not a valid instance file, or a dataset of several instances.
        OSError: the file cannot be read.
    """
    found = read_instances(path)
    if len(found) != 1:
        raise ValueError(
            f"{path}: holds {len(found)} instances; read them with read_instances, or solve "
            "them with solve_many"
        )
    return found[0].instance


def natural_key(path: Path) -> tuple:
    """Sort key of a path in natural order: runs of digits compare as numbers, so
    ``coord20-5-1.dat`` comes before ``coord100-5-1.dat`` (and ``r9`` before ``r10``)."""
    parts = re.split(r"(\d+)", str(path))  # text, digits, text, ...: digits at odd places
    return tuple(int(part) if k % 2 else part for k, part in enumerate(parts))


def find_instance_files(
    paths: list[str] | tuple[str, ...],
) -> tuple[list[Path], list[tuple[str, str]]]:
    """The files named by ``paths`` (files, folders: their :data:`FOLDER_PATTERNS` files, or
    glob patterns), in the order given and, within a folder or a pattern, in natural order
    (:func:`natural_key`), each once; and ``(path, error line)`` for each path that names
    nothing."""
    files: list[Path] = []
    errors: list[tuple[str, str]] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found = sorted(
                {f for pattern in FOLDER_PATTERNS for f in path.glob(pattern)}
                - {f for f in path.iterdir() if f.name.lower() in NOT_INSTANCES},
                key=natural_key,
            )
            if not found:
                patterns = ", ".join(FOLDER_PATTERNS)
                errors.append((text, f"{path}: no instance files ({patterns}) in this folder"))
            files += found
        elif path.is_file():
            files.append(path)
        elif glob.has_magic(text):
            found = sorted((Path(f) for f in glob.glob(text) if Path(f).is_file()), key=natural_key)
            if not found:
                errors.append((text, f"{text}: no file matches"))
            files += found
        else:
            errors.append((text, f"{text}: no such file or folder"))
    return list(dict.fromkeys(files)), errors
