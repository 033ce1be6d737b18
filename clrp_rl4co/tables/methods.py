"""The methods of an evaluation table and how each one is run, timed and validated.

A :class:`Method` is one row of a table: a policy with a decode spec (``greedy``,
``multistart_greedy+aug8``, ``sgbs:4x4+aug8``, ...), a classical solver with a time budget
(``pyvrp``, ``exact``), or the refinement of another row's solutions with a total time budget.
:func:`run_method` runs it on the instances it has no cached result for and validates every
solution with the numpy checker (:meth:`clrp_rl4co.data.CLRPSolution.check`), independent of the
env that produced it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from tensordict import TensorDict

from ..data import CLRPInstance, CLRPSolution, instances_to_tensordict
from ..envs import CLRPEnv
from .records import InstanceResult, ResultCache

KINDS = ("policy", "pyvrp", "exact", "refine")


@dataclass(frozen=True)
class Method:
    """One row of an evaluation table.

    Attributes:
        label: the row's name (also the cache file's name).
        kind: ``"policy"``, ``"pyvrp"``, ``"exact"`` or ``"refine"``.
        model: shipped model name or path (``policy``).
        decode: decode spec, see :class:`clrp_rl4co.models.evaluation.DecodeSpec` (``policy``).
        seconds: time limit per instance (``pyvrp``, ``exact``), or the *total* time per
            instance of ``refine`` (the base row's time plus the refinement budget).
        base: label of the row whose solutions ``refine`` improves.
        limit: run on the first ``limit`` instances only (a labelled subset), None for all.
        batch_size: instances per policy batch (time per instance = batch wall time / size).
        paired_with: labels of rows this row is compared with instance by instance in the
            table (e.g. a same-budget DRLHQ model against POMO* and MTA*).
    """

    label: str
    kind: str
    model: str | None = None
    decode: str | None = None
    seconds: float | None = None
    base: str | None = None
    limit: int | None = None
    batch_size: int = 100
    paired_with: tuple[str, ...] = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind: must be one of {KINDS}, got {self.kind!r} ({self.label})")
        if self.kind == "policy" and (self.model is None or self.decode is None):
            raise ValueError(f"{self.label}: a policy row needs model and decode")
        if self.kind in ("pyvrp", "exact", "refine") and not (self.seconds and self.seconds > 0):
            raise ValueError(f"seconds: {self.label} needs a positive budget, got {self.seconds}")
        if self.kind == "refine" and not self.base:
            raise ValueError(f"base: {self.label} needs the label of the row it refines")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit: must be >= 1 or None, got {self.limit} ({self.label})")

    def with_limit(self, limit: int | None) -> Method:
        from dataclasses import replace

        return replace(self, limit=limit)


class TableData:
    """The instances of a table: numpy instances for solvers and validation, env TensorDicts
    for policies.

    Args:
        instances: the instances (validation and classical solvers use these).
        names: one name per instance.
        td: optional instance TensorDict of all instances (equal sizes, e.g. a generated test
            set); policies then decode slices of it (the exact network inputs of training).
            Without it each policy batch is built by :func:`instances_to_tensordict`, which needs
            equal sizes within a batch (Prins instances are decoded one at a time).
    """

    def __init__(
        self, instances: Sequence[CLRPInstance], names: Sequence[str], td: TensorDict | None = None
    ):
        if len(instances) != len(names):
            raise ValueError(f"names: {len(names)} names for {len(instances)} instances")
        if td is not None and td.batch_size[0] != len(instances):
            raise ValueError(f"td: batch {td.batch_size[0]} for {len(instances)} instances")
        self.instances = list(instances)
        self.names = list(names)
        self.td = td

    def __len__(self) -> int:
        return len(self.instances)

    def batch(self, indices: Sequence[int]) -> TensorDict:
        if self.td is not None:
            return self.td[torch.as_tensor(list(indices))]
        return instances_to_tensordict([self.instances[i] for i in indices])

    def policy_batches(self, indices: Sequence[int], batch_size: int) -> list[list[int]]:
        """Chunks of ``indices`` of at most ``batch_size`` with equal instance sizes."""
        if self.td is None:
            batch_size = 1
        return [list(indices[k : k + batch_size]) for k in range(0, len(indices), batch_size)]


def validated(
    method: str,
    index: int,
    data: TableData,
    actions: Sequence[int],
    seconds: float,
    **fields,
) -> InstanceResult:
    """An :class:`InstanceResult` whose cost comes from the numpy checker (``inf`` if invalid)."""
    instance = data.instances[index]
    actions = [int(a) for a in actions]
    try:
        solution = CLRPSolution.from_actions(actions, instance.num_depots)
        solution.check(instance)
        cost, valid, error = float(solution.cost(instance).total), True, None
    except ValueError as exc:
        cost, valid, error = math.inf, False, str(exc)
    extra = dict(fields.pop("extra", {}))
    if error:
        extra["error"] = error
    return InstanceResult(
        method, index, data.names[index], cost, float(seconds), valid, actions=actions,
        extra=extra, **fields,
    )  # fmt: skip


def _run_policy(method: Method, data: TableData, todo: list[int], env, policy, cache, bar):
    from ..models.evaluation import decode_batch

    for chunk in data.policy_batches(todo, method.batch_size):
        td = data.batch(chunk)
        actions, parts, seconds = decode_batch(policy, env, td, method.decode)
        per = seconds / len(chunk)
        rows = []
        for k, index in enumerate(chunk):
            row = validated(method.label, index, data, actions[k].tolist(), per)
            row.extra["env_cost"] = float(parts["total"][k])
            rows.append(row)
        cache.add(rows)
        bar(len(chunk))


def _run_solver(method: Method, data: TableData, todo: list[int], num_procs: int, cache, bar):
    from ..solvers import solve

    step = max(1, num_procs)
    for k in range(0, len(todo), step):
        chunk = todo[k : k + step]
        results = solve(
            [data.instances[i] for i in chunk],
            solver=method.kind,
            max_runtime=method.seconds,
            num_procs=num_procs,
        )
        rows = []
        for index, res in zip(chunk, results):
            num_depots = data.instances[index].num_depots
            actions = res.solution.to_actions(num_depots) if res.solution is not None else []
            extra = {"status": res.status}
            if res.solution is None:
                rows.append(
                    InstanceResult(
                        method.label,
                        index,
                        data.names[index],
                        math.inf,
                        res.runtime,
                        False,
                        bound=res.bound,
                        extra=extra,
                    )  # fmt: skip
                )
                continue
            rows.append(
                validated(
                    method.label,
                    index,
                    data,
                    actions,
                    res.runtime,
                    optimal=bool(res.proven_optimal),
                    bound=res.bound,
                    extra=extra,
                )  # fmt: skip
            )
        cache.add(rows)
        bar(len(chunk))


def _refine_job(job: tuple) -> tuple[list[int], float]:
    from ..solvers.refine import refine_solution

    instance, actions, budget, seed = job
    start = time.perf_counter()
    solution = CLRPSolution.from_actions(actions, instance.num_depots)
    if budget > 0:
        solution = refine_solution(instance, solution, max_runtime=budget, seed=seed)
    return solution.to_actions(instance.num_depots), time.perf_counter() - start


def _run_refine(method: Method, data: TableData, todo: list[int], num_procs: int, cache, bar):
    from ..solvers.api import _map

    base = cache.load(method.base)
    missing = [i for i in todo if i not in base]
    if missing:
        raise RuntimeError(
            f"{method.label}: base row {method.base!r} has no result for instances {missing[:5]}"
            "... run it first"
        )
    step = max(1, num_procs)
    for k in range(0, len(todo), step):
        chunk = todo[k : k + step]
        jobs = []
        for i in chunk:
            start = base[i]
            budget = method.seconds - start.seconds
            jobs.append((data.instances[i], start.actions, budget if start.valid else 0.0, 0))
        outputs = _map(_refine_job, jobs, num_procs, False, "refine")
        rows = []
        for i, (actions, seconds) in zip(chunk, outputs):
            row = validated(method.label, i, data, actions, base[i].seconds + seconds)
            row.extra["base_cost"] = base[i].cost
            rows.append(row)
        cache.add(rows)
        bar(len(chunk))


def run_method(
    method: Method,
    data: TableData,
    cache: ResultCache,
    env: CLRPEnv | None = None,
    policy_loader: Callable[[str], torch.nn.Module] | None = None,
    num_procs: int = 1,
    progress: bool = True,
) -> list[InstanceResult]:
    """Run ``method`` on the instances it has no cached result for; returns all its results.

    Args:
        method: the row.
        data: the table's instances.
        cache: where results are read from and appended to (resume after an interruption).
        env: the env for policy rows (default ``CLRPEnv()``).
        policy_loader: ``name -> policy`` (default :func:`clrp_rl4co.models.load_policy`).
        num_procs: worker processes of the classical solvers and of refinement.
        progress: show a tqdm progress bar.
    """
    count = len(data) if method.limit is None else min(method.limit, len(data))
    done = cache.load(method.label)
    todo = [i for i in range(count) if i not in done]
    if todo:
        from tqdm.auto import tqdm

        with tqdm(
            total=count, initial=count - len(todo), desc=method.label, disable=not progress
        ) as bar:
            step = bar.update
            if method.kind == "policy":
                from ..models import load_policy

                policy = (policy_loader or load_policy)(method.model).eval()
                _run_policy(method, data, todo, env or CLRPEnv(), policy, cache, step)
            elif method.kind == "refine":
                _run_refine(method, data, todo, num_procs, cache, step)
            else:
                _run_solver(method, data, todo, num_procs, cache, step)
        done = cache.load(method.label)
    return [done[i] for i in range(count) if i in done]
