"""The runs of the hard benchmark: which (method, budget) runs on which instance, how each
result is checked and cached, and the lower bounds.

Every result is one :class:`clrp_rl4co.evaluation.InstanceResult` in a JSON-lines file per run
(:class:`clrp_rl4co.evaluation.ResultCache`, ``<out>/cache/``), keyed by the instance's index
in the whole benchmark (:func:`benchmark`), appended as soon as it is done, so a stopped run
resumes with what is missing. A cached row whose name differs from the benchmark's instance at
its index is refused (the benchmark changed under the cache).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.evaluation import InstanceResult, ResultCache
from clrp_rl4co.reporting import provenance
from clrp_rl4co.result import SolveResult

from . import families as fam
from .bound import Bound, lower_bound

#: The methods of the long reference runs.
REFERENCE_METHODS = ("hybrid", "pyvrp")
#: The methods and budgets (seconds) of the evaluation runs.
EVALUATION_METHODS = ("auto", "hybrid", "pyvrp")
EVALUATION_SECONDS = (10.0, 60.0)
#: The reference budget is this many times the largest evaluation budget by default.
REFERENCE_FACTOR = 10.0
#: HiGHS's time limit of one bound (the MIP's dual bound is valid whenever it stops).
BOUND_SECONDS = 120.0
#: Statuses of a run that found a solution, or that ran and found none (both are cached).
CACHED_STATUSES = ("optimal", "feasible", "no solution")


@dataclass(frozen=True)
class Entry:
    """One instance of the benchmark.

    Attributes:
        index: its position in the whole benchmark (the cache's key).
        family: its family's name.
        size: its number of customers.
        instance: the instance (named ``<family>-<N>-<k>``).
    """

    index: int
    family: str
    size: int
    instance: CLRPInstance

    @property
    def name(self) -> str:
        return self.instance.name


@dataclass(frozen=True)
class RunSpec:
    """One run: ``method`` within ``seconds`` per instance with ``seed``; ``reference`` for the
    long runs that the gaps are measured against."""

    method: str
    seconds: float
    seed: int = 0
    reference: bool = False

    @property
    def key(self) -> str:
        """The cache key: ``<method>@<seconds>s|seed<seed>`` (a reference run and an evaluation
        run of the same method and budget share it)."""
        return f"{self.method}@{self.seconds:g}s|seed{self.seed}"

    @property
    def label(self) -> str:
        return f"{self.method} {self.seconds:g} s"


def bound_key(seconds: float) -> str:
    """The cache key of the lower bounds computed with HiGHS's time limit ``seconds``."""
    return f"lower-bound@{seconds:g}s"


def benchmark() -> list[Entry]:
    """Every instance, in the order family, size, ``k`` (read from the published files)."""
    out = []
    for family, n in fam.every():
        for inst in fam.load(family, n):
            out.append(Entry(len(out), family, n, inst))
    return out


def select(
    entries: Sequence[Entry], only: Sequence[str] = (), sizes: Sequence[int] = ()
) -> list[Entry]:
    """The entries whose family or instance name is in ``only`` (all when empty) and whose
    size is in ``sizes`` (all when empty).

    Raises:
        ValueError: a word of ``only`` names no family and no instance.
    """
    known = {e.family for e in entries} | {e.name for e in entries}
    unknown = [word for word in only if word not in known]
    if unknown:
        raise ValueError(
            f"--only: {unknown} names no family and no instance; families: {list(fam.FAMILIES)}, "
            "instances: <family>-<N>-<k> such as hetero-300-0"
        )
    return [
        e
        for e in entries
        if (not only or e.family in only or e.name in only) and (not sizes or e.size in sizes)
    ]


def load_cached(
    cache: ResultCache, key: str, entries: Sequence[Entry]
) -> dict[int, InstanceResult]:
    """The cached results of ``key`` by instance index.

    Raises:
        ValueError: a cached row's name differs from the benchmark's instance at its index.
    """
    names = {e.index: e.name for e in entries}
    found = cache.load(key)
    for index, result in found.items():
        if index in names and result.name != names[index]:
            raise ValueError(
                f"{cache.path(key)}: instance {index} is {result.name!r} in the cache but "
                f"{names[index]!r} in the benchmark; move the cache aside"
            )
    return found


def missing(cache: ResultCache, key: str, entries: Sequence[Entry]) -> list[Entry]:
    """The entries without a cached row of ``key``."""
    done = load_cached(cache, key, entries)
    return [e for e in entries if e.index not in done]


def context() -> dict[str, str]:
    """Where a row was computed: the machine, the commit and the 1-minute load average."""
    return {
        "machine": provenance.machine(),
        "commit": provenance.commit_line(),
        "load": provenance.load_average(),
    }


def record(
    spec: RunSpec, entry: Entry, result: SolveResult, where: dict[str, str] | None = None
) -> InstanceResult:
    """The cache row of one run: the objective of its checked solution (``inf`` without one;
    ``valid`` False with the reason when the check fails), its seconds, the method and model
    that ran (``auto`` resolved) with its status, and ``where`` (:func:`context`)."""
    extra = {"status": result.status, "method": result.method, "model": result.model}
    extra.update(where or {})
    valid = result.solution is not None
    cost = math.inf
    if valid:
        try:
            result.solution.check(entry.instance)
            cost = float(result.solution.cost(entry.instance).total)
        except ValueError as exc:
            valid = False
            extra["error"] = f"invalid solution: {exc}"
    return InstanceResult(spec.key, entry.index, entry.name, cost, float(result.seconds), valid,
                          extra=extra)  # fmt: skip


#: ``solve_many(instances, method=, seconds=, seed=, workers=, on_result=)``, as
#: :func:`clrp_rl4co.solving.solve_many`.
SolveMany = Callable[..., list[SolveResult]]
#: ``bound(instance, seconds) -> Bound``.
BoundFn = Callable[[CLRPInstance, float], Bound]


def run_spec(
    spec: RunSpec,
    entries: Sequence[Entry],
    cache: ResultCache,
    workers: int,
    solve_many: SolveMany,
    report: Callable[[str], None] = print,
) -> int:
    """Solve the entries ``spec`` has no cached row for and cache each as it finishes.
    Returns the number of runs that failed (raised, or whose process died; not cached, so a
    rerun tries them again). A run stopped early (Ctrl-C) is not cached either."""
    todo = missing(cache, spec.key, entries)
    if not todo:
        return 0
    report(f"{spec.label}{' (reference)' if spec.reference else ''}: {len(todo)} instances")
    failures = 0
    where = context()

    def finished(k: int, result: SolveResult) -> None:
        nonlocal failures
        entry = todo[k]
        if result.interrupted:
            report(f"  {entry.name}: {spec.label}: stopped early, not cached")
            return
        if result.status not in CACHED_STATUSES:
            failures += 1
            report(f"  {entry.name}: {result.status}: {result.error}")
            return
        row = record(spec, entry, result, {**where, "load": provenance.load_average()})
        cache.add([row])
        text = f"{row.cost:.0f}" if row.valid else f"no valid solution ({result.status})"
        report(f"  {entry.name}: {spec.label}: {text} ({row.seconds:.1f} s)")

    solve_many([e.instance for e in todo], method=spec.method, seconds=spec.seconds,
               seed=spec.seed, workers=workers, on_result=finished)  # fmt: skip
    return failures


def _bound_task(args: tuple[CLRPInstance, float]) -> Bound:
    instance, seconds = args
    return lower_bound(instance, seconds)


def run_bounds(
    entries: Sequence[Entry],
    cache: ResultCache,
    seconds: float,
    workers: int,
    bound: BoundFn | None = None,
    report: Callable[[str], None] = print,
) -> int:
    """Compute and cache the lower bound of every entry without one (``bound`` replaces
    :func:`.bound.lower_bound`, tests; it runs in this process). Returns the number of bounds
    that failed (not cached)."""
    from clrp_rl4co.execution.parallel import ProcessPool, map_ordered

    key = bound_key(seconds)
    todo = missing(cache, key, entries)
    if not todo:
        return 0
    report(f"lower bounds ({seconds:g} s each at most): {len(todo)} instances")
    failures = 0
    where = context()

    def finished(k: int, future) -> None:
        nonlocal failures
        entry = todo[k]
        try:
            result: Bound = future.result()
        except Exception as exc:  # noqa: BLE001 (one failed bound; the others go on)
            failures += 1
            report(f"  {entry.name}: bound failed: {exc}")
            return
        extra = {"status": result.status, **where, "load": provenance.load_average()}
        row = InstanceResult(key, entry.index, entry.name, result.value, result.seconds, True,
                             bound=result.value, extra=extra)  # fmt: skip
        cache.add([row])
        done_in = f"{result.status}, {result.seconds:.1f} s"
        report(f"  {entry.name}: bound {result.value:.0f} ({done_in})")

    items = [(e.instance, seconds) for e in todo]
    if bound is not None:
        map_ordered(lambda item: bound(*item), items, None, finished)
        return failures
    pool = ProcessPool(workers) if workers > 1 else None
    try:
        map_ordered(_bound_task, items, pool, finished)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return failures


def plan(
    seconds: Sequence[float],
    reference_seconds: float,
    methods: Sequence[str] = EVALUATION_METHODS,
    reference_methods: Sequence[str] = REFERENCE_METHODS,
    seed: int = 0,
    reference_seed: int | None = None,
) -> list[RunSpec]:
    """The runs in the order they run: the evaluation budgets from short to long, then the
    references (with ``reference_seed``; None: ``seed``)."""
    evaluation = [RunSpec(m, s, seed) for s in sorted(seconds) for m in methods]
    ref_seed = seed if reference_seed is None else reference_seed
    return evaluation + [RunSpec(m, reference_seconds, ref_seed, True) for m in reference_methods]


def cache_of(out: Path) -> ResultCache:
    """The cache of the results folder ``out``."""
    return ResultCache(Path(out) / "cache")
