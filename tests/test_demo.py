"""The README's main job runs end to end (small settings)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_demo_runs_and_writes_a_picture(tmp_path, benchmarks_root):
    out = tmp_path / "demo.png"
    env = {**os.environ, "CLRP_BENCHMARKS_DIR": str(benchmarks_root)}
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "demo.py"),
            "--num-instances",
            "4",
            "--prins",
            "coord20-5-1",
            "--refine-seconds",
            "0.3",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "DRLHQ multistart_greedy+aug8" in result.stdout
    assert "Prins 20-5-1a" in result.stdout and "+ refinement" in result.stdout
    assert out.stat().st_size > 10_000


def test_newcomer_path_demo_without_prins_then_solve_the_written_instance(tmp_path):
    """Without the Prins files the demo says loudly what it skipped and how to get them; the
    instance it writes is solved by the command the README shows next."""
    env = {k: v for k, v in os.environ.items() if k != "CLRP_BENCHMARKS_DIR"}
    instance = tmp_path / "demo_instance.json"
    demo = [sys.executable, str(ROOT / "examples" / "demo.py"), "--num-instances", "2"]
    demo += ["--out", str(tmp_path / "demo.png"), "--instance-out", str(instance)]
    result = subprocess.run(demo, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "SKIPPED: the Prins instance part of the demo" in result.stderr
    assert "alberto-santini/lrp-instances" in result.stderr
    assert "CLRP_BENCHMARKS_DIR=DIR make demo" in result.stderr
    assert f"solve {instance}" in result.stdout
    out = tmp_path / "solutions"
    solve = [sys.executable, "-m", "clrp_rl4co", "solve", str(instance), "--time", "1"]
    result = subprocess.run(
        [*solve, "--out", str(out), "--quiet"], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (out / "demo_instance.json").is_file() and (out / "summary.csv").is_file()
