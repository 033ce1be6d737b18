"""The generator's keyword arguments and its preset hook: unknown parameters raise naming them
and the accepted ones; the env folder alone knows only the paper's presets; ``clrp_rl4co.envs``
registers preset ``"mixed"`` by its location (imported on first use), selectable from Python
and from the Hydra config.

Expectations come from the docstrings of ``CLRPGenerator``, ``PresetSampler`` and
``register_preset`` and from RL4CO's ``get_sampler`` (the sampler keywords it reads)."""

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from torch.distributions import Uniform

import clrp_rl4co
from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp.generator import (
    PRESET_SAMPLERS,
    PRESETS,
    CLRPGenerator,
    PresetSampler,
    preset_sampler_class,
    register_preset,
)
from clrp_rl4co.mixed_preset import MixedRanges, MixedSampler

ROOT = Path(__file__).resolve().parents[1]
ENV_DIR = ROOT / "clrp_rl4co" / "envs" / "clrp"
PAPER_PRESETS = [
    "clrp10",
    "clrp20",
    "clrp50",
    "clrp100",
    "clrp200",
    "clrp300",
    "clrp400",
    "clrp500",
]


# ------------------------------------------------------------------ unknown parameters
@pytest.mark.parametrize(
    "build",
    [
        lambda **kw: CLRPGenerator(**kw),
        lambda **kw: CLRPEnv(generator_params=kw),
    ],
    ids=["generator", "env"],
)
def test_an_unknown_parameter_raises_naming_it_and_the_accepted_ones(build):
    with pytest.raises(ValueError) as info:
        build(num_locs=50)
    message = str(info.value)
    assert message.startswith("num_locs: unknown generator parameter (did you mean 'num_loc'?)")
    accepted = message.split("accepted: ")[1].split(", ")
    for name in ("preset", "num_loc", "num_depots", "vehicle_capacity", "tight_capacity"):
        assert name in accepted
    for name in ("n_cluster", "loc_mean", "depot_std", "loc_sampler"):  # RL4CO's sampler keys
        assert name in accepted
    assert "mixed" in accepted  # the option keyword of the registered preset
    assert "num_locs" not in accepted


def test_a_far_off_name_gets_no_suggestion():
    with pytest.raises(ValueError, match=r"^zzz: unknown generator parameter; accepted: cdist, "):
        CLRPGenerator(zzz=1)


def test_rl4co_sampler_keywords_are_still_accepted():
    gen = CLRPGenerator(loc_distribution="normal", loc_mean=0.5, loc_std=0.1, num_loc=30)
    assert gen(2)["locs"].shape == (2, 10 + 30, 2)  # size_rule(30): 10 depots
    gen = CLRPGenerator(depot_distribution="cluster", n_cluster=2, num_loc=10)
    assert gen(2)["depot_capacity"].shape == (2, 5)


def test_a_callable_distribution_takes_every_extra_keyword():
    # RL4CO's get_sampler calls a callable distribution with every extra keyword
    seen = {}

    def corner(**kwargs):
        seen.update(kwargs)
        return Uniform(low=kwargs["spot"], high=kwargs["spot"] + 1e-6)

    gen = CLRPGenerator(loc_distribution=corner, spot=0.25, num_loc=4)
    assert seen == {"spot": 0.25}
    locs = gen(3)["locs"][:, 5:]  # the customers; depots (uniform) come first
    assert torch.allclose(locs, torch.full_like(locs, 0.25), atol=1e-5)


def test_another_presets_options_raise():
    with pytest.raises(
        ValueError, match=r"^mixed: only read with preset='mixed', got preset='clrp50'$"
    ):
        CLRPGenerator(preset="clrp50", mixed={"num_loc": (20, 30)})


# ------------------------------------------------------------------ preset "mixed" in the package
def test_the_package_registers_mixed_by_location_after_the_paper_presets():
    assert clrp_rl4co.CLRPGenerator is CLRPGenerator
    assert PRESET_SAMPLERS["mixed"] == "clrp_rl4co.mixed_preset:MixedSampler"
    assert preset_sampler_class("mixed") is MixedSampler
    assert list(PRESETS) == PAPER_PRESETS
    with pytest.raises(ValueError) as info:
        CLRPGenerator(preset="clrp15")
    assert (
        str(info.value)
        == f"preset: unknown preset 'clrp15'; choose one of {PAPER_PRESETS + ['mixed']}"
    )


