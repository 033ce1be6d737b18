"""How ``clrp-rl4co solve`` behaves around the solving: option errors before any work, Ctrl-C,
output names, titles and progress lines."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clrp_rl4co.cli import main
from clrp_rl4co.cli.outputs import plot_title
from clrp_rl4co.data import CLRPSolution, Route, read_prodhon, write_json_instance
from clrp_rl4co.result import SolveResult

ROOT = Path(__file__).resolve().parents[1]


def _summary(out: Path) -> list[dict]:
    with (out / "summary.csv").open() as f:
        return list(csv.DictReader(f))


def test_an_unknown_model_is_an_option_error_before_any_solving(benchmarks_root, tmp_path, capsys):
    path = benchmarks_root / "prins" / "coord20-5-1.dat"
    out = tmp_path / "out"
    status = main(["solve", str(path), "--model", "no_such_model", "--out", str(out)])
    assert status == 2
    err = capsys.readouterr().err
    assert "--model: pretrained policy 'no_such_model': no such file or shipped model" in err
    from clrp_rl4co.pretrained import shipped_models

    assert f"shipped: {shipped_models()}" in err  # the shipped models are listed
    assert not out.exists()  # nothing solved, nothing written


def test_an_unreadable_bks_file_is_an_option_error(benchmarks_root, tmp_path, capsys):
    path = benchmarks_root / "prins" / "coord20-5-1.dat"
    out = tmp_path / "out"
    status = main(["solve", str(path), "--bks", str(tmp_path / "none.csv"), "--out", str(out)])
    assert status == 2
    assert "error: --bks:" in capsys.readouterr().err
    assert not out.exists()


def test_same_stem_inputs_do_not_overwrite_each_other(benchmarks_root, tmp_path):
    source = benchmarks_root / "prins" / "coord20-5-1.dat"
    (tmp_path / "r30.dat").write_bytes(source.read_bytes())
    instance = read_prodhon(source)
    write_json_instance(instance, tmp_path / "r30.json")
    out = tmp_path / "out"
    argv = ["solve", str(tmp_path / "r30.dat"), str(tmp_path / "r30.json"), "--method", "pyvrp"]
    assert main([*argv, "--time", "0.3", "--out", str(out), "--quiet"]) == 0
    from_dat = json.loads((out / "r30.dat.json").read_text())
    from_json = json.loads((out / "r30.json.json").read_text())
    # the Prodhon file prices arcs ceil(100 d); the JSON instance as written says its rounding
    assert from_dat["instance"] == "r30.dat" and from_json["instance"] == "r30.json"
    assert (out / "r30.dat.sol").is_file() and (out / "r30.json.sol").is_file()
    assert len(_summary(out)) == 2


def test_progress_off_a_terminal_is_one_plain_line_per_instance(benchmarks_root, tmp_path, capsys):
    files = [str(benchmarks_root / "prins" / f"coord20-5-{k}.dat") for k in (1, 2)]
    out = tmp_path / "out"
    assert main(["solve", *files, "--method", "pyvrp", "--time", "0.3", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b" not in err
    lines = [line for line in err.splitlines() if line.startswith("[")]
    assert [line.split(":")[0] for line in lines] == [
        "[1/2] coord20-5-1.dat",
        "[2/2] coord20-5-2.dat",
    ]
    assert all("(pyvrp, " in line for line in lines)


def test_the_plot_title_carries_the_cost_parts():
    from instances import random_instance

    instance = random_instance(4, seed=0, num_depots=2)
    solution = CLRPSolution([Route(0, (0, 1)), Route(1, (2, 3))])
    cost = solution.cost(instance)
    result = SolveResult(solution, cost.total, "pyvrp", None, 1.0, "feasible")
    title = plot_title("x.json", result, instance)
    # opening of both depots, F per route (two routes), and the lengths, as the docs promise
    opening = float(instance.opening_cost[0] + instance.opening_cost[1])
    assert f"depots {opening:.10g}" in title
    assert f"vehicles {2 * instance.vehicle_fixed_cost:.10g}" in title
    assert f"cost {cost.total:.10g} = " in title and f"routing {cost.routing:.10g}" in title
    assert title.splitlines()[0] == "x.json (pyvrp)"
    result.interrupted = True  # a run stopped early says so, as its summary row does
    assert plot_title("x.json", result, instance).splitlines()[0] == "x.json (pyvrp, interrupted)"


def _start(args: list[str], tmp_path: Path) -> subprocess.Popen:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-m", "clrp_rl4co", "solve", *args, "--out", str(tmp_path / "out")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_line(process: subprocess.Popen, marker: str, limit: float = 120.0) -> list[str]:
    seen = []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        seen.append(line)
        if marker in line:
            return seen
    raise AssertionError(f"never saw {marker!r}: {seen}")


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_keeps_the_best_so_far_and_writes_the_summary(benchmarks_root, tmp_path, workers):
    from instances import random_instance

    prins = benchmarks_root / "prins"
    tiny = tmp_path / "tiny.json"  # 6 customers: auto proves it optimal in a moment
    write_json_instance(random_instance(6, seed=0, num_depots=2), tiny)
    large = ("coord100-5-1.dat", "coord100-5-2.dat", "coord100-5-3.dat")
    files = [str(tiny)] + [str(prins / name) for name in large]
    process = _start([*files, "--time", "60", "--workers", str(workers)], tmp_path)
    # the tiny file is solved (its line printed) while the next one(s) run for a minute
    err = _wait_for_line(process, "tiny.json")
    time.sleep(8.0)  # time for the running ones to find a first solution, on a busy machine too
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=60)
    stopped = time.monotonic() - sent
    assert process.returncode == 130
    # about a second on a quiet machine; far below the ~50 s the runs had left, on a loaded one
    assert stopped < 30.0
    err = "".join(err) + rest
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("interrupted:")]) == 1
    rows = {row["instance"]: row for row in _summary(tmp_path / "out")}
    assert set(rows) == {Path(f).name for f in files}
    assert rows["tiny.json"]["status"] == "optimal"
    running = [name for name, row in rows.items() if row["status"] == "interrupted"]
    assert len(running) == workers  # the running ones kept their best solution so far
    for name in running:
        record = json.loads((tmp_path / "out" / name.replace(".dat", ".json")).read_text())
        assert record["interrupted"] is True and record["status"] == "feasible"
        assert record["method"] == "hybrid"
        CLRPSolution.from_dict(record).check(read_prodhon(prins / name))
    assert [row["status"] for row in rows.values()].count("not run") == 3 - workers


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["solve", "--help"],
        ["solve", "x.dat", "--time", "0"],
        ["solve", "x.dat", "--model", "no_such_model"],  # refused before the data are imported
    ],
)
def test_help_and_option_errors_answer_without_importing_torch(argv):
    """The command parses its options before importing anything heavy (torch, RL4CO, PyVRP),
    so ``--help`` and option errors answer at once (timed in benchmarks/cli_startup.py)."""
    code = (
        "import sys\nfrom clrp_rl4co.cli import main\ntry:\n    code = main(sys.argv[1:])\n"
        "except SystemExit as exc:\n    code = exc.code\n"
        "heavy = ('torch', 'rl4co', 'pyvrp', 'numpy')\n"
        "print([m for m in heavy if m in sys.modules], code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip().splitlines()[-1] in ("[] 0", "[] 2")


def _fake_solve_then_stop(monkeypatch, stop_at: int, asked: list | None = None):
    """``solve`` stand-in: a feasible one-route solution (none for an instance no vehicle can
    serve alone); asks for a stop at run ``stop_at`` (0: never); appends each call's ``model``
    and ``progress`` to ``asked``."""
    import clrp_rl4co.solving as solving
    from clrp_rl4co.execution import interrupt

    runs = []

    def fake(instance, method, seconds, model=None, seed=0, progress=False, **_):
        runs.append(instance.name)
        if asked is not None:
            asked.append({"model": model, "progress": progress})
        if len(runs) == stop_at:
            interrupt.request()
        solution = CLRPSolution([Route(0, tuple(range(instance.num_customers)))])
        big = instance.vehicle_capacity >= instance.total_demand()
        if not big:
            return SolveResult(None, None, method, model, 0.1, "no solution", {"note": "none fit"})
        cost = solution.cost(instance).total
        return SolveResult(
            solution, cost, method, model, 0.1, "feasible", {}, interrupt.requested()
        )

    monkeypatch.setattr(solving, "solve", fake)
    return runs


def _json_files(tmp_path: Path, count: int, fits: bool = True, stem: str = "i") -> list[str]:
    from dataclasses import replace

    from instances import random_instance

    names = []
    for k in range(count):
        inst = random_instance(4, seed=k, num_depots=2)
        capacity = 1e6 if fits else float(inst.demand.max())
        depots = inst.depot_capacity * 0 + 1e6
        inst = replace(inst, vehicle_capacity=capacity, depot_capacity=depots, _dist=None)
        write_json_instance(inst, tmp_path / f"{stem}{k}.json")
        names.append(str(tmp_path / f"{stem}{k}.json"))
    return names


def test_an_interrupted_run_reports_and_exits_130_in_process(tmp_path, monkeypatch, capsys):
    from clrp_rl4co.execution import interrupt

    runs = _fake_solve_then_stop(monkeypatch, stop_at=3)
    files = _json_files(tmp_path, 4)
    (tmp_path / "broken.json").write_text("{")
    files.append(str(tmp_path / "broken.json"))
    try:
        status = main(["solve", *files, "--method", "pyvrp", "--out", str(tmp_path / "out")])
    finally:
        interrupt.clear()
    assert status == 130 and len(runs) == 3
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("interrupted:")]
    # i0, i1 solved, i2 running when the stop came (kept, interrupted), i3 never started;
    # broken.json failed to read: 5 rows, 1 failed, 1 not run, 3 solved
    assert lines == [
        f"interrupted: 3 solved (running ones with their best so far), 1 not run; "
        f"{tmp_path / 'out' / 'summary.csv'}"
    ]
    rows = {r["instance"]: r for r in _summary(tmp_path / "out")}
    statuses = [rows[f"i{k}.json"]["status"] for k in range(4)]
    assert statuses == ["feasible", "feasible", "interrupted", "not run"]
    assert rows["i3.json"]["error"] == "interrupted before it started"
    assert rows["broken.json"]["status"] == "failed"
    assert [line for line in err.splitlines() if line.startswith("error:")] == [
        line for line in err.splitlines() if line.startswith("error:") and "broken.json" in line
    ]  # not-run instances are not errors


def test_a_run_without_solution_is_a_failure_with_its_note(tmp_path, monkeypatch, capsys):
    _fake_solve_then_stop(monkeypatch, stop_at=0)
    files = _json_files(tmp_path, 1) + _json_files(tmp_path, 1, fits=False, stem="tight")
    out = tmp_path / "o"
    status = main(["solve", *files, "--method", "pyvrp", "--time", "2", "--out", str(out)])
    assert status == 1
    captured = capsys.readouterr()
    assert "error: tight0.json: pyvrp: none fit within 2 s" in captured.err
    assert "1 solved, 1 failed; outputs in" in captured.out
    rows = _summary(out)
    assert [r["status"] for r in rows] == ["feasible", "failed"]
    assert rows[1]["error"] == "pyvrp: none fit within 2 s"
    progress = [line for line in captured.err.splitlines() if line.startswith("[")]
    assert progress == [
        "[1/2] i0.json: " + progress[0].split(": ", 1)[1],
        "[2/2] tight0.json: failed: pyvrp: none fit within 2 s",
    ]


def test_a_long_instance_gets_its_own_bar_only_on_a_terminal(tmp_path, monkeypatch):
    calls = []
    _fake_solve_then_stop(monkeypatch, stop_at=0, asked=calls)
    files = _json_files(tmp_path, 1)
    out = ["--out", str(tmp_path / "o"), "--overwrite"]  # the same folder each time
    for terminal, expected in ((False, False), (True, True)):
        monkeypatch.setattr("sys.stderr.isatty", lambda t=terminal: t, raising=False)
        main(["solve", *files, "--method", "pyvrp", "--time", "5", *out])
        asked = [call["progress"] for call in calls]
        assert asked[-1] is expected  # 5 s is long (LONG_INSTANCE_SECONDS)
    main(["solve", *files, "--method", "pyvrp", "--time", "4.9", *out])
    asked = [call["progress"] for call in calls]
    assert asked[-1] is False  # short instances: the bar of instances only


def test_failures_are_counted_one_each_and_quiet_prints_no_progress(tmp_path, monkeypatch, capsys):
    _fake_solve_then_stop(monkeypatch, stop_at=0)
    files = _json_files(tmp_path, 1) + _json_files(tmp_path, 2, fits=False, stem="tight")
    (tmp_path / "a.json").write_text("[]")
    (tmp_path / "b.dat").write_text("x")
    files += [str(tmp_path / "a.json"), str(tmp_path / "b.dat")]
    out = tmp_path / "o"
    assert main(["solve", *files, "--method", "pyvrp", "--time", "2", "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert "1 solved, 4 failed; outputs in" in captured.out
    argv = ["solve", *files, "--quiet", "--method", "pyvrp", "--out", str(out), "--overwrite"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and not [x for x in captured.err.splitlines() if x.startswith("[")]


def test_a_result_without_a_note_says_no_solution_found(tmp_path, monkeypatch, capsys):
    import clrp_rl4co.solving as solving

    def fake(instance, method, seconds, model=None, seed=0, progress=False, **_):
        return SolveResult(None, None, method, None, 0.1, "no solution")

    monkeypatch.setattr(solving, "solve", fake)
    files = _json_files(tmp_path, 1)
    out = str(tmp_path / "o")
    assert main(["solve", *files, "--method", "pyvrp", "--time", "3", "--out", out]) == 1
    assert "error: i0.json: pyvrp: no solution found within 3 s" in capsys.readouterr().err


def test_the_model_and_a_label_keyed_best_known_value_reach_the_run(tmp_path, monkeypatch):
    from clrp_rl4co.data import instances_to_tensordict, read_json_instance
    from clrp_rl4co.envs.clrp import save_dataset

    calls = []
    _fake_solve_then_stop(monkeypatch, stop_at=0, asked=calls)
    instance = read_json_instance(_json_files(tmp_path, 1)[0])
    save_dataset(instances_to_tensordict([instance, instance], normalize_locs=False),
                 tmp_path / "d.npz")  # fmt: skip
    (tmp_path / "bks.csv").write_text("file,bks\nd.npz[1],2.5\n")
    out = tmp_path / "o"
    argv = ["solve", str(tmp_path / "d.npz"), "--method", "x8", "--model", "drlhq_clrp20"]
    assert main([*argv, "--bks", str(tmp_path / "bks.csv"), "--out", str(out), "--quiet"]) == 0
    models = [call["model"] for call in calls]
    assert models == ["drlhq_clrp20", "drlhq_clrp20"]
    rows = {r["instance"]: r for r in _summary(out)}
    assert rows["d.npz[1]"]["bks"] == "2.5" and rows["d.npz[0]"]["bks"] == ""


def test_outputs_that_cannot_be_written_fail_their_instance(tmp_path, monkeypatch, capsys):
    _fake_solve_then_stop(monkeypatch, stop_at=0)
    files = _json_files(tmp_path, 1)
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "i0.json").mkdir()  # a folder where the solution file goes
    argv = ["solve", *files, "--method", "pyvrp", "--out", str(tmp_path / "o"), "--overwrite"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "error: i0.json: writing the outputs: " in err
    assert _summary(tmp_path / "o")[0]["status"] == "failed"


@pytest.fixture
def recorded_run(monkeypatch):
    """``solve_many`` replaced by a recorder of its arguments and of torch's thread count at
    the call; it solves nothing."""
    import torch

    import clrp_rl4co.solving as solving

    calls = []

    def fake_solve_many(instances, **kwargs):
        calls.append({**kwargs, "count": len(instances), "threads": torch.get_num_threads()})
        return []

    monkeypatch.setattr(solving, "solve_many", fake_solve_many)
    threads = torch.get_num_threads()
    torch.set_num_threads(3)
    yield calls
    torch.set_num_threads(threads)


def test_the_options_reach_the_run(tmp_path, recorded_run):
    files = _json_files(tmp_path, 2)
    argv = ["solve", *files, "--method", "pyvrp", "--time", "7", "--seed", "11"]
    main([*argv, "--workers", "2", "--out", str(tmp_path / "a"), "--quiet"])
    main([*argv, "--workers", "1", "--out", str(tmp_path / "b"), "--quiet"])
    first, second = recorded_run
    assert first["count"] == 2 and first["method"] == "pyvrp" and first["seconds"] == 7.0
    assert first["seed"] == 11 and first["workers"] == 2 and first["model"] is None
    assert first["threads"] == 3  # the workers set their own threads
    assert second["workers"] == 1 and second["threads"] == 1  # one worker: one thread here


def test_an_out_folder_holding_an_input_is_refused_before_solving(tmp_path, monkeypatch, capsys):
    calls = []
    _fake_solve_then_stop(monkeypatch, stop_at=0, asked=calls)
    files = _json_files(tmp_path, 2)
    before = [Path(f).read_bytes() for f in files]
    for extra in ([], ["--overwrite"]):  # an input is never overwritten, even when asked
        status = main(["solve", *files, "--method", "pyvrp", "--out", str(tmp_path), *extra])
        assert status == 2
        err = capsys.readouterr().err
        assert f"error: --out: {tmp_path} holds the input {tmp_path / 'i0.json'}" in err
    assert [Path(f).read_bytes() for f in files] == before
    assert calls == [] and not (tmp_path / "summary.csv").exists()


def test_an_earlier_run_is_kept_unless_overwrite_is_given(tmp_path, monkeypatch, capsys):
    _fake_solve_then_stop(monkeypatch, stop_at=0)
    files = _json_files(tmp_path, 1)
    out = tmp_path / "o"
    assert main(["solve", *files, "--method", "pyvrp", "--out", str(out), "--quiet"]) == 0
    summary, solution = (out / "summary.csv").read_bytes(), (out / "i0.json").read_bytes()
    # a mistyped path: nothing to solve, nothing written, the earlier summary untouched
    assert main(["solve", str(tmp_path / "nonexistent.dat"), "--out", str(out)]) == 1
    assert "nothing written" in capsys.readouterr().err
    assert (out / "summary.csv").read_bytes() == summary
    # the same run again: refused before solving, naming what it would replace
    assert main(["solve", *files, "--method", "pyvrp", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "holds an earlier run's outputs" in err and "--overwrite" in err
    assert (out / "summary.csv").read_bytes() == summary
    assert (out / "i0.json").read_bytes() == solution
    # a readable file beside a mistyped one, into the same folder: refused as well
    argv = ["solve", *files, str(tmp_path / "typo.dat"), "--method", "pyvrp", "--out", str(out)]
    assert main(argv) == 2 and (out / "summary.csv").read_bytes() == summary
    assert main([*argv, "--overwrite", "--quiet"]) == 1  # replaced when asked
    rows = {r["instance"]: r["status"] for r in _summary(out)}
    assert rows == {"i0.json": "feasible", str(tmp_path / "typo.dat"): "failed"}
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left


def test_not_run_is_one_word_everywhere_and_the_table_is_printed(tmp_path, monkeypatch, capsys):
    from clrp_rl4co.execution import interrupt

    _fake_solve_then_stop(monkeypatch, stop_at=2)
    files = _json_files(tmp_path, 3)
    try:
        status = main(["solve", *files, "--method", "pyvrp", "--out", str(tmp_path / "o")])
    finally:
        interrupt.clear()
    assert status == 130
    captured = capsys.readouterr()
    progress = [line for line in captured.err.splitlines() if line.startswith("[")]
    assert progress[-1] == "[3/3] i2.json: not run: interrupted before it started"
    assert not [line for line in captured.err.splitlines() if "failed" in line]
    table = [
        line for line in captured.out.splitlines() if line.startswith("| i") and ".json" in line
    ]
    assert [line.rstrip(" |").rsplit("| ", 1)[1] for line in table] == [
        "feasible",
        "interrupted",
        "not run",
    ]
    assert [r["status"] for r in _summary(tmp_path / "o")] == ["feasible", "interrupted", "not run"]


def test_the_repeatable_mode_reaches_the_run_and_excludes_a_time(tmp_path, recorded_run, capsys):
    files = _json_files(tmp_path, 1)
    main(["solve", *files, "--iterations", "250", "--out", str(tmp_path / "a"), "--quiet"])
    began = time.perf_counter()
    main(["solve", *files, "--out", str(tmp_path / "b"), "--quiet"])
    repeatable, timed = recorded_run
    assert repeatable["iterations"] == 250 and timed["iterations"] is None
    assert began <= timed["started"] <= time.perf_counter()  # main called in a running process
    with pytest.raises(SystemExit) as info:
        main(["solve", *files, "--iterations", "250", "--time", "5"])
    assert info.value.code == 2
    assert "argument --time: not allowed with argument --iterations" in capsys.readouterr().err


def test_the_process_start_is_when_the_interpreter_started():
    """What the command's first budgets count from, run as a process: a second of sleep
    before asking shows as a second of age."""
    code = (
        "import time\ntime.sleep(1.0)\nfrom clrp_rl4co.cli import process_started\n"
        "print(time.perf_counter() - process_started())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    age = float(done.stdout.strip())
    assert 1.0 <= age <= 30.0
