"""The training campaign (experiments/campaign/) end to end on the CPU: real training steps
of the shipped clrp10 / clrp20 models through the package's training path, with the
validation values scripted so that both shipping decisions are forced; a session killed after
its first archive; the state, curves and shipped models that ``apply`` writes; the split of the
time; the Hydra overrides a GPU run passes to ``run.py``; the command-line plan."""

import dataclasses
import json
import shutil
import tarfile
from pathlib import Path

import pytest
import torch

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.models import decode_batch
from clrp_rl4co.policies import PRETRAINED_DIR, load_policy
from experiments.campaign import callback, cli, settings, validation
from experiments.campaign import session as campaign_session
from experiments.campaign.apply import apply
from experiments.campaign.callback import CampaignCallback
from experiments.campaign.schedule import minute_shares, sequential_durations, shared_durations
from experiments.campaign.session import RunOptions, run
from experiments.campaign.settings import learning_rate
from experiments.campaign.state import (
    TrackState,
    draw_val_set,
    init_state,
    load_state,
    save_state,
    start_weights,
)


class Killed(BaseException):
    """Stands for the process being killed: nothing after it runs."""


class ScriptedValidation:
    """Replaces the callback's :func:`validation.validate`: per preset (told by the validation
    set's node count) a list of values, the first for the shipped model; calls beyond the script
    repeat its last value. ``kill_at`` (preset -> call index) raises :class:`Killed` instead."""

    def __init__(self, script: dict[str, list[float]], kill_at: dict[str, int] | None = None):
        self.script = script
        self.kill_at = kill_at or {}
        self.calls = {p: 0 for p in script}
        self.first = {}  # preset -> weights of the first policy validated (the shipped one)

    def __call__(self, policy, env, instances, batch_size, precision="32-true") -> float:
        nodes = instances["locs"].shape[1]
        preset = {15: "clrp10", 25: "clrp20"}[nodes]
        index = self.calls[preset]
        if index == 0:
            self.first[preset] = {k: v.detach().clone() for k, v in policy.state_dict().items()}
        self.calls[preset] += 1
        if self.kill_at.get(preset) == index:
            raise Killed(preset)
        values = self.script[preset]
        return values[min(index, len(values) - 1)]


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """Copies of the shipped clrp10 / clrp20 models and an empty campaign state in tmp_path.
    RL4COTrainer sets torch's float32 matmul precision for the whole process ("medium"); it is
    restored afterwards, so later tests see the numerics they were written with."""
    pretrained = tmp_path / "pretrained"
    pretrained.mkdir()
    for preset in ("clrp10", "clrp20"):
        for suffix in (".pt", ".json"):
            shutil.copy(PRETRAINED_DIR / f"drlhq_{preset}{suffix}", pretrained)
    monkeypatch.setattr(campaign_session, "END_MARGIN_S", 1.0)
    monkeypatch.setattr(callback, "STOP_MARGIN_S", 0.2)
    return tmp_path, pretrained, tmp_path / "state"  # matmul precision: restored by conftest


def _options(tmp_path, pretrained, state, name, presets, seconds, **kw) -> RunOptions:
    """In-process CPU sessions of about ``seconds`` of training in all (steps of 2 instances,
    epochs of 8, 4 validation instances, a validation every 0.5 s)."""
    startup = 3.0 * len(presets)  # Lightning's set-up of each track, outside the window
    return RunOptions(
        minutes=(seconds + startup + campaign_session.END_MARGIN_S) / 60,
        startup_s=startup,
        out=tmp_path / name / "out",
        work=tmp_path / name / "work",
        presets=presets,
        state_dir=state,
        pretrained_dir=pretrained,
        in_process=True,
        concurrent=False,
        val_every_s=0.5,
        accelerator="cpu",
        compile=False,  # seconds of training: compiling the decoder's step would take them all
        threads=1,
        batch_size=2,
        epoch_size=8,
        val_size=4,
        command=f"test {name}",
        **kw,
    )


def _session(tar: Path) -> dict:
    with tarfile.open(tar) as f:
        return json.load(f.extractfile("session.json"))


def _members(tar: Path) -> set[str]:
    with tarfile.open(tar) as f:
        return set(f.getnames())


def _state(state: Path, track: str) -> TrackState:
    return TrackState.from_json((state / track / "state.json").read_text())


