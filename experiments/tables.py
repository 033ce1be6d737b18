"""Run an evaluation table end to end: data, rows (resumable), validation, tables and plots.

Outputs go to ``<out>/<table>/``: ``<table>.md`` (Markdown, with the hardware and the command),
``<table>.csv`` (all summary fields), ``<part>_per_instance.csv`` (one cost column per row) and
``cache/`` (the per-instance JSON lines that make a rerun resume). ``<out>/gap_by_size.png`` is
redrawn from every synthetic table found under ``<out>``.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from clrp_rl4co.data import prins_bks, prins_files, read_prodhon, tensordict_to_instances
from clrp_rl4co.evaluation import (
    EvalData,
    InstanceResult,
    ResultCache,
    policy_fingerprint,
    report,
    run_method,
)
from clrp_rl4co.reporting import provenance

from . import table_files
from .paper_sets import DRLHQ_TEST_SEED, drlhq_test_set_filename, load_drlhq_test_set
from .published_sets import load_test_set, published_test_set
from .specs import (
    SYNTHETIC,
    UNTRAINED,
    Row,
    TablePart,
    cross_size_parts,
    paper_set_parts,
    prins_part,
    synthetic_part,
    with_identity,
    with_method,
)

TABLES = (*SYNTHETIC, "cross-size", "prins", "paper-sets")


@dataclass(frozen=True)
class RunOptions:
    """How a table runs (the ``python -m experiments table`` options).

    Attributes:
        subset: size of every slow row's subset (default: the row's own, see ``specs``).
        max_instances: a cap on every row (smoke runs).
        only: keep the rows whose label contains any of these (and the rows they refine).
        num_procs: processes of the classical solvers and of refinement.
        device: device of the policies.
        progress: tqdm progress bars.
        limits: ``[PART:]LABEL -> N`` row limits, see :func:`_apply_limits`.
    """

    subset: int | None = None
    max_instances: int | None = None
    only: tuple[str, ...] | None = None
    num_procs: int = 1
    device: str = "cpu"
    progress: bool = True
    limits: dict[str, int] | None = None


def model_label(key: str, model: str) -> str:
    """``key = `model```, with the recipe its JSON names where it names one (weights trained
    further than their first recipe, e.g. by ``python -m experiments.imitation ship``)."""
    import json

    from clrp_rl4co.pretrained import pretrained_files

    try:
        recipe = json.loads(pretrained_files(model)[1].read_text()).get("recipe")
    except (FileNotFoundError, ValueError):
        recipe = None
    return f"{key} = `{model}`" + (f" (recipe: {recipe})" if recipe else "")


def table_parts(table: str, models: dict[str, str] | None = None) -> list[TablePart]:
    if table in SYNTHETIC:
        return [synthetic_part(table, models)]
    if table == "cross-size":
        return cross_size_parts(models)
    if table == "prins":
        return [prins_part(models)]
    if table == "paper-sets":
        return paper_set_parts(models)
    raise ValueError(f"table: must be one of {TABLES}, got {table!r}")


def table_data(part: TablePart, max_instances: int | None = None) -> EvalData:
    """The instances of a table part: a preset's published test set, the DRLHQ repository's
    test set of a preset, or the Prins files."""
    if part.source == "prins":
        files = prins_files()
        instances = [read_prodhon(f) for f in files]
        names = [f.stem for f in files]
        return EvalData(instances[:max_instances], names[:max_instances])
    load = load_drlhq_test_set if part.source == "drlhq" else load_test_set
    td = load(part.preset)
    if max_instances is not None:
        td = td[:max_instances]
    names = [f"{part.name}-{i}" for i in range(td.batch_size[0])]
    return EvalData(tensordict_to_instances(td, names), names, td)


def hardware(device: str, num_procs: int) -> str:
    """The hardware line of a table: machine, policy device and threads, solver processes,
    software."""
    return (
        f"{provenance.machine(device)}; policy device {device}, {torch.get_num_threads()} torch "
        f"threads; solver/refinement processes {num_procs}; {provenance.software()}"
    )


def code_commit() -> str:
    """The commit line of a table: ``+ uncommitted changes`` when the package's or the
    harness's code differs from the commit."""
    here = Path(__file__).resolve().parent
    return provenance.commit_line([here, here.parent / "clrp_rl4co"], root=here.parent)


