"""Generate ``upstream/rl4co-clrp.patch``: the CLRP environment as a contribution to RL4CO.

The patch is built from this package's own source, so the two never drift:

1. copy the RL4CO snapshot (``$CLRP_RL4CO_SNAPSHOT``, default ``../shared/rl4co``) to a
   temporary folder, ``git init`` and commit it there;
2. copy the env folder ``clrp_rl4co/envs/clrp/`` byte for byte to ``rl4co/envs/routing/clrp/``
   (it must not import ``clrp_rl4co``: the generator fails naming the file and line);
3. copy the CLRP embedding classes of ``clrp_rl4co/policies/env_embeddings.py`` into RL4CO's
   embedding modules and register them (and ``StaticEmbedding`` as the dynamic embedding);
4. copy the hand-written new files under ``upstream/files/`` (Hydra configs) to the same
   paths in the tree;
5. apply the textual edits of :data:`TEXT_EDITS` (registration, start nodes, tests, docs);
   each fails loudly when its anchor text is not found exactly as often as expected;
6. write ``git diff`` of the result to the patch, and check that ``git apply --check``
   accepts it on a fresh copy of the snapshot.

Usage::

    python upstream/make_patch.py [--snapshot DIR] [--output FILE] [--check]
                                  [--allow-package-imports]

``--check`` compares the regenerated patch with the existing file instead of writing it.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import difflib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
PACKAGE = "clrp_rl4co"
PACKAGE_ENV_DIR = REPO_ROOT / PACKAGE / "envs" / "clrp"
EMBEDDINGS_SOURCE = REPO_ROOT / PACKAGE / "policies" / "env_embeddings.py"
NEW_FILES_DIR = HERE / "files"
PATCH_PATH = HERE / "rl4co-clrp.patch"
DEFAULT_SNAPSHOT = REPO_ROOT.parent / "shared" / "rl4co"

#: Where the env folder goes in RL4CO's tree.
UPSTREAM_ENV_DIR = "rl4co/envs/routing/clrp"

#: Top-level modules the env files may import at module level (besides the standard library).
ALLOWED_IMPORTS = frozenset({"torch", "tensordict", "torchrl", "rl4co", "numpy", "matplotlib"})

#: Files of a source folder that are never copied.
SKIPPED_PARTS = frozenset({"__pycache__", ".ipynb_checkpoints"})
SKIPPED_SUFFIXES = (".pyc", ".pyo")

#: Environment of every git call: no user or system configuration, fixed identity and dates.
GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "clrp-rl4co",
    "GIT_AUTHOR_EMAIL": "clrp-rl4co@localhost",
    "GIT_COMMITTER_NAME": "clrp-rl4co",
    "GIT_COMMITTER_EMAIL": "clrp-rl4co@localhost",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


class PatchError(RuntimeError):
    """The patch cannot be generated (an anchor is missing, a forbidden import, ...)."""


# --------------------------------------------------------------------------- textual edits
@dataclass(frozen=True)
class TextEdit:
    """Replace ``anchor`` by ``replacement`` in the RL4CO file ``path``.

    The anchor must occur exactly ``count`` times (all occurrences are replaced).
    """

    path: str
    anchor: str
    replacement: str
    count: int = 1


def _insert_after(path: str, anchor: str, text: str, count: int = 1) -> TextEdit:
    """A :class:`TextEdit` that inserts ``text`` right after ``anchor``."""
    return TextEdit(path, anchor, anchor + text, count)


def _insert_before(path: str, anchor: str, text: str, count: int = 1) -> TextEdit:
    """A :class:`TextEdit` that inserts ``text`` right before ``anchor``."""
    return TextEdit(path, anchor, text + anchor, count)


def _env_parametrized(path: str, test: str, args: str = "") -> TextEdit:
    """Run the TSP test ``test`` of ``path`` on TSP and CLRP: parametrize it over
    ``env_name`` and build its env with ``rl4co.envs.get_env``."""
    signature = f"def {test}({args}):\n"
    new_args = f"{args}, env_name" if args else "env_name"
    return TextEdit(
        path,
        signature + "    env = TSPEnv(generator_params=dict(num_loc=20))\n",
        '@pytest.mark.parametrize("env_name", ["tsp", "clrp"])\n'
        f"def {test}({new_args}):\n"
        "    env = get_env(env_name, generator_params=dict(num_loc=20))\n",
    )


_OPS_NUM_STARTS = """\
    elif env_name == "clrp":
        num_starts = td["demand"].shape[-1]  # one start per customer (depots come first)