def test_sessions_ship_only_improvements_survive_a_kill_and_resume(setup, monkeypatch):
    tmp_path, pretrained, state = setup
    shipped = {p: (pretrained / f"drlhq_{p}.pt").read_bytes() for p in ("clrp10", "clrp20")}

    # session A: clrp10's validations fall below the shipped model's, clrp20's never do
    fake = ScriptedValidation({"clrp10": [9.0, 8.95, 8.9, 8.85, 8.8], "clrp20": [15.0, 15.1]})
    monkeypatch.setattr(callback, "validate", fake)
    run(_options(tmp_path, pretrained, state, "a", ("clrp10", "clrp20"), 6.0, floor=0.5))
    out = tmp_path / "a" / "out"
    assert sorted(p.name for p in out.iterdir()) == ["campaign.json", "clrp10.tar", "clrp20.tar"]
    a10, a20 = _session(out / "clrp10.tar"), _session(out / "clrp20.tar")
    assert fake.calls["clrp10"] >= 2 and fake.calls["clrp20"] >= 2  # start + at least one more
    assert a10["complete"] and a20["complete"] and a10["steps"] > 0 and a20["steps"] > 0
    assert a10["points"][0] == {**a10["points"][0], "kind": "start", "step": 0, "value": 9.0}
    assert a10["shipped"]["value"] == 9.0 and a10["best"]["value"] < 9.0
    assert a10["best"]["instances"] == a10["start"]["instances"] + 2 * a10["best"]["step"]
    assert a20["best"] is None and "weights.pt" not in _members(out / "clrp20.tar")
    assert {"weights.pt", "weights.json"} <= _members(out / "clrp10.tar")
    assert a10["seed"] == a20["seed"] == settings.TRAIN_SEED_BASE
    assert a10["lr"] == learning_rate(a10["start"]["instances"]) == 1e-4

    done = {d["track"]: d["action"] for d in apply(out, state, pretrained)}
    assert done["clrp10"].startswith("shipped drlhq_clrp10") and done["clrp20"].startswith("no ")
    assert (pretrained / "drlhq_clrp10.pt").read_bytes() != shipped["clrp10"]
    assert (pretrained / "drlhq_clrp20.pt").read_bytes() == shipped["clrp20"]
    meta = json.loads((pretrained / "drlhq_clrp10.json").read_text())
    assert meta["training_instances"] == a10["best"]["instances"]
    assert meta["validation"]["value"] == a10["best"]["value"]
    assert meta["validation"]["val_seed"] == settings.CAMPAIGN_VAL_SEED != 1234
    assert meta["seed"] == a10["seed"] and meta["hardware"].startswith("1 x CPU process")
    assert meta["training"][-1].startswith("test a (session ")
    assert (
        meta["wall_minutes"]
        > json.loads((PRETRAINED_DIR / "drlhq_clrp10.json").read_text())["wall_minutes"]
    )
    with tarfile.open(out / "clrp10.tar") as f:  # the shipped weights are the candidate's
        candidate = torch.load(f.extractfile("weights.pt"), weights_only=True)
    shipped_now = torch.load(pretrained / "drlhq_clrp10.pt", weights_only=True)
    assert candidate.keys() == shipped_now.keys()
    assert all(torch.equal(candidate[k], shipped_now[k]) for k in candidate)
    s10, s20 = _state(state, "clrp10"), _state(state, "clrp20")
    assert (s10.resume, s10.instances, s10.value) == ("shipped", a10["best"]["instances"],
                                                      a10["best"]["value"])  # fmt: skip
    assert (s20.resume, s20.instances) == ("shipped", a20["start"]["instances"])
    assert s20.trained_instances == a20["instances_end"] - a20["start"]["instances"] > 0
    assert len(s10.sessions) == len(s20.sessions) == 1
    assert not (state / "clrp20" / "resume.pt").exists()
    for track, session in (("clrp10", a10), ("clrp20", a20)):
        rows = (state / track / "curve.csv").read_text().splitlines()
        assert len(rows) == 1 + len(session["points"])
        assert (state / track / "curve.png").stat().st_size > 1000
    assert apply(out, state, pretrained)[0]["action"] == "skipped: already applied"

    # session B on clrp20, killed after its first periodic validation (an
    # improvement): the archive written then is what comes back
    fake = ScriptedValidation({"clrp20": [15.0, 14.9]}, kill_at={"clrp20": 2})
    monkeypatch.setattr(callback, "validate", fake)
    monkeypatch.setattr(CampaignCallback, "on_exception", lambda *args: None)
    with pytest.raises(Killed):
        run(_options(tmp_path, pretrained, state, "b", ("clrp20",), 30.0))
    out = tmp_path / "b" / "out"
    b20 = _session(out / "clrp20.tar")
    assert not b20["complete"] and [p["kind"] for p in b20["points"]] == ["start", "periodic"]
    assert b20["best"]["value"] == 14.9 and b20["seed"] == settings.TRAIN_SEED_BASE + 1
    # meanwhile the shipped clrp20 model changed: the candidate is kept, not shipped
    changed = {
        k: v + 1e-3 for k, v in load_policy(pretrained / "drlhq_clrp20.pt").state_dict().items()
    }
    torch.save(changed, pretrained / "drlhq_clrp20.pt")
    (done,) = apply(out, state, pretrained)
    assert done["action"].startswith("kept as resume.pt") and "changed" in done["action"]
    s20 = _state(state, "clrp20")
    assert (s20.resume, s20.instances) == ("own", b20["best"]["instances"])
    assert (state / "clrp20" / "resume.pt").is_file() and len(s20.sessions) == 2
    assert not s20.sessions[-1]["complete"]

    # session C resumes from the kept weights (bf16 autocast on the CPU, as on a GPU)
    fake = ScriptedValidation({"clrp20": [14.95, 14.9, 14.92]})
    monkeypatch.setattr(callback, "validate", fake)
    run(_options(tmp_path, pretrained, state, "c", ("clrp20",), 3.0, precision="bf16-mixed"))
    c20 = _session(tmp_path / "c" / "out" / "clrp20.tar")
    # the shipped model measured is the one in pretrained_dir (now changed), not the package's
    assert all(torch.equal(fake.first["clrp20"][k], changed[k]) for k in changed)
    assert c20["start"]["kind"] == "own" and c20["start"]["instances"] == b20["best"]["instances"]
    assert c20["state_sessions"] == 2 and c20["seed"] == settings.TRAIN_SEED_BASE + 2
    assert c20["precision"] == "bf16-mixed" and c20["points"][0]["value"] == 14.9  # the start
    assert c20["best"] is None  # 14.92 is no improvement on the start's 14.9
    apply(tmp_path / "c" / "out", state, pretrained)
    rows = (state / "clrp20" / "curve.csv").read_text().splitlines()
    assert len(rows) == 1 + len(a20["points"]) + len(b20["points"]) + len(c20["points"])
    assert len(_state(state, "clrp20").sessions) == 3


