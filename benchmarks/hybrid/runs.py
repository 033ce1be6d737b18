"""The methods of the hybrid benchmark, how one instance is solved and priced, and the
per-instance CSV rows a run appends to (and resumes from)."""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clrp_rl4co.data import CLRPInstance, CLRPSolution
from clrp_rl4co.reporting import provenance

#: The hybrid's variants by method name: keyword arguments of ``solve_hybrid``.
HYBRID_VARIANTS: dict[str, dict] = {
    "hybrid": {},
    "hybrid-1start": {"starts": 1},
    "hybrid-noexplore": {"explore_share": 0.0},
    "hybrid-nosgbs": {"sgbs": False},
    "hybrid-noclassical": {"classical": False},
    "hybrid-recombine": {"recombine_share": 0.15},
}
#: The time-limited methods of a default run and of ``--ablation`` (in the order run on even
#: instances; odd instances run them in reverse).
DEFAULT_METHODS = ("hybrid", "pyvrp")
ABLATION_METHODS = (*HYBRID_VARIANTS, "pyvrp")
#: The untimed reference decode.
X8 = "x8"
#: Columns of every per-instance CSV.
COLUMNS = (
    "index",
    "instance",
    "method",
    "model",
    "budget_s",
    "objective",
    "seconds",
    "seed",
    "load_avg",
    "start_objective",
    "decode",
)
#: The column of the weights' fingerprint (after :data:`COLUMNS`; absent from older files).
WEIGHTS = "weights"


@dataclass
class Run:
    """One method's result on one instance: the checked solution's objective (instance units),
    the wall time, and for the hybrid its best learned start and what it decoded."""

    objective: float
    seconds: float
    start_objective: float | None = None
    decode: str = ""


#: ``solve(method, instance, seconds, seed) -> Run``: one time-limited run.
Solve = Callable[[str, CLRPInstance, float, int], Run]
#: ``decode(indices) -> [Run]``: x8 of the set's instances ``indices`` (untimed).
Decode = Callable[[Sequence[int]], list[Run]]


def priced(instance: CLRPInstance, solution: CLRPSolution | None, method: str) -> float:
    """The cost of ``solution`` after :meth:`CLRPSolution.check` (``ValueError`` naming the
    method and instance when it has none or it is invalid)."""
    if solution is None:
        raise ValueError(f"{method} found no solution on {instance.name}")
    try:
        solution.check(instance)
    except ValueError as exc:
        raise ValueError(
            f"{method} returned an invalid solution on {instance.name}: {exc}"
        ) from exc
    return solution.cost(instance).total


def real_solver(policy) -> Solve:
    """The benchmark's time-limited methods: :data:`HYBRID_VARIANTS` with ``policy`` and PyVRP
    alone with the same wall time (its time limit less the margin the hybrid keeps too)."""
    from clrp_rl4co.solvers import solve_pyvrp
    from clrp_rl4co.solvers.hybrid import solve_hybrid, solver_budget

    def solve(method: str, instance: CLRPInstance, seconds: float, seed: int) -> Run:
        begin = time.perf_counter()
        if method == "pyvrp":
            res = solve_pyvrp(instance, seconds=solver_budget(seconds), seed=seed)
            elapsed = time.perf_counter() - begin
            return Run(priced(instance, res.solution, method), elapsed)
        res = solve_hybrid(instance, policy, seconds, seed, **HYBRID_VARIANTS[method])
        elapsed = time.perf_counter() - begin
        return Run(priced(instance, res.solution, method), elapsed, res.start_objective,
                   res.decode)  # fmt: skip

    return solve


