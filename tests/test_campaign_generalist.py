"""The campaign's generalist track: state copied out, trained there, brought back if ahead."""

from __future__ import annotations

import torch

from experiments.campaign import generalist as track
from experiments.generalist import settings
from experiments.generalist.report import append_curve, read_curve
from experiments.training.state import RunState, load_committed, save_committed


def _report(folder, instances: int, weight: float) -> None:
    state = RunState(instances=instances)
    save_committed(state, {"w": torch.full((2,), weight)}, folder / "state")
    append_curve(folder, state, 0, {"families_met": 1.0, "family_gap_mean": 30.0})


def test_apply_brings_back_only_a_state_that_is_ahead(tmp_path):
    committed, out = tmp_path / "committed", tmp_path / "out"
    _report(committed, 100, 0.0)
    _report(out / track.FOLDER, 90, 1.0)
    assert "kept" in track.apply_generalist(out, report_dir=committed)
    assert load_committed(committed / "state")[0].instances == 100
    _report(out / track.FOLDER, 150, 2.0)  # a second row: 90, then 150
    assert "brought back" in track.apply_generalist(out, report_dir=committed)
    state, weights = load_committed(committed / "state")
    assert state.instances == 150 and torch.equal(weights["w"], torch.full((2,), 2.0))
    assert [r["instances"] for r in read_curve(committed)] == [90.0, 150.0]
    assert (committed / "curve.png").is_file()


def test_run_trains_in_the_output_folder_from_the_committed_state(tmp_path, monkeypatch):
    committed, out = tmp_path / "committed", tmp_path / "out"
    _report(committed, 40_000, 0.5)
    monkeypatch.setattr(settings, "CURRICULUM", (settings.Stage((10, 12), None),))

    def fake_validation(policy):
        return {"families_met": 2.0, "family_gap_mean": 25.0}

    # the committed weights must fit the run's policy: start them from the start model
    from clrp_rl4co.models import load_policy

    weights = load_policy(settings.START_MODEL).state_dict()
    save_committed(RunState(instances=40_000, last_validation={"instances": 40_000}), weights,
                   committed / "state")  # fmt: skip
    threads = torch.get_num_threads()
    try:
        result = track.run_generalist(
            0.5, out, "cpu", report_dir=committed, max_steps=1, validate_fn=fake_validation
        )
    finally:
        torch.set_num_threads(threads)
    assert result["start_instances"] == 40_000 and result["instances"] == 40_000 + 64
    assert load_committed(committed / "state")[0].instances == 40_000  # untouched until apply
    assert not (out / track.FOLDER / "work").exists()  # the optimizer is not returned
    assert "brought back" in track.apply_generalist(out, report_dir=committed)
    assert load_committed(committed / "state")[0].instances == 40_000 + 64
