"""The RL4CO contribution ``upstream/rl4co-clrp.patch`` stays in step with the package.

Regenerating the patch from the current source must give the committed file byte for byte
(run ``make upstream-patch`` after changing the env folder or the embeddings), and the patch
must apply to the RL4CO snapshot. RL4CO's own test suite on the patched tree runs in
``make upstream-check`` (minutes), not here.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAKE_PATCH = ROOT / "upstream" / "make_patch.py"


def _load_make_patch():
    spec = importlib.util.spec_from_file_location("make_patch", MAKE_PATCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


mp = _load_make_patch()


@pytest.fixture(scope="module")
def snapshot() -> Path:
    """The RL4CO snapshot ($CLRP_RL4CO_SNAPSHOT or ../shared/rl4co); skip when absent."""
    path = Path(os.environ.get("CLRP_RL4CO_SNAPSHOT", mp.DEFAULT_SNAPSHOT))
    if not (path / "rl4co" / "envs").is_dir():
        pytest.skip(f"RL4CO snapshot not found at {path} (set CLRP_RL4CO_SNAPSHOT)")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    return path


@pytest.fixture(scope="module")
def committed_patch() -> str:
    return mp.PATCH_PATH.read_text()


def test_patch_is_regenerated_from_source(snapshot, committed_patch):
    """The committed patch is exactly what the current source generates."""
    assert mp.build_patch(snapshot) == committed_patch, (
        "upstream/rl4co-clrp.patch is out of date: run `make upstream-patch`"
    )


def test_patch_applies_and_copies_env_files(snapshot, committed_patch, tmp_path):
    """`git apply --check` accepts the patch on a copy; applied, the env files are the
    package's, byte for byte."""
    tree = tmp_path / "rl4co"
    mp.copy_tree(snapshot, tree)
    mp.git("apply", "--check", "-", cwd=tree, stdin=committed_patch)
    mp.git("apply", "-", cwd=tree, stdin=committed_patch)
    upstream = tree / mp.UPSTREAM_ENV_DIR
    files = mp.source_files(mp.PACKAGE_ENV_DIR)
    assert mp.source_files(upstream) == files
    for rel in files:
        assert (upstream / rel).read_bytes() == (mp.PACKAGE_ENV_DIR / rel).read_bytes(), rel


def test_patch_carries_no_mixed_preset(committed_patch):
    """Preset "mixed" is the package's (clrp_rl4co/mixed_preset.py): the patch has only the
    paper's presets and the hook that registers others."""
    for text in ("MixedRanges", "MixedSampler", "mixed_ranges", "register_preset(\"mixed\"",
                 "preset=\"mixed\"", "clrp_rl4co.mixed_preset"):  # fmt: skip
        assert text not in committed_patch, text
    assert "def register_preset(" in committed_patch
    assert "+++ b/rl4co/envs/routing/clrp/generator.py" in committed_patch
    assert "+++ b/rl4co/envs/routing/clrp/dataset.py" in committed_patch


def test_package_imports_in_env_files_fail_loudly(tmp_path, monkeypatch):
    (tmp_path / "env.py").write_text(
        "import torch\nimport pyvrp\n\n\ndef f():\n    from clrp_rl4co.solvers import solve_td\n"
    )
    problems = mp.import_problems(tmp_path)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "imports pyvrp at module level",
        "imports clrp_rl4co.solvers (not part of RL4CO)",
    ]
    assert problems[1].endswith("env.py:6: imports clrp_rl4co.solvers (not part of RL4CO)")
    monkeypatch.setattr(mp, "PACKAGE_ENV_DIR", tmp_path)
    with pytest.raises(mp.PatchError, match=r"env\.py:6: imports clrp_rl4co"):
        mp.copy_env_files(tmp_path / "tree")


def test_missing_anchor_fails_loudly():
    edit = mp.TextEdit("rl4co/x.py", "anchor\n", "replacement\n")
    assert mp.apply_text_edit("a\nanchor\n", edit) == "a\nreplacement\n"
    with pytest.raises(mp.PatchError, match="anchor found 0 times, expected 1"):
        mp.apply_text_edit("a\nb\n", edit)
    with pytest.raises(mp.PatchError, match="anchor found 2 times, expected 1"):
        mp.apply_text_edit("anchor\nanchor\n", edit)


def test_embedding_insertion():
    module = (
        "import torch\nimport torch.nn as nn\n\nfrom tensordict import TensorDict\n\n\n"
        "def env_init_embedding(env_name, config):\n"
        '    embedding_registry = {\n        "tsp": nn.Identity,\n    }\n'
        "    return embedding_registry[env_name](**config)\n"
    )
    text = mp.append_class(module, "CLRPInitEmbedding", "init.py")
    text = mp.register(text, "env_init_embedding", "CLRPInitEmbedding", "init.py")
    assert '        "tsp": nn.Identity,\n        "clrp": CLRPInitEmbedding,\n    }\n' in text
    assert text.endswith(mp.class_source("CLRPInitEmbedding"))
    namespace: dict = {}
    exec(compile(text, "init.py", "exec"), namespace)
    assert namespace["env_init_embedding"]("clrp", {"embed_dim": 8}).embed_dim == 8
    with pytest.raises(mp.PatchError, match="needs .*TensorDict"):
        mp.append_class("import torch\nimport torch.nn as nn\n", "CLRPInitEmbedding", "init.py")
    with pytest.raises(mp.PatchError, match="already registered"):
        mp.register(text, "env_init_embedding", "CLRPInitEmbedding", "init.py")
