"""The one Markdown table writer (clrp_rl4co.reporting.markdown)."""

import pytest

from clrp_rl4co.reporting.markdown import markdown_table


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
