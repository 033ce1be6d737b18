"""The instances an evaluation runs on, named by one string (a dataset spec).

- ``clrp20:1000[:seed]``: ``1000`` generated instances of a :class:`CLRPGenerator` preset, drawn
  with :func:`generate_dataset` (seed default :data:`DEFAULT_SEED`);
- ``path/to/file.npz``: a dataset written by :func:`save_dataset`;
- ``prins[:GLOB]``: the Prins files in ``$CLRP_BENCHMARKS_DIR`` (default: all 30; ``GLOB``
  matches file names, e.g. ``coord100-*``, or one stem), with the current best-known values as
  the reference.
"""

from __future__ import annotations

from ..data import prins_bks, prins_files, read_prodhon, tensordict_to_instances
from ..envs.clrp import PRESETS, CLRPGenerator, generate_dataset, load_dataset
from .methods import EvalData

#: Seed of generated evaluation instances when the spec gives none.
DEFAULT_SEED = 2024


def load_eval_data(spec: str) -> tuple[EvalData, dict[int, float] | None]:
    """The instances of a dataset spec (see the module doc) and their reference costs by index
    (best-known values for Prins, else None).

    Raises:
        ValueError: the spec is none of the three forms (the message names it).
        FileNotFoundError: a missing file or no Prins file matching ``GLOB``.
    """
    if spec == "prins" or spec.startswith("prins:"):
        pattern = spec.partition(":")[2]
        files = [f for f in prins_files() if not pattern or f.match(pattern) or f.stem == pattern]
        if not files:
            raise FileNotFoundError(f"data: no Prins file matches {pattern!r}")
        bks = prins_bks()
        names = [f.stem for f in files]
        reference = {i: float(bks[n].current) for i, n in enumerate(names) if n in bks}
        return EvalData([read_prodhon(f) for f in files], names), reference
    if spec.endswith(".npz"):
        td = load_dataset(spec)
        stem = spec.rsplit("/", 1)[-1].removesuffix(".npz")
    else:
        preset, _, rest = spec.partition(":")
        size, _, seed = rest.partition(":")
        if (
            preset not in PRESETS
            or not size.isdigit()
            or int(size) < 1
            or (seed and not seed.isdigit())
        ):
            raise ValueError(
                f"data: expected PRESET:SIZE[:SEED] (presets {list(PRESETS)}), a .npz file or "
                f"prins[:GLOB], got {spec!r}"
            )
        seed_value = int(seed) if seed else DEFAULT_SEED
        td = generate_dataset(CLRPGenerator(preset=preset), int(size), seed_value)
        stem = f"{preset}-seed{seed_value}"
    names = [f"{stem}-{i}" for i in range(td.batch_size[0])]
    return EvalData(tensordict_to_instances(td, names), names, td), None