"""

_OPS_START_NODES = """\
    elif env.name == "clrp":
        # Start from each customer; depots come first, so customer i is node num_depots + i
        # (the env then lets the policy pick a depot that can hold it)
        num_depots = td["depot_capacity"].shape[-1]
        num_customers = td["demand"].shape[-1]
        selected = (
            torch.arange(num_starts, device=td.device).repeat_interleave(td.shape[0])
            % num_customers
            + num_depots
        )
"""

_OPS_PAD_ACTIONS = """\
def pad_actions(actions: Tensor, length: int) -> Tensor:
    \"\"\"Pad action sequences [..., T] to ``length`` with the padding action 0 (the action of a
    finished state in RL4CO's routing envs). Sequences of ``length`` or more actions are
    returned unchanged.
    \"\"\"
    return torch.nn.functional.pad(actions, (0, max(0, length - actions.shape[-1])))


"""

_DOCS_SECTION = """\
## Capacitated Location-Routing Problem (CLRP)

:::envs.routing.clrp.env.CLRPEnv

:::envs.routing.clrp.generator.CLRPGenerator

"""

TEXT_EDITS: tuple[TextEdit, ...] = (
    # registration
    _insert_after(
        "rl4co/envs/__init__.py",
        "from rl4co.envs.routing import (\n    ATSPEnv,\n",
        "    CLRPEnv,\n",
    ),
    _insert_after("rl4co/envs/__init__.py", '    "atsp": ATSPEnv,\n', '    "clrp": CLRPEnv,\n'),
    _insert_after(
        "rl4co/envs/routing/__init__.py",
        "from rl4co.envs.routing.atsp.generator import ATSPGenerator\n",
        "from rl4co.envs.routing.clrp.env import CLRPEnv\n"
        "from rl4co.envs.routing.clrp.generator import CLRPGenerator\n",
    ),
    # multistart: the number of starts and the start nodes (the same as CLRPEnv's)
    _insert_after(
        "rl4co/utils/ops.py",
        "        num_starts = num_starts - 1  # depot cannot be a start node\n",
        _OPS_NUM_STARTS,
    ),
    _insert_before(
        "rl4co/utils/ops.py", '    elif env.name in ["jssp", "fjsp"]:\n', _OPS_START_NODES
    ),
    # EAS: env.select_start_nodes already wraps around; "% num_starts" sent the last start
    # node of envs whose start nodes are not 0..num_starts-1 to node 0 (e.g. CVRP's depot)
    TextEdit(
        "rl4co/models/zoo/eas/decoder.py",
        "        action = env.select_start_nodes(td, num_starts + 1) % num_starts\n",
        "        action = env.select_start_nodes(td, num_starts + 1)\n",
    ),
    # Active search and EAS: solutions may be longer than twice the number of nodes (CLRP:
    # up to three actions per customer). The solution buffers grow when needed (padded with
    # 0, RL4CO's padding action), are overwritten as a whole (no stale actions from a longer
    # earlier solution) and an incumbent past the end of the buffer takes the padding action.
    _insert_before("rl4co/utils/ops.py", "def sparsify_graph(", _OPS_PAD_ACTIONS),
    TextEdit(
        "rl4co/models/zoo/eas/decoder.py",
        "            action = unbatchify(action, num_starts + 1)\n"
        "            action[:, -1] = best_solutions[:, decode_step]\n"
        "            action = action.permute(1, 0).reshape(init_shp)\n",
        "            action = unbatchify(action, num_starts + 1)\n"
        "            # an incumbent past the end of the buffer is finished: padding action\n"
        "            if decode_step < best_solutions.shape[1]:\n"
        "                action[:, -1] = best_solutions[:, decode_step]\n"
        "            else:\n"
        "                action[:, -1] = 0\n"
        "            action = action.permute(1, 0).reshape(init_shp)\n",
    ),
    TextEdit(
        "rl4co/models/zoo/eas/search.py",
        "from rl4co.utils.ops import batchify, gather_by_index, unbatchify\n",
        "from rl4co.utils.ops import batchify, gather_by_index, pad_actions, unbatchify\n",
    ),
    TextEdit(
        "rl4co/models/zoo/eas/search.py",
        "            best_solutions[:, : best_solutions_iter.shape[1]] = best_solutions_iter\n",
        "            best_solutions = pad_actions(best_solutions_iter, best_solutions.shape[1])\n",
    ),
    TextEdit(
        "rl4co/models/zoo/eas/search.py",
        "        self.instance_solutions = pad_sequence(\n"
        "            self.instance_solutions, batch_first=True, padding_value=0\n"
        "        ).squeeze()\n",
        "        length = max(solutions.shape[-1] for solutions in self.instance_solutions)\n"
        "        self.instance_solutions = pad_sequence(\n"
        "            [pad_actions(solutions, length) for solutions in self.instance_solutions],\n"
        "            batch_first=True,\n"
        "            padding_value=0,\n"
        "        ).squeeze()\n",
    ),
    TextEdit(
        "rl4co/models/zoo/active_search/search.py",
        "from rl4co.utils.ops import batchify, unbatchify\n",
        "from rl4co.utils.ops import batchify, pad_actions, unbatchify\n",
    ),
    TextEdit(
        "rl4co/models/zoo/active_search/search.py",
        "                best_solutions[0, : best_solution_iter.shape[0]] = best_solution_iter\n",
        "                best_solutions = pad_actions("
        "best_solution_iter[None], best_solutions.shape[1])\n",
    ),
    TextEdit(
        "rl4co/models/zoo/active_search/search.py",
        "        self.instance_solutions[batch_idx, :] = best_solutions.squeeze(0)"
        "  # only one instance\n",
        "        solution = best_solutions.squeeze(0)  # only one instance\n"
        "        length = max(solution.shape[-1], self.instance_solutions.shape[-1])\n"
        "        self.instance_solutions = pad_actions(self.instance_solutions, length)\n"
        "        self.instance_solutions[batch_idx, :] = pad_actions(solution, length)\n",
    ),
    # test utilities
    _insert_after("rl4co/utils/test_utils.py", "from rl4co.envs import (\n", "    CLRPEnv,\n"),
    _insert_after(
        "rl4co/utils/test_utils.py",
        '        case "cvrp":\n            env = CVRPEnv(generator_params=dict(num_loc=size))\n',
        '        case "clrp":\n            env = CLRPEnv(generator_params=dict(num_loc=size))\n',
    ),
    # tests: environments
    _insert_after(
        "tests/test_envs.py", "from rl4co.envs import (\n    ATSPEnv,\n", "    CLRPEnv,\n"
    ),
    _insert_before("tests/test_envs.py", "    ],\n)\ndef test_routing(", "        CLRPEnv,\n"),
    # tests: policies (greedy, multistart, beam search)
    _insert_before("tests/test_policy.py", "    ],\n)\ndef test_am_policy(", '        "clrp",\n'),
    TextEdit(
        "tests/test_policy.py",
        '"sdvrp", "op", "pdp"]',
        '"sdvrp", "op", "pdp", "clrp"]',
        count=2,
    ),
    # tests: training of the constructive models on TSP and CLRP
    _insert_after("tests/test_training.py", "    TSPkoptEnv,\n", "    get_env,\n"),
    _env_parametrized("tests/test_training.py", "test_reinforce", "baseline"),
    _env_parametrized("tests/test_training.py", "test_a2c"),
    _env_parametrized("tests/test_training.py", "test_ppo"),
    _env_parametrized("tests/test_training.py", "test_symnco"),
    _env_parametrized("tests/test_training.py", "test_mdam"),
    _env_parametrized("tests/test_training.py", "test_pomo_reptile"),
    _env_parametrized("tests/test_training.py", "test_search_methods", "SearchMethod"),
    TextEdit(  # PolyNet samples val_num_solutions x 8 augmentations per instance to validate
        "tests/test_training.py",
        "def test_polynet():\n"
        "    env = TSPEnv(generator_params=dict(num_loc=20))\n"
        "    model = PolyNet(\n"
        "        env,\n"
        "        k=10,\n",
        "# CLRP validates and tests with 40 sampled solutions per instance instead of PolyNet's\n"
        "# default 800 (the same code paths; 800 x 8 CLRP rollouts per instance take minutes on a\n"
        "# CPU); TSP keeps the default\n"
        '@pytest.mark.parametrize("env_name, val_num_solutions", [("tsp", 800), ("clrp", 40)])\n'
        "def test_polynet(env_name, val_num_solutions):\n"
        "    env = get_env(env_name, generator_params=dict(num_loc=20))\n"
        "    model = PolyNet(\n"
        "        env,\n"
        "        k=10,\n"
        "        val_num_solutions=val_num_solutions,\n",
    ),
    # tests: Hydra entry point (train) and evaluation methods on TSP and CLRP
    TextEdit(
        "tests/test_tasks.py",
        "from rl4co.envs import TSPEnv\n",
        "from rl4co.envs import get_env\n",
    ),
    TextEdit(
        "tests/test_tasks.py",
        '@pytest.fixture(scope="package")\n'
        "def cfg_train_global() -> DictConfig:\n"
        '    with initialize(config_path="../configs"):\n'
        '        cfg = compose(config_name="main.yaml", return_hydra_config=True, overrides=[])\n',
        '@pytest.fixture(scope="package", params=["tsp", "clrp"])\n'
        "def cfg_train_global(request) -> DictConfig:\n"
        '    with initialize(config_path="../configs"):\n'
        "        cfg = compose(\n"
        '            config_name="main.yaml",\n'
        "            return_hydra_config=True,\n"
        '            overrides=[f"env={request.param}"],\n'
        "        )\n",
    ),
    TextEdit(
        "tests/test_tasks.py",
        "def test_eval(method):\n    env = TSPEnv(generator_params=dict(num_loc=20))\n",
        '@pytest.mark.parametrize("env_name", ["tsp", "clrp"])\n'
        "def test_eval(method, env_name):\n"
        "    env = get_env(env_name, generator_params=dict(num_loc=20))\n",
    ),
    # docs
    _insert_before(
        "docs/content/api/envs/routing.md",
        "## Capacitated Vehicle Routing Problem (CVRP)\n",
        _DOCS_SECTION,
    ),
)


# --------------------------------------------------------------------------- embeddings
@dataclass(frozen=True)
class EmbeddingEntry:
    """Register ``class_name`` under ``"clrp"`` in the registry of ``function`` in ``path``;
    ``copy_class``: append the class (taken from :data:`EMBEDDINGS_SOURCE`) to that file."""

    path: str
    function: str
    class_name: str
    copy_class: bool


EMBEDDINGS: tuple[EmbeddingEntry, ...] = (
    EmbeddingEntry(
        "rl4co/models/nn/env_embeddings/init.py", "env_init_embedding", "CLRPInitEmbedding", True
    ),
    EmbeddingEntry(
        "rl4co/models/nn/env_embeddings/context.py", "env_context_embedding", "CLRPContext", True
    ),
    EmbeddingEntry(
        "rl4co/models/nn/env_embeddings/dynamic.py",
        "env_dynamic_embedding",
        "StaticEmbedding",
        False,
    ),
)

#: Name of the registry dictionary in RL4CO's ``env_*_embedding`` functions.
REGISTRY_NAME = "embedding_registry"
#: Key of the CLRP in every registry.
ENV_NAME = "clrp"


# --------------------------------------------------------------------------- helpers
def git(*args: str, cwd: Path, stdin: str | None = None) -> str:
    """Run ``git args`` in ``cwd`` (no user configuration) and return its stdout."""
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    if result.returncode != 0:
        raise PatchError(f"git {' '.join(args)} failed in {cwd}:\n{result.stderr}")
    return result.stdout


def source_files(folder: Path) -> list[Path]:
    """The files of ``folder`` (recursively, relative paths, sorted), without caches."""
    files = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not SKIPPED_PARTS & set(rel.parts):
            if not path.name.endswith(SKIPPED_SUFFIXES):
                files.append(rel)
    return files


def display(path: Path) -> str:
    """``path`` relative to the repository when it is inside it (for messages)."""
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def module_level_imports(tree: ast.Module) -> Iterator[ast.stmt]:
    """Import statements executed on import of the module (not inside functions)."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def imported_modules(node: ast.stmt) -> list[str]:
    """The absolute module names an import statement imports (relative ones: none)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    return []


def import_problems(folder: Path) -> list[str]:
    """``file:line: ...`` for each import of ``folder``'s Python files that RL4CO's tree
    cannot satisfy: any import of this package, and module-level imports of anything but
    the standard library and :data:`ALLOWED_IMPORTS`."""
    problems = []
    for rel in source_files(folder):
        if rel.suffix != ".py":
            continue
        path = folder / rel
        tree = ast.parse(path.read_text(), filename=str(path))
        top_level = set(map(id, module_level_imports(tree)))
        for node in ast.walk(tree):
            for module in imported_modules(node):
                root = module.split(".")[0]
                where = f"{display(path)}:{node.lineno}"
                if root == PACKAGE:
                    problems.append(f"{where}: imports {module} (not part of RL4CO)")
                elif id(node) in top_level and not (
                    root in ALLOWED_IMPORTS or root in sys.stdlib_module_names
                ):
                    problems.append(f"{where}: imports {module} at module level")
    return problems


def snapshot_commit(snapshot: Path) -> str | None:
    """The RL4CO commit named in the snapshot's ``SNAPSHOT.md`` (None if there is none)."""
    notes = snapshot / "SNAPSHOT.md"
    if not notes.is_file():
        return None
    match = re.search(r"\b[0-9a-f]{40}\b", notes.read_text())
    return match.group(0) if match else None


