"""The one provenance helper (clrp_rl4co.reporting.provenance): commit, changes, machine,
command."""

import os
import shlex
import subprocess
import sys

import pytest
import torch

from clrp_rl4co.reporting import provenance


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_commit_and_changes_of_a_checkout(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True).stdout.strip()  # fmt: skip
    assert provenance.git_commit(root=tmp_path) == head
    assert head.startswith(provenance.git_commit(short=True, root=tmp_path))
    assert provenance.uncommitted_changes(root=tmp_path) is False
    assert provenance.commit_line(root=tmp_path) == provenance.git_commit(True, tmp_path)
    (tmp_path / "b.txt").write_text("untracked files are not changes")
    assert provenance.uncommitted_changes(root=tmp_path) is False
    (tmp_path / "a.txt").write_text("two")
    assert provenance.uncommitted_changes(root=tmp_path) is True
    assert provenance.uncommitted_changes(["b.txt"], root=tmp_path) is False
    assert provenance.commit_line(root=tmp_path).endswith(" + uncommitted changes")


def test_outside_git_nothing_is_made_up(tmp_path):
    assert provenance.git_commit(root=tmp_path) is None
    assert provenance.uncommitted_changes(root=tmp_path) is None
    assert provenance.commit_line(root=tmp_path) == "unknown"


def test_machine_software_and_accelerator_strings():
    assert provenance.machine().endswith(f", {os.cpu_count()} logical CPUs")
    assert provenance.software() == (f"torch {torch.__version__}, Python {sys.version.split()[0]}")
    cpu = provenance.accelerator("cpu", 2)
    assert cpu == (
        f"2 x CPU process ({torch.get_num_threads()} threads, {os.cpu_count()} cores), "
        f"torch {torch.__version__}"
    )


def test_command_line_quotes_as_a_shell_would(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/somewhere/run.py", "run_name=a b", "seed=1"])
    line = provenance.command_line()
    assert line == "python run.py 'run_name=a b' seed=1"
    assert shlex.split(line) == ["python", "run.py", "run_name=a b", "seed=1"]
    assert provenance.command_line([], prog="python -m x") == "python -m x"


@pytest.mark.parametrize("key", ["commit", "uncommitted_changes", "machine", "torch", "python"])
def test_record_has_every_field(key):
    assert (
        key in provenance.record(command="c") and provenance.record(command="c")["command"] == "c"
    )