def test_mixed_from_python_after_import():
    env = CLRPEnv(generator_params={"preset": "mixed", "mixed": {"num_loc": (20, 100)}})
    assert isinstance(env.generator.preset_sampler, MixedSampler)
    assert env.generator.preset_sampler.ranges == MixedRanges(num_loc=(20, 100))
    for _ in range(3):
        td = env.reset(batch_size=[2])
        assert 20 <= td["demand"].shape[-1] <= 100


def test_mixed_from_the_hydra_config():
    overrides = [
        "model=drlhqcf",
        "env.generator_params.preset=mixed",
        "+env.generator_params.mixed={num_loc:[20,100]}",
    ]
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose("main", overrides)
    env = instantiate(cfg.env)
    assert isinstance(env, CLRPEnv) and env.generator.preset == "mixed"
    assert env.generator.preset_sampler.ranges.num_loc == (20, 100)
    assert env.generator.num_loc == 100 and env.generator.draw_num_loc
    td = env.reset(batch_size=[2])
    assert 20 <= td["demand"].shape[-1] <= 100


def test_register_preset_refuses_a_taken_name():
    class Other(PresetSampler):
        pass

    register_preset("mixed", "clrp_rl4co.mixed_preset:MixedSampler")  # the same again: no-op
    assert PRESET_SAMPLERS["mixed"] == "clrp_rl4co.mixed_preset:MixedSampler"
    for name in ("mixed", "clrp20", "num_loc"):
        with pytest.raises(ValueError, match=f"^preset: the name '{name}' is taken$"):
            register_preset(name, Other)
    with pytest.raises(ValueError, match="^preset: the name 'mixed' is taken$"):
        register_preset("mixed", MixedSampler)  # the class, registered by location
    with pytest.raises(ValueError, match="^sampler: expected 'package.module:ClassName', got"):
        register_preset("elsewhere", "clrp_rl4co.mixed_preset.MixedSampler")
    assert "elsewhere" not in PRESET_SAMPLERS


LAZY_MODULE = """
from clrp_rl4co.mixed_preset import MixedSampler


class Copy(MixedSampler):
    pass


NOT_A_SAMPLER = dict
"""


