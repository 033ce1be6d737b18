"""Paths on the command line: files, folders and globs, each file once; unreadable files become
error jobs naming the file; output names that no two jobs share."""

from __future__ import annotations

import pytest

from clrp_rl4co.cli.args import parse_args
from clrp_rl4co.cli.inputs import collect_jobs, read_jobs
from clrp_rl4co.data.files import find_instance_files as expand


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
    assert [e for _, e in errors] == [
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


def test_same_stem_inputs_get_distinct_output_names(benchmarks_root, tmp_path):
    """r30.dat and r30.json, and two r30.dat in different folders, never share outputs."""
    from clrp_rl4co.data import read_prodhon, write_json_instance

    source = benchmarks_root / "prins" / "coord20-5-1.dat"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "r30.dat").write_bytes(source.read_bytes())
    write_json_instance(read_prodhon(source), tmp_path / "a" / "r30.json")
    (tmp_path / "a" / "other.dat").write_bytes(source.read_bytes())
    jobs = collect_jobs([str(tmp_path / "a"), str(tmp_path / "b" / "r30.dat")])
    stems = {job.source.relative_to(tmp_path).as_posix(): job.stem for job in jobs}
    assert stems == {
        "a/other.dat": "other",  # a stem of its own keeps it
        "a/r30.dat": "a-r30.dat",
        "a/r30.json": "r30.json",
        "b/r30.dat": "b-r30.dat",
    }
