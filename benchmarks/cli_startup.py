"""Start-up time of the command: ``clrp-rl4co --help``, ``solve --help`` and an option error,
beside ``pyvrp --help`` (PyVRP's own command), interleaved, each a fresh interpreter.

    python benchmarks/cli_startup.py --repeats 7

Prints the median wall seconds of each and its ratio to ``pyvrp --help``; the target is a median
under 1 s for the three of ours. Also says whether answering ``solve --help`` imported torch.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = {
    "clrp-rl4co --help": [sys.executable, "-m", "clrp_rl4co", "--help"],
    "clrp-rl4co solve --help": [sys.executable, "-m", "clrp_rl4co", "solve", "--help"],
    "option error (--time 0)": [
        sys.executable,
        "-m",
        "clrp_rl4co",
        "solve",
        "x.dat",
        "--time",
        "0",
    ],
}


def pyvrp_command() -> list[str] | None:
    found = shutil.which("pyvrp") or str(Path(sys.executable).with_name("pyvrp"))
    return [found, "--help"] if Path(found).exists() else None


def seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
    return time.perf_counter() - start


def imports_torch() -> bool:
    code = (
        "import sys\nfrom clrp_rl4co.cli import main\ntry:\n    main(['solve', '--help'])\n"
        "except SystemExit:\n    pass\nprint('torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip().splitlines()[-1] == "True"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    commands = dict(COMMANDS)
    reference = pyvrp_command()
    if reference is not None:
        commands["pyvrp --help"] = reference
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, command in commands.items():
            times[name].append(seconds(command))
    base = statistics.median(times["pyvrp --help"]) if reference is not None else None
    print(f"{'command':<28}{'median s':>10}{'min s':>8}{'x pyvrp':>9}")
    for name, values in times.items():
        median = statistics.median(values)
        ratio = f"{median / base:>9.2f}" if base else f"{'-':>9}"
        print(f"{name:<28}{median:>10.3f}{min(values):>8.3f}{ratio}")
    print(f"answering solve --help imports torch: {imports_torch()}")


if __name__ == "__main__":
    main()