def _apply_limits(
    rows: list[Row],
    subset: int | None,
    max_instances: int | None,
    limits: dict[str, int] | None = None,
    part: str = "",
) -> list[Row]:
    """Row limits after ``--subset`` (every limited row), ``--limit TEXT=N`` (the row labelled
    TEXT, else every row whose label contains TEXT; case-insensitive; ``PART:TEXT=N`` only in
    that part of the table, e.g. ``clrp500:x8=3``, applied after the others) and
    ``--max-instances`` (a cap on every row)."""
    general = {k: v for k, v in (limits or {}).items() if ":" not in k}
    specific = {
        k.split(":", 1)[1]: v
        for k, v in (limits or {}).items()
        if ":" in k and k.split(":", 1)[0] == part
    }
    labels = [r.label.lower() for r in rows]
    out = []
    for row, label in zip(rows, labels):
        limit = row.method.limit
        if subset is not None and limit is not None:
            limit = subset
        for text, count in [*general.items(), *specific.items()]:
            text = text.lower()
            if (text == label) if text in labels else (text in label):
                limit = count
        if max_instances is not None:
            limit = min(limit or max_instances, max_instances)
        out.append(with_method(row, row.method.with_limit(limit)))
    return out


def run_part(
    part: TablePart, out: Path, options: RunOptions = RunOptions()
) -> tuple[EvalData, list[Row], list[InstanceResult]]:
    """Run every row of ``part`` (cached rows are only read) and return its data, its rows
    (with the limits applied) and their results (``method`` = the method's key)."""
    from clrp_rl4co.envs import CLRPEnv

    o = options
    data = table_data(part, o.max_instances)
    rows = _apply_limits(part.rows, o.subset, o.max_instances, o.limits, part.name)
    if o.only:
        keep = [r for r in rows if any(s.lower() in r.label.lower() for s in o.only)]
        bases = [r.method.base for r in keep if r.method.base]  # refinement needs its base
        rows = [r for r in rows if r in keep or r.method in bases]
    methods = [r.method for r in rows]
    cache = ResultCache(out / "cache" / part.name)
    env = CLRPEnv(device=o.device)
    policies: dict[str, torch.nn.Module] = {}

    def loader(name: str) -> torch.nn.Module:
        if name not in policies:
            policies[name] = _load(name).to(o.device)
        return policies[name]

    fingerprints = {m.key: policy_fingerprint(loader(m.model)) for m in methods
                    if m.kind in ("policy", "refine")}  # fmt: skip
    for key in cache.guard_models(fingerprints):
        print(f"{part.name}: {key!r} was cached for other model weights; moved to stale/, "
              "recomputing")  # fmt: skip
    on_device = _on_device(data, o.device)
    results: list[InstanceResult] = []
    for method in methods:
        results += run_method(method, on_device, cache, env, loader, o.num_procs, o.progress)
    invalid = [r for r in results if not r.valid]
    if invalid:
        print(f"WARNING: {len(invalid)} invalid or missing solutions in {part.name}: "
              + ", ".join(f"{r.method}/{r.name}" for r in invalid[:5]))  # fmt: skip
    return data, rows, results


def _load(name: str) -> torch.nn.Module:
    """A policy by name; ``untrained:<name>`` is the named model's architecture freshly
    initialised with seed 0 (the untrained baseline)."""
    from clrp_rl4co.policies import load_policy

    if not name.startswith(UNTRAINED):
        return load_policy(name)
    trained = load_policy(name.removeprefix(UNTRAINED))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return type(trained)(**trained.config)


def _on_device(data: EvalData, device: str) -> EvalData:
    if data.td is None or device == "cpu":
        return data
    return EvalData(data.instances, data.names, data.td.to(device))


def references(part: TablePart, data: EvalData) -> dict[str, dict[int, float]]:
    """Best-known values of the Prins instances by row: ``{"BKS": ..., "BKS (DRLHQ paper)": ...}``
    (empty for generated instances)."""
    if part.source != "prins":
        return {}
    bks = prins_bks()
    return {
        "BKS": {i: float(bks[n].current) for i, n in enumerate(data.names)},
        "BKS (DRLHQ paper)": {i: float(bks[n].drlhq) for i, n in enumerate(data.names)},
    }


