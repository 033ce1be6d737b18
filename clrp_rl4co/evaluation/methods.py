"""Evaluate a policy or a solver on a dataset: run, time and validate, resumably.

A :class:`Method` is a policy with a decode spec (``greedy``, ``multistart_greedy+aug8``,
``sgbs:4x4+aug8``, ...), a classical solver with a time budget (``pyvrp``, ``exact``), or the
refinement of a policy's solutions within a total time budget. :func:`run_method` runs it on the
instances of an :class:`EvalData` it has no cached result for and validates every solution with
the numpy checker (:meth:`clrp_rl4co.data.CLRPSolution.check`), independent of the env that
produced it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import torch
from tensordict import TensorDict

from ..data import CLRPInstance, CLRPSolution, instances_to_tensordict
from ..envs import CLRPEnv
from .records import InstanceResult, ResultCache

KINDS = ("policy", "pyvrp", "exact", "refine")


def _budget(seconds: float) -> str:
    """``5s``, ``0.5s``: a time budget as it appears in keys."""
    return f"{seconds:g}s"


@dataclass(frozen=True)
class Method:
    """One evaluated method: its identity (``kind``, ``model``, ``decode``, ``seconds``) plus how
    it runs (``limit``, ``batch_size``).

    The identity alone names the method's results: :attr:`key` is derived from it, names its
    cache file and is stored in each :class:`InstanceResult`; display labels are rendered from
    the identity by whoever shows the results, never parsed back.

    Attributes:
        kind: ``"policy"``, ``"pyvrp"``, ``"exact"`` or ``"refine"``.
        model: shipped model name or path (``policy``, ``refine``).
        decode: decode spec, see :class:`clrp_rl4co.models.decoding.DecodeSpec` (``policy``;
            for ``refine`` the decode of the policy row it starts from).
        seconds: time limit per instance (``pyvrp``, ``exact``), or the *total* time per
            instance of ``refine`` (the base row's time plus the refinement budget).
        limit: run on the first ``limit`` instances only (a subset), None for all.
        batch_size: instances per policy batch (time per instance = batch wall time / size).
    """

    kind: str
    model: str | None = None
    decode: str | None = None
    seconds: float | None = None
    limit: int | None = field(default=None, compare=False)
    batch_size: int = field(default=100, compare=False)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind: must be one of {KINDS}, got {self.kind!r}")
        if self.kind in ("policy", "refine") and (self.model is None or self.decode is None):
            raise ValueError(f"model, decode: a {self.kind} method needs both, got {self!r}")
        if self.kind in ("pyvrp", "exact") and (self.model or self.decode):
            raise ValueError(f"model, decode: a {self.kind} method has neither, got {self!r}")
        if self.kind == "policy" and self.seconds is not None:
            raise ValueError(f"seconds: a policy method has no budget, got {self.seconds}")
        if self.kind != "policy" and not (self.seconds and self.seconds > 0):
            raise ValueError(f"seconds: a {self.kind} method needs a positive budget, got "
                             f"{self.seconds}")  # fmt: skip
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit: must be >= 1 or None, got {self.limit}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size: must be >= 1, got {self.batch_size}")

    @property
    def key(self) -> str:
        """The method's identity as one string, e.g. ``policy|drlhq_clrp20|greedy``,
        ``pyvrp|1s``, ``refine|drlhq_clrp20|multistart_greedy+aug8|5s``."""
        parts = [self.kind, self.model, self.decode]
        if self.seconds is not None:
            parts.append(_budget(self.seconds))
        return "|".join(p for p in parts if p is not None)

    @property
    def base(self) -> Method | None:
        """The policy method whose solutions a ``refine`` method improves (None otherwise)."""
        if self.kind != "refine":
            return None
        return Method("policy", self.model, self.decode, batch_size=self.batch_size)

    def with_limit(self, limit: int | None) -> Method:
        return replace(self, limit=limit)


class EvalData:
    """The instances of an evaluation: numpy instances for solvers and validation, env
    TensorDicts for policies.

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
    data: EvalData,
    actions: Sequence[int],
    seconds: float,
    **fields,
) -> InstanceResult:
    """An :class:`InstanceResult` of ``method`` (a key) whose cost comes from the numpy checker
    (``inf`` if invalid)."""
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


def _run_policy(method: Method, data: EvalData, todo: list[int], env, policy, cache, bar):
    from ..models.decoding import decode_batch

    for chunk in data.policy_batches(todo, method.batch_size):
        td = data.batch(chunk)
        actions, parts, seconds = decode_batch(policy, env, td, method.decode)
        per = seconds / len(chunk)
        rows = []
        for k, index in enumerate(chunk):
            row = validated(method.key, index, data, actions[k].tolist(), per)
            row.extra["env_cost"] = float(parts["total"][k])
            rows.append(row)
        cache.add(rows)
        bar(len(chunk))