def test_apply_refuses_a_session_that_did_not_start_from_the_current_state(setup, monkeypatch):
    tmp_path, pretrained, state = setup
    monkeypatch.setattr(callback, "validate", ScriptedValidation({"clrp10": [9.0, 8.9]}))
    for name in ("x", "y"):  # two sessions from the same state
        run(_options(tmp_path, pretrained, state, name, ("clrp10",), 1.5))
    apply(tmp_path / "x" / "out", state, pretrained)
    with pytest.raises(ValueError, match="state_sessions: the session started from 0"):
        apply(tmp_path / "y" / "out", state, pretrained)


def test_validate_is_the_tables_x8_objective_in_any_batching():
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    td = draw_val_set("clrp10", 5)
    policy = load_policy("drlhq_clrp10")
    _, parts, _ = decode_batch(policy, env, td, settings.VAL_DECODE)
    expected = float(parts["total"].mean())
    assert validation.validate(policy, env, td, 2) == pytest.approx(expected, rel=1e-12)
    assert validation.validate(policy, env, td, 5) == pytest.approx(expected, rel=1e-12)
    bf16 = validation.validate(policy, env, td, 5, "bf16-mixed")
    assert bf16 == pytest.approx(expected, rel=0.02)
    for training in (False, True):  # the mode is restored
        policy.train(training)
        validation.validate(policy, env, td, 5)
        assert policy.training is training


def test_minute_shares_follow_the_gaps_with_a_floor():
    shares = minute_shares({"a": 0.01, "b": 0.03, "c": -0.01, "d": None}, floor=0.1)
    # floor 0.1 each; the remaining 0.6 by gaps 0.01 / 0.03 / 0 / 0.03 (unknown: the largest)
    assert shares == pytest.approx({"a": 0.1 + 0.6 / 7, "b": 0.1 + 1.8 / 7, "c": 0.1,
                                    "d": 0.1 + 1.8 / 7})  # fmt: skip
    assert sum(shares.values()) == pytest.approx(1.0)
    assert minute_shares({"a": 0.0, "b": 0.0}) == {"a": 0.5, "b": 0.5}
    with pytest.raises(ValueError, match="floor: 0.3 x 4 tracks"):
        minute_shares(dict.fromkeys("abcd", 0.1), floor=0.3)


def test_shared_durations_give_each_track_its_share_of_gpu_time():
    shares = {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}
    window = 600.0
    durations = shared_durations(shares, window)
    assert max(durations.values()) == pytest.approx(window)
    # simulate equal time slices among the running tracks, 0.01 s at a time
    gpu = dict.fromkeys(shares, 0.0)
    t, dt = 0.0, 0.01
    while t < window:
        active = [k for k in shares if durations[k] > t]
        for k in active:
            gpu[k] += dt / len(active)
        t += dt
    assert gpu == pytest.approx({k: s * window for k, s in shares.items()}, rel=1e-3)
    assert sequential_durations(shares, window) == pytest.approx({"a": 60, "b": 120, "c": 180,
                                                                  "d": 240})  # fmt: skip


