"""The package's import graph: no cycles, and no import of the harness; the harness's packages
(``experiments/``) import one another one way only.

Every module under ``clrp_rl4co/`` is parsed with ``ast``; each ``import`` and ``from ... import``
anywhere in it (module level, inside functions and methods, under conditions) that names a
``clrp_rl4co`` module, relative or absolute, is an edge to the module it loads. ``from pkg
import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg`` (its
``__init__``). Loading ``a.b.c`` first runs ``a/__init__`` and ``a/b/__init__``: those are edges
too, except for the importing module's own ancestors (Python has started them before it), so a
package's ``__init__`` re-exporting its modules is no cycle. The harness (``experiments/``) is
parsed the same way; its graph is then also read one level up, each package of it
(``experiments/generalist``) or top-level module (``experiments/background.py``) one node.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "clrp_rl4co"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / PACKAGE
#: Top-level folders of the repository that are not part of the installable package.
HARNESS = ("experiments", "benchmarks")
#: The harness package whose packages must not import one another in a circle.
EXPERIMENTS_DIR = PACKAGE_DIR.parent / "experiments"


def module_files(package_dir: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of the package."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module named by ``from <level dots><node.module> import ...`` in ``module``."""
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]  # a plain module's package
    if node.level > 1:
        parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _target(name: str, modules: dict[str, Path]) -> str | None:
    """The module that importing ``name`` (a dotted name) loads last: its longest prefix that is
    a package module; None when no prefix is one."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        candidate = ".".join(parts[:k])
        if candidate in modules:
            return candidate
    return None


def import_graph(
    modules: dict[str, Path],
) -> tuple[dict[str, set[str]], list[tuple[str, int, str]]]:
    """``(edges, harness_imports)``: edges[m] are the package modules ``m`` imports;
    ``harness_imports`` lists ``(module, line, imported name)`` for imports of the harness."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    harness: list[tuple[str, int, str]] = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        parts = module.split(".")
        ancestors = {".".join(parts[:k]) for k in range(1, len(parts))}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(module, is_package, node)
                names = [f"{base}.{alias.name}" for alias in node.names]
                if not any(_target(n, modules) == n for n in names):
                    names = [base]  # names from the module ``base``, not submodules
                else:  # a mix of submodules and names: an edge to each submodule and to base
                    names = [n if _target(n, modules) == n else base for n in names]
            else:
                continue
            for name in names:
                if name.split(".")[0] in HARNESS:
                    harness.append((module, node.lineno, name))
                target = _target(name, modules)
                if target is None:
                    continue
                parts = target.split(".")
                loaded = {".".join(parts[:k]) for k in range(1, len(parts) + 1)}
                edges[module] |= loaded - ancestors - {module}
    return edges, harness


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``[a, b, ..., a]``) per strongly connected component of more than one module
    (Tarjan's algorithm, iterative); empty when the graph is acyclic."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return [_cycle_in(component, edges) for component in components]


def _cycle_in(component: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the first module of a strongly connected ``component``."""
    inside = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for succ in sorted(edges[node] & inside):
                if succ == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start] * 2
                if succ not in previous:
                    previous[succ] = node
                    following.append(succ)
        frontier = following
    raise AssertionError(f"{component} is not strongly connected")


def harness_unit(module: str, modules: dict[str, Path]) -> str:
    """The unit of the harness ``module`` belongs to: its package one level below the top
    (``experiments.generalist`` for ``experiments.generalist.loop``), else the module itself (a
    top-level module such as ``experiments.background``)."""
    parts = module.split(".")
    if len(parts) > 1:
        package = ".".join(parts[:2])
        if package in modules and modules[package].name == "__init__.py":
            return package
    return module


def harness_package_graph(folder: Path = EXPERIMENTS_DIR) -> dict[str, set[str]]:
    """The import graph of the harness package in ``folder`` between its units
    (:func:`harness_unit`): an edge where a module of one imports a module of another, anywhere in
    the module (inside functions too)."""
    modules = module_files(folder)
    edges, _ = import_graph(modules)
    units: dict[str, set[str]] = {harness_unit(m, modules): set() for m in modules}
    for module, targets in edges.items():
        source = harness_unit(module, modules)
        units[source] |= {harness_unit(t, modules) for t in targets} - {source}
    return units


def test_cycle_finder_on_known_graphs():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    two = find_cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c", "a"}})
    assert sorted(two) == [["a", "b", "a"], ["c", "d", "c"]]


def test_edges_resolve_relative_absolute_and_function_imports(tmp_path):
    pkg = tmp_path / "clrp_rl4co"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from .sub import helper\n",
        "sub/__init__.py": "from .helper import f\n",
        "sub/helper.py": "def f():\n    from ..other import g\n    return g\n",
        "other.py": (
            "import clrp_rl4co.sub.helper\nfrom clrp_rl4co import sub\nimport experiments.x\n"
        ),
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    modules = module_files(pkg)
    edges, harness = import_graph(modules)
    assert edges == {
        "clrp_rl4co": {"clrp_rl4co.sub", "clrp_rl4co.sub.helper"},
        "clrp_rl4co.sub": {"clrp_rl4co.sub.helper"},
        "clrp_rl4co.sub.helper": {"clrp_rl4co.other"},
        "clrp_rl4co.other": {"clrp_rl4co.sub.helper", "clrp_rl4co.sub"},
    }
    assert harness == [("clrp_rl4co.other", 3, "experiments.x")]
    # one strongly connected component (other, sub, sub.helper); its shortest cycle from "other"
    assert find_cycles(edges) == [["clrp_rl4co.other", "clrp_rl4co.sub.helper", "clrp_rl4co.other"]]


@pytest.fixture(scope="module")
def graph():
    modules = module_files()
    assert f"{PACKAGE}.envs.clrp.env" in modules and f"{PACKAGE}.policies.registry" in modules
    return import_graph(modules)


def test_package_has_no_import_cycle(graph):
    edges, _ = graph
    cycles = find_cycles(edges)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_package_never_imports_the_harness(graph):
    _, harness = graph
    assert not harness, "package modules import the harness:\n" + "\n".join(
        f"{module} line {line}: {name}" for module, line, name in harness
    )


def test_env_folder_stands_alone(graph):
    """The env folder is RL4CO's ``rl4co/envs/routing/clrp/``: it imports only itself."""
    edges, _ = graph
    folder = f"{PACKAGE}.envs.clrp"
    outside = {
        (module, target)
        for module, targets in edges.items()
        if module == folder or module.startswith(folder + ".")
        for target in targets
        if not (target == folder or target.startswith(folder + "."))
    }
    assert not outside, sorted(outside)


def test_harness_graph_joins_each_package_and_sees_imports_inside_functions(tmp_path):
    root = tmp_path / "experiments"
    for package in ("a", "b", "shared"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
    files = {
        "__init__.py": "",
        "tool.py": "",
        "a/run.py": "from ..shared.state import S\n",
        "b/run.py": "def f():\n    from ..a.run import g\n    return g\n",
        "shared/state.py": "from .. import tool\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    assert harness_package_graph(root) == {
        "experiments": set(),
        "experiments.a": {"experiments.shared"},
        "experiments.b": {"experiments.a"},
        "experiments.shared": {"experiments.tool"},
        "experiments.tool": set(),
    }
    # a function of a's importing b closes a circle, which the check reports
    (root / "a" / "late.py").write_text("def h():\n    import experiments.b.run\n")
    cycles = find_cycles(harness_package_graph(root))
    assert cycles == [["experiments.a", "experiments.b", "experiments.a"]]


def test_harness_packages_import_one_another_one_way():
    """What two harness packages share lives in a third that imports neither (the training runs'
    state, trend and imitation pass: ``experiments/training``), so no package of
    ``experiments/`` reaches itself through others, imports inside functions included."""
    units = harness_package_graph()
    assert {"experiments.generalist", "experiments.imitation"} <= set(units)
    cycles = find_cycles(units)
    assert not cycles, "harness packages import in a circle:\n" + "\n".join(
        " -> ".join(c) for c in cycles
    )


def test_harness_has_no_module_import_cycle():
    edges, _ = import_graph(module_files(EXPERIMENTS_DIR))
    cycles = find_cycles(edges)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)
