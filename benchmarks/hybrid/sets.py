"""The instance sets of the hybrid benchmark: the DRLHQ paper's test sets, the package presets'
published test sets, 1,000-customer instances of the generator's size rule and the 30 Prins
files, each with its default model and references."""

from __future__ import annotations

from dataclasses import dataclass, field

from tensordict import TensorDict

from clrp_rl4co.data import CLRPInstance

#: Presets with a published test set, in size order.
PRESETS = ("clrp20", "clrp50", "clrp100", "clrp200", "clrp300", "clrp400", "clrp500")
#: The DRLHQ paper's test sets (1,000 instances each).
PAPER_SETS = ("paper-clrp50", "paper-clrp100")
#: Sets beyond the presets, drawn on the fly from the generator's size rule
#: (:func:`clrp_rl4co.envs.clrp.size_rule`) with the published test sets' seed: name ->
#: (customers, instances). No x8 beside them (8,000 rollouts of 1,000 customers per instance).
GENERATED = {"clrp1000": (1000, 20)}
#: Every ``--set`` value.
SETS = (*PAPER_SETS, "prins", *PRESETS, *GENERATED)


@dataclass
class BenchSet:
    """Instances of one ``--set``.

    Attributes:
        name: the ``--set`` value.
        instances: the first instances of the set (as many as the run needs).
        names: their names (``paper-clrp50-17``, ``clrp100-3``, ``coord50-5-1``).
        total: instances in the whole set.
        default_model: the policy of the hybrid and of x8 unless ``--model`` says otherwise.
        data: the instances as one env input TensorDict (synthetic sets, for batched x8), or
            None when their sizes differ (Prins).
        paper_preset: the paper's preset of a paper set (its figures are compared), else None.
        bks: best-known value by instance name (Prins, the current values), else empty.
        x8: whether the benchmark decodes x8 beside the timed methods.
    """

    name: str
    instances: list[CLRPInstance]
    names: list[str]
    total: int
    default_model: str
    data: TensorDict | None = None
    paper_preset: str | None = None
    bks: dict[str, float] = field(default_factory=dict)
    x8: bool = True


def default_model(set_name: str) -> str:
    """The paper's model of the set's size where one is shipped, else the generalist (always
    the generalist on Prins)."""
    from clrp_rl4co.auto import generalist_model
    from clrp_rl4co.pretrained import shipped_models

    if set_name == "prins":
        return generalist_model()
    preset = set_name.removeprefix("paper-")
    name = f"drlhq_{preset}"
    return name if name in shipped_models() else generalist_model()


def check_set(set_name: str) -> None:
    """Raise ``ValueError`` naming ``--set`` unless it is one of :data:`SETS`."""
    if set_name not in SETS:
        raise ValueError(f"--set: unknown set {set_name!r}; choose one of {', '.join(SETS)}")


def set_size(set_name: str) -> int:
    """How many instances the whole set holds."""
    check_set(set_name)
    if set_name == "prins":
        from clrp_rl4co.data.prodhon import prins_files

        return len(prins_files())
    if set_name in GENERATED:
        return GENERATED[set_name][1]
    from experiments.published_sets import TEST_SET_SIZES

    return TEST_SET_SIZES[set_name.removeprefix("paper-")]


def load_set(set_name: str, count: int) -> BenchSet:
    """The first ``count`` instances of ``set_name`` (see :data:`SETS`)."""
    from clrp_rl4co.data import tensordict_to_instances

    total = set_size(set_name)
    if set_name == "prins":
        from clrp_rl4co.data import prins_bks
        from clrp_rl4co.data.prodhon import prins_files, read_prodhon

        files = prins_files()[:count]
        bks = {stem: float(entry.current) for stem, entry in prins_bks().items()}
        instances = [read_prodhon(path) for path in files]
        names = [path.stem for path in files]
        return BenchSet(set_name, instances, names, total, default_model(set_name), bks=bks)
    preset = set_name.removeprefix("paper-")
    if set_name in GENERATED:
        from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
        from experiments.published_sets import TEST_SEED

        generator = CLRPGenerator(num_loc=GENERATED[set_name][0])
        data = generate_dataset(generator, total, TEST_SEED)[:count]
    elif set_name in PAPER_SETS:
        from experiments.paper_sets import load_drlhq_test_set

        data = load_drlhq_test_set(preset)[:count]
    else:
        from experiments.published_sets import load_test_set

        data = load_test_set(preset)[:count]
    names = [f"{set_name}-{i}" for i in range(count)]
    instances = tensordict_to_instances(data, names)
    paper = preset if set_name in PAPER_SETS else None
    x8 = set_name not in GENERATED
    return BenchSet(set_name, instances, names, total, default_model(set_name), data, paper, x8=x8)