def labelled(rows: list[Row], results: list[InstanceResult]) -> list[InstanceResult]:
    """``results`` with each method key replaced by its row's label (for display)."""
    labels = {r.method.key: r.label for r in rows}
    if len(labels) != len(rows) or len(set(labels.values())) != len(rows):
        raise ValueError(f"rows: two rows run the same method or share a label "
                         f"({[r.label for r in rows]})")  # fmt: skip
    return [replace(r, method=labels[r.method]) for r in results if r.method in labels]


def identity_columns(row: Row) -> dict[str, object]:
    """The summary CSV's columns that say what a row is (read by :mod:`.headline`)."""
    m = row.method
    return {"key": m.key, "kind": m.kind, "model": m.model, "decode": m.decode,
            "budget_seconds": m.seconds, "family": row.family}  # fmt: skip


def write_part(part: TablePart, data: EvalData, rows: list[Row], results, out: Path) -> str:
    """Write the CSV summary and per-instance CSV of one part; returns its Markdown section."""
    labels = [r.label for r in rows]
    shown = labelled(rows, results)
    refs = references(part, data)
    summaries = report.summarize(shown, labels, refs.get("BKS"))
    lines = [f"### {part.name}", ""]
    if part.models:
        lines.append("- models: " + ", ".join(model_label(k, v) for k, v in part.models.items()))
    limited = [f"{r.label}: first {r.method.limit}" for r in rows
               if (r.method.limit or len(data)) < len(data)]  # fmt: skip
    subsets = f" (subsets: {'; '.join(limited)})" if limited else ""
    lines.append(f"- instances: {len(data)}{subsets}")
    batches = [f"{r.label}: {r.method.batch_size}" for r in rows if r.method.kind == "policy"]
    if batches:
        one = "1 (instances of different sizes)" if data.td is None else None
        lines.append("- policy batch sizes: " + (one or "; ".join(batches)))
    lines.append("")
    lines.append(report.to_markdown(summaries))
    for label, ref in refs.items():
        if label == "BKS":
            continue
        extra = report.summarize(shown, labels, ref)
        lines.append("")
        lines.append(f"Gap to {label}:")
        lines.append("")
        lines.append(report.to_markdown(extra, reference_label=label))
    for line in paired_lines(rows, results):
        lines += ["", line]
    for line in paper_lines(part, summaries, len(data)):
        lines += ["", line]
    identity = {r.label: identity_columns(r) for r in rows}
    report.to_csv(summaries, out / f"{part.name}.csv", extra=identity)
    table_files.per_instance_csv(shown, out / f"{part.name}_per_instance.csv", labels)
    return "\n".join(lines)


def paired_lines(rows: list[Row], results: list[InstanceResult]) -> list[str]:
    """One sentence per refinement row against the PyVRP row with the same time budget, and per
    pair a row names in ``paired_with``."""
    by_method = {r.method: r for r in rows}
    pairs = []
    for row in rows:
        m = row.method
        pairs += [("Paired", row, by_method[o]) for o in row.paired_with if o in by_method]
        twin = next((o for o in rows if o.method.kind == "pyvrp" and o.method.seconds == m.seconds
                     and m.kind == "refine"), None)  # fmt: skip
        if twin:
            pairs.append(("Paired, same time per instance", row, twin))
    out = []
    for title, first, second in pairs:
        stats = report.paired(results, first.method.key, second.method.key)
        if stats:
            out.append(
                f"{title}: {first.label} minus {second.label} = {stats['mean_diff']:+.4f} ± "
                f"{stats['ci95']:.4f} (95% CI) over {stats['n']} instances; lower on "
                f"{stats['wins']}, equal on {stats['ties']}, higher on {stats['losses']}."
            )
    return out


def paper_lines(part: TablePart, summaries: list, num_instances: int) -> list[str]:
    """For a part on the DRLHQ repository's test set: each figure the paper reports for DRLHQ
    on it next to the rows of the same family here (relative difference in %)."""
    from .headline import PAPER, PAPER_SECONDS

    if part.source != "drlhq":
        return []
    by_label = {s.method: s for s in summaries}
    out = []
    for family, value in PAPER.get(part.preset, {}).items():
        same = [by_label[r.label] for r in part.rows if r.family == family and r.label in by_label]
        cells = [
            f"{s.method} {s.objective:.4f} ({100 * (s.objective - value) / value:+.2f}%"
            + ("" if s.instances == num_instances else f", first {s.instances} instances only")
            + ")"
            for s in same
            if s.instances
        ]
        seconds = PAPER_SECONDS.get(part.preset, {}).get(family)
        timed = "" if seconds is None else f" at {seconds:.2f} s per instance (RTX 4090)"
        if cells:
            head = f"The paper reports {family} = {value:.4f}{timed} on its test set"
            out.append(f"{head} (regenerated here, see the data line); here: "
                       + "; ".join(cells) + ".")  # fmt: skip
    return out