def test_a_preset_registered_by_location_is_imported_when_first_selected(tmp_path, monkeypatch):
    (tmp_path / "lazy_presets.py").write_text(LAZY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lazy_presets", raising=False)
    monkeypatch.setitem(PRESET_SAMPLERS, "copy", "lazy_presets:Copy")
    monkeypatch.setitem(PRESET_SAMPLERS, "dict", "lazy_presets:NOT_A_SAMPLER")
    monkeypatch.setitem(PRESET_SAMPLERS, "gone", "lazy_presets:Gone")
    assert "lazy_presets" not in sys.modules
    gen = CLRPGenerator(preset="copy", num_loc=12)
    assert type(gen.preset_sampler).__name__ == "Copy" and "lazy_presets" in sys.modules
    assert gen(2)["demand"].shape == (2, 12)
    with pytest.raises(TypeError, match="^preset 'dict': lazy_presets:NOT_A_SAMPLER is no Pre"):
        CLRPGenerator(preset="dict")
    with pytest.raises(AttributeError, match="Gone"):
        CLRPGenerator(preset="gone")


def test_importing_the_envs_does_not_import_the_mixed_preset(monkeypatch):
    import importlib

    import clrp_rl4co.envs

    monkeypatch.delitem(sys.modules, "clrp_rl4co.mixed_preset", raising=False)
    importlib.reload(clrp_rl4co.envs)  # registers "mixed" again by location: a no-op
    assert "clrp_rl4co.mixed_preset" not in sys.modules
    CLRPGenerator(preset="mixed", num_loc=20)
    assert "clrp_rl4co.mixed_preset" in sys.modules  # imported when first selected


# ------------------------------------------------------------------ the env folder alone
STANDALONE = """
import sys
import torch
from tensordict import TensorDict
from clrpenv import CLRPEnv
from clrpenv.generator import PRESET_SAMPLERS, PresetSampler, register_preset, CLRPGenerator

assert "clrp_rl4co" not in sys.modules
assert PRESET_SAMPLERS == {}
try:
    CLRPGenerator(preset="mixed")
except ValueError as error:
    print("preset error:", error)
try:
    CLRPEnv(generator_params={"preset": "clrp20", "mixed": {"num_loc": [20, 30]}})
except ValueError as error:
    print("keyword error:", str(error).split(";")[0])


class Line(PresetSampler):
    '''Every instance: customers on the diagonal, demand 1, one depot per 2 customers.'''

    def __init__(self, options, **given):
        self.options = dict(options or {})
        self.given = given

    def bounds(self, side):
        return dict(num_loc=self.options.get("largest", 6), min_demand=1, max_demand=1,
                    vehicle_capacity=3.0, vehicle_fixed_cost=0.5 * side)

    def sample(self, generator, batch_size):
        n = 4 if generator.draw_num_loc else generator.num_loc
        d = max(1, n // 2)
        t = torch.linspace(0, 1, n)
        locs = torch.cat([torch.zeros(d, 2), torch.stack([t, t], -1)]).expand(*batch_size, -1, -1)
        ones = torch.ones(*batch_size, d)
        return TensorDict({"locs": locs, "depot_capacity": 10 * ones, "opening_cost": ones,
                           "demand": torch.ones(*batch_size, n),
                           "vehicle_capacity": torch.full((*batch_size, 1), 3.0),
                           "vehicle_fixed_cost": torch.full((*batch_size, 1), 0.5)},
                          batch_size=batch_size)


register_preset("line", Line)
gen = CLRPGenerator(preset="line", line={"largest": 8}, min_demand=2, max_loc=2.0)
print("given min_demand:", gen.preset_sampler.given["min_demand"])
print("spec:", gen.num_loc, gen.min_demand, gen.max_demand, gen.vehicle_capacity,
      gen.vehicle_fixed_cost, gen.draw_num_loc)
print("drawn:", tuple(gen(3)["demand"].shape))
fixed = CLRPGenerator(preset="line", num_loc=6)
print("fixed:", fixed.draw_num_loc, tuple(fixed(1)["depot_capacity"].shape))
env = CLRPEnv(generator_params={"preset": "line"})
print("env:", tuple(env.reset(batch_size=[2])["action_mask"].shape))
"""


def test_the_env_folder_alone_knows_only_the_paper_presets_and_takes_registrations(tmp_path):
    """The env folder as RL4CO gets it (a package of its own, no clrp_rl4co): ``"mixed"``
    is unknown, its keyword is an unknown parameter, and a registered sampler is used."""
    shutil.copytree(ENV_DIR, tmp_path / "clrpenv", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "run.py").write_text(textwrap.dedent(STANDALONE))
    out = subprocess.run(
        [sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines == [
        f"preset error: preset: unknown preset 'mixed'; choose one of {PAPER_PRESETS}",
        "keyword error: mixed: unknown generator parameter",
        "given min_demand: 2",
        "spec: 8 1 1 3.0 1.0 True",
        "drawn: (3, 4)",
        "fixed: False (1, 3)",
        "env: (2, 6)",
    ]


@pytest.mark.parametrize("distribution", ["normal", "uniform", "cluster"])
def test_a_named_distribution_does_not_take_unknown_keywords(distribution):
    # only a custom callable receives every extra keyword; RL4CO's named samplers do not
    with pytest.raises(ValueError, match=r"^num_locs: unknown generator parameter"):
        CLRPGenerator(loc_distribution=distribution, num_locs=50)
    with pytest.raises(ValueError, match=r"^num_locs: unknown generator parameter"):
        CLRPGenerator(depot_distribution=distribution, num_locs=50)
