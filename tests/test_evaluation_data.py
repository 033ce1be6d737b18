"""clrp_rl4co.evaluation.data (dataset specs) and the evaluation command built on it."""

import runpy
import sys
from pathlib import Path

import pytest
import torch

from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset, save_dataset
from clrp_rl4co.evaluation.data import DEFAULT_SEED, load_eval_data
from clrp_rl4co.policies import build_policy

ROOT = Path(__file__).resolve().parents[1]


def test_generated_spec_is_the_seeded_draw():
    data, reference = load_eval_data("clrp10:3:7")
    expected = generate_dataset(CLRPGenerator(preset="clrp10"), 3, 7)
    assert reference is None and len(data) == 3 and data.names[0] == "clrp10-seed7-0"
    assert torch.equal(data.td["locs"], expected["locs"])
    assert data.instances[2].num_customers == 10 and data.instances[2].num_depots == 5
    default, _ = load_eval_data("clrp10:2")
    drawn = generate_dataset(CLRPGenerator(preset="clrp10"), 2, DEFAULT_SEED)
    assert torch.equal(default.td["demand"], drawn["demand"])


def test_npz_spec_reads_the_file(tmp_path):
    td = generate_dataset(CLRPGenerator(preset="clrp20"), 4, 3)
    save_dataset(td, tmp_path / "mine.npz")
    data, reference = load_eval_data(str(tmp_path / "mine.npz"))
    assert reference is None and data.names == [f"mine-{i}" for i in range(4)]
    assert torch.equal(data.td["cost_locs"], td["cost_locs"])


def test_prins_spec_has_the_bks_as_reference(benchmarks_root):
    data, reference = load_eval_data("prins:coord20-5-1")
    assert data.names == ["coord20-5-1"] and data.td is None
    assert reference == {0: 54793.0}
    everything, _ = load_eval_data("prins")
    assert len(everything) == 30


@pytest.mark.parametrize("spec", ["clrp10", "clrp10:x", "clrp10:0", "nope:10", "clrp10:5:s"])
def test_bad_specs_name_the_field_and_value(spec):
    with pytest.raises(ValueError, match=f"data: .*got '{spec}'"):
        load_eval_data(spec)


def test_evaluate_command(tmp_path, monkeypatch, capsys):
    torch.manual_seed(0)
    build_policy("drlhq", embed_dim=16, num_encoder_layers=1, num_heads=2).save_pretrained(
        tmp_path / "tiny"
    )
    argv = ["evaluate.py", "--checkpoint", str(tmp_path / "tiny.pt"), "--data", "clrp10:6",
            "--batch-size", "4", "--decode", "greedy", "multistart_greedy+rot8",
            "--out", str(tmp_path / "table"), "--cache", str(tmp_path / "cache")]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(ROOT / "examples" / "evaluate.py"), run_name="__main__")
    table = capsys.readouterr().out
    assert "| greedy | 6 |" in table and "| multistart_greedy+rot8 | 6 |" in table
    assert (tmp_path / "table.md").read_text() == table.rstrip("\n") + "\n"
    assert (tmp_path / "table.csv").read_text().startswith("method,instances")
    assert len(list((tmp_path / "cache").glob("*.jsonl"))) == 2