def test_learning_rate_follows_the_papers_schedule_in_instances():
    schedule = settings.lr_schedule()
    assert schedule == {"lr": 1e-4, "gamma": 0.1, "decay_at_instances": 7_000_000}
    assert learning_rate(6_999_999) == 1e-4 and learning_rate(7_000_000) == pytest.approx(1e-5)


def test_bad_state_and_options_name_the_field(setup):
    tmp_path, pretrained, folder = setup
    with pytest.raises(ValueError, match="resume: 'shipped' needs size 'shipped'"):
        TrackState("clrp10", "paper", 0, "shipped", None, None, {})
    with pytest.raises(ValueError, match="preset: unknown 'clrp30'"):
        settings.track_name("clrp30")
    save_state(init_state("clrp10", "shipped", folder, pretrained, 4), folder)
    with pytest.raises(ValueError, match="val_size: 6 differs from the 4 validation"):
        load_state("clrp10", "shipped", folder, pretrained, 6)
    with pytest.raises(FileNotFoundError, match="resume: clrp10_paper resumes from"):
        start_weights(TrackState("clrp10", "paper", 5, "own", None, None, {}), folder,
                            pretrained)  # fmt: skip


def test_the_gpu_run_overrides_compose_into_the_training_config(tmp_path):
    """What ``run`` passes to ``python run.py`` on the GPU: the package's config with the
    campaign's callback, no Lightning validation or checkpoints, the campaign's learning rate,
    the precision rule left to ``training_precision``, the paper's model size when asked."""
    from hydra import compose, initialize_config_dir

    from clrp_rl4co.models.training import CONFIG_DIR

    plan = {"preset": "clrp50", "track": "clrp50_paper", "work_dir": str(tmp_path / "w" / "t"),
            "seed": 1003, "lr": 1e-5, "start": {"weights": None}}  # fmt: skip
    options = RunOptions(minutes=9, out=tmp_path, accelerator="auto")
    size = settings.MODEL_SIZES["paper"]
    overrides = campaign_session.run_overrides(tmp_path / "plan.json", plan, options, size, 4)
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("main", overrides)
    assert cfg.trainer.limit_val_batches == 0 and cfg.trainer.precision is None
    assert cfg.callbacks.model_checkpoint is None and cfg.callbacks.latest_checkpoint is None
    assert cfg.callbacks.campaign._target_ == "experiments.campaign.callback.CampaignCallback"
    assert cfg.callbacks.campaign.plan == str(tmp_path / "plan.json")
    assert cfg.model.optimizer_kwargs.lr == 1e-5 and cfg.model.lr_schedule is None
    assert (cfg.model.batch_size, cfg.model.train_data_size) == (256, 6400)
    assert cfg.model.policy.embed_dim == 256 and cfg.model.policy.num_encoder_layers == 6
    assert cfg.paths.output_dir == str(tmp_path / "w" / "t") and cfg.seed == 1003
    assert cfg.num_threads == 4 and cfg.init is None
    assert cfg.compile is None  # the rule decides (training_compile: not on a GPU)
    for given in (True, False):
        told = dataclasses.replace(options, compile=given)
        overrides = campaign_session.run_overrides(tmp_path / "plan.json", plan, told, size, 4)
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            assert compose("main", overrides).compile is given


def test_the_run_command_plans_a_gpu_session_on_the_committed_state(tmp_path):
    """``python -m experiments.campaign run --minutes M --out DIR`` (``make campaign``) plans a
    session on the committed state (states, validation sets with their pinned checksums,
    shipped models): every preset, all at once on a GPU, the largest share for the whole
    window; a dry run writes nothing in the output folder."""
    work = tmp_path / "work"
    args = ["run", "--minutes", "8.5", "--out", str(tmp_path / "out"), "--dry-run"]
    assert cli.main([*args, "--work", str(work), "--accelerator", "gpu"]) == 0
    plan = json.loads((work / "campaign.json").read_text())
    assert list(plan["tracks"]) == list(settings.PRESETS) and plan["concurrent"]
    seconds = [t["train_seconds"] for t in plan["tracks"].values()]
    assert max(seconds) == pytest.approx(plan["window_s"]) and min(seconds) > 0
    assert all(t["start"] in ("shipped", "own") for t in plan["tracks"].values())
    assert not (tmp_path / "out").exists()


def test_the_run_command_needs_an_output_folder(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--minutes", "1"])
    assert "--out" in capsys.readouterr().err