def copy_tree(source: Path, dest: Path) -> None:
    """Copy ``source`` to ``dest`` (new) and make every file of the copy writable."""
    shutil.copytree(source, dest, symlinks=True)
    for path in dest.rglob("*"):
        if path.is_file() and not path.is_symlink():
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    dest.chmod(dest.stat().st_mode | stat.S_IWUSR)
    for path in dest.rglob("*"):
        if path.is_dir():
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def init_repo(tree: Path) -> None:
    """Make ``tree`` a git repository with all its files in one commit."""
    git("init", "-q", cwd=tree)
    git("add", "-A", "-f", ".", cwd=tree)
    git("commit", "-q", "--no-verify", "-m", "RL4CO snapshot", cwd=tree)


def edit_file(tree: Path, rel: str, edit) -> None:
    """Replace the text of ``tree/rel`` by ``edit(text)``."""
    path = tree / rel
    if not path.is_file():
        raise PatchError(f"{rel}: no such file in the RL4CO snapshot")
    path.write_text(edit(path.read_text()))


# --------------------------------------------------------------------------- steps
def copy_env_files(tree: Path, allow_package_imports: bool = False) -> None:
    """Copy the package's env folder byte for byte to :data:`UPSTREAM_ENV_DIR`.

    Fails (``PatchError`` naming file and line) when a file imports this package or needs a
    module RL4CO does not have; ``allow_package_imports`` turns that into a warning.
    """
    problems = import_problems(PACKAGE_ENV_DIR)
    if problems:
        message = "the env files must only import RL4CO's dependencies:\n  " + "\n  ".join(problems)
        if not allow_package_imports:
            raise PatchError(message)
        print(f"warning (--allow-package-imports): {message}", file=sys.stderr)
    dest = tree / UPSTREAM_ENV_DIR
    if dest.exists():
        raise PatchError(f"{UPSTREAM_ENV_DIR} already exists in the RL4CO snapshot")
    for rel in source_files(PACKAGE_ENV_DIR):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PACKAGE_ENV_DIR / rel, dest / rel)


