"""The DRLHQ paper's presets (:data:`PRESETS`, :func:`size_rule` for any size) and the registry
of presets beyond them (:func:`register_preset`): what :class:`.generator.CLRPGenerator` draws
from, kept free of torch and RL4CO so that naming or registering a preset imports neither."""

from __future__ import annotations

import abc
import importlib
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tensordict import TensorDict

#: Presets of the DRLHQ paper (Miao et al.): customers, depots, depot capacity range and
#: opening-cost range; demand is an integer in {10..19}, vehicle capacity 70, fixed cost 1.
#: :func:`size_rule` gives the same depots and ranges at each preset's ``num_loc``.
PRESETS: dict[str, dict] = {
    "clrp10": dict(num_loc=10, num_depots=5, depot_capacity=(100, 300), opening_cost=(1, 5)),
    "clrp20": dict(num_loc=20, num_depots=5, depot_capacity=(100, 300), opening_cost=(1, 5)),
    "clrp50": dict(num_loc=50, num_depots=10, depot_capacity=(130, 450), opening_cost=(1, 5)),
    "clrp100": dict(num_loc=100, num_depots=20, depot_capacity=(500, 900), opening_cost=(5, 15)),
    "clrp200": dict(num_loc=200, num_depots=20, depot_capacity=(500, 900), opening_cost=(5, 15)),
    "clrp300": dict(num_loc=300, num_depots=20, depot_capacity=(500, 900), opening_cost=(5, 15)),
    "clrp400": dict(num_loc=400, num_depots=30, depot_capacity=(500, 900), opening_cost=(5, 15)),
    "clrp500": dict(num_loc=500, num_depots=30, depot_capacity=(500, 900), opening_cost=(5, 15)),
}


def size_rule(num_loc: int) -> dict:
    """Depots, depot-capacity range and opening-cost range for ``num_loc`` customers.

    ==================  ==========================  ==============  ============
    customers ``N``     depots ``D``                capacity        opening cost
    ==================  ==========================  ==============  ============
    ``N <= 20``         5                           ``[100, 300)``  ``[1, 5)``
    ``20 < N <= 50``    10                          ``[130, 450)``  ``[1, 5)``
    ``50 < N <= 300``   20                          ``[500, 900)``  ``[5, 15)``
    ``N > 300``         ``max(30, ceil(3N / 50))``  ``[500, 900)``  ``[5, 15)``
    ==================  ==========================  ==============  ============

    It gives every row of :data:`PRESETS` at the preset's ``N`` (10, 20, 50, ..., 500), 30
    depots up to ``N = 500`` and 60 at ``N = 1000``.

    Feasible by construction with the default demands ``{10..19}`` (``M = 19``): first-fit (in
    any order, so first-fit decreasing too) fails on a customer of demand ``s <= M`` only if
    every depot has less than ``s`` left, i.e. only if total capacity ``C < T + (D - 1) s`` for
    total demand ``T <= N M``. So it always succeeds when ``C >= (N + D) M``, and the rule's
    smallest total capacity ``D * min_capacity`` satisfies that for every ``N``:

    * ``N <= 20``: ``5 * 100 = 500 >= (20 + 5) * 19 = 475``;
    * ``N <= 50``: ``10 * 130 = 1300 >= (50 + 10) * 19 = 1140``;
    * ``N <= 300``: ``20 * 500 = 10000 >= (300 + 20) * 19 = 6080``;
    * ``N > 300``: ``500 D >= 19 (N + D)`` iff ``D >= 19 N / 481 ~ 0.040 N``, and
      ``D >= 3N / 50 = 0.06 N``.

    A vehicle (capacity 70) carries any single customer, so every instance has a solution.
    """
    n = int(num_loc)
    if n < 1:
        raise ValueError(f"num_loc: invalid value {num_loc}")
    if n <= 20:
        return dict(num_depots=5, depot_capacity=(100.0, 300.0), opening_cost=(1.0, 5.0))
    if n <= 50:
        return dict(num_depots=10, depot_capacity=(130.0, 450.0), opening_cost=(1.0, 5.0))
    depots = 20 if n <= 300 else max(30, math.ceil(3 * n / 50))
    return dict(num_depots=depots, depot_capacity=(500.0, 900.0), opening_cost=(5.0, 15.0))


