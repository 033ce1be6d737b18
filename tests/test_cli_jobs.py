"""The command's jobs (clrp_rl4co.cli.inputs): error jobs for paths naming nothing and for
unreadable files, and output stems no two jobs share, dataset rows included."""

from __future__ import annotations

from pathlib import Path

import pytest
from instances import random_instance

from clrp_rl4co.cli import inputs
from clrp_rl4co.cli.inputs import collect_jobs, read_jobs
from clrp_rl4co.data import instances_to_tensordict
from clrp_rl4co.envs.clrp import save_dataset


def test_a_path_naming_nothing_is_an_error_job(tmp_path):
    text = str(tmp_path / "nope" / "x.dat")
    (job,) = collect_jobs([text])
    assert job.source == Path(text) and job.stem == "x.dat" and job.label == text
    assert job.instance is None and job.error == f"{text}: no such file or folder"


@pytest.mark.parametrize(
    "raised,expected",
    [
        (ValueError("bad thing"), "{path}: bad thing"),
        (ValueError(""), "{path}: ValueError"),
        (OSError("{path}: first line\nsecond line"), "{path}: first line"),
    ],
)
def test_an_unreadable_file_is_one_error_job_naming_it_once(
    tmp_path, monkeypatch, raised, expected
):
    path = tmp_path / "r30.dat"
    exc = type(raised)(*(str(a).format(path=path) for a in raised.args))

    def fail(_):
        raise exc

    monkeypatch.setattr(inputs, "read_instances", fail)
    (job,) = read_jobs(path)
    assert job.source == path and job.stem == "r30" and job.label == "r30.dat"
    assert job.instance is None and job.error == expected.format(path=path)


def test_dataset_rows_of_same_named_files_get_folder_prefixed_stems(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        rows = [random_instance(4, seed=1), random_instance(4, seed=2)]
        save_dataset(
            instances_to_tensordict(rows, normalize_locs=False), tmp_path / folder / "d.npz"
        )
    jobs = collect_jobs([str(tmp_path / "a" / "d.npz"), str(tmp_path / "b" / "d.npz")])
    assert [j.stem for j in jobs] == ["a-d.npz-0", "a-d.npz-1", "b-d.npz-0", "b-d.npz-1"]
    assert [j.label for j in jobs] == ["d.npz[0]", "d.npz[1]"] * 2
