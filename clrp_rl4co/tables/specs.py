"""Which rows each evaluation table has (the structure of the DRLHQ paper's tables).

``synthetic``: one table per preset (clrp10/20/50/100) on the published 1,000-instance test set:
the exact solver (clrp10/20), PyVRP at two time budgets, POMO* and MTA* (x8), DRLHQ with greedy,
multistart greedy, x8 augmentation and SGBS, and DRLHQ x8 followed by refinement with the same
total time per instance as the lower PyVRP budget; shipped variants of the DRLHQ model of that
size (``drlhq_clrp20_samebudget``) get an x8 row each. Slow rows run on a labelled subset (the first
``limit`` instances). ``cross-size``: the largest DRLHQ model on 100 instances of each of
clrp200 ... clrp500. ``prins``: the 30 Prins instances, gaps to both best-known columns.
``paper-sets``: DRLHQ on the paper's own clrp10 / clrp20 test sets (regenerated from its seed),
where its figures can be compared instance for instance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from ..policies import POLICIES, TITLES, shipped_models
from .methods import Method

#: PyVRP time budgets (seconds per instance) of the synthetic tables: (short, long).
PYVRP_BUDGETS: dict[str, tuple[float, float]] = {
    "clrp10": (0.5, 2.0),
    "clrp20": (1.0, 4.0),
    "clrp50": (5.0, 10.0),
    "clrp100": (10.0, 20.0),
    "clrp200": (20.0, 40.0),
    "clrp300": (30.0, 60.0),
    "clrp400": (40.0, 80.0),
    "clrp500": (50.0, 100.0),
}

#: Exact solver time limit per instance (seconds).
EXACT_SECONDS = 60.0

#: Size of the labelled subset of the slow rows.
SUBSET = 100

#: Model-name prefix of a freshly initialised policy (seed 0) with the named model's config.
UNTRAINED = "untrained:"

SYNTHETIC = ("clrp10", "clrp20", "clrp50", "clrp100")
CROSS_SIZE = ("clrp200", "clrp300", "clrp400", "clrp500")


def _size(preset: str) -> int:
    return int(preset.removeprefix("clrp"))


def shipped_model(kind: str, preset: str) -> str | None:
    """The shipped ``<kind>_clrp<N>*`` model trained on the largest size not above ``preset``
    (else the smallest one above it); None when none is shipped."""
    names = [n for n in shipped_models(kind) if n.startswith(f"{kind}_clrp")]
    if not names:
        return None

    def size(name: str) -> int:
        return int(name.split("_")[1].removeprefix("clrp"))

    target = _size(preset)
    below = [n for n in names if size(n) <= target]
    if below:
        best = max(size(n) for n in below)
        # prefer the plain name (e.g. drlhq_clrp20) over variants (drlhq_clrp20_...)
        return min((n for n in below if size(n) == best), key=len)
    return min(names, key=lambda n: (size(n), len(n)))


def model_variants(kind: str, preset: str) -> list[str]:
    """Shipped ``<kind>_<preset>_<suffix>`` models (e.g. ``drlhq_clrp20_samebudget``, trained
    with the same budget as POMO* and MTA*): each gets an x8 row of its own."""
    return [n for n in shipped_models(kind) if n.startswith(f"{kind}_{preset}_")]


@dataclass
class TablePart:
    """One dataset and its rows (a synthetic table has one part, cross-size has four)."""

    name: str  # e.g. "clrp20" or "prins"
    methods: list[Method]
    models: dict[str, str] = field(default_factory=dict)  # kind -> model used


def _model_label(kind: str, model: str, preset: str) -> str:
    """``DRLHQ`` or ``DRLHQ[clrp20 model]`` when the model was trained on another size."""
    title = TITLES[kind]
    trained = _trained_on(model)
    return title if trained == preset else f"{title}[{trained} model]"


def _trained_on(model: str) -> str:
    """``clrp20`` for ``drlhq_clrp20`` (or a path ending in it), ``clrp20_samebudget`` for
    ``drlhq_clrp20_samebudget``; else the file's stem."""
    path = PurePath(model)
    name = path.stem if path.suffix in (".pt", ".ckpt", ".json") else path.name
    kind, _, rest = name.partition("_")
    return rest if kind in POLICIES and rest.startswith("clrp") else name


