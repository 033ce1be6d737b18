"""Where the values of JSON text are (clrp_rl4co.data.json_text.JsonScan) and the line-numbered
errors of read_json_text: lines and columns count from 1, a line being what ends at "\\n"."""

from __future__ import annotations

import sys

import pytest

from clrp_rl4co.data.json_text import JsonScan, read_json_text


def _error(tmp_path, content: bytes) -> str:
    path = tmp_path / "f.json"
    path.write_bytes(content)
    with pytest.raises(ValueError) as info:
        read_json_text(path)
    text = str(info.value)
    assert text.startswith(f"{path}:"), text
    return text.removeprefix(f"{path}:")


# ---------------------------------------------------------------- read_json_text
def test_the_text_and_its_value(tmp_path):
    text = '{"a": [1, 2.5, "x"]}\n'
    path = tmp_path / "f.json"
    path.write_text(text)
    assert read_json_text(path) == (text, {"a": [1, 2.5, "x"]})


@pytest.mark.parametrize(
    "content, where",
    [
        # third line, after two newlines; é is one character: column 10
        (b'\n{"a": 1,\n "b": "x\xc3\xa9\xff"\n}\n', "3: not a text file (invalid start byte "
                                                   "0xff at column 10)"),
        # a newline first: the bad byte on line 2 at column 1
        (b'\n\xff"\n1\n', "2: not a text file (invalid start byte 0xff at column 1)"),
        # on the first line, newlines after it only
        (b'"ab\xfe"\n\n', "1: not a text file (invalid start byte 0xfe at column 4)"),
    ],
)  # fmt: skip
def test_a_byte_that_is_not_utf8_is_named_by_line_and_column(tmp_path, content, where):
    assert _error(tmp_path, content) == where


def test_not_json_is_named_by_the_parser_line_and_column(tmp_path):
    assert _error(tmp_path, b'{\n  "a": 1,\n  "b" 2\n}\n') == (
        "3: not valid JSON (Expecting ':' delimiter at column 7)"
    )


def test_brackets_nested_too_deeply_are_named_at_the_deepest_line(tmp_path):
    depth = 5000  # beyond the parser's recursion
    content = "\n" + "[" * depth + "\n" + "]" * depth + "\n\n"
    assert _error(tmp_path, content.encode()) == (
        f"2: not valid JSON (nested too deeply: {depth} levels of brackets)"
    )


def test_an_integer_too_long_to_convert_is_named_at_its_line(tmp_path):
    limit = sys.get_int_max_str_digits()
    assert limit > 0
    longest = "7" * limit  # converts
    content = f'{{"a": {longest},\n "b": true,\n "c": -{longest}9\n}}\n\n'
    where = _error(tmp_path, content.encode())
    assert where.startswith("3: not valid JSON (") and f"({limit} digits)" in where


# ---------------------------------------------------------------- JsonScan
def test_each_value_has_its_span_by_path():
    text = '{"a": [1, {"b": "x"}],\n "c": null, "a2": -3}'
    scan = JsonScan(text)
    assert scan.spans[()] == (0, len(text))
    assert text[slice(*scan.spans[("a",)])] == '[1, {"b": "x"}]'
    assert text[slice(*scan.spans[("a", 0)])] == "1"
    assert text[slice(*scan.spans[("a", 1)])] == '{"b": "x"}'
    assert text[slice(*scan.spans[("a", 1, "b")])] == '"x"'
    assert text[slice(*scan.spans[("c",)])] == "null"
    assert text[slice(*scan.spans[("a2",)])] == "-3"


def test_paths_deeper_than_three_are_not_kept():
    scan = JsonScan('{"a": [{"b": [[1], {"c": 2}]}]}')
    assert ("a", 0, "b") in scan.spans
    assert all(isinstance(p, tuple) and len(p) <= 3 for p in scan.spans), scan.spans


def test_a_repeated_key_is_its_last_value():
    text = '{"a": 1, "a": 22}'
    assert JsonScan(text).spans[("a",)] == (text.index("22"), text.index("22") + 2)


def test_the_deepest_brackets_and_where_they_are_first_reached():
    assert JsonScan("12").deepest == (0, 0)
    assert JsonScan("\n[1]").deepest == (1, 1)
    text = '{"a": [[1],\n [[2]]], "b": [[[3]], [[4]]]}'
    assert JsonScan(text).deepest == (4, text.index("[2]"))  # not the later [[[3]]]
    text = "[[1],\n [2]]"
    assert JsonScan(text).deepest == (2, 1)  # the first of the two at depth 2


def test_the_first_integer_too_long_to_convert():
    limit = sys.get_int_max_str_digits()
    assert JsonScan('[1, "2", true]').long_integer is None
    text = f'[1, true, "x", {"8" * limit}, 2.5,\n -{"9" * (limit + 1)}, {"9" * (limit + 2)}]'
    assert JsonScan(text).long_integer == text.index("-9")


def test_lines_count_from_one():
    scan = JsonScan('{\n"a":\n  [1,\n   2]\n}')
    # a newline belongs to the line it ends
    assert [scan.line(k) for k in (0, 1, 2, 5, 6, 7)] == [1, 1, 2, 2, 2, 3]
    assert scan.line(len(scan.text)) == 5


def test_the_line_of_a_path_or_its_nearest_enclosing_value():
    text = '{\n "a":\n  [\n   {"b": 1}\n  ]\n}'
    scan = JsonScan(text)
    assert scan.line_of(("a", 0, "b")) == 4
    assert scan.line_of(("a",)) == 3
    assert scan.line_of(("a", 0, "missing")) == 4  # its object
    assert scan.line_of(("a", 5, "b")) == 3  # no such item: the list
    assert scan.line_of(("z", 0)) == 1  # the whole text
    assert JsonScan("  \n  ").line_of(("a", 0)) == 1  # no value at all: line 1
    assert JsonScan("\n\n").line_of(()) == 1


def test_the_lines_a_value_spans():
    text = '{\n "a":\n  [\n   {"b": 1}\n  ]\n}'
    scan = JsonScan(text)
    assert scan.lines_of(("a",)) == "lines 3-5"
    assert scan.lines_of(("a", 0)) == "line 4"
    assert scan.lines_of(()) == "lines 1-6"
    assert scan.lines_of(("a", 7)) == "line 3"  # not there: the line of its enclosing value
