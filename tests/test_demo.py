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
