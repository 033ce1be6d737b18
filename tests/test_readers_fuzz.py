"""A bounded fuzz of the instance readers: corrupted, truncated, shuffled and random files.

Property: every input gives an instance that passes its own check, or exactly one
``ValueError`` (or ``OSError``) raised by the reader itself, on one line, starting with the
file's path (``path: ...`` or, for one value of a Prodhon file, ``path:LINE: ...``) and never
naming an env tensor index (``demand[0, 3]``). Inputs derive from small valid files written
here and, where ``$CLRP_BENCHMARKS_DIR`` is set, from a Prins file. Bounded for CI (120
examples per test, a few seconds in all); ``CLRP_FUZZ_EXAMPLES=2000`` searches longer.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clrp_rl4co.data import CLRPInstance, read_json_instance, read_prodhon, write_prodhon
from clrp_rl4co.data.json_instance import instance_to_dict

FUZZ = settings(
    max_examples=int(os.environ.get("CLRP_FUZZ_EXAMPLES", 120)),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

#: Tokens a corrupted file may carry: numbers of every sign and size, non-numbers, non-finite.
ODD_TOKENS = st.sampled_from(
    ["0", "1", "-1", "2", "0.5", "-0", "1e400", "-1e400", "1e-320", "nan", "inf", "-inf",
     "x", "1,5", "0x10", "1_000", "99999999999", "1e9", "\ufffd", "Infinity", "20.0", "7"]
)  # fmt: skip
TOKENS = ODD_TOKENS | st.text(min_size=1, max_size=6).filter(lambda t: t.split() == [t])


def _toy() -> CLRPInstance:
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
        customer_locs=np.array([[0.0, 3.0], [10.0, 4.0], [5.0, 5.5]]),
        depot_capacity=np.array([10.0, 20.0]),
        opening_cost=np.array([100.0, 50.5]),
        demand=np.array([4.0, 5.0, 6.0]),
        vehicle_capacity=12.0,
        vehicle_fixed_cost=10.0,
        name="toy",
    )


def _valid_prodhon_texts(folder: Path) -> list[str]:
    """The toy instance as written, and the smallest Prins file where the data is there."""
    write_prodhon(_toy(), folder / "toy.dat")
    texts = [(folder / "toy.dat").read_text()]
    root = os.environ.get("CLRP_BENCHMARKS_DIR")
    prins = Path(root or ".") / "prins" / "coord20-5-1.dat"
    if root and prins.is_file():
        texts.append(prins.read_bytes().decode())
    return texts


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _check_outcome(read, path: Path) -> None:
    """Read ``path``: an instance that passes its check, or one clear error naming it."""
    try:
        inst = read(path)
    except OSError as exc:
        assert str(path) in str(exc)
        return
    except ValueError as exc:
        message = str(exc)
        assert re.match(re.escape(str(path)) + r"(:\d+)?: \S", message), message
        assert "\n" not in message, message
        assert not re.search(r"\w\[0, \d", message), message  # an env tensor index
        assert exc.__cause__ is None and exc.__suppress_context__ or exc.__context__ is None
        frame = exc.__traceback__
        while frame.tb_next is not None:
            frame = frame.tb_next
        raised_in = Path(frame.tb_frame.f_code.co_filename)
        assert raised_in.parent.name == "data", f"raised in {raised_in}: {message}"
        return
    assert isinstance(inst, CLRPInstance)
    inst.check()


def _edit_tokens(text: str, data) -> str:
    """Replace, delete or insert a few whitespace-separated tokens (lines kept)."""
    lines = [line.split() for line in text.split("\n")]
    for _ in range(data.draw(st.integers(1, 3))):
        spots = [(i, k) for i, line in enumerate(lines) for k in range(len(line))]
        i, k = data.draw(st.sampled_from(spots))
        action = data.draw(st.sampled_from(["replace", "delete", "insert"]))
        if action == "replace":
            lines[i][k] = data.draw(TOKENS)
        elif action == "delete":
            del lines[i][k]
        else:
            lines[i].insert(k, data.draw(TOKENS))
        if not any(lines):
            break
    return "\n".join("\t".join(line) for line in lines)


def _corrupt(text: str, data) -> str | bytes:
    kind = data.draw(st.sampled_from(["tokens", "truncate", "shuffle", "lines", "bytes"]))
    if kind == "tokens":
        return _edit_tokens(text, data)
    if kind == "truncate":
        return text[: data.draw(st.integers(0, len(text)))]
    lines = text.split("\n")
    if kind == "shuffle":
        return "\n".join(data.draw(st.permutations(lines)))
    if kind == "lines":  # a line dropped or repeated
        k = data.draw(st.integers(0, len(lines) - 1))
        return "\n".join(
            lines[:k] + lines[k + 1 :] if data.draw(st.booleans()) else lines + [lines[k]]
        )
    raw = bytearray(text.encode())
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    return bytes(raw)


def _write(path: Path, content: str | bytes) -> None:
    path.write_bytes(content if isinstance(content, bytes) else content.encode())


@FUZZ
@given(data=st.data())
def test_a_corrupted_prodhon_file_reads_or_fails_clearly(folder, data):
    text = data.draw(st.sampled_from(_valid_prodhon_texts(folder)))
    path = folder / "corrupted.dat"
    _write(path, _corrupt(text, data))
    _check_outcome(read_prodhon, path)


@FUZZ
@given(content=st.binary(max_size=200) | st.text(alphabet="0123456789 .-\n\te", max_size=120))
def test_a_random_file_fails_clearly_as_a_prodhon_file(folder, content):
    path = folder / "random.dat"
    _write(path, content)
    _check_outcome(read_prodhon, path)


@FUZZ
@given(data=st.data())
def test_a_read_prodhon_instance_writes_back_to_the_same_instance(folder, data):
    """Where a corrupted file still reads, writing and reading it again changes nothing."""
    text = data.draw(st.sampled_from(_valid_prodhon_texts(folder)))
    path = folder / "edited.dat"
    _write(path, _edit_tokens(text, data))
    try:
        inst = read_prodhon(path)
    except ValueError:
        return
    write_prodhon(inst, folder / "again.dat")
    again = read_prodhon(folder / "again.dat", name=inst.name)
    for key in ("locs", "depot_capacity", "opening_cost", "demand"):
        np.testing.assert_array_equal(getattr(again, key), getattr(inst, key))
    assert (again.vehicle_capacity, again.vehicle_fixed_cost, again.rounded_costs) == (
        inst.vehicle_capacity,
        inst.vehicle_fixed_cost,
        inst.rounded_costs,
    )


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**400), 10**400)
    | st.floats()
    | st.text(max_size=5)
    | st.sampled_from(["ceil100", "none", "name"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


def _valid_json_objects(folder: Path) -> list[dict]:
    objects = [instance_to_dict(_toy())]
    for text in _valid_prodhon_texts(folder)[1:]:
        (folder / "prins.dat").write_text(text)
        objects.append(instance_to_dict(read_prodhon(folder / "prins.dat")))
    return objects


def _edit_json(obj, data):
    """Set, delete or retype one field somewhere in the object (a deep copy)."""
    obj = json.loads(json.dumps(obj))
    node = obj
    while isinstance(node, dict | list) and node and data.draw(st.booleans()):
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        child = node[data.draw(st.sampled_from(keys))]
        if not isinstance(child, dict | list) or not child:
            break
        node = child
    if isinstance(node, dict | list) and node:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        key = data.draw(st.sampled_from(keys))
        if data.draw(st.booleans()):
            node[key] = data.draw(JSON_VALUES)
        else:
            del node[key]
    return obj


@FUZZ
@given(data=st.data())
def test_a_corrupted_json_file_reads_or_fails_clearly(folder, data):
    obj = data.draw(st.sampled_from(_valid_json_objects(folder)))
    path = folder / "corrupted.json"
    if data.draw(st.booleans()):
        text = json.dumps(_edit_json(obj, data), indent=2)
    else:
        text = _corrupt(json.dumps(obj, indent=2), data)
    _write(path, text)
    _check_outcome(read_json_instance, path)


@FUZZ
@given(content=st.binary(max_size=200) | JSON_VALUES.map(json.dumps))
def test_a_random_file_fails_clearly_as_a_json_file(folder, content):
    path = folder / "random.json"
    _write(path, content)
    _check_outcome(read_json_instance, path)
