"""The official DRLHQ code, fetched at run time into the work folder (never committed here)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from clrp_rl4co.reporting import provenance

#: The official repository.
OFFICIAL_URL = "https://github.com/JackeyMiao/DRLHQ.git"

#: Files the glue imports from the official checkout.
OFFICIAL_FILES = ("my_utils.py", "LRP_Trainer.py", "LRP_Evaluator.py", "LRP_Model.py")


def official_checkout(work: Path, given: Path | None = None, url: str = OFFICIAL_URL) -> Path:
    """The official code: ``given`` (an existing checkout) or a clone of ``url`` in
    ``<work>/DRLHQ`` (cloned on first use, reused after). Raises ``FileNotFoundError`` naming
    the folder when it lacks a file the glue needs."""
    folder = Path(given) if given else Path(work) / "DRLHQ"
    if given is None and not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "--quiet", url, str(folder)], check=True)
    missing = [name for name in OFFICIAL_FILES if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"--official: {folder} is not a checkout of the official DRLHQ code "
            f"(missing {', '.join(missing)})"
        )
    return folder.resolve()


def checkout_commit(folder: Path) -> str | None:
    """The commit of the official checkout (None when it is not a git checkout)."""
    return provenance.git_commit(root=Path(folder))
