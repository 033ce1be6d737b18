"""The published test sets of the evaluation tables: seeded ``.npz`` files with pinned checksums.

Every synthetic table runs on a fixed set of generated instances: 1,000 per preset for clrp10 ...
clrp100 (the paper's tables) and 100 per preset for the cross-size presets clrp200 ... clrp500.
The files are drawn with :func:`clrp_rl4co.envs.clrp.generate_dataset` from ``TEST_SEED`` and
published in the repository's ``datasets/`` folder; their SHA-256 checksums are pinned in
``TEST_SET_CHECKSUMS``. When a file is missing it is regenerated from the seed and must reproduce
the pinned checksum (so a change of the generator cannot silently change the tables):
:func:`load_or_draw`, the rule every pinned set of the harness follows.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tensordict import TensorDict

from clrp_rl4co.envs.clrp import (
    CLRPGenerator,
    generate_dataset,
    instances_checksum,
    load_dataset,
    save_dataset,
)

#: Seed of every published test set (a different stream from training, seed 0, and the
#: validation sets, seed 1234).
TEST_SEED = 777000

#: Instances per published test set.
TEST_SET_SIZES: dict[str, int] = {
    "clrp10": 1000,
    "clrp20": 1000,
    "clrp50": 1000,
    "clrp100": 1000,
    "clrp200": 100,
    "clrp300": 100,
    "clrp400": 100,
    "clrp500": 100,
}

#: SHA-256 of each test set (see :func:`clrp_rl4co.envs.clrp.dataset_checksum`), pinned when the
#: files were published.
TEST_SET_CHECKSUMS: dict[str, str] = {
    "clrp10": "86374aef0d41a5eee544a6167e304bdb2b55db422b40b18e262f0df7c51ff4e5",
    "clrp20": "0aac863fa6f3d969b755b6d43e076f0fcae03781558f49f00e76decaf05b53a7",
    "clrp50": "fbf0992878f805ff868478866330cae880ac27be14616f7c4f455b7413f17fb5",
    "clrp100": "32286409141171ff81b8b0c51a76ef640d1267813c80392ed00370998607f42d",
    "clrp200": "5a9d47e8c2b4de3ec1fc26d4ac64bb340fd1715efd4fb8e86e3d1050c003987b",
    "clrp300": "e7338a795a9897281051783684f657aadb7fdfe0ee734357f70aa9089ab9ff77",
    "clrp400": "e8fba9bcd7f589155a03bbddfd787282bf41953777c3770a1bdae548c89878cb",
    "clrp500": "48905be8a10733ff731c74aa83161baa06a7f3c762cb216ae6b51cd1b3d6cf5e",
}


@dataclass(frozen=True)
class PublishedTestSet:
    """A published test set: ``size`` instances of ``preset`` drawn from ``seed``."""

    preset: str
    size: int
    seed: int = TEST_SEED

    @property
    def filename(self) -> str:
        return f"{self.preset}_test_{self.size}_seed{self.seed}.npz"


def load_or_draw(
    path: str | Path,
    draw: Callable[[], TensorDict],
    seed: int,
    expected: str | None,
    write: bool = True,
) -> TensorDict:
    """Read the dataset at ``path``, or ``draw()`` it (and write it, compressed, with ``seed``
    when ``write``) when the file is missing; either way its checksum must equal ``expected``
    (when given), else ``ValueError`` naming the file."""
    path = Path(path)
    if path.is_file():
        td = load_dataset(path)
    else:
        td = draw()
        if write:
            path.parent.mkdir(parents=True, exist_ok=True)
            save_dataset(td, path, seed=seed, compress=True)
    require_checksum(instances_checksum(td), expected, str(path))
    return td


def require_checksum(found: str, expected: str | None, where: str) -> None:
    """Raise ``ValueError`` naming ``where`` (a file, or what was drawn) unless ``found``
    equals the published checksum ``expected`` (None: nothing is pinned)."""
    if expected is not None and found != expected:
        raise ValueError(
            f"{where}: checksum {found[:12]}... differs from the published {expected[:12]}... "
            "(the file or the generator changed)"
        )


def datasets_dir() -> Path:
    """``$CLRP_DATASETS_DIR`` if set, else the repository's ``datasets/`` folder."""
    if os.environ.get("CLRP_DATASETS_DIR"):
        return Path(os.environ["CLRP_DATASETS_DIR"])
    return Path(__file__).resolve().parents[1] / "datasets"


def published_test_set(preset: str) -> PublishedTestSet:
    if preset not in TEST_SET_SIZES:
        raise ValueError(f"preset: no published test set for {preset!r} ({list(TEST_SET_SIZES)})")
    return PublishedTestSet(preset, TEST_SET_SIZES[preset])


def load_test_set(preset: str, root: str | Path | None = None, write: bool = True) -> TensorDict:
    """The test set of ``preset`` (read from ``root``, default :func:`datasets_dir`).

    A missing file is regenerated from the seed (and written to ``root`` when ``write``); either
    way the instances must match the pinned checksum, else ``ValueError``.
    """
    spec = published_test_set(preset)
    path = Path(root or datasets_dir()) / spec.filename
    generator = CLRPGenerator(preset=preset)
    return load_or_draw(
        path,
        lambda: generate_dataset(generator, spec.size, spec.seed),
        spec.seed,
        TEST_SET_CHECKSUMS.get(preset),
        write,
    )
