"""Expert labels (experiments/labels): shards that replay, verify, resume and stop cleanly."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
import torch

from clrp_rl4co.data import CLRPSolution, tensordict_to_instances
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
from experiments.generalist.validation import MIXED_SEED
from experiments.labels import make as make_module
from experiments.labels.__main__ import main, verify
from experiments.labels.make import MakeOptions, make_labels
from experiments.labels.shards import (
    PRESET_SEEDS,
    list_shards,
    read_shard,
    replay_costs,
    shard_seed,
    write_shard,
)
from experiments.ood.families import C100_SEED, FAMILIES
from experiments.paper_sets import DRLHQ_TEST_SEED
from experiments.published_sets import TEST_SEED


def _options(tmp_path, **kw) -> MakeOptions:
    base = dict(preset="clrp10", iterations=50, hours=1.0, out=tmp_path, shard_size=2, nice=0)
    base.update(kw)
    return MakeOptions(**base)


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """Three clrp10 labels in shards of two: shard 0 complete, shard 1 half done."""
    out = tmp_path_factory.mktemp("labels")
    made = make_labels(_options(out, max_instances=3))
    return out, made


def test_labels_fill_shards_in_order_and_leave_the_last_one_open(labelled):
    out, made = labelled
    assert made == 3
    paths = list_shards(out / "clrp10")
    assert [p.name for p in paths] == ["shard_00000.npz", "shard_00001.npz"]
    first, second = (read_shard(p) for p in paths)
    assert (first.count, first.size, first.complete) == (2, 2, True)
    assert (second.count, second.size, second.complete) == (1, 2, False)


def test_every_label_is_a_valid_solution_whose_route_costs_are_its_objective(labelled):
    out, _ = labelled
    for path in list_shards(out / "clrp10"):
        shard = read_shard(path)
        instances = tensordict_to_instances(shard.solved_instances())
        for inst, actions, objective in zip(instances, shard.actions, shard.objective):
            solution = CLRPSolution.from_actions(actions, inst.num_depots)
            solution.check(inst)
            # cost from the definition: opening of used depots + F per route + route lengths
            dist = inst.cost_matrix()
            length = sum(
                sum(dist[a, b] for a, b in zip(nodes, nodes[1:]))
                for nodes in (
                    [r.depot, *(inst.num_depots + c for c in r.customers), r.depot]
                    for r in solution.routes
                )
            )
            opening = sum(inst.opening_cost[d] for d in {r.depot for r in solution.routes})
            expected = opening + inst.vehicle_fixed_cost * len(solution.routes) + length
            assert objective == pytest.approx(expected, rel=1e-9)
        # and the env replays the same actions to the same cost
        np.testing.assert_allclose(replay_costs(shard).numpy(), shard.objective, rtol=1e-5)


def test_a_shard_holds_the_seeded_draw_of_its_preset(labelled):
    out, _ = labelled
    shard = read_shard(list_shards(out / "clrp10")[1])
    expected = generate_dataset(CLRPGenerator(preset="clrp10"), 2, shard_seed("clrp10", 1))
    for key in ("locs", "demand", "depot_capacity", "opening_cost"):
        torch.testing.assert_close(shard.instances[key], expected[key])
    assert shard.provenance["generator_seed"] == PRESET_SEEDS["clrp10"] + 1
    assert shard.provenance["budget"] == {"iterations": 50}
    assert shard.provenance["preset"] == "clrp10"
    assert {"commit", "software", "solver", "machine"} <= set(shard.provenance)
    assert len(shard.cpu_seconds) == len(shard.wall_seconds) == 1


def test_a_resumed_call_finishes_the_open_shard_and_keeps_its_labels(labelled, tmp_path):
    out, _ = labelled
    for path in list_shards(out / "clrp10"):
        (tmp_path / "clrp10").mkdir(exist_ok=True)
        (tmp_path / "clrp10" / path.name).write_bytes(path.read_bytes())
    before = read_shard(tmp_path / "clrp10" / "shard_00001.npz")
    assert make_labels(_options(tmp_path, max_instances=1)) == 1
    after = read_shard(tmp_path / "clrp10" / "shard_00001.npz")
    assert after.complete
    assert after.actions[0] == before.actions[0]
    assert len(list_shards(tmp_path / "clrp10")) == 2


def test_a_resumed_shard_must_keep_its_budget(labelled, tmp_path):
    out, _ = labelled
    (tmp_path / "clrp10").mkdir()
    for path in list_shards(out / "clrp10"):
        (tmp_path / "clrp10" / path.name).write_bytes(path.read_bytes())
    with pytest.raises(ValueError, match="budget: .* with {'iterations': 50}"):
        make_labels(_options(tmp_path, iterations=60, max_instances=1))


def test_labels_with_an_iteration_budget_are_the_same_on_a_second_run(labelled, tmp_path):
    out, _ = labelled
    make_labels(_options(tmp_path, max_instances=2))
    again = read_shard(tmp_path / "clrp10" / "shard_00000.npz")
    first = read_shard(list_shards(out / "clrp10")[0])
    assert again.actions == first.actions and again.objective == first.objective


def test_exactly_one_budget_is_required(tmp_path):
    with pytest.raises(ValueError, match="exactly one of iterations and seconds"):
        make_labels(_options(tmp_path, seconds=0.5))
    with pytest.raises(ValueError, match="exactly one of iterations and seconds"):
        make_labels(_options(tmp_path, iterations=None))


def test_a_modified_shard_fails_its_checksum_naming_the_file(labelled, tmp_path):
    out, _ = labelled
    shard = read_shard(list_shards(out / "clrp10")[0])
    path = tmp_path / "shard_00000.npz"
    write_shard(shard, path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["objective"] = arrays["objective"] + 1.0
    np.savez_compressed(path, **arrays)
    with pytest.raises(ValueError, match="shard_00000.npz: checksum mismatch"):
        read_shard(path)


def test_verify_reports_a_label_whose_objective_is_wrong(labelled, tmp_path):
    out, _ = labelled
    shard = read_shard(list_shards(out / "clrp10")[0])
    shard.objective[1] += 0.5  # consistent checksum, wrong objective
    write_shard(shard, tmp_path / "clrp10" / "shard_00000.npz")
    problems = verify(tmp_path)
    assert len(problems) == 1 and "label 1: replays to" in problems[0]
    assert main(["--out", str(tmp_path), "verify"]) == 1
    assert main(["--out", str(out), "verify"]) == 0


def test_sigterm_stops_after_the_instance_in_progress_and_saves_it(tmp_path, monkeypatch):
    real = make_module.solve_pyvrp
    calls = []

    def solve_then_signal(*args, **kwargs):
        result = real(*args, **kwargs)
        calls.append(1)
        os.kill(os.getpid(), signal.SIGTERM)
        return result

    monkeypatch.setattr(make_module, "solve_pyvrp", solve_then_signal)
    assert make_labels(_options(tmp_path, shard_size=4)) == 1
    assert len(calls) == 1
    shard = read_shard(tmp_path / "clrp10" / "shard_00000.npz")
    assert shard.count == 1 and not shard.complete


def test_label_seeds_are_not_the_seeds_of_any_test_or_validation_set():
    held_out = {TEST_SEED, DRLHQ_TEST_SEED, C100_SEED} | {f.seed for f in FAMILIES.values()}
    held_out |= {MIXED_SEED + n for n in range(0, 1001)}
    # each preset owns a block of 100,000 shard seeds; no block may hold a held-out seed
    bases = sorted(PRESET_SEEDS.values())
    assert all(b - a >= 100_000 for a, b in zip(bases, bases[1:]))
    for base in bases:
        assert not any(base <= seed < base + 100_000 for seed in held_out)


def test_unknown_preset_is_refused():
    with pytest.raises(ValueError, match="preset: no label seeds for 'clrp7'"):
        shard_seed("clrp7", 0)
