"""What the classical solve path imports: reading an instance and solving it with PyVRP import
torch and tensordict (the env's checks) but not RL4CO, Lightning or TorchRL, which the env
class, the generator and the policies need; so a first ``solve(file, method="pyvrp")`` spends
its budget on solving. A fresh process each (the modules of a test run are all loaded)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("rl4co", "lightning", "torchrl", "matplotlib")

SOLVE = """
import sys
import numpy as np
from clrp_rl4co import solve
from clrp_rl4co.data import CLRPInstance
instance = CLRPInstance(
    depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
    customer_locs=np.array([[0.0, 1.0], [1.0, 0.0], [10.0, 1.0], [9.0, 0.0]]),
    depot_capacity=np.full(2, 10.0), opening_cost=np.ones(2), demand=np.ones(4),
    vehicle_capacity=4.0, vehicle_fixed_cost=1.0)
result = solve(instance, "pyvrp", iterations=20)
print(result.status, [m for m in {heavy} if m in sys.modules])
"""


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_data_the_solvers_and_the_env_folder_s_helpers_import_no_rl4co():
    code = (
        "import sys\nimport clrp_rl4co.data, clrp_rl4co.solvers, clrp_rl4co.envs.clrp\n"
        "from clrp_rl4co.envs.clrp import PRESETS, size_rule, check_instance_validity\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    assert _run(code) == "[]"


def test_a_pyvrp_solve_imports_no_rl4co():
    assert _run(SOLVE.format(heavy=repr(HEAVY))) == "feasible []"


def test_the_env_class_is_there_when_asked_for():
    code = (
        "import sys\nfrom clrp_rl4co.envs import CLRPEnv\nfrom clrp_rl4co.envs.clrp import "
        "CLRPGenerator\nimport rl4co.envs.common.base as base\n"
        "print(issubclass(CLRPEnv, base.RL4COEnvBase), CLRPGenerator(preset='mixed').preset)"
    )
    assert _run(code) == "True mixed"
