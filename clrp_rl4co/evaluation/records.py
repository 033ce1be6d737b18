"""Per-instance results of an evaluation and their resumable on-disk cache (JSON lines)."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass
class InstanceResult:
    """One method's result on one instance.

    Attributes:
        method: the method's key (:attr:`clrp_rl4co.evaluation.Method.key`, e.g.
            ``"policy|drlhq_clrp20|multistart_greedy+aug8"``).
        instance: the instance's row in the table's dataset (0-based), or its index in the Prins
            list.
        name: the instance's name (e.g. ``"clrp20-17"`` or ``"coord50-5-1"``).
        cost: objective of the validated solution (opening + F x routes + route lengths, in the
            instance's units); ``inf`` when the method found no valid solution.
        seconds: wall-clock seconds per instance (batch wall time / batch size for batched
            methods).
        valid: the solution passed :meth:`clrp_rl4co.data.CLRPSolution.check`.
        optimal: proven optimal (exact solver), else False.
        bound: proven lower bound (exact solver), else None.
        actions: the solution as env node indices (depots ``0..D-1``, customers ``D + j``).
        extra: free-form details (e.g. the exact solver's status).
    """

    method: str
    instance: int
    name: str
    cost: float
    seconds: float
    valid: bool
    optimal: bool = False
    bound: float | None = None
    actions: list[int] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """The record holds no valid solution (``valid`` False or a non-finite ``cost``)."""
        return not self.valid or not math.isfinite(self.cost)

    def to_json(self) -> str:
        data = asdict(self)
        data["cost"] = None if math.isinf(self.cost) else self.cost
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> InstanceResult:
        data = json.loads(line)
        data["cost"] = math.inf if data["cost"] is None else float(data["cost"])
        return cls(**data)


class ResultCache:
    """Append-only JSON-lines store of :class:`InstanceResult`, one file per method key.

    A run looks up what is already there and only computes the missing instances, so an
    interrupted evaluation resumes where it stopped. A last line without its newline that does
    not parse (a write cut by an interruption) is dropped with a warning, and cut off the file by
    the next :meth:`add`; any other line that does not parse is an error naming the file and
    the line.
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, method: str) -> Path:
        """The file of the method key ``method``: its readable part plus 8 hex digits of its
        SHA-1 (distinct keys never share a file, whatever characters they hold)."""
        import hashlib

        safe = "".join(c if c.isalnum() or c in "-_.+" else "_" for c in method)
        digest = hashlib.sha1(method.encode()).hexdigest()[:8]
        return self.root / f"{safe[:120]}.{digest}.jsonl"

    def load(self, method: str) -> dict[int, InstanceResult]:
        """Cached results of ``method`` by instance index.

        Raises:
            ValueError: a line that is not a cached result (other than a cut last line), or a
                result of another method, naming the file and the line.
        """
        path = self.path(method)
        out: dict[int, InstanceResult] = {}
        if not path.is_file():
            return out
        for number, result in read_results(path):
            if result.method != method:
                raise ValueError(
                    f"{path}, line {number}: a result of method {result.method!r} in the file "
                    f"of {method!r}; remove the line or the file"
                )
            out[result.instance] = result
        return out

    MODELS_FILE = "models.json"

    def guard_models(self, fingerprints: dict[str, str]) -> list[str]:
        """Keep cached rows only for the model weights that produced them.

        ``fingerprints`` maps each model-dependent method key to a fingerprint of its weights
        (see :func:`policy_fingerprint`). A cached method recorded with another fingerprint, or
        cached before fingerprints were recorded, is moved to ``stale/`` (so it is recomputed,
        not silently reused after a model was retrained under the same name). Returns the keys
        moved aside.
        """
        manifest_path = self.root / self.MODELS_FILE
        manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
        moved = []
        for key, fingerprint in fingerprints.items():
            path = self.path(key)
            recorded = manifest.get(key)
            if path.is_file() and recorded != fingerprint:
                stale = self.root / "stale"
                stale.mkdir(exist_ok=True)
                path.rename(stale / f"{path.stem}.{recorded or 'unrecorded'}.jsonl")
                moved.append(key)
            manifest[key] = fingerprint
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        return moved

    def add(self, results: list[InstanceResult]) -> None:
        """Append results (flushed at once, so an interruption loses at most the current batch)."""
        by_method: dict[str, list[InstanceResult]] = {}
        for r in results:
            by_method.setdefault(r.method, []).append(r)
        for method, rows in by_method.items():
            path = self.path(method)
            data = path.read_bytes() if path.is_file() else b""
            if data and not data.endswith(b"\n"):  # a cut last line: drop it before appending
                if _parses(data[data.rfind(b"\n") + 1 :]):
                    data += b"\n"
                else:
                    log.warning("%s: cutting off its unfinished last line", path)
                    data = data[: data.rfind(b"\n") + 1]
                path.write_bytes(data)
            with path.open("a") as f:
                f.write("".join(r.to_json() + "\n" for r in rows))
                f.flush()

    def load_all(self) -> list[InstanceResult]:
        """Every cached result, all methods."""
        out: list[InstanceResult] = []
        for path in sorted(self.root.glob("*.jsonl")):
            out.extend(result for _, result in read_results(path))
        return out


#: What :meth:`InstanceResult.from_json` raises on a line that is not a cached result.
_PARSE_ERRORS = (ValueError, TypeError, KeyError)


def _parses(line: bytes | str) -> bool:
    try:
        InstanceResult.from_json(line)
    except _PARSE_ERRORS:
        return False
    return True


def read_results(path: Path) -> list[tuple[int, InstanceResult]]:
    """``(line number, result)`` for every line of a cache file (1-based; blank lines skipped).

    A last line without its newline that does not parse (a write cut by an interruption) is
    dropped with a warning.

    Raises:
        ValueError: any other line that does not parse, naming the file and the line.
    """
    text = path.read_text()
    lines = text.splitlines()
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append((number, InstanceResult.from_json(line)))
        except _PARSE_ERRORS as exc:
            if number == len(lines) and not text.endswith("\n"):
                log.warning(
                    "%s, line %d: dropping an unfinished last line (an interrupted write): %.60r",
                    path,
                    number,
                    line,
                )
                continue
            raise ValueError(
                f"{path}, line {number}: not a cached result ({type(exc).__name__}: {exc}); "
                "fix or delete the line (a deleted row is computed again)"
            ) from exc
    return out


def policy_fingerprint(policy) -> str:
    """First 16 hex digits of the SHA-256 of a policy's class name and ``state_dict`` (names,
    shapes, dtypes and bytes): equal weights give equal fingerprints, whatever file they came
    from."""
    import hashlib

    import torch

    h = hashlib.sha256(type(policy).__name__.encode())
    for key, tensor in sorted(policy.state_dict().items()):
        t = tensor.detach().cpu().contiguous()
        h.update(f"{key}:{tuple(t.shape)}:{t.dtype}".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()[:16]