def copy_new_files(tree: Path) -> None:
    """Copy the hand-written new files of ``upstream/files/`` to the same paths in ``tree``."""
    for rel in source_files(NEW_FILES_DIR):
        dest = tree / rel
        if dest.exists():
            raise PatchError(f"{rel} already exists in the RL4CO snapshot")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(NEW_FILES_DIR / rel, dest)


def apply_text_edit(text: str, edit: TextEdit) -> str:
    """``text`` with ``edit`` applied; fails when the anchor count differs."""
    found = text.count(edit.anchor)
    if found != edit.count:
        raise PatchError(
            f"{edit.path}: anchor found {found} times, expected {edit.count}:\n{edit.anchor}"
        )
    return text.replace(edit.anchor, edit.replacement)


def apply_text_edits(tree: Path, edits: tuple[TextEdit, ...] = TEXT_EDITS) -> None:
    """Apply every :class:`TextEdit` to the tree, in order."""
    for edit in edits:
        edit_file(tree, edit.path, lambda text, edit=edit: apply_text_edit(text, edit))


def find_class(module: ast.Module, name: str) -> ast.ClassDef:
    """The top-level class ``name`` of ``module``."""
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise PatchError(f"class {name} not found in {display(EMBEDDINGS_SOURCE)}")


def class_source(name: str) -> str:
    """The source of class ``name`` in :data:`EMBEDDINGS_SOURCE` (with its decorators)."""
    text = EMBEDDINGS_SOURCE.read_text()
    node = find_class(ast.parse(text), name)
    lines = text.splitlines(keepends=True)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return "".join(lines[first - 1 : node.end_lineno]).rstrip() + "\n"


