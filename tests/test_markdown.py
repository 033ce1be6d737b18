"""The one Markdown table writer (clrp_rl4co.reporting.markdown)."""

import pytest

from clrp_rl4co.reporting.markdown import append_entry, markdown_table


def test_a_table_is_header_rule_and_rows():
    text = markdown_table(["a", "b"], [[1, None], ["x", 2.5]], align="lr")
    assert text.splitlines() == ["| a | b |", "|:---|---:|", "| 1 |  |", "| x | 2.5 |"]
    assert markdown_table(["a"], []) == "| a |\n|---|"
    assert markdown_table(["a", "b", "c"], [], "c").splitlines()[1] == "|:---:|:---:|:---:|"


def test_a_pipe_in_a_cell_is_escaped():
    assert markdown_table(["a"], [["x|y"]]).splitlines()[2] == "| x\\|y |"


@pytest.mark.parametrize(
    ("header", "rows", "align", "match"),
    [
        (["a", "b"], [[1]], None, r"rows\[0\]: 1 cells for 2 columns"),
        (["a"], [["x\ny"]], None, r"rows\[0\]: a cell holds a line break"),
        (["a", "b"], [], "lrl", "align: expected 2"),
        (["a"], [], "x", "align: expected 1"),
        ([], [], None, "header: a table needs at least one column"),
    ],
)
def test_bad_tables_name_the_problem(header, rows, align, match):
    with pytest.raises(ValueError, match=match):
        markdown_table(header, rows, align)


def test_the_messages_name_the_row_the_cell_and_the_value():
    """Each error names where (the header or ``rows[i]``) and the offending value in full."""
    with pytest.raises(ValueError) as info:
        markdown_table(["a", "b"], [["x", "y"], ["z"]])
    assert str(info.value) == "rows[1]: 1 cells for 2 columns: ['z']"
    with pytest.raises(ValueError) as info:
        markdown_table(["a", "b\nc"], [])
    assert str(info.value) == "header: a cell holds a line break: 'b\\nc'"
    with pytest.raises(ValueError) as info:
        markdown_table(["a"], [["x"], ["y"], ["u\nv"]])
    assert str(info.value) == "rows[2]: a cell holds a line break: 'u\\nv'"
    with pytest.raises(ValueError) as info:
        markdown_table(["a", "b"], [], "lx")
    assert str(info.value) == "align: expected 2 of ['-', 'c', 'l', 'r'] (or one for all), got 'lx'"
    with pytest.raises(ValueError) as info:
        markdown_table([], [])
    assert str(info.value) == "header: a table needs at least one column"


def test_align_may_be_a_sequence_of_letters_and_dash_is_unspecified():
    """``align`` is one letter per column, a string or a sequence; ``-`` (the default) is
    the plain rule."""
    text = markdown_table(["a", "b", "c"], [[1, 2, 3]], align=["r", "-", "l"])
    assert text.splitlines()[1] == "|---:|---|:---|"
    assert markdown_table(["a", "b"], [], "-") == markdown_table(["a", "b"], [])
    assert markdown_table(["a", "b"], []).splitlines()[1] == "|---|---|"
    assert markdown_table(["a", "b"], [], "r").splitlines()[1] == "|---:|---:|"


def test_cells_are_written_with_str():
    """Cells are ``str`` of any object; ``None`` is empty, ``0`` and ``""`` are themselves."""
    text = markdown_table(["a", "b", "c", "d"], [[0, "", 1.5, None]], align="llll")
    assert text.splitlines()[2] == "| 0 |  | 1.5 |  |"


def test_a_log_keeps_every_entry_oldest_first(tmp_path):
    log = tmp_path / "checks.md"
    append_entry(log, "Checks", "One section per check.", ["## first", "", "- verdict: no"])
    append_entry(log, "Ignored", "Ignored too.", ["## second", "- verdict: yes", ""])
    assert log.read_text() == (
        "# Checks\n\nOne section per check.\n\n## first\n\n- verdict: no\n\n"
        "## second\n- verdict: yes\n"
    )


def test_a_log_entry_must_be_a_section(tmp_path):
    log = tmp_path / "checks.md"
    for entry, shown in ([], "None"), (["# a title"], "'# a title'"), (["text"], "'text'"):
        with pytest.raises(ValueError) as info:
            append_entry(log, "Checks", "", entry)
        assert str(info.value) == f"entry: must begin with a '## ' heading, got {shown}"
    assert not log.exists()


def test_a_log_keeps_each_entry_as_written_but_its_trailing_blank_lines(tmp_path):
    """Only blank lines are trimmed between entries: a Markdown line break (two trailing spaces)
    and every other character stay."""
    log = tmp_path / "checks.md"
    append_entry(log, "T", "I", ["## a", "a line break  ", "", ""])
    append_entry(log, "T", "I", ["## b", "ends in X"])
    append_entry(log, "T", "I", ["## c", "XX"])
    assert log.read_text() == ("# T\n\nI\n\n## a\na line break  \n\n## b\nends in X\n\n## c\nXX\n")
