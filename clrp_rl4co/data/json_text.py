"""JSON text with its lines: where each value of a JSON file is (:class:`JsonScan`) and the
file's text and parsed value with line-numbered errors (:func:`read_json_text`), for the
readers of JSON instance files (:mod:`.json_instance`, :mod:`.schneider`) to name the line of
the value at fault."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

#: The tokens of JSON text: punctuation, a string, or anything else up to the next one (a
#: number or a literal); whitespace before each is skipped.
_TOKEN = re.compile(r'[ \t\n\r]*(?:([{}\[\]:,])|("(?:[^"\\]|\\.)*")|([^ \t\n\r{}\[\]:,"]+))', re.S)
#: The longest path :class:`JsonScan` keeps (``customers``, an index, a field).
_MAX_DEPTH = 3
#: An integer literal (no fraction, no exponent): what ``int()`` converts.
_INTEGER = re.compile(r"-?(\d+)")


class JsonScan:
    """Where the values of JSON text are, by a flat pass over its tokens (no recursion, so
    any depth). Meant for text that :func:`json.loads` parsed, or parsed up to a point:
    the pass stops at the first token it does not expect.

    Attributes:
        spans: each value's path (keys and 0-based indices, at most :data:`_MAX_DEPTH` of
            them) -> its ``(start, end)`` offsets; a repeated key is its last value's, as
            :func:`json.loads` keeps.
        deepest: ``(depth, offset)``: the most nested open brackets and where first reached.
        long_integer: the offset of the first integer literal too long for ``int()``.
    """

    def __init__(self, text: str):
        self.text = text
        self.spans: dict[tuple, tuple[int, int]] = {}
        self.deepest = (0, 0)
        self.long_integer: int | None = None
        limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
        stack: list[list] = []  # [bracket, path, start, index or key, expecting a key]
        pos = 0
        while True:
            match = _TOKEN.match(text, pos)
            if match is None:
                return
            punct, string, other = match.groups()
            start, pos = match.start(match.lastindex), match.end()
            top = stack[-1] if stack else None
            if top is not None and top[0] == "{" and top[4] and string is not None:
                try:
                    top[3], top[4] = json.loads(string), False  # a key
                except ValueError:  # past the valid text
                    return
                continue
            if punct in ("}", "]"):
                if top is None:
                    return
                if top[1] is not None:
                    self.spans[top[1]] = (top[2], pos)
                stack.pop()
                continue
            if punct == ",":
                if top is None:
                    return
                if top[0] == "[":
                    top[3] += 1
                else:
                    top[4] = True
                continue
            if punct == ":":
                continue
            if top is None:
                path = ()
            elif top[1] is None or len(top[1]) == _MAX_DEPTH:
                path = None  # deeper than any field: not kept (memory linear in the text)
            else:
                path = top[1] + (top[3],)
            if punct is not None:  # { or [
                stack.append([punct, path, start, 0 if punct == "[" else None, punct == "{"])
                if len(stack) > self.deepest[0]:
                    self.deepest = (len(stack), start)
                continue
            if path is not None:
                self.spans[path] = (start, pos)
            integer = _INTEGER.fullmatch(other or "")
            if integer and limit and len(integer.group(1)) > limit and self.long_integer is None:
                self.long_integer = start

    def line(self, offset: int) -> int:
        """The 1-based line of ``offset`` (as :class:`json.JSONDecodeError` counts them)."""
        return self.text.count("\n", 0, offset) + 1

    def line_of(self, path: tuple) -> int:
        """The line where the value at ``path`` starts (else its nearest enclosing value)."""
        while path and path not in self.spans:
            path = path[:-1]
        return self.line(self.spans[path][0]) if path in self.spans else 1

    def lines_of(self, path: tuple) -> str:
        """``line 7`` or ``lines 7-11``: the lines the value at ``path`` spans."""
        if path not in self.spans:
            return f"line {self.line_of(path)}"
        first, last = (self.line(offset) for offset in self.spans[path])
        return f"line {first}" if first == last else f"lines {first}-{last}"


def read_json_text(path: Path) -> tuple[str, Any]:
    """The text of the JSON file ``path`` and its parsed value.

    Raises:
        ValueError: the file is not UTF-8 text or not JSON; the message starts with
            ``path:LINE: `` (1-based; with the 1-based column where the parser says it).
        OSError: the file cannot be read.
    """
    raw = path.read_bytes()
    try:
        text = raw.decode()
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw.count(b"\n", 0, exc.start) + 1
        column = len(raw[line_start : exc.start].decode()) + 1
        raise ValueError(
            f"{path}:{line}: not a text file ({exc.reason} 0x{raw[exc.start]:02x} at column "
            f"{column})"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        message = f"{exc.msg} at column {exc.colno}"
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON ({message})") from None
    except RecursionError:
        scan = JsonScan(text)
        depth, offset = scan.deepest
        raise ValueError(
            f"{path}:{scan.line(offset)}: not valid JSON (nested too deeply: {depth} levels of "
            "brackets)"
        ) from None
    except ValueError as exc:  # an integer literal too long to convert
        scan = JsonScan(text)
        line = 1 if scan.long_integer is None else scan.line(scan.long_integer)
        raise ValueError(f"{path}:{line}: not valid JSON ({exc})") from None
    return text, data