#: Names no registered preset may take besides :data:`PRESETS`: the named parameters of
#: :class:`.generator.CLRPGenerator` (a preset's options are the keyword named like it), added
#: when the generator module is defined (a name registered before that is not checked
#: against them).
RESERVED_NAMES: set[str] = set()


class PresetSampler(abc.ABC):
    """A preset beyond the paper's: its own distribution of whole instances.

    Registered with :func:`register_preset` under a name, it is selected by
    ``CLRPGenerator(preset=name)``; its options are the generator keyword named like the
    preset (``CLRPGenerator(preset=name, **{name: options})``, in Hydra
    ``+env.generator_params.<name>={...}``). The generator builds ``cls(options, **given)``:
    ``options`` is that keyword's value (None when not given) and ``given`` holds the
    generator's :data:`.generator.DISTRIBUTION_ARGUMENTS` as the user passed them (or their
    defaults); the constructor raises ``ValueError`` naming any it cannot honour.

    While ``generator.draw_num_loc`` is True (no ``num_loc`` given) the sampler chooses the
    size of each call; otherwise it draws ``generator.num_loc`` customers.
    ``generator.num_depots`` (see :meth:`.generator.CLRPGenerator.explicit_value`),
    ``min_loc`` and ``max_loc`` are the generator's.
    """

    @abc.abstractmethod
    def __init__(self, options, **given):
        """Read ``options``; raise ``ValueError`` for ``given`` arguments it replaces."""

    @abc.abstractmethod
    def bounds(self, side: float) -> dict[str, float]:
        """The largest instance and the extreme values drawn (the env's observation spec):
        ``num_loc`` (largest ``N``), ``min_demand``, ``max_demand``, ``vehicle_capacity``
        (largest) and ``vehicle_fixed_cost`` (largest), for coordinates on a square of side
        ``side``."""

    @abc.abstractmethod
    def sample(self, generator, batch_size: list[int]) -> TensorDict:
        """A batch of instances (:func:`~.instance.instance_tensordict`) for ``generator`` (the
        :class:`.generator.CLRPGenerator` that selected this preset)."""


#: Presets registered beyond :data:`PRESETS`: name -> :class:`PresetSampler` subclass, or
#: where it lives (``"package.module:ClassName"``, imported when the preset is first used).
PRESET_SAMPLERS: dict[str, type[PresetSampler] | str] = {}


def register_preset(name: str, sampler: type[PresetSampler] | str) -> None:
    """Make ``CLRPGenerator(preset=name)`` draw from ``sampler`` (see :class:`PresetSampler`):
    the class, or where it lives as ``"package.module:ClassName"`` (a lazy registration: the
    module is imported when a generator first selects the preset, see
    :func:`preset_sampler_class`).

    Registering the same sampler (the same class, or the same location) again under its name
    is a no-op; any other clash (a paper preset's name, a name taken by another sampler, or a
    constructor parameter of :class:`CLRPGenerator`) raises ``ValueError``.
    """
    taken = PRESET_SAMPLERS.get(name)
    if name in PRESETS or name in RESERVED_NAMES or (taken is not None and taken != sampler):
        raise ValueError(f"preset: the name {name!r} is taken")
    if isinstance(sampler, str) and len(sampler.split(":")) != 2:
        raise ValueError(f"sampler: expected 'package.module:ClassName', got {sampler!r}")
    PRESET_SAMPLERS[name] = sampler


def preset_sampler_class(name: str) -> type[PresetSampler]:
    """The :class:`PresetSampler` subclass registered as ``name``, its module imported first
    when it was registered by location.

    Raises:
        KeyError: ``name`` is not a registered preset.
        ImportError, AttributeError: the registered location does not exist.
        TypeError: what it names is not a :class:`PresetSampler` subclass.
    """
    sampler = PRESET_SAMPLERS[name]
    if isinstance(sampler, str):
        module, _, attribute = sampler.partition(":")
        sampler = getattr(importlib.import_module(module), attribute)
        if not (isinstance(sampler, type) and issubclass(sampler, PresetSampler)):
            raise TypeError(f"preset {name!r}: {PRESET_SAMPLERS[name]} is no PresetSampler")
    return sampler


def known_presets() -> list[str]:
    """The presets ``CLRPGenerator(preset=...)`` accepts: :data:`PRESETS`, then the
    registered ones."""
    return [*PRESETS, *PRESET_SAMPLERS]
