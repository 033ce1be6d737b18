"""Classical CLRP solvers: exact MIP (HiGHS), PyVRP heuristic, refinement, env adapters."""

from .api import local_search_td, solve, solve_td
from .common import SolverResult, check_instance
from .env import CLRPEnv
from .exact import solve_exact
from .pyvrp_solver import solve_pyvrp
from .refine import refine_solution

__all__ = [
    "CLRPEnv",
    "SolverResult",
    "check_instance",
    "local_search_td",
    "refine_solution",
    "solve",
    "solve_exact",
    "solve_pyvrp",
    "solve_td",
]
