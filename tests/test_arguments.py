"""The argument checks of solve / solve_many (``clrp_rl4co.arguments``), called directly: each
accepted value comes back converted, each bad one is an error naming the parameter and the
value (TypeError: its type, ValueError: its value)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from instances import random_instance

from clrp_rl4co.arguments import (
    MAX_SEED,
    check_instances,
    check_iterations,
    check_many_arguments,
    check_solve_arguments,
)
from clrp_rl4co.auto import METHODS


def _raises(error, message, function, *args):
    with pytest.raises(error) as caught:
        function(*args)
    assert type(caught.value) is error
    assert str(caught.value) == message


# ---------------------------------------------------------------- check_solve_arguments
def test_good_solve_arguments_come_back_as_float_str_and_int():
    assert MAX_SEED == 2**31 - 1
    for method in METHODS:
        seconds, model, seed = check_solve_arguments(method, 3, None, 5, True)
        assert (seconds, model, seed) == (3.0, None, 5)
        assert type(seconds) is float and type(seed) is int
    checked = check_solve_arguments("x8", np.float32(0.5), "drlhq_clrp20", np.int64(9), False)
    assert checked == (0.5, "drlhq_clrp20", 9) and type(checked[2]) is int
    assert type(checked[0]) is float
    assert check_solve_arguments("x8", 1e-9, Path("a/b"), 0, False) == (1e-9, "a/b", 0)
    assert check_solve_arguments("exact", 2.5, None, MAX_SEED, False)[2] == MAX_SEED


def test_a_bad_method_is_named_with_its_type_or_value():
    _raises(TypeError, f"method: must be a str, one of {list(METHODS)}, got bytes b'x8'",
            check_solve_arguments, b"x8", 1.0, None, 0, False)  # fmt: skip
    _raises(ValueError, f"method: must be one of {list(METHODS)}, got 'X8'",
            check_solve_arguments, "X8", 1.0, None, 0, False)  # fmt: skip


@pytest.mark.parametrize(
    "seconds, error, message",
    [
        (0, ValueError, "seconds: must be a positive number of seconds, got 0.0"),
        (-1e-9, ValueError, "seconds: must be a positive number of seconds, got -1e-09"),
        (float("inf"), ValueError, "seconds: must be a positive number of seconds, got inf"),
        (float("nan"), ValueError, "seconds: must be a positive number of seconds, got nan"),
        (False, TypeError, "seconds: must be a number of seconds, got bool False"),
        ("5", TypeError, "seconds: must be a number of seconds, got str '5'"),
        (1j, TypeError, "seconds: must be a number of seconds, got complex 1j"),
    ],
)
def test_seconds_must_be_a_positive_finite_number(seconds, error, message):
    _raises(error, message, check_solve_arguments, "pyvrp", seconds, None, 0, False)


@pytest.mark.parametrize(
    "model, error, message",
    [
        ("   ", ValueError, "model: must be a model name or a checkpoint path, got '   '"),
        ("", ValueError, "model: must be a model name or a checkpoint path, got ''"),
        (b"m", TypeError, "model: must be a model name, a checkpoint path or None, got bytes b'm'"),
        (3, TypeError, "model: must be a model name, a checkpoint path or None, got int 3"),
    ],
)
def test_model_must_be_a_name_a_path_or_none(model, error, message):
    _raises(error, message, check_solve_arguments, "x8", 1.0, model, 0, False)


@pytest.mark.parametrize(
    "seed, error, message",
    [
        (-1, ValueError, f"seed: must be from 0 to {MAX_SEED} (2**31 - 1), got -1"),
        (MAX_SEED + 1, ValueError,
         f"seed: must be from 0 to {MAX_SEED} (2**31 - 1), got 2147483648"),
        (np.int64(-5), ValueError, f"seed: must be from 0 to {MAX_SEED} (2**31 - 1), got -5"),
        (True, TypeError, "seed: must be an int, got bool True"),
        (2.0, TypeError, "seed: must be an int, got float 2.0"),
        (None, TypeError, "seed: must be an int, got NoneType None"),
    ],
)  # fmt: skip
def test_seed_must_be_an_int_from_0_to_max_seed(seed, error, message):
    _raises(error, message, check_solve_arguments, "pyvrp", 1.0, None, seed, False)


def test_progress_must_be_a_bool():
    assert check_solve_arguments("pyvrp", 1.0, None, 0, True) == (1.0, None, 0)
    _raises(TypeError, "progress: must be a bool, got int 1",
            check_solve_arguments, "pyvrp", 1.0, None, 0, 1)  # fmt: skip


def test_the_first_bad_argument_in_the_documented_order_is_named():
    # method, seconds, model, seed, progress: each check runs before the next parameter's
    with pytest.raises(ValueError, match="^method:"):
        check_solve_arguments("fast", -1, 3, -1, None)
    with pytest.raises(ValueError, match="^seconds:"):
        check_solve_arguments("x8", -1, 3, -1, None)
    with pytest.raises(TypeError, match="^model:"):
        check_solve_arguments("x8", 1, 3, -1, None)
    with pytest.raises(ValueError, match="^seed:"):
        check_solve_arguments("x8", 1, "m", -1, None)


def test_a_long_value_is_cut_in_the_message():
    name = "m" * 58  # repr with its quotes: 60 characters, shown whole
    _raises(TypeError, f"progress: must be a bool, got str '{name}'",
            check_solve_arguments, "pyvrp", 1.0, None, 0, name)  # fmt: skip
    longer = "m" * 59  # 61 characters: cut to 57 and "..." (60 in all)
    cut = repr(longer)[:57] + "..."
    assert len(cut) == 60
    _raises(TypeError, f"progress: must be a bool, got str {cut}",
            check_solve_arguments, "pyvrp", 1.0, None, 0, longer)  # fmt: skip


# ---------------------------------------------------------------- check_iterations
def test_iterations_none_or_an_int_of_at_least_one():
    assert check_iterations(None) is None
    assert check_iterations(1) == 1
    converted = check_iterations(np.int32(250))
    assert converted == 250 and type(converted) is int
    _raises(ValueError, "iterations: must be >= 1, got 0", check_iterations, 0)
    _raises(ValueError, "iterations: must be >= 1, got -2", check_iterations, np.int64(-2))
    _raises(TypeError, "iterations: must be an int or None, got bool True", check_iterations, True)
    _raises(TypeError, "iterations: must be an int or None, got float 10.0", check_iterations, 10.0)


# ---------------------------------------------------------------- check_many_arguments
class _Submits:
    def submit(self, *args):  # pragma: no cover - never called
        raise AssertionError


class _NotCallableSubmit:
    submit = 3

    def __repr__(self):
        return "<bad>"


def test_many_arguments_accept_the_documented_values():
    assert check_many_arguments(1, None, None) is None
    assert check_many_arguments(np.int64(3), _Submits(), print) is None


def test_many_arguments_reject_bad_values_naming_them():
    _raises(ValueError, "workers: must be >= 1, got 0", check_many_arguments, 0, None, None)
    _raises(ValueError, "workers: must be >= 1, got -1",
            check_many_arguments, np.int8(-1), None, None)  # fmt: skip
    _raises(TypeError, "workers: must be an int, got bool False",
            check_many_arguments, False, None, None)  # fmt: skip
    message = (
        "executor: must be a concurrent.futures.Executor or None, got _NotCallableSubmit <bad>"
    )
    _raises(TypeError, message, check_many_arguments, 1, _NotCallableSubmit(), None)
    _raises(TypeError, "on_result: must be callable or None, got int 5",
            check_many_arguments, 1, None, 5)  # fmt: skip
    # workers is checked before executor
    with pytest.raises(ValueError, match="^workers:"):
        check_many_arguments(0, 4, 5)
    with pytest.raises(TypeError, match="^executor:"):
        check_many_arguments(1, 4, 5)


# ---------------------------------------------------------------- check_instances
def test_one_instance_or_path_is_a_list_of_one():
    instance = random_instance(3, seed=0, num_depots=2)
    assert check_instances(instance) == [instance]
    assert check_instances("a.json") == ["a.json"]
    assert check_instances(Path("b.dat")) == [Path("b.dat")]


def test_an_ordered_iterable_is_listed_in_order():
    instance = random_instance(3, seed=0, num_depots=2)
    items = check_instances(iter(["a", Path("b"), instance]))
    assert items == ["a", Path("b"), instance] and isinstance(items, list)
    assert check_instances(("x", "y")) == ["x", "y"]
    assert check_instances([]) == []


@pytest.mark.parametrize("bad", [b"a.json", bytearray(b"a"), {"a": 1}, {"a"}, frozenset(), 4])
def test_what_is_not_an_ordered_iterable_of_instances_is_refused(bad):
    message = (
        "instances: must be a list (or another ordered iterable) of CLRPInstances or file "
        f"paths, or one of them, got {type(bad).__name__} {repr(bad)}"
    )
    _raises(TypeError, message, check_instances, bad)


def test_a_bad_item_is_named_by_its_0_based_index():
    message = "instances[1]: must be a CLRPInstance or a file path, got int 7 (item 2 of 3)"
    _raises(TypeError, message, check_instances, ["a", 7, None])
    with pytest.raises(TypeError, match=re.escape("instances[0]:") + ".* NoneType None"):
        check_instances([None])
