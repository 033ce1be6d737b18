"""Paths on the command line: files, folders and globs, each file once; unreadable files become
error jobs naming the file."""

from __future__ import annotations

import pytest

from clrp_rl4co.cli.args import parse_args
from clrp_rl4co.cli.inputs import expand, read_jobs


def test_folders_globs_and_files_each_once(benchmarks_root):
    prins = benchmarks_root / "prins"
    files, errors = expand([str(prins / "coord20-*.dat"), str(prins / "coord20-5-1.dat")])
    assert not errors
    assert [f.name for f in files] == sorted(
        ["coord20-5-1.dat", "coord20-5-1b.dat", "coord20-5-2.dat", "coord20-5-2b.dat"]
    )
    files, errors = expand([str(prins)])
    names = {f.name for f in files}
    assert len(names) == 30 and "format.txt" not in names and not errors


def test_paths_that_name_nothing_are_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    files, errors = expand([str(tmp_path / "none.dat"), str(tmp_path / "x*.dat"),
                            str(tmp_path / "empty")])  # fmt: skip
    assert files == []
    assert [e.error for e in errors] == [
        f"{tmp_path / 'none.dat'}: no such file or folder",
        f"{tmp_path / 'x*.dat'}: no file matches",
        f"{tmp_path / 'empty'}: no instance files (*.dat, *.txt, *.json, *.npz) in this folder",
    ]


def test_an_unreadable_file_is_one_error_job(tmp_path):
    path = tmp_path / "short.dat"
    path.write_text("3\n2\n0 0\n")
    (job,) = read_jobs(path)
    assert job.instance is None and job.error.startswith(f"{path}")
    assert "file ends before depot 2 x" in job.error


@pytest.mark.parametrize("value", ["0", "-1", "abc", "inf"])
def test_time_must_be_positive_seconds(value, capsys):
    with pytest.raises(SystemExit) as info:
        parse_args(["solve", "a.dat", "--time", value])
    assert info.value.code == 2
    assert "--time" in capsys.readouterr().err


def test_defaults():
    options = parse_args(["solve", "a.dat"])
    assert (options.method, options.seconds, options.workers, options.seed) == ("auto", 10.0, 1, 0)
    assert not options.quiet and not options.plot


def test_evaluate_example_reads_instance_files_like_the_command(benchmarks_root, capsys):
    """``examples/evaluate.py --data`` takes a glob of instance files (read by the command's
    reader) and reports the gap to the Prins best-known values."""
    import runpy
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / "evaluate.py"
    pattern = str(benchmarks_root / "prins" / "coord20-5-1*.dat")
    argv = ["evaluate.py", "--checkpoint", "drlhqcf_mixed50_cpu", "--data", pattern,
            "--decode", "greedy"]  # fmt: skip
    old = sys.argv
    sys.argv = argv
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = old
    table = capsys.readouterr().out
    assert "| greedy | 2 |" in table and "gap to BKS" in table
