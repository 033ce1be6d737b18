"""The generalist's trend on public files (experiments/generalist/public_trend.py)."""

from __future__ import annotations

import json
import subprocess

import pytest
import torch

from clrp_rl4co.data.bks import BestKnown
from clrp_rl4co.policies import build_policy
from experiments.generalist import public_trend, settings
from experiments.training.state import RunState, save_committed


def _rows(gaps_by_state: dict[int, list[float]]) -> list[dict[str, object]]:
    rows = []
    for n, gaps in gaps_by_state.items():
        for k, gap in enumerate(gaps):
            rows.append({"commit": f"c{n}", "instances": n, "cpu_hours": n / 1000, "file": f"f{k}",
                         "objective": 100 + gap, "bks": 100.0, "gap_pct": gap})  # fmt: skip
    return rows


def test_mean_gaps_average_each_states_files_fewest_instances_first():
    rows = _rows({4000: [10.0, 20.0], 1000: [30.0, 50.0]})
    assert public_trend.mean_gaps(rows) == [
        {"instances": 1000.0, "cpu_hours": 1.0, "gap": 40.0},
        {"instances": 4000.0, "cpu_hours": 4.0, "gap": 15.0},
    ]


def test_report_extrapolates_the_mean_gap_to_the_target(tmp_path):
    # mean gaps 40, 35, 30, 25 at 1,000 x 2^i: 40 - 5 log2(n / 1000) is 10 at n = 64,000
    rows = _rows({1000 * 2**i: [40.0 - 5 * i - 1, 40.0 - 5 * i + 1] for i in range(4)})
    state = RunState(instances=8_000, start_instances=0, cpu_hours=2.0)  # 4,000 per CPU hour
    path = public_trend.write_report(rows, state, tmp_path, "python -m x", target=10.0)
    text = path.read_text()
    assert "| all 4 states | ~5.6e+04 | 14 |" in text  # 64,000 - 8,000; 56,000 / 4,000
    assert "Latest: +25.00% at 8,000 instances; best +25.00% at 8,000." in text
    lines = (tmp_path / public_trend.CSV).read_text().splitlines()
    assert len(lines) == 1 + 8 and lines[0].startswith("commit,instances,cpu_hours,file")


def test_a_state_at_the_target_has_nothing_to_go(tmp_path):
    rows = _rows({1000: [30.0], 2000: [20.0], 4000: [9.0]})
    path = public_trend.write_report(rows, RunState(instances=4000, cpu_hours=1.0), tmp_path,
                                     "python -m x", target=10.0)  # fmt: skip
    assert "| all 3 states | reached |" in path.read_text()


def test_one_state_has_no_trend_and_the_report_names_the_runs_own_state_folder(
    tmp_path, monkeypatch
):
    from experiments.generalist import settings

    monkeypatch.setattr(settings, "STATE_DIR", settings.REPO / "results" / "x" / "bias" / "state")
    rows = _rows({1000: [30.0, 20.0]})
    path = public_trend.write_report(rows, RunState(instances=1000, cpu_hours=1.0), tmp_path,
                                     "python -m x", target=15.0)  # fmt: skip
    text = path.read_text()
    assert "One state so far: a trend needs two." in text and "| all 1 states |" not in text
    assert "(`results/x/bias/state/` in git history)" in text
    assert "a mean gap of at most 15%" in text
    path = public_trend.write_report(rows, RunState(instances=1000, cpu_hours=1.0), tmp_path,
                                     "python -m x", commit="abc1234")  # fmt: skip
    assert "- abc1234; date: " in path.read_text()


def _commit(repo, message):
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message],
                   cwd=repo, check=True)  # fmt: skip


def test_state_history_reads_every_committed_state_oldest_first(tmp_path):
    repo = tmp_path / "repo"
    state_dir = repo / "results" / "generalist" / "state"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    policy = build_policy(settings.POLICY, **settings.ARCHITECTURE)
    for n, fill in ((500, 0.5), (900, 0.25), (900, 0.75)):  # the last two hold one count
        weights = {k: torch.full_like(v, fill) for k, v in policy.state_dict().items()}
        save_committed(RunState(instances=n, cpu_hours=n / 100), weights, state_dir)
        _commit(repo, f"state {n}")
    history = public_trend.state_history(repo, state_dir)
    assert [h.state.instances for h in history] == [500, 900]
    first = next(iter(history[1].weights.values()))
    assert torch.all(first == 0.75)  # the newest commit of a count wins


def test_state_history_needs_a_committed_state(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "README").write_text("x")
    _commit(tmp_path, "no state")
    with pytest.raises(ValueError, match="no commit of results/generalist/state/weights.pt"):
        public_trend.state_history(tmp_path, tmp_path / "results" / "generalist" / "state")


def test_measure_names_the_files_without_a_best_known_value(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({
        "name": "mine", "vehicle_capacity": 10, "vehicle_fixed_cost": 1, "rounding": "none",
        "depots": [{"x": 0, "y": 0, "capacity": 20, "opening_cost": 5}],
        "customers": [{"x": 1, "y": 1, "demand": 3}, {"x": 2, "y": 0, "demand": 4}],
    }))  # fmt: skip
    with pytest.raises(ValueError, match=r"no best-known value for \['mine.json'\]"):
        public_trend.measure([], [path], BestKnown({}))