def free_names(node: ast.ClassDef) -> set[str]:
    """Names the class reads but neither binds itself nor gets from builtins: they must be
    global names of the module the class is copied into."""
    loaded, bound = set(), {node.name}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (loaded if isinstance(sub.ctx, ast.Load) else bound).add(sub.id)
        elif isinstance(sub, ast.arg):
            bound.add(sub.arg)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(sub.name)
        elif isinstance(sub, ast.alias):
            bound.add((sub.asname or sub.name).split(".")[0])
    return loaded - bound - set(dir(builtins))


def module_names(module: ast.Module) -> set[str]:
    """Names a module binds at top level (imports, functions, classes, assignments)."""
    names = set()
    for node in module.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def append_class(text: str, name: str, rel: str) -> str:
    """``text`` (an RL4CO module) with class ``name`` of the package appended at the end.

    Fails when the module already defines ``name`` or lacks a name the class needs.
    """
    source = class_source(name)
    target = ast.parse(text)
    available = module_names(target)
    if name in available:
        raise PatchError(f"{rel} already defines {name}")
    missing = free_names(ast.parse(source).body[0]) - available
    if missing:
        raise PatchError(
            f"{name} needs {sorted(missing)}, which {rel} does not import; keep "
            f"{display(EMBEDDINGS_SOURCE)} to torch, nn and TensorDict"
        )
    return text.rstrip("\n") + "\n\n\n" + source


