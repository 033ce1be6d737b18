"""Instance files by extension (clrp_rl4co.data.files): which reader a path gets, the labels and
stems of a dataset's rows, the errors, and which files a list of paths names."""

from __future__ import annotations

import numpy as np
import pytest
from instances import random_instance

from clrp_rl4co.data import instances_to_tensordict, write_json_instance
from clrp_rl4co.data.files import find_instance_files, read_instance, read_instances
from clrp_rl4co.envs.clrp import save_dataset


def write_dataset(path, instances) -> None:
    save_dataset(instances_to_tensordict(instances, normalize_locs=False), path)


def test_a_dataset_gives_one_labelled_instance_per_row(tmp_path):
    first, second = random_instance(5, seed=1), random_instance(5, seed=2)
    write_dataset(tmp_path / "d.npz", [first, second])
    found = read_instances(tmp_path / "d.npz")
    assert [f.label for f in found] == ["d.npz[0]", "d.npz[1]"]
    assert [f.stem for f in found] == ["d-0", "d-1"]
    assert [f.instance.name for f in found] == ["d.npz[0]", "d.npz[1]"]
    for f, source in zip(found, (first, second), strict=True):
        np.testing.assert_allclose(f.instance.demand, source.demand)
        np.testing.assert_allclose(f.instance.customer_locs, source.customer_locs, rtol=1e-6)
    with pytest.raises(ValueError, match=r"d\.npz: holds 2 instances; read them with "
                       r"read_instances, or solve them with solve_many"):  # fmt: skip
        read_instance(tmp_path / "d.npz")


@pytest.mark.parametrize("name", ["x.json", "X.JSON"])
def test_a_json_file_of_any_case_is_read_as_json(tmp_path, name):
    instance = random_instance(4, seed=3)
    write_json_instance(instance, tmp_path / name)
    (found,) = read_instances(tmp_path / name)
    assert found.label == name and found.stem == name.split(".")[0]
    np.testing.assert_allclose(found.instance.demand, instance.demand)
    np.testing.assert_allclose(read_instance(tmp_path / name).demand, instance.demand)


def test_an_upper_case_dataset_suffix_is_a_dataset(tmp_path):
    write_dataset(tmp_path / "d.npz", [random_instance(4, seed=4)])
    (tmp_path / "d.npz").rename(tmp_path / "D.NPZ")
    assert [f.label for f in read_instances(tmp_path / "D.NPZ")] == ["D.NPZ[0]"]


def test_a_broken_dataset_is_an_error_that_starts_with_its_path(tmp_path):
    path = tmp_path / "broken.npz"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ValueError) as caught:
        read_instances(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert len(str(caught.value)) > len(f"{path}: ")  # says what went wrong


def test_globs_and_folders_add_up_in_order_each_once(tmp_path):
    for name in ("b.dat", "a.dat", "c.json", "format.txt"):
        (tmp_path / name).write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "z.txt").write_text("x")
    paths = [str(tmp_path / "c.*"), str(tmp_path / "*.dat"), str(tmp_path), str(tmp_path / "sub")]
    files, errors = find_instance_files(paths)
    names = [f.relative_to(tmp_path).as_posix() for f in files]
    # the first glob, the second (sorted), the folder's files not yet named (format.txt is a
    # description, not an instance), the sub-folder's
    assert names == ["c.json", "a.dat", "b.dat", "sub/z.txt"]
    assert errors == []


def test_a_folder_and_a_glob_list_numbered_files_in_natural_order(tmp_path):
    names = ["coord100-5-1.dat", "coord20-5-1b.dat", "coord20-5-1.dat", "coord50-5-10.dat"]
    names += ["coord50-5-9.dat", "coord200-10-1.dat"]
    for name in names:
        (tmp_path / name).write_text("x")
    expected = [
        "coord20-5-1.dat",
        "coord20-5-1b.dat",
        "coord50-5-9.dat",
        "coord50-5-10.dat",
        "coord100-5-1.dat",
        "coord200-10-1.dat",
    ]  # as a person counts: 20 < 50 < 100 < 200, 9 < 10
    for paths in ([str(tmp_path)], [str(tmp_path / "coord*.dat")]):
        files, _ = find_instance_files(paths)
        assert [f.name for f in files] == expected


def test_a_file_named_directly_is_listed_as_given(tmp_path):
    path = tmp_path / "x10.dat"
    path.write_text("x")
    assert find_instance_files([str(path), str(path)]) == ([path], [])  # each once


def test_numbers_in_several_places_compare_as_numbers_each():
    from pathlib import Path

    from clrp_rl4co.data.files import natural_key

    names = ["r2/c10-3.dat", "r10/c2-1.dat", "r2/c9-12.dat", "r2/c9-3.dat", "r2/c9.dat"]
    ordered = sorted((Path(n) for n in names), key=natural_key)
    assert [p.as_posix() for p in ordered] == [
        "r2/c9-3.dat",
        "r2/c9-12.dat",
        "r2/c9.dat",
        "r2/c10-3.dat",
        "r10/c2-1.dat",
    ]


def test_an_error_without_a_message_is_named_by_its_type(tmp_path, monkeypatch):
    import clrp_rl4co.envs.clrp as clrp_env

    def empty(path):
        raise EOFError

    monkeypatch.setattr(clrp_env, "load_dataset", empty)
    path = tmp_path / "d.npz"
    path.write_bytes(b"")
    with pytest.raises(ValueError) as caught:
        read_instances(path)
    assert str(caught.value) == f"{path}: EOFError"
