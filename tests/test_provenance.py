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


def test_the_cpu_is_the_model_name_of_proc_cpuinfo_or_what_platform_says(monkeypatch, tmp_path):
    """``cpu_name``: ``/proc/cpuinfo``'s first ``model name`` value; without one, the
    processor, the machine or ``CPU``."""
    import platform
    from pathlib import Path

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Fake CPU @ 3.0GHz: rev 2\nmodel name\t: Other\n")
    real_read_text = Path.read_text

    def read_text(self, *args, **kwargs):
        if str(self) == "/proc/cpuinfo":
            return real_read_text(info, *args, **kwargs)
        return real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    assert provenance.cpu_name() == "Fake CPU @ 3.0GHz: rev 2"
    assert provenance.machine() == f"Fake CPU @ 3.0GHz: rev 2, {os.cpu_count()} logical CPUs"
    info.write_text("processor\t: 0\n")  # no model name
    monkeypatch.setattr(platform, "processor", lambda: "proc")
    monkeypatch.setattr(platform, "machine", lambda: "mach")
    assert provenance.cpu_name() == "proc"

    def unreadable(self, *args, **kwargs):
        raise OSError("no such file")

    monkeypatch.setattr(Path, "read_text", unreadable)
    assert provenance.cpu_name() == "proc"
    monkeypatch.setattr(platform, "processor", lambda: "")
    assert provenance.cpu_name() == "mach"
    monkeypatch.setattr(platform, "machine", lambda: "")
    assert provenance.cpu_name() == "CPU"


def test_a_cuda_device_adds_its_gpu(monkeypatch):
    """``machine`` names the GPU of a CUDA device when CUDA is there; ``accelerator`` names
    ``<processes> x <GPU>`` on a GPU (one process by default)."""
    monkeypatch.setattr(provenance, "cpu_name", lambda: "C")
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: f"G({device})")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert provenance.machine("cuda:0") == f"C, {os.cpu_count()} logical CPUs"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    cpus = f"C, {os.cpu_count()} logical CPUs"
    assert provenance.machine("cuda:1") == f"{cpus}, GPU G(cuda:1)"
    assert provenance.machine(torch.device("cuda", 0)) == f"{cpus}, GPU G(cuda:0)"
    assert provenance.machine("cpu") == cpus and provenance.machine() == cpus
    assert provenance.accelerator("cuda:0") == f"1 x G(cuda:0), torch {torch.__version__}"
    assert provenance.accelerator("cuda:1", 4) == f"4 x G(cuda:1), torch {torch.__version__}"
    threads = torch.get_num_threads()
    assert provenance.accelerator("cpu") == (
        f"1 x CPU process ({threads} threads, {os.cpu_count()} cores), torch {torch.__version__}"
    )


def test_the_load_average_has_one_decimal_or_is_not_available(monkeypatch):
    """The 1-minute load average with one decimal; ``n/a`` where the system has none."""
    monkeypatch.setattr(os, "getloadavg", lambda: (1.26, 5.0, 9.0))
    assert provenance.load_average() == "1.3"

    def unavailable():
        raise OSError("no load average")

    monkeypatch.setattr(os, "getloadavg", unavailable)
    assert provenance.load_average() == "n/a"
    monkeypatch.delattr(os, "getloadavg")
    assert provenance.load_average() == "n/a"


def test_the_command_defaults_to_python_and_this_process_arguments(monkeypatch):
    """No ``argv``: this process's arguments; no ``prog``: ``python <script name>``."""
    monkeypatch.setattr(sys, "argv", ["/x/y/train.py", "a=1"])
    assert provenance.command_line() == "python train.py a=1"
    assert provenance.command_line(["b c"]) == "python train.py 'b c'"
    assert provenance.command_line(None, prog="tool") == "tool a=1"
    monkeypatch.setattr(sys, "argv", ["/x/y/train.py"])
    assert provenance.command_line() == "python train.py"


def test_the_record_holds_the_values_of_the_helpers(monkeypatch):
    """``record`` is the commit, the changes, the machine (of ``device``), torch, Python and
    the command (default: this process's command line)."""
    import platform

    monkeypatch.setattr(provenance, "git_commit", lambda: "abc")
    monkeypatch.setattr(provenance, "uncommitted_changes", lambda: True)
    monkeypatch.setattr(provenance, "machine", lambda device=None: f"M({device})")
    monkeypatch.setattr(sys, "argv", ["/x/run.py", "k=v"])
    assert provenance.record("cuda:0") == {
        "commit": "abc",
        "uncommitted_changes": True,
        "machine": "M(cuda:0)",
        "torch": torch.__version__,
        "python": platform.python_version(),
        "command": "python run.py k=v",
    }
    assert provenance.record(command="c")["command"] == "c"
    assert provenance.record()["machine"] == "M(None)"


def test_the_short_commit_is_a_prefix_and_the_changes_are_those_under_paths(tmp_path):
    """``short``: an abbreviated hash; ``commit_line(paths)`` looks for changes under
    ``paths`` only, even paths that look like options."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one")
    (tmp_path / "-dash.txt").write_text("one")
    _git(tmp_path, "add", "--", "a.txt", "-dash.txt")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a")
    full, short = provenance.git_commit(root=tmp_path), provenance.git_commit(True, tmp_path)
    assert len(full) == 40 and 4 <= len(short) < 40 and full.startswith(short)
    (tmp_path / "a.txt").write_text("two")
    assert provenance.commit_line(["-dash.txt"], root=tmp_path) == short
    assert provenance.commit_line(["a.txt"], root=tmp_path) == f"{short} + uncommitted changes"
    assert provenance.uncommitted_changes(["-dash.txt"], root=tmp_path) is False
    (tmp_path / "-dash.txt").write_text("two")
    assert provenance.uncommitted_changes(["-dash.txt"], root=tmp_path) is True


def test_a_git_error_says_what_git_said(tmp_path):
    """Outside a checkout the error carries git's own message."""
    with pytest.raises(subprocess.SubprocessError, match="not a git repository"):
        provenance._git("rev-parse", "HEAD", cwd=tmp_path)


def test_a_git_that_does_not_answer_is_given_up_on(monkeypatch):
    """git runs with a time limit: one that hangs gives None, not a hang."""

    def hanging(command, **kwargs):
        if kwargs.get("timeout") is None:
            raise AssertionError("git would be waited for forever")
        raise subprocess.TimeoutExpired(command, kwargs["timeout"])

    monkeypatch.setattr(subprocess, "run", hanging)
    assert provenance.git_commit() is None
    assert provenance.uncommitted_changes() is None
    assert provenance.commit_line() == "unknown"