def run_table(
    table: str,
    out: str | Path = "results",
    models: dict[str, str] | None = None,
    options: RunOptions = RunOptions(),
    command: str | None = None,
) -> Path:
    """Run one table (see :data:`TABLES`) and write its outputs; returns the Markdown path."""
    out_root = Path(out)
    folder = out_root / table
    folder.mkdir(parents=True, exist_ok=True)
    parts = table_parts(table, models)
    start = time.perf_counter()
    commit = code_commit()  # the code this run started with (a long run may outlive a commit)
    info = hardware(options.device, options.num_procs)
    print(f"table {table}: {info}")
    sections = []
    for part in parts:
        data, rows, results = run_part(part, folder, options)
        text = write_part(part, data, rows, results, folder)
        sections.append(text)
        print(text + "\n")
        if part.source == "prins":
            _prins_picture(data, results, rows, folder)
    header = [
        f"# Table {table}",
        "",
        f"- command: `{command or ' '.join(sys.argv)}`",
        f"- commit: {commit} (at the start), {time.strftime('%Y-%m-%d %H:%M %Z')} (at the end)",
        f"- hardware: {info}",
        f"- this run's wall time: {time.perf_counter() - start:.0f} s (cached rows are only read);"
        f" 1-minute load average at the end: {provenance.load_average()} on {os.cpu_count()} CPUs"
        " (other jobs on the machine slow the time-limited solvers and inflate the measured"
        " times)",
        "- objective: mean over the row's instances with the 95% confidence interval; gap: per",
        "  instance to the best row on that instance, then averaged; the subset columns compare",
        "  every row on the instances they all ran on; time: batch wall time / batch size.",
    ]
    if table in SYNTHETIC or table == "cross-size":
        seed = published_test_set(parts[0].name).seed
        header.append(f"- data: published test sets (`datasets/`, seed {seed})")
    if table == "paper-sets":
        files = ", ".join(f"`datasets/{drlhq_test_set_filename(p.preset)}`" for p in parts)
        header.append(
            f"- data: the DRLHQ repository's test sets, regenerated from its seed "
            f"({DRLHQ_TEST_SEED}) and draw order ({files}; see `experiments/paper_sets.py` "
            "for what is and is not verified)"
        )
    md = folder / f"{table}.md"
    md.write_text("\n".join(header) + "\n\n" + "\n\n".join(sections) + "\n")
    if table in SYNTHETIC:
        from .headline import headline

        _gap_plot(out_root)
        headline(out_root)
    return md


def _gap_plot(out_root: Path) -> None:
    """Redraw ``gap_by_size.png`` from every synthetic table's summary CSV under ``out_root``
    (rows named by their family, so a legend entry spans the presets)."""
    tables = {}
    for preset in SYNTHETIC:
        path = out_root / preset / f"{preset}.csv"
        if path.is_file():
            rows = table_files.read_csv(path)
            tables[preset] = [
                replace(s, method=with_identity(preset, {**extra, "method": s.method})["family"]
                        or s.method)
                for s, extra in rows]  # fmt: skip
    if tables:
        table_files.plot_gaps(tables, out_root / "gap_by_size.png")


def _prins_picture(data: EvalData, results, rows: list[Row], folder: Path) -> None:
    """Picture of the last row's solution of one Prins instance (coord50-5-1 if present)."""
    from clrp_rl4co.data import instances_to_tensordict
    from clrp_rl4co.envs import CLRPEnv
    from clrp_rl4co.envs.clrp import plot_solution

    if not results or not rows:
        return
    last = rows[-1]
    solved = {r.instance: r for r in results if r.method == last.method.key and r.valid}
    if not solved:
        return
    index = data.names.index("coord50-5-1") if "coord50-5-1" in data.names else min(solved)
    if index not in solved:
        index = min(solved)
    td = instances_to_tensordict([data.instances[index]])
    actions = torch.as_tensor([solved[index].actions])
    env = CLRPEnv()
    final = env.rollout_actions(td, actions)
    plot_solution(
        final, actions, folder / "prins_solution.png", f"{data.names[index]}: {last.label}"
    )