def registry_dict(module: ast.Module, function: str, rel: str) -> ast.Dict:
    """The ``embedding_registry = {...}`` literal of ``function`` in ``module``."""
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for sub in ast.walk(node):
                if (
                    isinstance(sub, ast.Assign)
                    and [getattr(t, "id", None) for t in sub.targets] == [REGISTRY_NAME]
                    and isinstance(sub.value, ast.Dict)
                ):
                    return sub.value
    raise PatchError(f"{rel}: no `{REGISTRY_NAME} = {{...}}` in {function}()")


def register(text: str, function: str, value: str, rel: str) -> str:
    """``text`` with ``"clrp": value,`` added as the last entry of ``function``'s registry."""
    module = ast.parse(text)
    registry = registry_dict(module, function, rel)
    keys = [k.value for k in registry.keys if isinstance(k, ast.Constant)]
    if ENV_NAME in keys:
        raise PatchError(f'{rel}: "{ENV_NAME}" is already registered in {function}()')
    if value not in module_names(module):
        raise PatchError(f"{rel}: {value} is not defined in the module")
    lines = text.splitlines(keepends=True)
    last_key, last_value = registry.keys[-1], registry.values[-1]
    after = lines[last_value.end_lineno - 1][last_value.end_col_offset :].strip()
    if not after.startswith(","):
        raise PatchError(f"{rel}: the last entry of {function}()'s registry has no comma")
    entry = " " * last_key.col_offset + f'"{ENV_NAME}": {value},\n'
    lines.insert(last_value.end_lineno, entry)
    return "".join(lines)


