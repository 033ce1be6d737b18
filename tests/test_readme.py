"""The README's commands are the ones the tests run, its code runs, its links resolve."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end > 0 else None]


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def test_training_commands_are_the_tested_ones():
    from test_training import README_COMMANDS

    (block,) = _blocks(_section("Training"), "bash")
    assert block.strip().splitlines() == README_COMMANDS


def test_the_two_commands_open_the_readme_and_ci_runs_the_test_one():
    first = _blocks(README, "bash")[0].splitlines()
    assert first[0].startswith("make demo") and first[1].startswith("make test")
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_relative_links_exist():
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README)
    assert links, "the README links its sub-READMEs"
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing


def test_quickstart_runs(capsys):
    (code,) = _blocks(_section("Quickstart"), "python")
    exec(compile(code, "README.md#quickstart", "exec"), {})
    printed = [float(re.search(r"[\d.]+", line).group()) for line in capsys.readouterr().out.split(
        "\n") if line]  # fmt: skip
    x8, sgbs_cost, pyvrp = printed  # means over the same 4 clrp20 instances
    assert 5 < sgbs_cost <= x8 + 1e-9 < 40 and 5 < pyvrp < 40


def test_the_readme_is_a_guide_of_at_most_200_lines():
    assert len(README.splitlines()) <= 200


def test_solving_instance_files_comes_before_the_quickstart():
    solving = _section("Solving instance files")
    assert README.index("\n## Solving instance files\n") < README.index("\n## Quickstart\n")
    (block,) = _blocks(solving, "bash")
    assert block.startswith("clrp-rl4co solve ") and "docs/formats.md" in solving


def test_the_readme_speaks_of_the_project_only():
    """No absolute paths of one machine and no carried wheel folders: every path in the README
    is relative to the repository (URLs aside)."""
    text = re.sub(r"https?://\S+", "", README)
    absolute = re.findall(r"(?<![\w.~$)\]])/(?:[\w.-]+/)+", text)
    assert absolute == [], absolute
    assert ".whl" not in README