def x8_decoder(policy, instances: Sequence[CLRPInstance], data) -> Decode:
    """x8 (multistart greedy from every customer, times the 8 dihedral transforms) of
    ``policy``, decoded in batches of at most ``trajectory_node_limit`` trajectory-nodes
    (:class:`clrp_rl4co.search.decode_plan.DecodeParams`):
    ``data`` (the set's TensorDict, raw coordinates as the paper's tables decode them) when
    given, else each instance alone with unit-square network coordinates."""
    import torch

    from clrp_rl4co.data import instances_to_tensordict
    from clrp_rl4co.envs import CLRPEnv
    from clrp_rl4co.models import decode_batch
    from clrp_rl4co.search.decode_plan import PARAMS

    env = CLRPEnv(check_actions=False)

    def decode(indices: Sequence[int]) -> list[Run]:
        indices = list(indices)
        out: list[Run] = []
        k = 0
        while k < len(indices):
            first = instances[indices[k]]
            per = 8 * first.num_customers * (first.num_customers + first.num_depots)
            size = max(1, PARAMS.trajectory_node_limit // per) if data is not None else 1
            chunk = indices[k : k + size]
            if data is not None:
                batch = data[torch.as_tensor(chunk)]
            else:
                batch = instances_to_tensordict([instances[i] for i in chunk])
            with torch.inference_mode():
                actions, _, seconds = decode_batch(policy, env, batch, "multistart_greedy+aug8")
            for i, row in zip(chunk, actions.tolist()):
                instance = instances[i]
                solution = CLRPSolution.from_actions(row, instance.num_depots)
                out.append(Run(priced(instance, solution, X8), seconds / len(chunk)))
            k += len(chunk)
        return out

    return decode


class RowFile:
    """A per-instance CSV that a run appends to, one row per (instance, method) as soon as it
    is done, so a killed run loses at most the method it was running. Every row carries the
    run's model and seed (empty for the untimed x8, which has none) and a fingerprint of the
    model's weights (:func:`clrp_rl4co.evaluation.policy_fingerprint`; empty where no policy
    was loaded); a file of another model, seed or weights is refused rather than mixed. Rows
    written before the fingerprint was recorded (no ``weights`` column) are taken as they are:
    which weights they came from is said in ``results/hybrid/README.md``."""

    def __init__(self, path: Path, model: str, seed: int | None, weights: str = ""):
        self.path = path
        self.model = model
        self.seed = "" if seed is None else str(seed)
        self.weights = weights
        self.rows: list[dict[str, str]] = []
        self.header: list[str] | None = None
        if path.is_file():
            with path.open(newline="") as handle:
                reader = csv.DictReader(handle)
                self.rows = list(reader)
                self.header = list(reader.fieldnames or [])
            for number, row in enumerate(self.rows, start=2):
                self._check(row, number)

    def _check(self, row: dict[str, str], line: int) -> None:
        if set(COLUMNS) - set(row):
            raise ValueError(f"{self.path}: line {line}: expected the columns {list(COLUMNS)}")
        checks = [("model", self.model), ("seed", self.seed)]
        if row.get(WEIGHTS):  # recorded: it must be this run's
            checks.append((WEIGHTS, self.weights))
        for name, value in checks:
            if row[name] != value:
                raise ValueError(
                    f"{self.path}: line {line}: {name} {row[name]!r}, but this run's {name} is "
                    f"{value!r}; choose another --out to keep both"
                )

    def done(self) -> set[tuple[int, str]]:
        """The (instance index, method) pairs already in the file."""
        return {(int(row["index"]), row["method"]) for row in self.rows}

    def add(self, index: int, name: str, method: str, budget: float | None, run: Run,
            load: str) -> None:  # fmt: skip
        """Append one row (the file and its header are created on the first)."""
        row = {
            "index": str(index),
            "instance": name,
            "method": method,
            "model": self.model,
            "budget_s": "" if budget is None else f"{budget:g}",
            "objective": repr(float(run.objective)),
            "seconds": f"{run.seconds:.3f}",
            "seed": self.seed,
            "load_avg": load,
            "start_objective": "" if run.start_objective is None else repr(run.start_objective),
            "decode": run.decode,
        }
        row[WEIGHTS] = self.weights
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.is_file() or self.path.stat().st_size == 0
        if new or self.header is None:
            self.header = [*COLUMNS, WEIGHTS]
        if WEIGHTS not in self.header and self.weights:
            raise ValueError(
                f"{self.path}: its rows have no {WEIGHTS} column, so which weights they came "
                f"from is not recorded; this run's are {self.weights}: choose another --out"
            )
        with self.path.open("a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=self.header, extrasaction="ignore")
            if new:
                writer.writeheader()
            writer.writerow(row)
            handle.flush()
        self.rows.append(row)

    def objectives(self, method: str) -> dict[int, float]:
        """Objective by instance index of ``method``'s rows."""
        return {int(r["index"]): float(r["objective"]) for r in self.rows if r["method"] == method}


def load_now() -> str:
    """The load average at this moment (the provenance helper's format)."""
    return provenance.load_average()
