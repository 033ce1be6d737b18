"""Mutation testing of one core module at a time with mutmut (``make mutation MODULE=...``).

    python mutation/run.py clrp_rl4co/envs/clrp/validity.py   # mutate, test, report
    python mutation/run.py --list                             # modules and their tests
    python mutation/run.py --table                            # results table (README)
    python mutation/run.py MODULE --show NAME                 # the diff of one mutant
    python mutation/run.py MODULE --fresh                     # forget the cached verdicts

Each module gets its own mutmut project under ``mutation/work/<module>/`` (git-ignored):
symlinks to the package and the tests, a ``setup.cfg`` whose ``[mutmut]`` section mutates only
that module and selects only its test files (:data:`MODULES`, the one mapping), and mutmut's
``mutants/`` copy. mutmut runs each mutant's tests in a fork of that copy, so the working tree
is never touched, and keeps its verdicts per function: a rerun tests only the mutants of
functions whose source changed. When a test file or another package module changed since the
last run, the survivors (and only they) are tested again. ``--fresh`` forgets everything.

The report counts killed (a test failed, the mutant timed out or crashed the tests), survived,
and equivalent survivors: those listed in ``mutation/equivalent.md`` (by the function and the
changed line, not by mutmut's index, so the list survives edits elsewhere). The score is killed
over the non-equivalent mutants. Survivors go to ``mutation/results/<module>.survivors.txt`` with
their diffs, the counts and the runtime to ``mutation/results/<module>.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The benchmark folder's variable (``clrp_rl4co.data.prodhon.BENCHMARKS_ENV_VAR``; not imported,
#: so that this script starts without torch).
BENCHMARKS_ENV_VAR = "CLRP_BENCHMARKS_DIR"
HERE = ROOT / "mutation"
WORK = HERE / "work"
RESULTS = HERE / "results"
EQUIVALENT = HERE / "equivalent.md"
PACKAGE = "clrp_rl4co"

#: The one mapping: module -> the test files whose tests may kill its mutants (quick ones;
#: mutmut then runs, per mutant, only the tests of these files that call the mutated function).
MODULES: dict[str, list[str]] = {
    "clrp_rl4co/envs/clrp/costs.py": [
        "tests/test_env_conventions.py",
        "tests/test_env_transitions.py",
    ],
    "clrp_rl4co/envs/clrp/validity.py": [
        "tests/test_env_transitions.py",
        "tests/test_env_properties.py",
        "tests/test_env_validity.py",
        "tests/test_bad_input.py",
    ],
    "clrp_rl4co/envs/clrp/env.py": [
        "tests/test_env_transitions.py",
        "tests/test_env_conventions.py",
        "tests/test_env_properties.py",
        "tests/test_env_penalty.py",
        "tests/test_env_start.py",
        "tests/test_bad_input.py",
        "tests/test_env_api.py",
    ],
    "clrp_rl4co/envs/clrp/generator.py": [
        "tests/test_generator.py",
        "tests/test_generator_rule.py",
        "tests/test_generator_presets.py",
        "tests/test_generator_mixed.py",
        "tests/test_generator_io.py",
        "tests/test_bad_input.py",
    ],
    "clrp_rl4co/envs/clrp/presets.py": [
        "tests/test_generator.py",
        "tests/test_generator_rule.py",
        "tests/test_generator_presets.py",
        "tests/test_generator_mixed.py",
        "tests/test_bad_input.py",
    ],
    "clrp_rl4co/envs/clrp/dataset.py": [
        "tests/test_generator_io.py",
        "tests/test_generator.py",
        "tests/test_env_api.py",
    ],
    "clrp_rl4co/envs/clrp/instance.py": [
        "tests/test_generator_io.py",
        "tests/test_env_conventions.py",
        "tests/test_env_validity.py",
        "tests/test_bad_input.py",
    ],
    "clrp_rl4co/mixed_preset.py": [
        "tests/test_generator_mixed.py",
        "tests/test_generator_presets.py",
        "tests/test_generator_rule.py",
    ],
    "clrp_rl4co/data/instance.py": [
        "tests/test_data_prodhon.py",
        "tests/test_bad_input.py",
        "tests/test_data_instance.py",
        "tests/test_data_json.py",
    ],
    "clrp_rl4co/data/solution.py": [
        "tests/test_data_prodhon.py",
        "tests/test_data_solution.py",
    ],
    "clrp_rl4co/data/prodhon.py": [
        "tests/test_data_prodhon.py",
    ],
    "clrp_rl4co/data/json_instance.py": [
        "tests/test_data_json.py",
    ],
    "clrp_rl4co/data/json_text.py": [
        "tests/test_data_json_text.py",
        "tests/test_data_json.py",
        "tests/test_data_schneider.py",
    ],
    "clrp_rl4co/data/bks.py": [
        "tests/test_data_prodhon.py",
        "tests/test_cli_parts.py",
        "tests/test_benchmarks_schneider.py",
    ],
    "clrp_rl4co/data/schneider.py": [
        "tests/test_data_schneider.py",
        "tests/test_data_files.py",
    ],
    "clrp_rl4co/search/sgbs.py": [
        "tests/test_sgbs.py",
    ],
    "clrp_rl4co/solvers/exact.py": [
        "tests/test_solvers_exact.py",
        "tests/test_solvers_exact_model.py",
    ],
    "clrp_rl4co/policies/unpickling.py": [
        "tests/test_policies_unpickling.py",
    ],
    "clrp_rl4co/solvers/nearest_neighbor.py": [
        "tests/test_solvers_nearest_neighbor.py",
    ],
    "clrp_rl4co/reporting/markdown.py": [
        "tests/test_markdown.py",
    ],
    "clrp_rl4co/reporting/provenance.py": [
        "tests/test_provenance.py",
    ],
    "clrp_rl4co/solvers/exact_model.py": [
        "tests/test_solvers_exact_model.py",
        "tests/test_solvers_exact.py",
    ],
    "clrp_rl4co/solvers/refine.py": [
        "tests/test_solvers_refine.py",
    ],
    "clrp_rl4co/solvers/common.py": [
        "tests/test_solvers_common.py",
    ],
    "clrp_rl4co/solvers/pyvrp_encoding.py": [
        "tests/test_solvers_pyvrp_encoding.py",
        "tests/test_solvers_pyvrp.py",
    ],
    "clrp_rl4co/solvers/pyvrp_solver.py": [
        "tests/test_solvers_pyvrp_budget.py",
        "tests/test_solvers_pyvrp_encoding.py",
        "tests/test_solvers_pyvrp.py",
        "tests/test_solvers_decompose.py",
        "tests/test_solvers_golden.py",
    ],
    "clrp_rl4co/solvers/stopping.py": [
        "tests/test_solvers_stopping.py",
        "tests/test_solvers_pyvrp_budget.py",
        "tests/test_solvers_pyvrp.py",
    ],
    "clrp_rl4co/solvers/set_estimate.py": [
        "tests/test_solvers_set_estimate.py",
        "tests/test_set_features.py",
        "tests/test_solvers_pyvrp_budget.py",
        "tests/test_solvers_pyvrp.py",
        "tests/test_solvers_location_model.py",
        "tests/test_solvers_decompose.py",
    ],
    "clrp_rl4co/solvers/set_search.py": [
        "tests/test_solvers_set_search.py",
        "tests/test_solvers_set_model.py",
        "tests/test_solvers_region.py",
        "tests/test_solvers_pyvrp_budget.py",
        "tests/test_solvers_pyvrp.py",
        "tests/test_solvers_decompose.py",
        "tests/test_solvers_golden.py",
    ],
    "clrp_rl4co/solvers/location_model.py": [
        "tests/test_solvers_location_model.py",
    ],
    "clrp_rl4co/solvers/decompose.py": [
        "tests/test_solvers_decompose.py",
    ],
    "clrp_rl4co/solvers/region.py": [
        "tests/test_solvers_region.py",
    ],
    "clrp_rl4co/solvers/set_model.py": [
        "tests/test_solvers_set_model.py",
    ],
    "clrp_rl4co/solvers/large.py": [
        "tests/test_solvers_set_search.py",
        "tests/test_solvers_decompose.py",
        "tests/test_solvers_pyvrp_budget.py",
    ],
    "clrp_rl4co/solvers/hybrid.py": [
        "tests/test_solvers_hybrid_parts.py",
        "tests/test_solvers_hybrid_budget.py",
        "tests/test_solvers_hybrid.py",
    ],
    "clrp_rl4co/solvers/recombine.py": [
        "tests/test_solvers_recombine.py",
    ],
    "clrp_rl4co/solvers/incumbent.py": [
        "tests/test_solvers_incumbent.py",
        "tests/test_solvers_hybrid_budget.py",
    ],
    "clrp_rl4co/search/learned_starts.py": [
        "tests/test_search_learned_starts.py",
        "tests/test_solvers_hybrid_budget.py",
    ],
    "clrp_rl4co/solvers/progress.py": [
        "tests/test_solvers_progress.py",
        "tests/test_solvers_hybrid_budget.py",
    ],
    "clrp_rl4co/search/decode_plan.py": [
        "tests/test_solvers_hybrid_budget.py",
    ],
    "clrp_rl4co/search/rollout_pool.py": [
        "tests/test_solvers_hybrid_budget.py",
        "tests/test_search_rollout_pool.py",
    ],
    "clrp_rl4co/solvers/highs.py": [
        "tests/test_solvers_exact.py",
        "tests/test_solvers_recombine.py",
        "tests/test_solvers_location_model.py",
    ],
    "clrp_rl4co/solving.py": [
        "tests/test_solve.py",
        "tests/test_solve_many.py",
        "tests/test_solve_golden.py",
        "tests/test_solving_forwarding.py",
    ],
    "clrp_rl4co/result.py": [
        "tests/test_result.py",
    ],
    "clrp_rl4co/status.py": [
        "tests/test_solvers_common.py",
        "tests/test_result.py",
    ],
    "clrp_rl4co/auto.py": [
        "tests/test_solve.py",
        "tests/test_solve_many.py",
    ],
    "clrp_rl4co/arguments.py": [
        "tests/test_arguments.py",
        "tests/test_solve.py",
        "tests/test_solve_many.py",
    ],
    "clrp_rl4co/execution/parallel.py": [
        "tests/test_solve_many.py",
        "tests/test_execution_parallel.py",
    ],
    "clrp_rl4co/models/solution_likelihood.py": [
        "tests/test_solution_likelihood.py",
    ],
    "clrp_rl4co/models/leader.py": [
        "tests/test_models_leader.py",
    ],
    "clrp_rl4co/execution/interrupt.py": [
        "tests/test_interrupt.py",
        "tests/test_solve.py",
        "tests/test_cli_manners.py",
    ],
    "clrp_rl4co/data/files.py": [
        "tests/test_data_files.py",
        "tests/test_data_schneider.py",
        "tests/test_cli_inputs.py",
        "tests/test_solve.py",
    ],
    "clrp_rl4co/cli/args.py": [
        "tests/test_cli_parts.py",
        "tests/test_cli_inputs.py",
        "tests/test_cli_manners.py",
    ],
    "clrp_rl4co/cli/inputs.py": [
        "tests/test_cli_jobs.py",
        "tests/test_cli_inputs.py",
        "tests/test_cli_parts.py",
        "tests/test_cli_manners.py",
    ],
    "clrp_rl4co/cli/outputs.py": [
        "tests/test_cli_parts.py",
        "tests/test_cli_solve.py",
        "tests/test_cli_manners.py",
    ],
    "clrp_rl4co/cli/progress.py": [
        "tests/test_cli_parts.py",
    ],
    "clrp_rl4co/cli/solve.py": [
        "tests/test_cli_parts.py",
        "tests/test_cli_solve.py",
        "tests/test_cli_manners.py",
    ],
}

#: Files besides the package and tests/ that the tests read through paths relative to the repo.
ALSO_COPY: dict[str, list[str]] = {
    # tests/test_solvers_location_model.py reads datasets/hard
    "clrp_rl4co/solvers/location_model.py": ["datasets"],
    "clrp_rl4co/solvers/pyvrp_solver.py": ["datasets"],
    "clrp_rl4co/solvers/set_estimate.py": ["datasets"],
    "clrp_rl4co/solvers/highs.py": ["datasets"],
    # tests/test_solvers_set_model.py reads datasets/depot_choice
    "clrp_rl4co/solvers/set_model.py": ["datasets"],
    "clrp_rl4co/solvers/refine.py": ["benchmarks", "experiments"],
    "clrp_rl4co/envs/clrp/generator.py": ["configs"],
    "clrp_rl4co/envs/clrp/presets.py": ["configs"],
    "clrp_rl4co/mixed_preset.py": ["configs"],
    # tests/test_cli_inputs.py runs examples/evaluate.py; tests/test_cli_parts.py reads
    # docs/formats.md
    "clrp_rl4co/data/files.py": ["examples"],
    "clrp_rl4co/data/bks.py": ["docs", "benchmarks"],
    "clrp_rl4co/cli/args.py": ["examples", "docs"],
    "clrp_rl4co/cli/inputs.py": ["examples", "docs"],
    "clrp_rl4co/cli/outputs.py": ["docs"],
    "clrp_rl4co/cli/progress.py": ["docs"],
    "clrp_rl4co/cli/solve.py": ["docs"],
    # tests/test_solution_likelihood.py draws its labels with tests/test_imitation.py's helpers
    "clrp_rl4co/models/solution_likelihood.py": ["experiments", "configs"],
    # tests/test_models_leader.py builds its tiny policy with tests/test_imitation.py's sizes
    "clrp_rl4co/models/leader.py": ["experiments", "configs"],
}

#: Tests that run a copy of the module outside mutmut's package (a subprocess on a copied
#: folder): mutmut's trampolines cannot run there, so they are deselected for that module.
DESELECT: dict[str, list[str]] = {
    "clrp_rl4co/envs/clrp/generator.py": [
        "tests/test_generator_presets.py::"
        "test_the_env_folder_alone_knows_only_the_paper_presets_and_takes_registrations",
    ],
    "clrp_rl4co/envs/clrp/presets.py": [
        "tests/test_generator_presets.py::"
        "test_the_env_folder_alone_knows_only_the_paper_presets_and_takes_registrations",
    ],
}

#: mutmut exit codes, read from its .meta files.
#: Killed: a test failed, pytest errored, the mutant timed out, or it crashed the test process
#: (-6 abort, -11 segfault: e.g. PyVRP's C++ side handed a None).
KILLED_CODES = {1, 3, 36, 24, -24, 152, 255, -6, -11}
SURVIVED_CODES = {0}
NO_TESTS_CODES = {5, 33}
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def slug(module: str) -> str:
    return module.removeprefix(PACKAGE + "/").removesuffix(".py").replace("/", ".")


def module_key(module: str) -> str:
    """The dotted module name mutmut prefixes its mutant names with."""
    return module.removesuffix(".py").replace("/", ".")


def existing_tests(module: str) -> list[str]:
    return [t for t in MODULES[module] if (ROOT / t).exists()]


def digest(paths) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p).encode())
        h.update(Path(p).read_bytes())
    return h.hexdigest()[:16]


def context_fingerprint(module: str) -> str:
    """What the verdicts depend on besides the module itself: the other package modules and
    every test file (helpers and conftest included), and the benchmark folder the tests read
    (unset, the tests that need it are skipped and their mutants survive)."""
    files = [p for p in (ROOT / PACKAGE).rglob("*.py") if p != ROOT / module]
    files += list((ROOT / "tests").glob("*.py"))
    return digest(files) + ":" + os.environ.get(BENCHMARKS_ENV_VAR, "")


def prepare(module: str, work: Path) -> None:
    """The per-module mutmut project: symlinks and its config."""
    work.mkdir(parents=True, exist_ok=True)
    links = [PACKAGE, "tests", *ALSO_COPY.get(module, [])]
    for name in links:
        link = work / name
        if not link.is_symlink():
            link.symlink_to(ROOT / name)
    shutil.copy2(ROOT / "pyproject.toml", work / "pyproject.toml")
    config = [
        "[mutmut]",
        f"source_paths = {PACKAGE}",
        f"only_mutate = {module}",
        "pytest_add_cli_args_test_selection =",
        *(f"    {t}" for t in existing_tests(module)),
        "pytest_add_cli_args =",
        "    -p",
        "    no:cacheprovider",
        "    -o",
        "    addopts=",
        *(f"    --deselect={t}" for t in DESELECT.get(module, [])),
        "use_git_change_detection = false",
        "on_dependency_change = ignore",
        "timeout_multiplier = 10",
    ]
    if ALSO_COPY.get(module):
        config += ["also_copy =", *(f"    {p}" for p in ALSO_COPY[module])]
    text = "\n".join(config) + "\n"
    cfg = work / "setup.cfg"
    if not cfg.exists() or cfg.read_text() != text:
        cfg.write_text(text)
    # tests deleted from tests/ must not linger in mutmut's copy
    shutil.rmtree(work / "mutants" / "tests", ignore_errors=True)


def meta_path(module: str, work: Path) -> Path:
    return work / "mutants" / (module + ".meta")


def load_meta(module: str, work: Path) -> dict:
    path = meta_path(module, work)
    return json.loads(path.read_text()) if path.exists() else {}


def reset_survivors(module: str, work: Path, only_interrupted: bool = False) -> int:
    """Forget the verdicts of survivors (and untested or interrupted mutants) so that they run
    again; with ``only_interrupted``, only those of runs cut short (e.g. by Ctrl-C)."""
    path = meta_path(module, work)
    if not path.exists():
        return 0
    meta = json.loads(path.read_text())
    codes = meta["exit_code_by_key"]
    done = KILLED_CODES | (SURVIVED_CODES | NO_TESTS_CODES if only_interrupted else set())
    again = [k for k, v in codes.items() if v is not None and v not in done]
    for k in again:
        codes[k] = None
    path.write_text(json.dumps(meta, indent=4))
    return len(again)


def refresh_test_map(work: Path) -> None:
    """Make mutmut map tests to functions again, keeping its verdicts.

    mutmut records which tests call each function once, and on a change of the test selection
    it would forget every verdict. Instead its stats file is told the selection is current and
    loses its test map, so mutmut re-runs the (quick) stats collection over all selected tests
    and then tests only the mutants without a verdict.
    """
    stats = work / "mutants" / "mutmut-stats.json"
    if not stats.exists():
        return
    probe = (
        "import json\n"
        "from mutmut.configuration import config\n"
        "print(json.dumps(config().config_fingerprint()))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=work, capture_output=True, text=True, check=True
    )
    data = json.loads(stats.read_text())
    data["config_fingerprint"] = json.loads(result.stdout.strip().splitlines()[-1])
    data["tests_by_mangled_function_name"] = {}
    data["duration_by_test"] = {}
    stats.write_text(json.dumps(data, indent=4))


def diff_lines(diff: str) -> tuple[str, ...]:
    """The changed lines of a unified diff, stripped (no headers, no context)."""
    out = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith(("+", "-")):
            out.append(line[0] + " " + line[1:].strip())
    return tuple(out)


def function_of(name: str) -> str:
    """``x_foo`` / ``xǁClassǁfoo`` of a mutant name, as ``foo`` / ``Class.foo``."""
    mangled = name.rsplit(".", 1)[-1].partition("__mutmut_")[0]
    if mangled.startswith("x_"):
        return mangled[2:]
    parts = mangled.split("ǁ")
    return f"{parts[1]}.{parts[2]}"


def fingerprint(name: str, diff: str) -> str:
    text = function_of(name) + "\n" + "\n".join(diff_lines(diff))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def load_equivalent() -> dict[str, tuple[str, str]]:
    """``fingerprint -> (module, reason)`` from mutation/equivalent.md.

    Each entry is a line ``- `<fingerprint>` <module> `<function>`: <reason>``, followed by
    the mutant's changed lines in an indented block (for the reader).
    """
    if not EQUIVALENT.exists():
        return {}
    found = {}
    pattern = re.compile(r"^- `([0-9a-f]{12})` (\S+) `([^`]+)`: (.+)$")
    for line in EQUIVALENT.read_text().splitlines():
        m = pattern.match(line)
        if m:
            found[m.group(1)] = (m.group(2), m.group(4))
    return found


def mark_equivalent(module: str, names: list[str], reason: str) -> None:
    """Append reviewed equivalent mutants to mutation/equivalent.md (one entry each)."""
    work = WORK / slug(module)
    codes = load_meta(module, work).get("exit_code_by_key", {})
    unknown = [n for n in names if n not in codes]
    if unknown:
        raise SystemExit(f"not mutants of {module}: {unknown}")
    diffs = diffs_of(names, work)
    known = load_equivalent()
    lines = []
    for name in names:
        fp = fingerprint(name, diffs[name])
        if fp in known:
            continue
        lines.append(f"- `{fp}` {module} `{function_of(name)}`: {reason}")
        lines += [f"      {x}" for x in diff_lines(diffs[name])]
    if lines:
        with EQUIVALENT.open("a") as f:
            f.write("\n".join(lines) + "\n")
    print(f"{len(lines) and sum(1 for x in lines if x.startswith('- '))} entries added")


def diffs_of(names: list[str], work: Path) -> dict[str, str]:
    """mutmut's diff of each named mutant (run in the work dir, where its config lives)."""
    if not names:
        return {}
    script = (
        "import json, sys\n"
        "from mutmut.mutation.diff_apply import get_diff_for_mutant\n"
        "from mutmut.mutation.diff_apply import find_mutant\n"
        "names = json.load(sys.stdin)\n"
        "out = {}\n"
        "for n in names:\n"
        "    out[n] = get_diff_for_mutant(n, path=find_mutant(n).path)\n"
        "print(json.dumps(out))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=work,
        input=json.dumps(names),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def summarize(module: str, work: Path, runtime: float | None, fresh: bool = False) -> dict:
    meta = load_meta(module, work)
    codes: dict[str, int | None] = meta.get("exit_code_by_key", {})
    survivors = sorted(k for k, v in codes.items() if v in SURVIVED_CODES)
    untested = sorted(k for k, v in codes.items() if v in NO_TESTS_CODES)
    other = sorted(
        k
        for k, v in codes.items()
        if v not in KILLED_CODES and v not in SURVIVED_CODES and v not in NO_TESTS_CODES
    )
    killed = sum(1 for v in codes.values() if v in KILLED_CODES)
    diffs = diffs_of(survivors + untested + other, work)
    equivalent_list = load_equivalent()
    equivalent = []
    open_survivors = []
    for name in survivors + untested + other:
        fp = fingerprint(name, diffs[name])
        (equivalent if fp in equivalent_list else open_survivors).append((name, fp))
    total = len(codes)
    counted = total - len(equivalent)
    summary = {
        "module": module,
        "tests": existing_tests(module),
        "mutants": total,
        "killed": killed,
        "survived": len(survivors),
        "no_tests": len(untested),
        "other": len(other),
        "equivalent": len(equivalent),
        "score": round(100.0 * killed / counted, 1) if counted else 100.0,
        "runtime_s": None if runtime is None else round(runtime, 1),
        "open": [name for name, _ in open_survivors],
    }
    status = {k: codes[k] for k in survivors + untested + other}
    lines = [
        f"# {module}: {len(open_survivors)} open survivor(s), {len(equivalent)} equivalent",
        f"# score {summary['score']}% = {killed} killed / ({total} mutants - "
        f"{len(equivalent)} equivalent)",
        "",
    ]
    matched = {fp for _, fp in equivalent}
    stale = sorted(
        fp for fp, (mod, _) in equivalent_list.items() if mod == module and fp not in matched
    )
    summary["stale_equivalent"] = stale
    if stale:
        lines.insert(2, f"# stale entries of mutation/equivalent.md (no such survivor): {stale}")
    for title, group in (("OPEN", open_survivors), ("EQUIVALENT", equivalent)):
        for name, fp in group:
            reason = equivalent_list.get(fp, ("", ""))[1]
            lines.append(f"## {title} {name}  fingerprint {fp}  exit {status[name]}  {reason}")
            lines += [f"    {x}" for x in diff_lines(diffs[name])]
            lines.append("")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{slug(module)}.survivors.txt").write_text("\n".join(lines))
    previous = RESULTS / f"{slug(module)}.json"
    old = json.loads(previous.read_text()) if previous.exists() and not fresh else {}
    # the first full run's score and runtime stay; later (cached) runs add a last_run_s
    summary["first_score"] = old.get("first_score", summary["score"])
    summary["runtime_s"] = old.get("runtime_s", summary["runtime_s"])
    summary["last_run_s"] = summary["runtime_s"] if runtime is None else round(runtime, 1)
    if runtime is None:
        summary["last_run_s"] = old.get("last_run_s")
    previous.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def print_summary(s: dict) -> None:
    print(
        f"\n{s['module']}: {s['mutants']} mutants, {s['killed']} killed, "
        f"{s['survived']} survived, {s['no_tests']} without tests, {s['other']} other, "
        f"{s['equivalent']} of these equivalent -> score {s['score']}%"
        + (f" (full run {s['runtime_s']:.0f} s)" if s["runtime_s"] is not None else "")
    )
    if s.get("stale_equivalent"):
        print(f"stale entries in mutation/equivalent.md: {s['stale_equivalent']}")
    if s["open"]:
        print(
            f"open survivors ({len(s['open'])}): mutation/results/{slug(s['module'])}.survivors.txt"
        )


def table() -> str:
    from clrp_rl4co.reporting.markdown import markdown_table

    rows = []
    for module in MODULES:
        path = RESULTS / f"{slug(module)}.json"
        if not path.exists():
            rows.append([module, "not run", "", "", "", "", "", ""])
            continue
        s = json.loads(path.read_text())
        survived = s["survived"] + s["no_tests"] + s["other"]
        rows.append([module, s["mutants"], s["killed"], survived, s["equivalent"],
                     f"{s['first_score']}%", f"{s['score']}%", f"{s['runtime_s']} s"])  # fmt: skip
    header = ["module", "mutants", "killed", "survived", "equivalent", "score first",
              "score now", "runtime"]  # fmt: skip
    return markdown_table(header, rows, "lrrrrrrr")


def stream(process: subprocess.Popen) -> int:
    """Echo mutmut's output without its spinner: the status line it redraws with a carriage
    return is printed once a minute and at the end."""
    status, last, line = "", 0.0, b""
    while chunk := process.stdout.read1(4096):
        parts = re.split(rb"(\r|\n)", line + chunk)
        line = parts.pop()
        for part, sep in zip(parts[::2], parts[1::2]):
            text = part.decode(errors="replace").strip()
            if sep == b"\n":
                if text and text[0] not in SPINNER:
                    print(text, flush=True)
                elif text:
                    status = text[1:].strip()
            elif text:
                status = text[1:].strip()
                if time.monotonic() - last > 60:
                    print("  ", status, flush=True)
                    last = time.monotonic()
    code = process.wait()
    if status:
        print("  ", status, flush=True)
    return code


def run(module: str, fresh: bool, max_children: int, names: list[str]) -> int:
    work = WORK / slug(module)
    if fresh:
        shutil.rmtree(work, ignore_errors=True)
    prepare(module, work)
    stamp = work / "context.sha"
    context = context_fingerprint(module)
    reset_survivors(module, work, only_interrupted=True)
    if stamp.exists() and stamp.read_text() != context:
        n = reset_survivors(module, work)
        refresh_test_map(work)
        print(f"tests or other modules changed since the last run: {n} survivor(s) run again")
    if not os.environ.get(BENCHMARKS_ENV_VAR):
        print(
            f"warning: {BENCHMARKS_ENV_VAR} is unset: the tests that read the benchmark instances "
            "are skipped and their mutants survive (`make mutation` sets it)"
        )
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    mutmut = Path(sys.executable).with_name("mutmut")
    start = time.monotonic()
    command = [str(mutmut), "run", "--max-children", str(max_children), *names]
    code = stream(
        subprocess.Popen(
            command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
    )
    runtime = time.monotonic() - start
    if code != 0:
        print(f"mutmut exited with {code}")
        return code
    stamp.write_text(context)
    summary = summarize(module, work, runtime, fresh)
    print_summary(summary)
    print(f"this run: {runtime:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("module", nargs="?", help="a key of MODULES, e.g. " + next(iter(MODULES)))
    parser.add_argument("--list", action="store_true", help="modules and their test files")
    parser.add_argument("--table", action="store_true", help="the results table (markdown)")
    parser.add_argument("--report", action="store_true", help="summarize the cached results")
    parser.add_argument("--show", metavar="NAME", help="print the diff of one mutant")
    parser.add_argument("--fresh", action="store_true", help="forget the cached verdicts")
    parser.add_argument("--max-children", type=int, default=1, help="parallel mutants (1)")
    parser.add_argument("--mutants", nargs="*", default=[], help="only these mutant names/globs")
    parser.add_argument(
        "--equivalent",
        metavar="REASON",
        help="append the --mutants (full names) to mutation/equivalent.md with this reason",
    )
    args = parser.parse_args(argv)
    if args.list:
        for module, tests in MODULES.items():
            print(module)
            for t in tests:
                print("    " + t + ("" if (ROOT / t).exists() else "  (missing)"))
        return 0
    if args.table:
        print(table())
        return 0
    if args.module not in MODULES:
        parser.error(f"MODULE must be one of: {', '.join(MODULES)}")
    work = WORK / slug(args.module)
    if args.show:
        print(diffs_of([args.show], work)[args.show])
        return 0
    if args.equivalent:
        mark_equivalent(args.module, args.mutants, args.equivalent)
        return 0
    if args.report:
        print_summary(summarize(args.module, work, None))
        return 0
    return run(args.module, args.fresh, args.max_children, args.mutants)


if __name__ == "__main__":
    sys.exit(main())
