"""Shipped policies: ``<name>.pt`` (a policy ``state_dict``, loadable with ``weights_only=True``)
and ``<name>.json`` (class, constructor config, provenance).

Load one with ``DRLHQPolicy.from_pretrained("<name>")`` or ``clrp_rl4co.policies.load_policy``
(or a path); write one with ``policy.save_pretrained(path)``.
``clrp_rl4co.policies.shipped_models()`` lists the shipped names.

The name rules live here, without torch, so that the command can check ``--model`` before it
imports anything heavy: :func:`shipped_models`, :func:`shipped_name` (a bare preset),
:func:`pretrained_files` (a name or path to its pair of files) and :func:`model_files` (what
:func:`clrp_rl4co.policies.load_policy` reads for a name).
"""

from __future__ import annotations

from pathlib import Path

#: Folder of the models shipped with the package.
PRETRAINED_DIR = Path(__file__).resolve().parent.parent / "pretrained"


def shipped_models(name: str | None = None) -> list[str]:
    """Names of the shipped models (``<name>_<preset>[_<variant>]``, e.g. ``drlhq_clrp20``),
    sorted; only those of the policy ``name`` (``"drlhq"``, :data:`.registry.POLICIES`) if
    given."""
    stems = (p.stem for p in PRETRAINED_DIR.glob("*.pt") if p.with_suffix(".json").is_file())
    return sorted(s for s in stems if name is None or s.startswith(f"{name}_"))


def shipped_name(name_or_path: str | Path, policy: str | None) -> str | Path:
    """A bare preset (``"clrp20"``, no such file or folder) as the shipped model of ``policy``
    (``"drlhq"`` -> ``"drlhq_clrp20"``); any other name or path unchanged, as is everything when
    ``policy`` is None."""
    name = str(name_or_path)
    is_preset = name.startswith("clrp") and name[4:].isdigit()
    if policy and is_preset and not Path(name).exists():
        return f"{policy}_{name}"
    return name_or_path


def pretrained_files(name_or_path: str | Path) -> tuple[Path, Path]:
    """``(weights.pt, config.json)`` for a shipped name, a stem path, or either file's path.

    A bare name (no folder) is looked up among the shipped models first, then in the current
    folder; a path with a folder (``runs/x/drlhq_clrp50``) means that file only, never the
    shipped model of the same name.

    Raises:
        FileNotFoundError: naming the missing file when only one of the pair exists, else
            saying that neither does (and listing the shipped models).
    """
    path = Path(name_or_path)
    candidates = [path] if path.suffix in (".pt", ".json") or path.exists() else []
    if path.parent == Path("."):
        candidates.append(PRETRAINED_DIR / f"{path.name}.pt")
    candidates.append(path.with_suffix(".pt"))
    half: tuple[Path, Path] | None = None  # (present, missing) of the first incomplete pair
    for candidate in candidates:
        if candidate.is_dir():
            candidate = candidate / "policy.pt"
        weights = candidate.with_suffix(".pt")
        config = candidate.with_suffix(".json")
        if weights.is_file() and config.is_file():
            return weights, config
        if half is None and weights.is_file():
            half = (weights, config)
        elif half is None and config.is_file():
            half = (config, weights)
    if half is not None:
        present, missing = half
        raise FileNotFoundError(
            f"pretrained policy {str(name_or_path)!r}: {missing} is missing (found {present}; "
            "a saved policy is <name>.pt with its state_dict and <name>.json with its config)"
        )
    raise FileNotFoundError(
        f"pretrained policy {str(name_or_path)!r}: no such file or shipped model (need "
        f"<name>.pt and <name>.json); shipped: {shipped_models()}"
    )


def model_files(name_or_path: str | Path, policy: str = "drlhq") -> tuple[Path, ...]:
    """The files :func:`clrp_rl4co.policies.load_policy` reads for ``name_or_path`` with
    ``model=policy``: a Lightning checkpoint (``.ckpt``), or a saved / shipped policy's
    ``(weights.pt, config.json)``; a bare preset (``"clrp20"``) names ``policy``'s shipped model.

    Raises:
        FileNotFoundError: nothing of that name (the message lists the shipped models).
    """
    path = Path(shipped_name(name_or_path, policy))
    if path.suffix == ".ckpt":
        if not path.is_file():
            raise FileNotFoundError(
                f"checkpoint {str(name_or_path)!r}: no such file; shipped: {shipped_models()}"
            )
        return (path,)
    return pretrained_files(path)
