"""Which rows each evaluation table has (the structure of the DRLHQ paper's tables).

``synthetic``: one table per preset (clrp10/20/50/100) on the published 1,000-instance test set:
the exact solver (clrp10/20), PyVRP at two time budgets, POMO* and MTA* (x8), DRLHQ with greedy,
multistart greedy, x8 augmentation and SGBS, and DRLHQ x8 followed by refinement with the same
total time per instance as the lower PyVRP budget; the DRLHQ variants listed in
:data:`VARIANTS` (``drlhq_clrp20_samebudget``) get an x8 row each. Slow rows run on a subset
(the first ``limit`` instances). ``cross-size``: the largest DRLHQ model on 100 instances of each
of clrp200 ... clrp500. ``prins``: the 30 Prins instances, gaps to both best-known columns.
``paper-sets``: DRLHQ on the paper's own clrp10 ... clrp100 test sets (regenerated from its seed),
where its figures can be compared instance for instance.

A row is a :class:`Row`: the method's identity (:class:`clrp_rl4co.evaluation.Method`: kind,
model, decode, budget; its key names the cached results), the name of the policy it runs and the
row's ``family`` (its name across presets: the headline column and the gap plot's legend). The
label shown in a table is rendered from these by :attr:`Row.label`; nothing parses it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import PurePath

from clrp_rl4co.evaluation import Method
from clrp_rl4co.models.decoding import DecodeSpec
from clrp_rl4co.policies import POLICIES, TITLES

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

#: Size of the subset of the slow rows.
SUBSET = 100

#: Model-name prefix of a freshly initialised policy (seed 0) with the named model's config.
UNTRAINED = "untrained:"

SYNTHETIC = ("clrp10", "clrp20", "clrp50", "clrp100")
CROSS_SIZE = ("clrp200", "clrp300", "clrp400", "clrp500")

#: The models the tables use by default, per policy: the one trained on the largest size not
#: above the table's preset is taken (else the smallest above it). Fixed here, so shipping
#: another model does not change a table's rows.
DEFAULT_MODELS: dict[str, tuple[str, ...]] = {
    "drlhq": ("drlhq_clrp10", "drlhq_clrp20", "drlhq_clrp50", "drlhq_clrp100"),
    "pomo": ("pomo_clrp20",),
    "mta": ("mta_clrp20",),
}

#: Further DRLHQ models with an x8 row of their own in a preset's table, by suffix
#: (``DRLHQ[samebudget] x8``: trained with the same budget as POMO* and MTA*, compared with
#: them instance by instance).
VARIANTS: dict[str, dict[str, str]] = {"clrp20": {"samebudget": "drlhq_clrp20_samebudget"}}

#: Decode spec of the main rows.
X8 = "multistart_greedy+aug8"
SGBS = "sgbs:4x4+aug8"


def _size(preset: str) -> int:
    return int(preset.removeprefix("clrp"))


def default_model(policy: str, preset: str) -> str | None:
    """The model of :data:`DEFAULT_MODELS` for ``policy`` closest in training size to
    ``preset`` (largest not above, else smallest above); None for a policy without models."""
    models = DEFAULT_MODELS.get(policy, ())
    if not models:
        return None
    target = _size(preset)
    below = [m for m in models if _size(trained_on(m)) <= target]
    if below:
        return max(below, key=lambda m: _size(trained_on(m)))
    return min(models, key=lambda m: _size(trained_on(m)))


def trained_on(model: str) -> str:
    """``clrp20`` for ``drlhq_clrp20`` (or a path ending in it), ``clrp20_samebudget`` for
    ``drlhq_clrp20_samebudget``, ``mixed50_cpu`` for ``drlhqcf_mixed50_cpu`` (trained on the
    ``mixed`` preset); else the file's stem (``untrained:`` dropped)."""
    path = PurePath(model.removeprefix(UNTRAINED))
    name = path.stem if path.suffix in (".pt", ".ckpt", ".json") else path.name
    kind, _, rest = name.partition("_")
    return rest if kind in POLICIES and rest.startswith(("clrp", "mixed")) else name


