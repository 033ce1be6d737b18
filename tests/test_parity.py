"""benchmarks/parity.py without the official code: curve files, summaries, run layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import parity


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
    assert parity.read_curves(path) == []
    old = [_row("ours", 0, 2560, 17.5), _row("official", 0, 2560, 17.25)]
    parity.write_curves(path, parity.merge_curves([], old))
    assert parity.read_curves(path) == sorted(
        old, key=lambda r: (r["implementation"], r["seed"], r["instances_seen"])
    )
    new = [_row("ours", 0, 2560, 17.0), _row("ours", 1, 5120, 16.5)]
    merged = parity.merge_curves(parity.read_curves(path), new)
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
    s = parity.summarize(rows)
    assert s["ours"]["mean_over_seeds"] == {2560: 17.5}
    assert s["ours"]["final"] == {0: (5120, 16.0), 1: (2560, 17.0)}
    assert s["official"]["seeds"] == [0]


def test_plot_curves_writes_png(tmp_path: Path) -> None:
    rows = [_row("ours", 0, 2560, 18.0), _row("ours", 0, 5120, 17.0)]
    rows += [_row("official", 1, 2560, 18.5)]
    parity.plot_curves(rows, tmp_path / "c.png", "title")
    assert (tmp_path / "c.png").stat().st_size > 0


def test_checkpoint_layouts(tmp_path: Path) -> None:
    for name in ("checkpoint-1.pt", "checkpoint-12.pt", "checkpoint-best.pt", "rng-1.pt"):
        (tmp_path / name).touch()
    assert sorted(parity.official_checkpoints(tmp_path)) == [1, 12]
    (tmp_path / "checkpoints").mkdir()
    for name in ("ep000.ckpt", "ep007.ckpt", "last.ckpt", "latest.ckpt"):
        (tmp_path / "checkpoints" / name).touch()
    assert sorted(parity.ours_checkpoints(tmp_path)) == [1, 8]  # 1-based, as the official


def test_arguments_and_our_overrides(tmp_path: Path) -> None:
    args = parity.parse_args(["--official", str(tmp_path), "--work", str(tmp_path / "w")])
    assert args.instances % args.chunk == 0 and args.instances >= 20_000
    overrides = parity.ours_overrides(args, 1)
    assert "seed=1" in overrides and "ckpt_path=last" in overrides
    assert f"trainer.max_epochs={args.instances // args.chunk}" in overrides
    assert f"model.batch_size={parity.CONFIG['batch_size']}" in overrides
    heads, dim = parity.CONFIG["num_heads"], parity.CONFIG["embed_dim"]
    assert parity.official_model_params()["qkv_dim"] * heads == dim
    with pytest.raises(SystemExit):
        parity.parse_args(["--official", str(tmp_path), "--chunk", "100"])


def test_verdict_pairs_common_seeds_and_flags_pending() -> None:
    rows = [_row("official", 0, 0, 25.0), _row("official", 0, 10, 17.0)]
    rows += [_row("official", 1, 10, 17.2), _row("ours", 0, 0, 24.0), _row("ours", 0, 10, 17.05)]
    v = parity.verdict(rows)
    assert v["seeds_compared"] == [0] and v["pending"] and v["points"] == 1  # 0 instances: out
    assert v["mean_difference_over_points"] == pytest.approx(0.05)
    assert v["seed_noise"] == pytest.approx(0.2) and v["no_worse"]
    v = parity.verdict([*rows, _row("ours", 1, 10, 17.75)])
    assert not v["pending"] and v["ours_mean"] == pytest.approx(17.4)
    assert v["mean_difference_over_points"] == pytest.approx(0.3)
    assert v["seed_noise"] == pytest.approx(0.7) and v["no_worse"]
    assert parity.verdict([_row("ours", 0, 10, 17.0)]) is None
