"""The command's parts on their own: progress lines, the model check, result lines, summary
rows and output names."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from instances import random_instance

from clrp_rl4co.cli.inputs import Job, unique_stems
from clrp_rl4co.cli.outputs import summary_row
from clrp_rl4co.cli.progress import Progress
from clrp_rl4co.cli.solve import _result_text, check_model
from clrp_rl4co.data import CLRPSolution, Route
from clrp_rl4co.result import SolveResult
from clrp_rl4co.solving import failed, not_run


def test_progress_off_a_terminal_counts_instances_one_line_each():
    stream = io.StringIO()
    progress = Progress(3, stream=stream, terminal=False)
    progress.finished("a.dat", "12 (pyvrp, 1.0 s)")
    progress.finished("b.json", "failed: x")
    progress.close()
    assert stream.getvalue() == "[1/3] a.dat: 12 (pyvrp, 1.0 s)\n[2/3] b.json: failed: x\n"


def test_quiet_progress_writes_nothing():
    stream = io.StringIO()
    progress = Progress(2, quiet=True, stream=stream, terminal=False)
    progress.finished("a.dat", "12")
    progress.close()
    assert stream.getvalue() == "" and progress.done == 1


def test_progress_on_a_terminal_draws_a_bar_not_lines():
    stream = io.StringIO()
    progress = Progress(2, stream=stream, terminal=True)
    progress.finished("a.dat", "12")
    progress.close()
    assert "[1/2] a.dat" not in stream.getvalue() and "instances" in stream.getvalue()
    assert "1/2" in stream.getvalue()  # the bar counts towards the total


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_asks_the_stream_whether_it_is_a_terminal():
    assert Progress(1, stream=_Terminal()).terminal is True
    assert Progress(1, stream=io.StringIO()).terminal is False


def test_a_model_is_what_the_library_would_load(tmp_path):
    assert check_model(None) is None
    assert check_model("drlhq_clrp20") is None
    assert check_model("clrp20") is None  # a bare preset: load_policy("clrp20") takes it
    weights = tmp_path / "mine.pt"
    weights.write_bytes(b"")
    message = check_model(str(weights))  # a saved policy is a pair: the config is missing
    assert message.startswith("--model: pretrained policy") and "mine.json is missing" in message
    (tmp_path / "mine.json").write_text("{}")
    assert check_model(str(weights)) is None
    assert check_model(str(tmp_path / "mine")) is None  # the stem of the pair
    assert check_model("clrp21") is not None  # no shipped model of that size
    message = check_model("drlhq_clrp21")
    assert message.startswith("--model: pretrained policy 'drlhq_clrp21': no such file")
    assert "'drlhq_clrp20'" in message  # the shipped models are listed
    assert check_model(str(tmp_path / "none.ckpt")).startswith("--model: checkpoint")


def _result(**kw) -> SolveResult:
    instance = random_instance(4, seed=0, num_depots=2)
    solution = CLRPSolution([Route(0, (0, 1, 2, 3))])
    base = dict(
        solution=solution,
        objective=solution.cost(instance).total,
        method="hybrid",
        model="m",
        seconds=2.04,
        status="feasible",
    )
    base.update(kw)
    return SolveResult(**base)


def test_result_lines_say_objective_method_seconds_and_interruption():
    result = _result(objective=123.456789012345)
    assert _result_text(result, None) == "123.456789 (hybrid, 2.0 s)"
    assert _result_text(_result(objective=5.0, interrupted=True), None) == (
        "5 (hybrid, 2.0 s, interrupted)"
    )
    assert _result_text(_result(solution=None, status="no solution"), None) == (
        "no solution (hybrid)"
    )
    assert _result_text(result, "boom") == "failed: boom"


def _job(name: str = "a.json") -> Job:
    return Job(Path(name), Path(name).stem, name, random_instance(4, seed=0, num_depots=2))


def test_summary_rows_name_the_status_of_every_kind_of_run():
    job = _job()
    assert summary_row(job, _result(), 10.0, None)["status"] == "feasible"
    row = summary_row(job, _result(interrupted=True), None, None)
    assert row["status"] == "interrupted" and row["objective"] == _result().objective
    row = summary_row(job, not_run("interrupted before it started"), None, "stopped")
    assert (row["status"], row["error"], row["objective"]) == ("not run", "stopped", "")
    row = summary_row(job, failed("IndexError: x"), None, "IndexError: x")
    assert (row["status"], row["error"]) == ("failed", "IndexError: x")
    assert summary_row(job, None, None, "unreadable")["status"] == "failed"


def test_summary_gap_is_relative_to_the_best_known_value():
    row = summary_row(_job(), _result(objective=None), 4.0, None)
    objective = row["objective"]
    assert row["gap_pct"] == pytest.approx(100 * (objective - 4.0) / 4.0)
    assert summary_row(_job(), _result(), None, None)["gap_pct"] == ""


def test_dataset_rows_keep_their_row_suffix_when_stems_clash(tmp_path):
    jobs = [
        Job(tmp_path / "d.npz", "d-0", "d.npz[0]"),
        Job(tmp_path / "d.npz", "d-1", "d.npz[1]"),
        Job(tmp_path / "d-0.json", "d-0", "d-0.json"),
    ]
    assert [j.stem for j in unique_stems(jobs)] == ["d.npz-0", "d-1", "d-0.json"]


def test_the_prins_table_applies_only_to_a_prins_file_in_its_cost_convention(benchmarks_root):
    """The shipped best-known values are ceil(100 d) costs of the Prins files: a file of the same
    stem and sizes gets one only when its arcs are priced the same way, never a dataset row."""
    from dataclasses import replace

    from clrp_rl4co.data import read_prodhon
    from clrp_rl4co.data.bks import BestKnown

    source = benchmarks_root / "prins" / "coord20-5-1.dat"
    rounded = read_prodhon(source)
    best = BestKnown.read(None)
    assert best.lookup(source, source.name, rounded) == 54793  # docs/formats.md: its BKS
    as_json = Path("elsewhere/coord20-5-1.json")
    assert best.lookup(as_json, as_json.name, rounded) == 54793
    real = replace(rounded, rounded_costs=False, _dist=None)
    assert best.lookup(as_json, as_json.name, real) is None  # other convention: none
    row = Path("coord20-5-1.npz")
    assert best.lookup(row, "coord20-5-1.npz[0]", rounded) is None
    fewer = replace(rounded, demand=rounded.demand[:-1], customer_locs=rounded.customer_locs[:-1],
                    _dist=None)  # fmt: skip
    assert best.lookup(source, source.name, fewer) is None  # other sizes: another instance


def test_a_users_table_is_read_by_label_file_name_or_stem(tmp_path):
    from clrp_rl4co.data.bks import BestKnown

    csv = tmp_path / "bks.csv"
    csv.write_text("file,bks\nd.npz[1],7\nr30.dat,11\nr40,13\n")
    best = BestKnown.read(csv)
    assert best.lookup(Path("d.npz"), "d.npz[1]", None) == 7
    assert best.lookup(Path("x/r30.dat"), "r30.dat", None) == 11
    assert best.lookup(Path("r40.json"), "r40.json", None) == 13
    assert best.lookup(Path("r50.json"), "r50.json", None) is None
    csv.write_text("file,bks\nr30.dat,-2\n")
    with pytest.raises(ValueError, match=r"bks.csv:2: bks must be a positive number, got '-2'"):
        BestKnown.read(csv)
    csv.write_text("name,value\n")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['file', 'bks'\]"):
        BestKnown.read(csv)


def test_the_options_are_those_docs_formats_md_documents():
    """The usage synopsis and the option table of docs/formats.md against the parser."""
    import re
    from pathlib import Path

    from clrp_rl4co.cli.args import parser

    docs = (Path(__file__).resolve().parents[1] / "docs" / "formats.md").read_text()
    synopsis = re.search(r"```bash\n(clrp-rl4co solve .*?)\npython -m", docs, re.S).group(1)
    documented = set(re.findall(r"(--[a-z]+)(?: ([A-Z]+|[a-z0-9|]+))?[] ]", synopsis))
    solve = parser()._subparsers._group_actions[0].choices["solve"]
    options = {
        (a.option_strings[0], a.metavar or ("|".join(a.choices) if a.choices else ""))
        for a in solve._actions
        if a.option_strings and a.option_strings[0] != "-h"
    }
    assert options == documented
    usage = solve.format_usage()
    assert usage.startswith("usage: clrp-rl4co solve ") and "PATH [PATH ...]" in usage
    for option, metavar in documented:  # argparse writes choices as {a,b}
        shown = "{" + metavar.replace("|", ",") + "}" if "|" in metavar else metavar
        assert f"{option} {shown}" in usage if metavar else f"[{option}]" in usage
    assert "[--time S | --iterations N]" in usage and "[--time S | --iterations N]" in synopsis
    # the defaults the table states, and the verb the top-level help lists
    defaults = {a.dest: a.default for a in solve._actions}
    assert defaults["time"] == 10.0 and defaults["method"] == "auto"
    assert defaults["workers"] == 1 and defaults["out"] == Path("solutions")
    assert parser().format_usage().startswith("usage: clrp-rl4co [-h] solve")


def test_each_option_is_described_as_docs_formats_md_describes_it():
    import re
    from pathlib import Path

    from clrp_rl4co.cli.args import parser

    docs = (Path(__file__).resolve().parents[1] / "docs" / "formats.md").read_text()
    table = dict(re.findall(r"^\| `(--[a-z]+)[^`]*` \| (.+) \|$", docs, re.M))
    solve = parser()._subparsers._group_actions[0].choices["solve"]
    helps = {a.option_strings[0]: a.help for a in solve._actions if a.option_strings}
    assert len(table) == 11
    for option, meaning in table.items():
        # the help says what the table says, without its markup and its pointer to the methods
        assert helps[option] == meaning.replace("`", "").removesuffix(" (below)"), option


@pytest.mark.parametrize(
    "value,message",
    [("abc", "expected seconds, got 'abc'"), ("0", "must be a positive number of seconds")],
)
def test_a_bad_time_is_explained(value, message, capsys):
    from clrp_rl4co.cli.args import parse_args

    with pytest.raises(SystemExit):
        parse_args(["solve", "a.dat", "--time", value])
    assert message in capsys.readouterr().err


def test_a_bad_worker_count_is_explained_and_a_verb_is_required(capsys):
    from clrp_rl4co.cli.args import parse_args

    for value in ("0", "x"):
        with pytest.raises(SystemExit):
            parse_args(["solve", "a.dat", "--workers", value])
        assert f"must be a positive integer, got '{value}'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        parse_args([])
    assert info.value.code == 2 and "required: solve" in capsys.readouterr().err


def test_paths_are_paths_and_flags_reach_the_options():
    from pathlib import Path

    from clrp_rl4co.cli.args import parse_args

    options = parse_args(["solve", "a.dat", "--plot", "--bks", "b.csv", "--out", "o"])
    assert options.plot is True and options.paths == ("a.dat",)
    assert isinstance(options.bks, Path) and options.bks == Path("b.csv")
    assert isinstance(options.out, Path) and options.out == Path("o")


def test_the_summary_row_table_and_csv_as_docs_formats_md_describes_them(tmp_path):
    import csv

    from clrp_rl4co.cli.outputs import SUMMARY_COLUMNS, summary_table, write_summary

    instance = random_instance(4, seed=5, num_depots=2)
    solution = CLRPSolution([Route(0, (0, 1)), Route(1, (2, 3))])
    objective = solution.cost(instance).total
    result = SolveResult(solution, objective, "pyvrp", None, 1.23456, "feasible")
    job = Job(Path("x.json"), "x", "x.json", instance)
    bks = objective / 1.05
    row = summary_row(job, result, bks, None)
    assert row == {
        "instance": "x.json",
        "customers": 4,
        "depots": 2,
        "method": "pyvrp",
        "model": "",
        "objective": objective,
        "bks": bks,
        "gap_pct": pytest.approx(5.0),
        "seconds": 1.235,
        "status": "feasible",
        "error": "",
    }
    documented = "instance customers depots method model objective bks gap_pct seconds status error"
    assert list(SUMMARY_COLUMNS) == documented.split()  # docs/formats.md, Outputs
    failed_row = summary_row(Job(Path("y.dat"), "y", "y.dat"), None, None, "y.dat: bad")
    lines = summary_table([row, failed_row]).splitlines()
    assert lines[0] == (
        "| instance | customers | depots | method | model | objective | bks | gap % | seconds "
        "| status |"
    )
    # names and words left, numbers right
    assert lines[1] == "|:---|---:|---:|:---|:---|---:|---:|---:|---:|:---|"
    assert lines[2] == (
        f"| x.json | 4 | 2 | pyvrp |  | {objective:.10g} | {bks:.10g} | 5.00 | 1.235 | feasible |"
    )
    assert lines[3] == "| y.dat |  |  |  |  |  |  |  |  | failed |"
    with write_summary([row, failed_row], tmp_path / "s" / "t" / "summary.csv").open() as f:
        read = list(csv.DictReader(f))
    assert read[0]["objective"] == str(objective) and read[1]["error"] == "y.dat: bad"
    assert list(read[0]) == list(SUMMARY_COLUMNS)


def test_the_solution_json_as_docs_formats_md_shows_it(tmp_path):
    import json

    from clrp_rl4co.cli.outputs import write_solution

    instance = random_instance(4, seed=6, num_depots=2)
    solution = CLRPSolution([Route(0, (0, 1)), Route(1, (3, 2))])
    objective = solution.cost(instance).total
    details = {"decode": "x8", "note": None}
    result = SolveResult(solution, objective, "hybrid", "m", 2.5, "feasible", details=details)
    result.interrupted = True
    job = Job(Path("x.json"), "x", "x.json", instance)
    out = tmp_path / "a" / "b"  # folders made as needed
    json_path, sol_path = write_solution(job, result, 7, out, plot=False)
    assert (json_path, sol_path) == (out / "x.json", out / "x.sol")
    text = json_path.read_text()
    record = json.loads(text)
    assert record["instance"] == "x.json" and record["objective"] == objective
    assert record["routes"] == [
        {"depot": 0, "customers": [0, 1]},
        {"depot": 1, "customers": [3, 2]},
    ]
    assert (record["method"], record["model"], record["seconds"]) == ("hybrid", "m", 2.5)
    assert (record["seed"], record["status"], record["interrupted"]) == (7, "feasible", True)
    assert record["rounding"] == "none" and record["decode"] == "x8" and "note" not in record
    # two-space indentation, number lists on one line
    assert '\n  "instance": "x.json",' in text and '"customers": [3, 2]' in text
    assert text.endswith("}\n")


def _stem_job(tmp_path: Path, stem: str) -> Job:
    return Job(tmp_path / f"{stem}.json", stem, f"{stem}.json", random_instance(4, seed=0))


def test_a_solution_is_three_files_with_plot_and_two_without(tmp_path):
    from clrp_rl4co.cli.outputs import run_outputs, solution_paths

    job = _stem_job(tmp_path, "a")
    out = tmp_path / "o"
    assert solution_paths(job, out, plot=False) == [out / "a.json", out / "a.sol"]
    assert solution_paths(job, out, plot=True) == [out / "a.json", out / "a.sol", out / "a.png"]
    unread = Job(tmp_path / "b.json", "b", "b.json", error="b.json: broken")
    assert run_outputs([job, unread], out, plot=True) == [
        out / "a.json",
        out / "a.sol",
        out / "a.png",
        out / "summary.csv",
    ]  # an unread file writes no solution


def test_a_refusal_names_three_paths_then_counts_the_rest(tmp_path):
    from clrp_rl4co.cli.outputs import check_outputs

    out = tmp_path / "o"
    out.mkdir()
    jobs = [_stem_job(tmp_path, stem) for stem in ("a", "b")]
    (out / "a.png").write_text("earlier")  # counts only when this run plots
    assert check_outputs(jobs, out, plot=False, overwrite=False) is None
    message = check_outputs(jobs, out, plot=True, overwrite=False)
    assert message == (
        f"--out: {out} holds an earlier run's outputs ({out / 'a.png'}); give --overwrite to "
        "replace them, or choose another --out"
    )
    named = ", ".join(str(out / n) for n in ("a.json", "a.sol", "b.json"))
    for first in ("a.json", "a.sol", "b.json"):
        (out / first).write_text("earlier")
    assert f"({named});" in check_outputs(jobs, out, plot=False, overwrite=False)
    (out / "b.sol").write_text("earlier")
    assert f"({named} and 1 more);" in check_outputs(jobs, out, plot=False, overwrite=False)
    (out / "summary.csv").write_text("earlier")
    assert f"({named} and 2 more);" in check_outputs(jobs, out, plot=False, overwrite=False)
    assert check_outputs(jobs, out, plot=True, overwrite=True) is None
    for job in jobs:
        job.source.write_text("{}")
    into_inputs = check_outputs(jobs, tmp_path, plot=False, overwrite=True)
    assert into_inputs == (
        f"--out: {tmp_path} holds the input {tmp_path / 'a.json'}, {tmp_path / 'b.json'}, "
        "which the run would overwrite with its outputs; choose another --out"
    )
    (tmp_path / "file").write_text("x")
    assert check_outputs(jobs, tmp_path / "file", False, True) == (
        f"--out: {tmp_path / 'file'} is a file, not a folder"
    )


def test_the_record_names_the_cost_convention_and_the_row_the_model(tmp_path):
    from dataclasses import replace

    from clrp_rl4co.cli.outputs import solution_record

    job = _stem_job(tmp_path, "a")
    result = _result()
    assert solution_record(job, result, seed=3)["rounding"] == "none"
    rounded = replace(job, instance=replace(job.instance, rounded_costs=True, _dist=None))
    record = solution_record(rounded, result, seed=3)
    assert record["rounding"] == "ceil100" and record["seed"] == 3
    assert summary_row(job, result, None, None)["model"] == "m"


def test_the_png_is_drawn_from_the_solution_with_the_titled_cost_parts(tmp_path, monkeypatch):
    import clrp_rl4co.envs.clrp as clrp_env
    from clrp_rl4co.cli.outputs import plot_solution, plot_title

    drawn = {}

    def plot(td, actions, path, title=None):
        drawn.update(actions=actions.tolist(), path=path, title=title)
        return path

    monkeypatch.setattr(clrp_env, "plot_solution", plot)
    job, result = _stem_job(tmp_path, "a"), _result()
    assert plot_solution(job, result, tmp_path / "a.png") == tmp_path / "a.png"
    assert drawn["actions"] == [result.solution.to_actions(job.instance.num_depots)]
    assert drawn["title"] == plot_title("a.json", result, job.instance)
