"""Checkpoints pickled before a class moved (clrp_rl4co.policies.unpickling): each class of
``MOVED`` loads from its former module as the class at its home now, the rest as pickled."""

from __future__ import annotations

import io
import pickle

import pytest

from clrp_rl4co.mixed_preset import MixedRanges, MixedSampler
from clrp_rl4co.policies import unpickling

HOME = "clrp_rl4co.mixed_preset"


def _pickled_under(obj, module: str) -> bytes:
    """``obj`` pickled (protocol 0) as if its class lived in ``module``."""
    text = pickle.dumps(obj, protocol=0)
    assert f"{HOME}\n{type(obj).__name__}".encode() in text
    return text.replace(f"{HOME}\n".encode(), f"{module}\n".encode())


@pytest.mark.parametrize(
    "former, cls",
    [
        ("clrp_rl4co.envs.clrp.generator", MixedRanges),
        ("clrp_rl4co.generators.mixed", MixedRanges),
        ("clrp_rl4co.generators.mixed", MixedSampler),
    ],
)
def test_each_moved_class_loads_from_its_former_module(former, cls):
    """Each entry of ``MOVED``: a pickle naming the former module loads the class at home."""
    assert unpickling.MOVED[(former, cls.__name__)] == (HOME, cls.__name__)
    obj = cls(num_loc=(20, 50)) if cls is MixedRanges else cls(MixedRanges(num_loc=(20, 50)))
    old = _pickled_under(obj, former)
    with pytest.raises((ModuleNotFoundError, AttributeError)):
        pickle.loads(old)  # the plain unpickler looks in the former module
    loaded = unpickling.load(io.BytesIO(old))
    assert type(loaded) is cls
    assert vars(loaded) == vars(obj)


def test_classes_that_did_not_move_load_from_where_they_were_pickled():
    """A class not in ``MOVED`` is looked up where the pickle says, as by :mod:`pickle`."""
    ranges = MixedRanges(num_loc=(30, 40))
    assert unpickling.load(io.BytesIO(pickle.dumps(ranges))) == ranges
    assert unpickling.load(io.BytesIO(pickle.dumps({"a": [1, 2]}))) == {"a": [1, 2]}


def test_only_the_listed_pairs_move():
    """Another class of a former module is not redirected (the pair, not the module, moves)."""
    old = _pickled_under(MixedSampler(None), "clrp_rl4co.envs.clrp.generator")
    with pytest.raises(AttributeError, match="MixedSampler"):
        unpickling.load(io.BytesIO(old))


def test_the_unpickler_takes_pickles_keywords():
    """``load(file, **kwargs)`` passes :func:`pickle.load`'s keywords on (``torch.load`` gives
    ``encoding``): a Python 2 string loads as bytes with ``encoding="bytes"``."""
    python2_string = b"S'caf\\xe9'\np0\n."
    assert unpickling.load(io.BytesIO(python2_string), encoding="bytes") == b"caf\xe9"
    assert unpickling.load(io.BytesIO(python2_string), encoding="latin1") == "caf\xe9"
    with pytest.raises(UnicodeDecodeError):
        unpickling.load(io.BytesIO(python2_string))  # the default: ASCII
