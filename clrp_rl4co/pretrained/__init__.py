"""Shipped policies: ``<name>.pt`` (a policy ``state_dict``, loadable with ``weights_only=True``)
and ``<name>.json`` (class, constructor config, provenance).

Load one with ``DRLHQPolicy.from_pretrained("<name>")`` (or a path); write one with
``policy.save_pretrained(path)``. :func:`available` lists the shipped names.
"""

from pathlib import Path


def available() -> list[str]:
    """Names of the shipped policies."""
    here = Path(__file__).resolve().parent
    return sorted(p.stem for p in here.glob("*.pt") if p.with_suffix(".json").is_file())
