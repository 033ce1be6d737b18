"""Shipping policies: a ``state_dict`` (``.pt``, loadable with ``weights_only=True``) plus a JSON
config holding the constructor arguments; the shipped models are those in :data:`PRETRAINED_DIR`.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import torch

from ..pretrained import pretrained_files, shipped_name
from . import unpickling


def policy_config(policy: torch.nn.Module) -> dict:
    """What a saved policy records to be rebuilt: ``{"class": class name, "config":
    constructor arguments}`` (shipped ``.json`` files and Lightning checkpoints alike)."""
    return {"class": type(policy).__name__, "config": dict(getattr(policy, "config", {}))}


def load_checkpoint(path: str | Path, map_location: str = "cpu", weights_only: bool = True):
    """``torch.load`` of a saved policy file, with an error that names the file and says what
    is wrong with it (empty, truncated or not a PyTorch file, or objects that
    ``weights_only=True`` refuses) instead of torch's bare zip or unpickling error. With
    ``weights_only=False`` (trusted files only) classes pickled before they moved are found at
    their home (:mod:`clrp_rl4co.policies.unpickling`).

    Raises:
        FileNotFoundError, PermissionError: as ``open`` would.
        ValueError: the file is not a readable PyTorch checkpoint.
    """
    path = Path(path)
    moved = {} if weights_only else {"pickle_module": unpickling}
    try:
        return torch.load(path, map_location=map_location, weights_only=weights_only, **moved)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except (RuntimeError, pickle.UnpicklingError, EOFError, OSError, ValueError) as exc:
        size = path.stat().st_size
        text = str(exc)
        if "WeightsUnpickler error:" in text:  # torch's long weights_only preamble: skip it
            text = text.split("WeightsUnpickler error:", 1)[1]
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        detail = lines[0] if lines else type(exc).__name__
        if size == 0:
            what = "the file is empty"
        elif "Unsupported global" in text:
            what = (
                "it holds objects other than tensors, which weights_only=True refuses (save "
                "policies with save_pretrained)"
            )
        else:
            what = f"the file ({size} bytes) is truncated or not a PyTorch checkpoint"
        raise ValueError(f"{path}: cannot load the checkpoint: {what} ({detail})") from exc


class PretrainedMixin:
    """``save_pretrained`` / ``from_pretrained`` for policies that keep ``self.config``.

    A registered policy class sets ``registry_name``, its name in :data:`.registry.POLICIES`
    (the prefix of its shipped models).
    """

    config: dict
    #: The class's name in the policy registry; None for a class that is not registered.
    registry_name: str | None = None

    def save_pretrained(self, path: str | Path, extra: dict | None = None) -> tuple[Path, Path]:
        """Write ``<path>.pt`` (state_dict) and ``<path>.json`` (class, config, ``extra``)."""
        path = Path(path)
        if path.suffix in (".pt", ".json"):
            path = path.with_suffix("")
        path.parent.mkdir(parents=True, exist_ok=True)
        weights, config = path.with_suffix(".pt"), path.with_suffix(".json")
        state = {k: v.detach().cpu().clone() for k, v in self.state_dict().items()}
        torch.save(state, weights)
        meta = {**policy_config(self), **(extra or {})}
        config.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        return weights, config

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, map_location: str = "cpu", **overrides):
        """Load a policy saved by :meth:`save_pretrained` (a shipped name or a path).

        A bare preset (``"clrp20"``) names this class's shipped model of that size,
        ``<registry_name>_<preset>`` (``DRLHQPolicy`` -> ``drlhq_clrp20``, ``POMOStarPolicy`` ->
        ``pomo_clrp20``); a class that does not set its own ``registry_name`` (a user's
        subclass) takes no bare preset. The weights are read with
        ``torch.load(weights_only=True)``; ``overrides`` replace config entries that do not
        change the parameters (e.g. decode types).
        """
        weights, config_path = pretrained_files(
            shipped_name(name_or_path, vars(cls).get("registry_name"))
        )
        meta = json.loads(config_path.read_text())
        if meta.get("class", cls.__name__) != cls.__name__:
            raise ValueError(
                f"{config_path}: holds a {meta['class']}, not a {cls.__name__}; load it with "
                f"{meta['class']}.from_pretrained"
            )
        policy = cls(**{**meta["config"], **overrides})
        state = load_checkpoint(weights, map_location=map_location, weights_only=True)
        try:
            policy.load_state_dict(state)
        except RuntimeError as exc:
            raise ValueError(
                f"{weights}: the weights do not fit the {cls.__name__} configured by "
                f"{config_path}: {exc}"
            ) from exc
        return policy