def synthetic_part(preset: str, models: dict[str, str | None] | None = None) -> TablePart:
    """Rows of the synthetic table of ``preset``; ``models`` maps ``drlhq``/``pomo``/``mta`` to a
    model name or path (default: the shipped model closest in size; rows without one are left
    out)."""
    given = models or {}
    models = {k: given.get(k) or shipped_model(k, preset) for k in POLICIES}
    short, long = PYVRP_BUDGETS[preset]
    slow = SUBSET
    sgbs_limit = None if _size(preset) <= 20 else SUBSET
    batch = 100 if _size(preset) <= 50 else 20
    rows: list[Method] = []
    if _size(preset) <= 20:
        rows.append(Method(f"Exact (HiGHS {EXACT_SECONDS:g}s)", "exact", seconds=EXACT_SECONDS,
                           limit=slow))  # fmt: skip
    rows += [
        Method(f"PyVRP {short:g}s", "pyvrp", seconds=short, limit=slow),
        Method(f"PyVRP {long:g}s", "pyvrp", seconds=long, limit=slow),
    ]
    for kind in ("pomo", "mta"):
        if models[kind]:
            label = _model_label(kind, models[kind], preset)
            rows.append(Method(f"{label} x8", "policy", model=models[kind],
                               decode="multistart_greedy+aug8", batch_size=batch))  # fmt: skip
    baselines = tuple(row.label for row in rows if row.kind == "policy")
    for variant in model_variants("drlhq", preset):
        if variant != models["drlhq"]:
            suffix = variant.removeprefix(f"drlhq_{preset}_")
            rows.append(Method(f"DRLHQ[{suffix}] x8", "policy", model=variant,
                               decode="multistart_greedy+aug8", batch_size=batch,
                               paired_with=baselines))  # fmt: skip
    if models["drlhq"]:
        m = models["drlhq"]
        label = _model_label("drlhq", m, preset)
        if not label.endswith("model]"):  # the trained-vs-untrained check on its own size
            rows.append(Method(f"{label} untrained x8", "policy", model=f"{UNTRAINED}{m}",
                               decode="multistart_greedy+aug8", batch_size=batch))  # fmt: skip
        rows += [
            Method(f"{label} greedy", "policy", model=m, decode="greedy", batch_size=batch),
            Method(f"{label} ms-greedy", "policy", model=m, decode="multistart_greedy",
                   batch_size=batch),
            Method(f"{label} x8", "policy", model=m, decode="multistart_greedy+aug8",
                   batch_size=batch),
            Method(f"{label} SGBS(4,4) x8", "policy", model=m, decode="sgbs:4x4+aug8",
                   limit=sgbs_limit, batch_size=max(1, batch // 4)),
            Method(f"{label} x8 + refine ({short:g}s total)", "refine", seconds=short,
                   base=f"{label} x8", limit=slow),
        ]  # fmt: skip
    return TablePart(preset, rows, {k: v for k, v in models.items() if v})


def cross_size_parts(models: dict[str, str | None] | None = None) -> list[TablePart]:
    """DRLHQ (the largest shipped model) on clrp200 ... clrp500, with PyVRP as reference on a
    small subset. Refinement starts from multistart greedy here: x8 decoding of a few hundred
    customers on a CPU takes most of the time budget itself."""
    parts = []
    for preset in CROSS_SIZE:
        model = (models or {}).get("drlhq") or shipped_model("drlhq", "clrp100")
        short, _ = PYVRP_BUDGETS[preset]
        rows = [Method(f"PyVRP {short:g}s", "pyvrp", seconds=short, limit=10)]
        if model:
            label = _model_label("drlhq", model, preset)
            rows += [
                Method(f"{label} ms-greedy", "policy", model=model, decode="multistart_greedy",
                       batch_size=4),
                Method(f"{label} x8", "policy", model=model, decode="multistart_greedy+aug8",
                       batch_size=1, limit=20),
                Method(f"{label} ms-greedy + refine ({short:g}s total)", "refine",
                       seconds=short, base=f"{label} ms-greedy", limit=10),
            ]  # fmt: skip
        parts.append(TablePart(preset, rows, {"drlhq": model} if model else {}))
    return parts


#: Total seconds per Prins instance of DRLHQ + refinement (the issue's 10 s budget).
PRINS_SECONDS = 10.0

#: Size of the default DRLHQ model of the Prins table.
PRINS_MODEL_PRESET = "clrp50"


def prins_part(models: dict[str, str | None] | None = None) -> TablePart:
    """DRLHQ alone and refined within 10 s, next to PyVRP 10 s. The default model is the
    clrp50 one: on these 20-200-customer instances its x8 solutions were the best of the shipped
    clrp20 / clrp50 / clrp100 models (results/README.md); ``models`` picks another."""
    model = (models or {}).get("drlhq") or shipped_model("drlhq", PRINS_MODEL_PRESET)
    rows = [Method(f"PyVRP {PRINS_SECONDS:g}s", "pyvrp", seconds=PRINS_SECONDS)]
    if model:
        label = f"DRLHQ[{_trained_on(model)} model]"
        rows += [
            Method(f"{label} ms-greedy", "policy", model=model, decode="multistart_greedy"),
            Method(f"{label} x8", "policy", model=model, decode="multistart_greedy+rot8"),
            Method(f"{label} SGBS(4,4) x8", "policy", model=model, decode="sgbs:4x4+rot8"),
            Method(f"{label} x8 + refine ({PRINS_SECONDS:g}s total)", "refine",
                   seconds=PRINS_SECONDS, base=f"{label} x8"),
        ]  # fmt: skip
    return TablePart("prins", rows, {"drlhq": model} if model else {})


#: Presets of the ``paper-sets`` table: those whose DRLHQ figures the evaluation issue quotes.
PAPER_SET_PRESETS = ("clrp10", "clrp20")


def paper_set_parts(models: dict[str, str | None] | None = None) -> list[TablePart]:
    """DRLHQ on the paper's own test sets (regenerated, see :mod:`.paper_sets`), part
    ``paper-<preset>``: multistart greedy, x8 and SGBS(4,4) x8 with both augmentations (RL4CO's
    dihedral one and the paper's 45-degree rotations, ``rot45``), next to the exact solver
    (clrp10) and PyVRP at the short budget on the first 100 instances."""
    parts = []
    for preset in PAPER_SET_PRESETS:
        model = (models or {}).get("drlhq") or shipped_model("drlhq", preset)
        short, _ = PYVRP_BUDGETS[preset]
        rows = []
        if _size(preset) <= 10:
            rows.append(Method(f"Exact (HiGHS {EXACT_SECONDS:g}s)", "exact",
                               seconds=EXACT_SECONDS, limit=SUBSET))  # fmt: skip
        rows.append(Method(f"PyVRP {short:g}s", "pyvrp", seconds=short, limit=SUBSET))
        if model:
            label = _model_label("drlhq", model, preset)
            rows += [
                Method(f"{label} ms-greedy", "policy", model=model, decode="multistart_greedy"),
                Method(f"{label} x8", "policy", model=model, decode="multistart_greedy+aug8"),
                Method(f"{label} x8 rot45", "policy", model=model,
                       decode="multistart_greedy+rot8"),
                Method(f"{label} SGBS(4,4) x8", "policy", model=model, decode="sgbs:4x4+aug8",
                       batch_size=25),
                Method(f"{label} SGBS(4,4) x8 rot45", "policy", model=model,
                       decode="sgbs:4x4+rot8", batch_size=25),
            ]  # fmt: skip
        parts.append(TablePart(f"paper-{preset}", rows, {"drlhq": model} if model else {}))
    return parts
