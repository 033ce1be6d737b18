"""Plant the bugs mutation testing found uncaught, one at a time; check that a test now fails.

    python mutation/plant.py            # every planted bug: caught or NOT CAUGHT
    python mutation/plant.py --clean    # first check that the same tests pass unplanted
    python mutation/plant.py NAME ...   # only these

Each bug is a one-line edit of a copy of the package (in a temporary folder, so the working tree
is never touched) followed by the named tests there; a bug counts as caught when pytest reports
a failure. An edit whose text is no longer in the source is reported as stale.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Plant:
    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]


PLANTS = [
    # execution/interrupt.py has no mutmut mutants (catch_sigint is decorated; the rest: bare calls)
    Plant(
        "interrupt: the second SIGINT does not raise",
        "clrp_rl4co/execution/interrupt.py",
        "        if _REQUESTED.is_set():\n            raise KeyboardInterrupt\n",
        "        if False:\n            raise KeyboardInterrupt\n",
        ("tests/test_interrupt.py::test_the_first_sigint_requests_a_stop_and_the_second_raises",),
    ),
    Plant(
        "interrupt: the first SIGINT raises",
        "clrp_rl4co/execution/interrupt.py",
        "        if _REQUESTED.is_set():\n            raise KeyboardInterrupt\n",
        "        if True:\n            raise KeyboardInterrupt\n",
        ("tests/test_interrupt.py::test_the_first_sigint_requests_a_stop_and_the_second_raises",),
    ),
    Plant(
        "interrupt: the previous handler is not given back",
        "clrp_rl4co/execution/interrupt.py",
        "        signal.signal(signal.SIGINT, previous)\n",
        "        pass\n",
        ("tests/test_interrupt.py",),
    ),
    Plant(
        "interrupt: a handler installed from another thread",
        "clrp_rl4co/execution/interrupt.py",
        "    if threading.current_thread() is not threading.main_thread():\n",
        "    if False:\n",
        ("tests/test_interrupt.py::test_outside_the_main_thread_nothing_is_installed",),
    ),
    Plant(
        "interrupt: clear forgets nothing",
        "clrp_rl4co/execution/interrupt.py",
        "    _REQUESTED.clear()\n",
        "    pass\n",
        ("tests/test_interrupt.py::test_request_and_clear",),
    ),
    Plant(
        "exact: optimal with an open gap",
        "clrp_rl4co/solvers/exact.py",
        "optimal = abs(objective - bound) <= OPTIMALITY_TOLERANCE * max(1.0, abs(objective))",
        "optimal = True",
        ("tests/test_solvers_exact.py::test_highs_optimal_with_an_open_gap_is_not_proven",),
    ),
    Plant(
        "exact: bound -inf instead of None",
        "clrp_rl4co/solvers/exact.py",
        "bound = None  # HiGHS stopped",
        "bound = bound  # HiGHS stopped",
        ("tests/test_solvers_exact.py::test_bound_is_none_or_finite_at_a_tiny_time_limit",),
    ),
    Plant(
        "exact: HiGHS banner on stdout",
        "clrp_rl4co/solvers/exact.py",
        "        os.dup2(devnull, 1)\n",
        "        pass\n",
        ("tests/test_solvers_exact.py::test_highs_prints_nothing_unless_verbose",),
    ),
    Plant(
        "start scheme: depot not restricted to those holding the start customer",
        "clrp_rl4co/envs/clrp/env.py",
        "needed = torch.where(forced, pending_demand.gather(-1, start_index), smallest)",
        "needed = smallest",
        ("tests/test_env_start.py",),
    ),
    Plant(
        "SGBS: best augmented copy read with the wrong row layout",
        "clrp_rl4co/search/sgbs.py",
        "best_copy = unbatchify(reward, copies).argmax(-1)  # [B]",
        "best_copy = reward.reshape(batch, copies).argmax(-1)  # [B]",
        ("tests/test_sgbs.py::test_sgbs_with_augmentation_and_variant_three_children",),
    ),
    Plant(
        "penalty: smallest opening cost instead of the largest",
        "clrp_rl4co/envs/clrp/env.py",
        '+ td["opening_cost"].amax(-1).double()',
        '+ td["opening_cost"].amin(-1).double()',
        ("tests/test_env_penalty.py",),
    ),
    Plant(
        "penalty: box diagonal not priced like an arc on rounded instances",
        "clrp_rl4co/envs/clrp/env.py",
        "span = torch.where(rounded, round_cost(span), span)",
        "span = span",
        ("tests/test_env_penalty.py",),
    ),
    Plant(
        "penalty: charged once instead of per unserved customer",
        "clrp_rl4co/envs/clrp/costs.py",
        'unserved * state["infeasible_penalty"]',
        'state["infeasible_penalty"]',
        ("tests/test_env_penalty.py",),
    ),
    Plant(
        "generator: wrong depot count for clrp100 (the size rule)",
        "clrp_rl4co/envs/clrp/generator.py",
        "depots = 20 if n <= 300 else",
        "depots = (10 if n == 100 else 20) if n <= 300 else",
        ("tests/test_generator.py",),
    ),
    Plant(
        "generator: wrong depot count for clrp100 (the preset table)",
        "clrp_rl4co/envs/clrp/generator.py",
        '"clrp100": dict(num_loc=100, num_depots=20,',
        '"clrp100": dict(num_loc=100, num_depots=10,',
        ("tests/test_generator_rule.py",),
    ),
    Plant(
        "generator: wrong depot count for clrp50 (the size rule)",
        "clrp_rl4co/envs/clrp/generator.py",
        "return dict(num_depots=10, depot_capacity=(130.0, 450.0)",
        "return dict(num_depots=5, depot_capacity=(130.0, 450.0)",
        ("tests/test_generator.py",),
    ),
    Plant(
        "load rule: q instead of min(q, remaining)",
        "clrp_rl4co/envs/clrp/env.py",
        "torch.minimum(vehicle_capacity, remaining.gather(-1, route_depot))",
        "vehicle_capacity.expand_as(td['vehicle_load'])",
        (
            "tests/test_env_transitions.py::test_leaving_depot_sets_load_to_min_of_vehicle_and_depot",
        ),
    ),
    Plant(
        "Prodhon: any coord*.dat name (the Prins pattern parsed with int())",
        "clrp_rl4co/data/prodhon.py",
        "match = _PRINS_NAME.match(p.stem)",
        "match = int(p.stem[5:].split('-')[0]) and _PRINS_NAME.match(p.stem)",
        (
            "tests/test_data_prodhon.py::test_prins_files_reads_any_prodhon_layout_name_in_a_"
            "sensible_order",
        ),
    ),
    Plant(
        "checkpoint: torch's bare error on a corrupt file",
        "clrp_rl4co/policies/pretrained.py",
        "state = load_checkpoint(weights, map_location=map_location, weights_only=True)",
        "state = torch.load(weights, map_location=map_location, weights_only=True)",
        ("tests/test_pretrained_errors.py",),
    ),
]


def _copy(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("clrp_rl4co", "tests"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore, symlinks=True)
    for name in ("pyproject.toml", "setup.cfg"):
        shutil.copy2(ROOT / name, dest / name)


def _pytest(folder: Path, tests: tuple[str, ...]) -> int:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        *tests,
    ]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True).returncode


def check(plant: Plant, clean: bool) -> str:
    with tempfile.TemporaryDirectory(prefix="plant-") as tmp:
        folder = Path(tmp)
        _copy(folder)
        probe = subprocess.run(
            [sys.executable, "-c", "import clrp_rl4co; print(clrp_rl4co.__file__)"],
            cwd=folder,
            capture_output=True,
            text=True,
        )
        if not probe.stdout.startswith(str(folder)):
            return f"ERROR: the copy's package is not the one imported ({probe.stdout.strip()})"
        if clean and _pytest(folder, plant.tests) != 0:
            return "ERROR: the tests fail without the bug"
        path = folder / plant.file
        source = path.read_text()
        if source.count(plant.old) != 1:
            return f"STALE: the text to replace occurs {source.count(plant.old)} times"
        path.write_text(source.replace(plant.old, plant.new))
        code = _pytest(folder, plant.tests)
        if code == 1:
            return "caught"
        return "NOT CAUGHT" if code == 0 else f"ERROR: pytest exited with {code}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="substrings of plant names")
    parser.add_argument("--clean", action="store_true", help="check the tests pass unplanted")
    args = parser.parse_args(argv)
    chosen = [p for p in PLANTS if not args.names or any(n in p.name for n in args.names)]
    failures = 0
    for plant in chosen:
        verdict = check(plant, args.clean)
        failures += verdict != "caught"
        print(f"{verdict:>12}  {plant.name}  [{', '.join(plant.tests)}]", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
