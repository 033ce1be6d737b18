"""Where a result came from: the code's commit, the machine, the software and the command.

Every record the package and its tools write (training runs, shipped models, evaluation tables,
benchmarks) describes its origin with these functions, so the strings agree across files::

    >>> from clrp_rl4co.reporting import provenance
    >>> provenance.software()  # doctest: +SKIP
    'torch 2.5.1, Python 3.11.7'
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

#: The checkout the package lives in (when it is installed from one).
SOURCE_ROOT = Path(__file__).resolve().parents[1]


def _git(*args: str, cwd: Path = SOURCE_ROOT) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    if done.returncode != 0:
        raise subprocess.SubprocessError(done.stderr.strip())
    return done.stdout.strip()


def git_commit(short: bool = False, root: Path = SOURCE_ROOT) -> str | None:
    """The commit checked out at ``root`` (default: the package's checkout); None outside git."""
    try:
        return _git("rev-parse", *(["--short"] if short else []), "HEAD", cwd=root)
    except (OSError, subprocess.SubprocessError):
        return None


def uncommitted_changes(
    paths: Sequence[str | Path] | None = None, root: Path = SOURCE_ROOT
) -> bool | None:
    """Whether tracked files under ``paths`` (default: the whole checkout) differ from the
    commit; None outside git."""
    try:
        out = _git(
            "status", "--porcelain", "--untracked-files=no", "--", *map(str, paths or []), cwd=root
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out != ""


def commit_line(paths: Sequence[str | Path] | None = None, root: Path = SOURCE_ROOT) -> str:
    """``abc1234``, ``abc1234 + uncommitted changes`` (in ``paths``, default: anywhere) or
    ``unknown`` outside git: the commit line of a results file."""
    commit = git_commit(short=True, root=root)
    if commit is None:
        return "unknown"
    return f"{commit} + uncommitted changes" if uncommitted_changes(paths, root) else commit


def cpu_name() -> str:
    """The CPU model (``/proc/cpuinfo``'s model name where there is one)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def machine(device: str | torch.device | None = None) -> str:
    """``<CPU model>, <n> logical CPUs`` and, for a CUDA ``device``, ``, GPU <name>``."""
    text = f"{cpu_name()}, {os.cpu_count()} logical CPUs"
    device = torch.device(device) if device is not None else None
    if device is not None and device.type == "cuda" and torch.cuda.is_available():
        text += f", GPU {torch.cuda.get_device_name(device)}"
    return text


def accelerator(device: str | torch.device, processes: int = 1) -> str:
    """What one training or decoding process runs on: ``<processes> x <GPU name>`` on a GPU,
    ``<processes> x CPU process (<t> threads, <n> cores)`` on the CPU; then the torch version."""
    device = torch.device(device)
    if device.type == "cuda":
        what = torch.cuda.get_device_name(device)
    else:
        what = f"CPU process ({torch.get_num_threads()} threads, {os.cpu_count()} cores)"
    return f"{processes} x {what}, torch {torch.__version__}"


def software() -> str:
    """``torch <version>, Python <version>``."""
    return f"torch {torch.__version__}, Python {platform.python_version()}"


def load_average() -> str:
    """The 1-minute load average (``n/a`` where the system has none)."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except (OSError, AttributeError):
        return "n/a"


def command_line(argv: Sequence[str] | None = None, prog: str | None = None) -> str:
    """The command as typed: ``prog`` (default: ``python <script>``) and ``argv`` (default:
    this process's arguments), shell-quoted."""
    args = list(sys.argv[1:] if argv is None else argv)
    head = prog or shlex.join(["python", Path(sys.argv[0]).name])
    return " ".join([head, shlex.join(args)]) if args else head


def record(device: str | torch.device | None = None, command: str | None = None) -> dict[str, Any]:
    """All of the above as one JSON-ready record: commit, uncommitted_changes, machine,
    torch, python, command."""
    return {
        "commit": git_commit(),
        "uncommitted_changes": uncommitted_changes(),
        "machine": machine(device),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "command": command if command is not None else command_line(),
    }
