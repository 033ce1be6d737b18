"""benchmarks/train_throughput.py --sweep: one tiny CPU run prints every row and the check."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def bench():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "train_throughput.py"
    spec = importlib.util.spec_from_file_location("train_throughput", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tiny_cpu_sweep(bench, capsys):
    import torch

    precision = torch.get_float32_matmul_precision()
    out = bench.main(
        "--sweep --device cpu --batch-size 4 --seconds 0.05 --rounds 1 --warmup 1 "
        "--presets clrp10 --learn-preset clrp10 --learn-steps 1 --learn-val 4".split()
    )
    torch.set_float32_matmul_precision(precision)
    text = capsys.readouterr().out
    rows = out["rows"]
    assert set(rows) == {("clrp10", s) for s in ("fp32 strict", "fp32 today", "bf16 autocast")}
    assert rows[("clrp10", "fp32 today")]["ratio"] == 1.0
    assert all(r["instances_per_s"] > 0 for r in rows.values())
    assert all(r["reward_dtype"] == ["torch.float32"] for r in rows.values())  # not bf16
    check = out["learning"]
    assert set(check["runs"]) == {
        "start",
        "fp32 today, seed 0",
        "fp32 today, seed 1",
        "bf16 autocast, seed 0",
    }
    assert check["instances"] == 4 and isinstance(check["within_noise"], bool)
    assert "ratio to fp32 today" in text and "learning check" in text