def decode_title(decode: str) -> str:
    """``greedy``, ``ms-greedy``, ``x8`` (dihedral), ``x8 rot45`` (the paper's rotations),
    ``SGBS(4,4) x8``, ``sampling:16`` ..."""
    spec = DecodeSpec.parse(decode)
    if spec.decode_type == "sgbs":
        name = "SGBS({},{})".format(*spec.sgbs)
    elif spec.decode_type == "multistart_greedy":
        name = "" if spec.augment else "ms-greedy"
    else:
        name = spec.decode_type + (f":{spec.width}" if spec.width else "")
    suffix = {None: "", "aug8": " x8", "rot8": " x8 rot45"}[spec.augment]
    return (name + suffix).strip()


@dataclass(frozen=True)
class Row:
    """One row of a table.

    Attributes:
        method: what runs (its identity keys the cached results).
        preset: the preset of the part's instances (``clrp20``; ``None`` for Prins): a model
            trained on another size gets ``[clrp20 model]`` in its label.
        policy: ``drlhq`` / ``pomo`` / ``mta`` for policy and refine rows.
        variant: the DRLHQ variant's suffix (``samebudget``) for a :data:`VARIANTS` row.
        family: the row's name across presets (``DRLHQ x8``, ``PyVRP short``, ...): the
            headline column and the gap plot's legend.
        paired_with: methods this row is compared with instance by instance.
    """

    method: Method
    preset: str | None
    policy: str | None = None
    variant: str | None = None
    family: str | None = None
    paired_with: tuple[Method, ...] = field(default_factory=tuple)

    @property
    def label(self) -> str:
        m = self.method
        if m.kind == "pyvrp":
            return f"PyVRP {m.seconds:g}s"
        if m.kind == "exact":
            return f"Exact (HiGHS {m.seconds:g}s)"
        title = TITLES[self.policy]
        trained = trained_on(m.model)
        if self.variant:
            title += f"[{self.variant}]"
        elif trained != self.preset:
            title += f"[{trained} model]"
        if m.model.startswith(UNTRAINED):
            title += " untrained"
        text = f"{title} {decode_title(m.decode)}"
        return text + (f" + refine ({m.seconds:g}s total)" if m.kind == "refine" else "")


#: Where a part's instances come from: the package's published test sets
#: (:mod:`.published_sets`), the DRLHQ repository's test sets (:mod:`.paper_sets`), or the
#: Prins files.
SOURCES = ("published", "drlhq", "prins")


@dataclass
class TablePart:
    """One dataset and its rows (a synthetic table has one part, cross-size has four).

    Attributes:
        source: one of :data:`SOURCES`.
        preset: the preset of the instances (None for Prins).
        rows: the rows, in display order.
        models: policy -> model used (for the part's header).
    """

    source: str
    preset: str | None
    rows: list[Row]
    models: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if self.source not in SOURCES:
            raise ValueError(f"source: must be one of {SOURCES}, got {self.source!r}")

    @property
    def name(self) -> str:
        """``clrp20``, ``paper-clrp10`` (the DRLHQ repository's set) or ``prins``: the part's
        section title and the name of its files."""
        return {"published": self.preset, "drlhq": f"paper-{self.preset}"}.get(self.source, "prins")

    @property
    def methods(self) -> list[Method]:
        return [r.method for r in self.rows]


def _models(preset: str, given: dict[str, str | None] | None) -> dict[str, str]:
    """Policy -> model of a table: ``given`` where set, else :func:`default_model`."""
    given = given or {}
    chosen = {p: given.get(p) or default_model(p, preset) for p in POLICIES}
    return {p: m for p, m in chosen.items() if m}


