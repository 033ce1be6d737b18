"""benchmarks/parity/ without the official code: curve files, summaries, run layout, report."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.parity import cli, config, curves, fetch, official, ours, report


def _row(impl: str, seed: int, n: int, value: float) -> dict:
    return {
        "implementation": impl,
        "seed": seed,
        "instances_seen": n,
        "val_objective": value,
        "eval_instances": 500,
    }


def test_curves_round_trip_and_merge(tmp_path: Path) -> None:
    path = tmp_path / "curves.csv"
    assert curves.read_curves(path) == []
    old = [_row("ours", 0, 2560, 17.5), _row("official", 0, 2560, 17.25)]
    curves.write_curves(path, curves.merge_curves([], old))
    assert curves.read_curves(path) == sorted(
        old, key=lambda r: (r["implementation"], r["seed"], r["instances_seen"])
    )
    new = [_row("ours", 0, 2560, 17.0), _row("ours", 1, 5120, 16.5)]
    merged = curves.merge_curves(curves.read_curves(path), new)
    assert [(r["implementation"], r["seed"], r["val_objective"]) for r in merged] == [
        ("official", 0, 17.25),
        ("ours", 0, 17.0),  # replaced by the newer evaluation
        ("ours", 1, 16.5),
    ]


def test_summarize_means_only_where_every_seed_arrived() -> None:
    rows = [
        _row("ours", 0, 2560, 18.0),
        _row("ours", 1, 2560, 17.0),
        _row("ours", 0, 5120, 16.0),
        _row("official", 0, 2560, 17.0),
    ]
    s = curves.summarize(rows)
    assert s["ours"]["mean_over_seeds"] == {2560: 17.5}
    assert s["ours"]["final"] == {0: (5120, 16.0), 1: (2560, 17.0)}
    assert s["official"]["seeds"] == [0]


def test_plot_curves_writes_png(tmp_path: Path) -> None:
    rows = [_row("ours", 0, 2560, 18.0), _row("ours", 0, 5120, 17.0)]
    rows += [_row("official", 1, 2560, 18.5)]
    curves.plot_curves(rows, tmp_path / "c.png", "title")
    assert (tmp_path / "c.png").stat().st_size > 0


def test_checkpoint_layouts(tmp_path: Path) -> None:
    for name in ("checkpoint-1.pt", "checkpoint-12.pt", "checkpoint-best.pt", "rng-1.pt"):
        (tmp_path / name).touch()
    assert sorted(official.official_checkpoints(tmp_path)) == [1, 12]
    (tmp_path / "checkpoints").mkdir()
    for name in ("ep000.ckpt", "ep007.ckpt", "last.ckpt", "latest.ckpt"):
        (tmp_path / "checkpoints" / name).touch()
    assert sorted(ours.ours_checkpoints(tmp_path)) == [1, 8]  # 1-based, as the official


def test_arguments_and_our_overrides(tmp_path: Path) -> None:
    args = cli.parse_args(["--work", str(tmp_path / "w")])
    assert args.instances % args.chunk == 0 and args.instances >= 20_000
    overrides = ours.ours_overrides(args, 1)
    assert "seed=1" in overrides and "ckpt_path=last" in overrides
    assert f"trainer.max_epochs={args.instances // args.chunk}" in overrides
    assert f"model.batch_size={config.CONFIG['batch_size']}" in overrides
    heads, dim = config.CONFIG["num_heads"], config.CONFIG["embed_dim"]
    assert config.official_model_params()["qkv_dim"] * heads == dim
    with pytest.raises(SystemExit):
        cli.parse_args(["--chunk", "100"])


def test_verdict_pairs_common_seeds_and_flags_pending() -> None:
    rows = [_row("official", 0, 0, 25.0), _row("official", 0, 10, 17.0)]
    rows += [_row("official", 1, 10, 17.2), _row("ours", 0, 0, 24.0), _row("ours", 0, 10, 17.05)]
    v = curves.verdict(rows)
    assert v["seeds_compared"] == [0] and v["pending"] and v["points"] == 1  # 0 instances: out
    assert v["mean_difference_over_points"] == pytest.approx(0.05)
    assert v["seed_noise"] == pytest.approx(0.2) and v["no_worse"]
    v = curves.verdict([*rows, _row("ours", 1, 10, 17.75)])
    assert not v["pending"] and v["ours_mean"] == pytest.approx(17.4)
    assert v["mean_difference_over_points"] == pytest.approx(0.3)
    assert v["seed_noise"] == pytest.approx(0.7) and v["no_worse"]
    assert curves.verdict([_row("ours", 0, 10, 17.0)]) is None


def test_the_glue_is_real_files_run_in_the_official_checkout() -> None:
    for name in ("official_train.py", "official_eval.py"):
        text = (official.GLUE / name).read_text()
        compile(text, name, "exec")  # a real, valid Python file
        assert 'os.chdir(cfg["official"])' in text


def test_a_folder_without_the_official_code_is_named(tmp_path: Path) -> None:
    (tmp_path / "my_utils.py").touch()
    with pytest.raises(FileNotFoundError, match=r"--official: .* \(missing LRP_Trainer.py"):
        fetch.official_checkout(tmp_path / "work", tmp_path)
    for name in fetch.OFFICIAL_FILES:
        (tmp_path / name).touch()
    assert fetch.official_checkout(tmp_path / "work", tmp_path) == tmp_path.resolve()


def test_the_report_records_no_path_of_the_machine(tmp_path: Path) -> None:
    args = cli.parse_args(["--work", str(tmp_path / "w"), "--out", str(tmp_path / "out")])
    rows = [_row("official", 0, 2560, 17.25), _row("ours", 0, 2560, 17.0)]
    summary = report.report(args, rows)
    assert summary["args"]["seeds"] == [0, 1] and summary["official_commit"] is None
    for name in ("summary.json", "README.md"):
        text = (tmp_path / "out" / name).read_text()
        assert str(tmp_path) not in text
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "python -m benchmarks.parity --seeds 0 1 --instances 20480" in readme
    assert "| 2,560 | 17.2500 | 17.0000 | 17.2500 | 17.0000 | -0.2500 |" in readme
