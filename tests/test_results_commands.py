"""Every command a results file (or a guide) names exists today: its module, script, Makefile
target, table name or ``clrp-rl4co`` subcommand. A results file whose command no longer runs
cannot be regenerated."""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RESULTS = sorted((REPO / "results").rglob("*.md"))
#: The guides that name commands too.
GUIDES = [REPO / "README.md", REPO / "experiments" / "README.md"]

#: A command inside a code span or a fenced block: python / python3 / make / clrp-rl4co, after
#: optional environment assignments and ``nice`` / ``OMP_NUM_THREADS=1``-style prefixes.
_PROGRAMS = r"(?:python3?|make|clrp-rl4co)"
_START = re.compile(rf"(?:^|[\s`(])({_PROGRAMS}\s+[^`\n]*)")


def commands(text: str) -> list[str]:
    """The command lines named in ``text``: each code span's and each fenced block line's
    part from ``python`` / ``make`` / ``clrp-rl4co`` on."""
    pieces = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    lines = [line for block in pieces for line in block.splitlines()]
    rest = re.sub(r"```[a-z]*\n.*?```", "", text, flags=re.S)
    lines += [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", rest)]  # may wrap
    found = []
    for line in lines:
        match = _START.search(" " + line)
        if match:
            found.append(match.group(1).strip())
    return found


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=True)
    except ValueError:  # an unbalanced quote in prose: the words before it are enough here
        return command.split()


@cache
def _make_targets() -> frozenset[str]:
    text = (REPO / "Makefile").read_text()
    return frozenset(re.findall(r"^([A-Za-z][\w-]*):", text, flags=re.M))


@cache
def _subcommand_exists(name: str) -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "clrp_rl4co", name, "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode == 0


def problem(command: str) -> str | None:
    """Why ``command`` does not exist today (None when it does)."""
    words = _words(command)
    program, args = words[0], words[1:]
    if program == "make":
        targets = [a for a in args if "=" not in a and not a.startswith("-")]
        missing = [t for t in targets if t not in _make_targets()]
        return f"no Makefile target {missing}" if missing else None
    if program == "clrp-rl4co":
        if args and not args[0].startswith("-") and not _subcommand_exists(args[0]):
            return f"no clrp-rl4co subcommand {args[0]!r}"
        return None
    if not args:
        return None
    if args[0] == "-m":
        module = args[1]
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:  # a parent package is missing
            spec = None
        if spec is None:
            return f"no module {module}"
        if module == "experiments" and args[2:3] == ["table"]:
            from experiments.tables import TABLES

            placeholder = args[3].isupper() or args[3].startswith("<")  # NAME, <name>
            if args[3] not in TABLES and not placeholder:
                return f"no table {args[3]!r}"
        return None
    if args[0].endswith(".py") and not (REPO / args[0]).is_file():
        return f"no script {args[0]}"
    return None


def test_the_extractor_finds_commands_in_spans_and_blocks():
    text = (
        "- command: `python -m experiments table clrp10 --threads 1`\n"
        "Run `nice -n 10 python benchmarks/sgbs.py --num 2` or `make tables`.\n"
        "```bash\nOMP_NUM_THREADS=1 python run.py model=drlhq\nclrp-rl4co solve a.dat\n```\n"
        "Prose with `a code span` and python outside spans, `python -m\nexperiments datasets`.\n"
    )
    assert commands(text) == [
        "python run.py model=drlhq",
        "clrp-rl4co solve a.dat",
        "python -m experiments table clrp10 --threads 1",
        "python benchmarks/sgbs.py --num 2",
        "make tables",
        "python -m experiments datasets",
    ]


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("python -m experiments table nope", "no table 'nope'"),
        ("python -m experiments table Clrp10", "no table 'Clrp10'"),
        ("python -m clrp_rl4co.tables.paper_sets", "no module clrp_rl4co.tables.paper_sets"),
        ("python examples/train.py --preset clrp10", "no script examples/train.py"),
        ("make campaigns", "no Makefile target ['campaigns']"),
        ("make tables  # every table", None),
        ("clrp-rl4co table paper-sets", "no clrp-rl4co subcommand 'table'"),
    ],
)
def test_a_command_that_is_gone_is_named(command, why):
    assert problem(command) == why


@pytest.mark.parametrize("path", RESULTS + GUIDES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_command_in_the_results_exists(path):
    named = commands(path.read_text())
    problems = {c: why for c in named if (why := problem(c))}
    assert not problems, f"{path.relative_to(REPO)}: {problems}"
