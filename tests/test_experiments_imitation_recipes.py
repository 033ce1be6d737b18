"""One imitation pass per recipe (experiments/imitation/recipes.py): every recipe from the same
start, learning rate 0 is the start itself, rows and report."""

from __future__ import annotations

import csv

import pytest
import torch
from test_experiments_imitation import labels  # noqa: F401 (the labels fixture)
from test_imitation import TINY

from clrp_rl4co.models import build_policy
from experiments.imitation import settings
from experiments.imitation.recipes import (
    RECIPES_CSV,
    run_recipes,
    start_weights,
    write_recipes_report,
)
from experiments.training.imitation_pass import Recipe


def test_a_recipe_reads_likelihood_augment_and_learning_rate():
    assert Recipe.parse("solution,dihedral,1e-5") == Recipe("solution", "dihedral", 1e-5)
    assert Recipe.parse("sequence,identity,0") == Recipe("sequence", "identity", 0.0)


@pytest.mark.parametrize(
    "text, part",
    [
        ("solution,dihedral", "need LIKELIHOOD,AUGMENT,LR"),
        ("route,dihedral,1e-5", "likelihood 'route'"),
        ("solution,rot8,1e-5", "augment 'rot8'"),
        ("solution,dihedral,fast", "learning rate 'fast' is not a number"),
        ("solution,dihedral,-1e-5", "learning rate '-1e-5' must be >= 0"),
        ("solution,dihedral,nan", "learning rate 'nan' must be >= 0"),
    ],
)
def test_a_bad_recipe_is_refused_naming_it_and_the_part(text, part):
    with pytest.raises(ValueError, match=f"recipe '{text}'.*{part}"):
        Recipe.parse(text)


@pytest.fixture
def start(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "PRESET", "clrp10")
    torch.manual_seed(0)
    path = tmp_path / "start" / "tiny"
    policy = build_policy("drlhq", **TINY)
    policy.save_pretrained(path)
    threads = torch.get_num_threads()
    yield str(path), policy.state_dict()
    torch.set_num_threads(threads)


def weight_sum(policy) -> float:
    return sum(float(p.detach().double().abs().sum()) for p in policy.parameters())


def test_every_recipe_starts_from_the_same_weights_and_lr_zero_is_the_start(
    tmp_path,
    labels,  # noqa: F811
    start,
):
    path, weights = start
    seen = []

    def evaluate(policy):
        seen.append({k: v.clone() for k, v in policy.state_dict().items()})
        return weight_sum(policy)

    recipes = [Recipe.parse(t) for t in ("solution,identity,0", "sequence,dihedral,1e-2")]
    recipes.append(recipes[1])
    rows = run_recipes(
        recipes,
        4,
        report_dir=tmp_path / "report",
        labels_dir=labels,
        evaluate_fn=evaluate,
        start_model=path,
    )
    for key, value in weights.items():
        torch.testing.assert_close(seen[0][key], value)  # lr 0: not a step taken
    assert any(not torch.equal(seen[1][k], weights[k]) for k in weights)
    assert rows[1]["x8"] == rows[2]["x8"]  # same start, order and seed: the same pass
    assert rows[1]["loss_first"] == rows[2]["loss_first"]
    assert [r["steps"] for r in rows] == [1, 1, 1]  # 4 labels, batch 32
    assert [r["labels"] for r in rows] == [4, 4, 4]
    with (tmp_path / "report" / RECIPES_CSV).open() as handle:
        written = list(csv.DictReader(handle))
    assert [(r["likelihood"], float(r["lr"])) for r in written] == [
        ("solution", 0.0),
        ("sequence", 1e-2),
        ("sequence", 1e-2),
    ]
    report = write_recipes_report(tmp_path / "report").read_text()
    assert report.count("| shipped | sequence | dihedral | 0.01 | 4 |") == 2
    # the last column: each row's x8 minus that of the same start at learning rate 0
    difference = f"| {rows[1]['x8'] - rows[0]['x8']:+.4f} |"
    assert report.count(difference) == 2
    assert "| +0.0000 |" in report


def test_the_start_is_the_shipped_model_or_a_committed_arm(tmp_path):
    with pytest.raises(ValueError, match="arm 'pomo' has no committed state"):
        start_weights("pomo", tmp_path)
    with pytest.raises(ValueError, match="arm: 'best' is not one of"):
        start_weights("best", tmp_path)
    assert write_recipes_report(tmp_path) is None


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--labels", "0", "--recipe", "solution,dihedral,0"], "--labels: need at least 1, got 0"),
        (
            ["--labels", "5", "--recipe", "solution,dihedral"],
            "--recipe: recipe 'solution,dihedral'",
        ),
    ],
)
def test_the_command_refuses_bad_input_before_loading_anything(argv, message):
    from experiments.imitation.__main__ import main

    with pytest.raises(SystemExit, match=message):
        main(["recipes", *argv])
