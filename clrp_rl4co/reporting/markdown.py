"""Markdown tables and logs: the one writer of every table the package and its tools print or
save (:func:`markdown_table`), and of the reports that keep every check (:func:`append_entry`).

>>> print(markdown_table(["method", "cost"], [["PyVRP", "8.55"]], align="lr"))
| method | cost |
|:---|---:|
| PyVRP | 8.55 |
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

#: Separator cell of each alignment: left, right, centre, none.
_RULES = {"l": ":---", "r": "---:", "c": ":---:", "-": "---"}


def markdown_table(
    header: Sequence[object],
    rows: Iterable[Sequence[object]],
    align: str | Sequence[str] | None = None,
) -> str:
    """A GitHub-flavoured Markdown table (no trailing newline).

    Args:
        header: the column titles.
        rows: one sequence of cells per row, as many as ``header``; cells are written with
            ``str`` (``None`` as an empty cell), a ``|`` inside a cell escaped.
        align: one letter per column, ``l`` / ``r`` / ``c`` / ``-`` (left, right, centre,
            unspecified); a single letter applies to every column; default unspecified.

    Raises:
        ValueError: a row's length differs from the header's, a cell holds a line break, or
            ``align`` is malformed (the message names the row or the value).
    """
    width = len(header)
    if width == 0:
        raise ValueError("header: a table needs at least one column")
    spec = "-" * width if align is None else align
    if len(spec) == 1:
        spec = spec * width
    if len(spec) != width or any(a not in _RULES for a in spec):
        raise ValueError(
            f"align: expected {width} of {sorted(_RULES)} (or one for all), got {align!r}"
        )
    lines = [_line(header, "header"), "|" + "|".join(_RULES[a] for a in spec) + "|"]
    for number, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"rows[{number}]: {len(row)} cells for {width} columns: {row!r}")
        lines.append(_line(row, f"rows[{number}]"))
    return "\n".join(lines)


def _line(cells: Sequence[object], where: str) -> str:
    texts = []
    for cell in cells:
        text = "" if cell is None else str(cell)
        if "\n" in text:
            raise ValueError(f"{where}: a cell holds a line break: {text!r}")
        texts.append(text.replace("|", "\\|"))
    return "| " + " | ".join(texts) + " |"


def append_entry(path: Path, title: str, intro: str, entry: Sequence[str]) -> None:
    """Add ``entry`` at the end of the Markdown log ``path``; earlier entries stay as written.

    A log is ``# title``, ``intro`` and one ``## `` section per entry, oldest first: a check
    that is run again (a ship check on newer weights, say) adds to the record instead of
    replacing the result before it. The first entry creates the file.

    Args:
        path: the log file.
        title: the log's title (used only when the file is created).
        intro: the paragraph under the title (used only when the file is created).
        entry: the entry's lines, the first a ``## `` heading.

    Raises:
        ValueError: ``entry`` does not begin with a ``## `` heading (naming its first line).
    """
    if not entry or not entry[0].startswith("## "):
        first = entry[0] if entry else None
        raise ValueError(f"entry: must begin with a '## ' heading, got {first!r}")
    body = "\n".join(entry).rstrip("\n") + "\n"
    path = Path(path)
    if path.is_file():
        before = path.read_text().rstrip("\n")
        path.write_text(before + "\n\n" + body)
    else:
        path.write_text(f"# {title}\n\n{intro}\n\n" + body)