def synthetic_part(preset: str, models: dict[str, str | None] | None = None) -> TablePart:
    """Rows of the synthetic table of ``preset``; ``models`` maps ``drlhq``/``pomo``/``mta`` to a
    model name or path (default: :func:`default_model`)."""
    models = _models(preset, models)
    short, long = PYVRP_BUDGETS[preset]
    small = _size(preset) <= 20
    batch = 100 if _size(preset) <= 50 else 20
    rows: list[Row] = []
    if small:
        rows.append(Row(Method("exact", seconds=EXACT_SECONDS, limit=SUBSET), preset,
                        family="Exact"))  # fmt: skip
    rows += [
        Row(Method("pyvrp", seconds=short, limit=SUBSET), preset, family="PyVRP short"),
        Row(Method("pyvrp", seconds=long, limit=SUBSET), preset, family="PyVRP long"),
    ]
    for policy in ("pomo", "mta"):
        if policy in models:
            rows.append(Row(Method("policy", models[policy], X8, batch_size=batch), preset,
                            policy, family=f"{TITLES[policy]} x8"))  # fmt: skip
    baselines = tuple(r.method for r in rows if r.method.kind == "policy")
    for suffix, variant in VARIANTS.get(preset, {}).items():
        if variant != models.get("drlhq"):
            rows.append(Row(Method("policy", variant, X8, batch_size=batch), preset, "drlhq",
                            variant=suffix, family=f"DRLHQ[{suffix}] x8",
                            paired_with=baselines))  # fmt: skip
    if "drlhq" in models:
        m = models["drlhq"]
        if trained_on(m) == preset:  # the trained-vs-untrained check on its own size
            rows.append(Row(Method("policy", f"{UNTRAINED}{m}", X8, batch_size=batch), preset,
                            "drlhq", family="DRLHQ untrained x8"))  # fmt: skip
        rows += [
            Row(Method("policy", m, "greedy", batch_size=batch), preset, "drlhq",
                family="DRLHQ greedy"),
            Row(Method("policy", m, "multistart_greedy", batch_size=batch), preset, "drlhq",
                family="DRLHQ ms-greedy"),
            Row(Method("policy", m, X8, batch_size=batch), preset, "drlhq", family="DRLHQ x8"),
            Row(Method("policy", m, SGBS, limit=None if small else SUBSET,
                       batch_size=max(1, batch // 4)), preset, "drlhq", family="DRLHQ SGBS"),
            Row(Method("refine", m, X8, seconds=short, limit=SUBSET, batch_size=batch), preset,
                "drlhq", family="DRLHQ x8 + refine"),
        ]  # fmt: skip
    return TablePart("published", preset, rows, models)


def cross_size_parts(models: dict[str, str | None] | None = None) -> list[TablePart]:
    """DRLHQ (the largest default model) on clrp200 ... clrp500, with PyVRP as reference on a
    small subset. Refinement starts from multistart greedy here: x8 decoding of a few hundred
    customers on a CPU takes most of the time budget itself."""
    parts = []
    for preset in CROSS_SIZE:
        model = (models or {}).get("drlhq") or default_model("drlhq", preset)
        short, _ = PYVRP_BUDGETS[preset]
        rows = [Row(Method("pyvrp", seconds=short, limit=10), preset, family="PyVRP short")]
        if model:
            rows += [
                Row(Method("policy", model, "multistart_greedy", batch_size=4), preset, "drlhq",
                    family="DRLHQ ms-greedy"),
                Row(Method("policy", model, X8, batch_size=1, limit=20), preset, "drlhq",
                    family="DRLHQ x8"),
                Row(Method("refine", model, "multistart_greedy", seconds=short, limit=10,
                           batch_size=4), preset, "drlhq", family="DRLHQ ms-greedy + refine"),
            ]  # fmt: skip
        parts.append(TablePart("published", preset, rows, {"drlhq": model} if model else {}))
    return parts


#: Total seconds per Prins instance of DRLHQ + refinement (the issue's 10 s budget).
PRINS_SECONDS = 10.0

#: Size of the default DRLHQ model of the Prins table.
PRINS_MODEL_PRESET = "clrp50"


def prins_part(models: dict[str, str | None] | None = None) -> TablePart:
    """DRLHQ alone and refined within 10 s, next to PyVRP 10 s, with the paper's 45-degree
    rotations as augmentation. The default model is the clrp50 one: on these
    20-200-customer instances its x8 solutions were the best of the clrp20 / clrp50 / clrp100
    models (results/README.md); ``models`` picks another."""
    model = (models or {}).get("drlhq") or default_model("drlhq", PRINS_MODEL_PRESET)
    rows = [Row(Method("pyvrp", seconds=PRINS_SECONDS), None, family="PyVRP")]
    if model:
        rows += [
            Row(Method("policy", model, "multistart_greedy", batch_size=1), None, "drlhq",
                family="DRLHQ ms-greedy"),
            Row(Method("policy", model, "multistart_greedy+rot8", batch_size=1), None, "drlhq",
                family="DRLHQ x8"),
            Row(Method("policy", model, "sgbs:4x4+rot8", batch_size=1), None, "drlhq",
                family="DRLHQ SGBS"),
            Row(Method("refine", model, "multistart_greedy+rot8", seconds=PRINS_SECONDS,
                       batch_size=1), None, "drlhq", family="DRLHQ x8 + refine"),
        ]  # fmt: skip
    return TablePart("prins", None, rows, {"drlhq": model} if model else {})


#: Presets of the ``paper-sets`` table: those whose DRLHQ figures the evaluation issues quote.
PAPER_SET_PRESETS = ("clrp10", "clrp20", "clrp50", "clrp100")

#: Instances of a ``paper-sets`` part its DRLHQ rows run on (default: the whole set): clrp100 on
#: the first 200, as the x8 row of its synthetic table (CPU time).
PAPER_SET_LIMITS: dict[str, int] = {"clrp100": 200}


def paper_set_parts(models: dict[str, str | None] | None = None) -> list[TablePart]:
    """DRLHQ on the paper's own test sets (regenerated, see :mod:`.paper_sets`), part
    ``paper-<preset>``: multistart greedy, x8 and SGBS(4,4) x8 with both augmentations (RL4CO's
    dihedral one and the paper's 45-degree rotations, ``rot45``), next to the exact solver
    (clrp10) and PyVRP at the short budget on the first 100 instances. The DRLHQ rows of
    :data:`PAPER_SET_LIMITS` run on a subset; beyond 20 customers SGBS(4,4) x8 runs on the
    first 100 instances (as in the synthetic tables)."""
    parts = []
    for preset in PAPER_SET_PRESETS:
        part = preset
        model = (models or {}).get("drlhq") or default_model("drlhq", preset)
        short, _ = PYVRP_BUDGETS[preset]
        limit = PAPER_SET_LIMITS.get(preset)
        batch = 100 if _size(preset) <= 50 else 20
        rows = []
        if _size(preset) <= 10:
            rows.append(Row(Method("exact", seconds=EXACT_SECONDS, limit=SUBSET), part,
                            family="Exact"))  # fmt: skip
        rows.append(Row(Method("pyvrp", seconds=short, limit=SUBSET), part, family="PyVRP short"))
        if model:
            rows += [
                Row(Method("policy", model, "multistart_greedy", limit=limit, batch_size=batch),
                    part, "drlhq", family="DRLHQ ms-greedy"),
                Row(Method("policy", model, X8, limit=limit, batch_size=batch), part, "drlhq",
                    family="DRLHQ x8"),
                Row(Method("policy", model, "multistart_greedy+rot8", limit=limit,
                           batch_size=batch), part, "drlhq", family="DRLHQ x8"),
            ]  # fmt: skip
            if _size(preset) <= 20:
                rows += [
                    Row(Method("policy", model, SGBS, batch_size=25), part, "drlhq",
                        family="DRLHQ SGBS"),
                    Row(Method("policy", model, "sgbs:4x4+rot8", batch_size=25), part, "drlhq",
                        family="DRLHQ SGBS"),
                ]  # fmt: skip
            else:
                rows.append(Row(Method("policy", model, SGBS, limit=SUBSET,
                                       batch_size=max(1, batch // 4)), part, "drlhq",
                                family="DRLHQ SGBS"))  # fmt: skip
        parts.append(TablePart("drlhq", preset, rows, {"drlhq": model} if model else {}))
    return parts


def identity_by_label(preset: str, label: str) -> dict[str, str]:
    """The identity columns ``family`` and ``model`` of the row labelled ``label`` in the
    synthetic table of ``preset`` with its default models: how a summary CSV written before the
    tables stored those columns is read. Empty when no row has that label (``model`` is ``""``
    for a solver row, as the CSV writes it)."""
    for row in synthetic_part(preset).rows:
        if row.label == label:
            return {"family": row.family or "", "model": row.method.model or ""}
    return {}


def with_identity(preset: str, row: dict[str, str]) -> dict[str, str]:
    """A summary CSV row of the synthetic table of ``preset`` with its identity columns: as
    read when it has a ``family`` column, else with ``family`` and ``model`` from
    :func:`identity_by_label` of its ``method`` label (``family`` blank when no row matches)."""
    if "family" in row:
        return row
    return {"family": "", **row, **identity_by_label(preset, row["method"])}


def with_method(row: Row, method: Method) -> Row:
    """``row`` running ``method`` instead (e.g. with another limit)."""
    return replace(row, method=method)
