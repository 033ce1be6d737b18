"""CLRP solvers: exact MIP (HiGHS), PyVRP heuristic, refinement, and the hybrid of a learned
policy's starts with PyVRP refinement (:func:`solve_hybrid`).

:func:`solve_pyvrp`, :func:`solve_exact`, :func:`solve_hybrid` and :func:`refine_solution` work
on one :class:`~clrp_rl4co.data.CLRPInstance`; :func:`solve_td` and :func:`local_search_td`
take and return env batches (a TensorDict of instances, ``[B, T]`` action sequences), as
RL4CO's optional env ``solve`` / ``local_search`` methods do. Many instances by any method,
over processes or an executor: :func:`clrp_rl4co.solve_many`, the one batch entry point.
:mod:`.nearest_neighbor` rolls a constructive nearest-neighbour heuristic through the env (no
learning; the demo's baseline).

Every time budget in this package is called ``seconds``: wall-clock seconds, the unit in the
name. It is what the command's ``--time`` and the library's ``solve(..., seconds=...)`` pass,
unchanged in name on its way to the solver that spends it (shares of it are ``*_seconds``);
PyVRP's own ``MaxRuntime`` and HiGHS's ``time_limit`` appear only at their calls.
"""

from ..search.learned_starts import learned_starts
from .api import local_search_td, solve_td
from .common import SolverResult
from .exact import solve_exact
from .hybrid import HybridResult, solve_hybrid
from .pyvrp_solver import solve_pyvrp
from .refine import refine_solution

__all__ = [
    "HybridResult",
    "SolverResult",
    "learned_starts",
    "local_search_td",
    "refine_solution",
    "solve_exact",
    "solve_hybrid",
    "solve_pyvrp",
    "solve_td",
]