def insert_embeddings(tree: Path, entries: tuple[EmbeddingEntry, ...] = EMBEDDINGS) -> None:
    """Copy the CLRP embedding classes into RL4CO's embedding modules and register them."""
    for entry in entries:

        def edit(text: str, entry: EmbeddingEntry = entry) -> str:
            if entry.copy_class:
                text = append_class(text, entry.class_name, entry.path)
            return register(text, entry.function, entry.class_name, entry.path)

        edit_file(tree, entry.path, edit)


def staged_diff(tree: Path) -> str:
    """``git diff`` of the working tree against the snapshot commit (new files included)."""
    git("add", "-A", "-f", ".", cwd=tree)
    return git(
        "diff",
        "--cached",
        "--no-color",
        "--no-ext-diff",
        "--no-renames",
        "--full-index",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        cwd=tree,
    )


def header(snapshot: Path) -> str:
    """The patch's leading description (``git apply`` ignores text before the first diff)."""
    commit = snapshot_commit(snapshot)
    base = f"ai4co/rl4co {commit}" if commit else "the RL4CO snapshot"
    return (
        "Add the Capacitated Location-Routing Problem (CLRP) environment to RL4CO\n"
        "\n"
        "Generated from clrp_rl4co by `make upstream-patch` (upstream/make_patch.py); do not\n"
        "edit by hand. Apply with `git apply rl4co-clrp.patch` to\n"
        f"{base}.\n"
        "\n"
    )


def check_applies(snapshot: Path, patch: str) -> None:
    """Fail unless ``git apply --check`` accepts ``patch`` on a fresh copy of ``snapshot``."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "rl4co"
        copy_tree(snapshot, copy)
        git("apply", "--check", "-", cwd=copy, stdin=patch)


def build_patch(snapshot: Path, allow_package_imports: bool = False) -> str:
    """The text of the patch for ``snapshot``, generated from the package's current source."""
    if not (snapshot / "rl4co" / "envs").is_dir():
        raise PatchError(f"{snapshot} is not an RL4CO source tree")
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "rl4co"
        copy_tree(snapshot, tree)
        init_repo(tree)
        copy_env_files(tree, allow_package_imports)
        insert_embeddings(tree)
        copy_new_files(tree)
        apply_text_edits(tree)
        patch = header(snapshot) + staged_diff(tree)
    check_applies(snapshot, patch)
    return patch


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--snapshot",
        type=Path,
        default=Path(os.environ.get("CLRP_RL4CO_SNAPSHOT", DEFAULT_SNAPSHOT)),
        help="RL4CO source tree to patch (default: $CLRP_RL4CO_SNAPSHOT or ../shared/rl4co)",
    )
    parser.add_argument("--output", type=Path, default=PATCH_PATH, help="patch file to write")
    parser.add_argument(
        "--check",
        action="store_true",
        help="compare with the existing patch file instead of writing it (exit 1 if different)",
    )
    parser.add_argument(
        "--allow-package-imports",
        action="store_true",
        help="development only: warn instead of failing when env files import clrp_rl4co",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        patch = build_patch(args.snapshot.resolve(), args.allow_package_imports)
    except PatchError as error:
        print(f"make_patch: error: {error}", file=sys.stderr)
        return 1
    if args.check:
        current = args.output.read_text() if args.output.is_file() else ""
        if current != patch:
            diff = difflib.unified_diff(
                current.splitlines(keepends=True),
                patch.splitlines(keepends=True),
                str(args.output),
                "regenerated",
            )
            sys.stderr.writelines(diff)
            print(f"make_patch: {args.output} is out of date: run `make upstream-patch`")
            return 1
        print(f"make_patch: {args.output} is up to date")
        return 0
    args.output.write_text(patch)
    print(f"make_patch: wrote {args.output} ({patch.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