def _solver_job(job: tuple):
    """``(instance, kind, seconds)``: :func:`.solvers.solve_pyvrp` or :func:`.solvers.solve_exact`
    with a time limit of ``seconds`` (the row's "PyVRP 10 s" is the solver's own limit)."""
    from ..solvers import solve_exact, solve_pyvrp

    instance, kind, seconds = job
    solver = solve_pyvrp if kind == "pyvrp" else solve_exact
    return solver(instance, seconds=seconds)


def _run_solver(
    method: Method, data: EvalData, todo: list[int], num_procs: int, cache, bar, executor=None
):
    """``method`` (``pyvrp`` / ``exact``) on the instances ``todo``, ``num_procs`` at a time
    (or all on ``executor``); a run that raises stops the evaluation (nothing is cached for
    it)."""
    from ..execution.parallel import map_jobs

    step = max(1, num_procs) if executor is None else len(todo)
    for k in range(0, len(todo), step):
        chunk = todo[k : k + step]
        jobs = [(data.instances[i], method.kind, method.seconds) for i in chunk]
        results = map_jobs(_solver_job, jobs, num_procs, executor)
        rows = []
        for index, res in zip(chunk, results):
            extra = {"status": str(res.status)}
            if res.solution is None:
                row = InstanceResult(method.key, index, data.names[index], math.inf,
                                     res.runtime, False, bound=res.bound, extra=extra)  # fmt: skip
            else:
                actions = res.solution.to_actions(data.instances[index].num_depots)
                row = validated(method.key, index, data, actions, res.runtime,
                                optimal=bool(res.proven_optimal), bound=res.bound,
                                extra=extra)  # fmt: skip
            rows.append(row)
        cache.add(rows)
        bar(len(chunk))


def _refine_job(job: tuple) -> tuple[list[int], float]:
    from ..solvers.refine import refine_solution

    instance, actions, budget, seed = job
    start = time.perf_counter()
    solution = CLRPSolution.from_actions(actions, instance.num_depots)
    if budget > 0:
        solution = refine_solution(instance, solution, seconds=budget, seed=seed)
    return solution.to_actions(instance.num_depots), time.perf_counter() - start


def _run_refine(
    method: Method, data: EvalData, todo: list[int], num_procs: int, cache, bar, executor=None
):
    from ..execution.parallel import map_jobs

    base = cache.load(method.base.key)
    missing = [i for i in todo if i not in base]
    if missing:
        raise RuntimeError(
            f"{method.key}: its base {method.base.key!r} has no result for instances {missing[:5]}"
            "... run it first"
        )
    step = max(1, num_procs) if executor is None else len(todo)
    for k in range(0, len(todo), step):
        chunk = todo[k : k + step]
        jobs = []
        for i in chunk:
            start = base[i]
            budget = method.seconds - start.seconds
            jobs.append((data.instances[i], start.actions, budget if start.valid else 0.0, 0))
        outputs = map_jobs(_refine_job, jobs, num_procs, executor)
        rows = []
        for i, (actions, seconds) in zip(chunk, outputs):
            row = validated(method.key, i, data, actions, base[i].seconds + seconds)
            row.extra["base_cost"] = base[i].cost
            rows.append(row)
        cache.add(rows)
        bar(len(chunk))


def run_method(
    method: Method,
    data: EvalData,
    cache: ResultCache,
    env: CLRPEnv | None = None,
    policy_loader: Callable[[str], torch.nn.Module] | None = None,
    num_procs: int = 1,
    progress: bool = True,
    executor=None,
) -> list[InstanceResult]:
    """Run ``method`` on the instances it has no cached result for; returns all its results.

    Args:
        method: what to run.
        data: the instances.
        cache: where results are read from and appended to (resume after an interruption).
        env: the env of policy methods (default ``CLRPEnv()``).
        policy_loader: ``name -> policy`` (default :func:`clrp_rl4co.policies.load_policy`).
        num_procs: worker processes of the classical solvers and of refinement.
        progress: show a tqdm progress bar.
        executor: a ``concurrent.futures.Executor`` for the classical solvers and refinement
            instead of ``num_procs`` local processes (e.g. a Dask cluster's
            ``client.get_executor()``; the whole remaining set is submitted at once).
    """
    count = len(data) if method.limit is None else min(method.limit, len(data))
    done = cache.load(method.key)
    todo = [i for i in range(count) if i not in done]
    if todo:
        from tqdm.auto import tqdm

        with tqdm(
            total=count, initial=count - len(todo), desc=method.key, disable=not progress
        ) as bar:
            step = bar.update
            if method.kind == "policy":
                from ..policies import load_policy

                policy = (policy_loader or load_policy)(method.model).eval()
                _run_policy(method, data, todo, env or CLRPEnv(), policy, cache, step)
            elif method.kind == "refine":
                _run_refine(method, data, todo, num_procs, cache, step, executor)
            else:
                _run_solver(method, data, todo, num_procs, cache, step, executor)
        done = cache.load(method.key)
    return [done[i] for i in range(count) if i in done]
