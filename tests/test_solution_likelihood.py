"""The solution's likelihood (clrp_rl4co.models.solution_likelihood): the sets of actions that
stay on a solution, the one-sample bound's defining identity ``E_q[exp X] = P(solution)``, and
the imitation loss built on it."""

from __future__ import annotations

import itertools

import pytest
import torch
from test_imitation import TINY, expert_data

from clrp_rl4co.data import CLRPSolution
from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp.validity import PADDING_ACTION
from clrp_rl4co.models import build_policy
from clrp_rl4co.models.equivalence import equivalent_actions
from clrp_rl4co.models.imitation import Imitation, imitation_loss, teacher_forced_log_likelihood
from clrp_rl4co.models.solution_likelihood import _OnSolution, solution_log_likelihood


def tiny_policy(seed: int = 0):
    torch.manual_seed(seed)
    return build_policy("drlhq", **TINY)


def route_set(actions, num_depots: int) -> list:
    """The solution's routes, each up to its direction, in a canonical order."""
    routes = CLRPSolution.from_actions(actions, num_depots).routes
    return sorted((r.depot, min(tuple(r.customers), tuple(r.customers[::-1]))) for r in routes)


def test_the_sets_along_a_solution_by_hand():
    # D = 2; routes: depot 0 serves customers 0, 1, 2 (nodes 2, 3, 4); depot 1 serves 3 (node
    # 5); depot 0 serves 4, 5 (nodes 6, 7)
    walk = _OnSolution(2, [(0, (0, 1, 2)), (1, (3,)), (0, (4, 5))])
    assert walk.allowed() == [0, 1]  # a location step: the depot of any route
    walk.take(0)
    assert walk.allowed() == [2, 4, 6, 7]  # either end of depot 0's routes
    walk.take(4)  # customer 2: the first route, backwards
    assert walk.allowed() == [3]
    walk.take(3)
    assert walk.allowed() == [2]
    walk.take(2)
    assert walk.allowed() == [0]  # back to its depot
    walk.take(0)
    assert walk.allowed() == [0, 1]  # both remaining routes' depots
    walk.take(1)
    assert walk.allowed() == [5]
    walk.take(5)
    assert walk.allowed() == [1]
    walk.take(1)
    assert walk.allowed() == [0]
    walk.take(0)
    assert walk.allowed() == [6, 7]
    walk.take(7)
    assert walk.allowed() == [6]
    walk.take(6)
    assert walk.allowed() == [0]
    walk.take(0)
    assert walk.allowed() == [PADDING_ACTION]  # finished: the no-op only


def test_a_first_customer_that_ends_no_route_of_the_depot_is_refused():
    walk = _OnSolution(2, [(0, (0, 1, 2)), (1, (3,))])
    walk.take(0)
    with pytest.raises(ValueError, match="no route of depot 0"):
        walk.take(5)  # customer 3 is depot 1's


@pytest.mark.parametrize("choose,temperature", [("sample", 1.0), ("greedy", 1.0), ("greedy", 2.0)])
def test_the_path_is_the_solution_and_the_score_bounds_its_own_likelihood(choose, temperature):
    data = expert_data("clrp10", 6, seed=5)
    env = CLRPEnv(check_actions=False)
    policy = tiny_policy()
    policy.temperature = temperature  # both scores read the policy's temperature
    with torch.no_grad():
        score, path = solution_log_likelihood(
            policy, env, data.instances, data.actions, choose=choose
        )
        own = teacher_forced_log_likelihood(policy, env, data.instances, path)
    for b in range(6):
        assert route_set(path[b].tolist(), 5) == route_set(data.actions[b].tolist(), 5)
    # each step's set holds the path's own action, so it scores at least that action
    assert bool((score >= own - 1e-4).all())
    assert bool((score <= 0).all())
    # the sets hold more than one action at some step of every multi-route solution
    assert bool((score > own + 1e-3).all())


def test_greedy_is_deterministic_and_sampling_follows_its_generator():
    data = expert_data("clrp10", 4, seed=6)
    env = CLRPEnv(check_actions=False)
    policy = tiny_policy()
    with torch.no_grad():
        first = solution_log_likelihood(policy, env, data.instances, data.actions, "greedy")
        second = solution_log_likelihood(policy, env, data.instances, data.actions, "greedy")
        drawn = [
            solution_log_likelihood(
                policy,
                env,
                data.instances,
                data.actions,
                "sample",
                torch.Generator().manual_seed(11),
            )
            for _ in range(2)
        ]
    assert torch.equal(first[1], second[1]) and torch.equal(first[0], second[0])
    assert torch.equal(drawn[0][1], drawn[1][1])


def test_the_score_is_an_unbiased_importance_weight_of_the_solution_probability():
    """``E_q[exp X]`` equals ``P(solution)``, the sum of ``p`` over every sequence of the
    solution (every route order and direction, enumerated)."""
    data = expert_data("clrp10", 1, seed=7)
    env = CLRPEnv(check_actions=False)
    policy = tiny_policy(1)
    actions = data.actions[0].tolist()
    num_routes = len(CLRPSolution.from_actions(actions, 5).routes)
    assert 2 <= num_routes <= 5
    sequences = set()
    for order in itertools.permutations(range(num_routes)):
        for reverse in itertools.product([False, True], repeat=num_routes):
            sequences.add(tuple(equivalent_actions(actions, 5, order, reverse)))
    sequences = torch.tensor(sorted(sequences))
    with torch.no_grad():
        instances = data.instances[[0] * len(sequences)]
        each = teacher_forced_log_likelihood(policy, env, instances, sequences)
        log_p_solution = torch.logsumexp(each.double(), 0)
        draws = 3000
        score, _ = solution_log_likelihood(
            policy,
            env,
            data.instances[[0] * draws],
            data.actions[[0] * draws],
            "sample",
            torch.Generator().manual_seed(3),
        )
    weights = (score.double() - log_p_solution).exp()  # exp X / P(solution), mean 1
    standard_error = float(weights.std() / draws**0.5)
    assert abs(float(weights.mean()) - 1.0) < 4 * standard_error + 1e-3
    assert standard_error < 0.05  # the check has power: a set missing one direction or one
    # route (a factor of 2 or more on some paths) moves the mean by far more


def test_a_row_that_leaves_its_solution_is_named():
    data = expert_data("clrp10", 3, seed=8)
    instances = data.instances.clone()
    first_depot = int(data.actions[1, 0])
    instances["depot_capacity"][1, first_depot] = 0.0  # row 1's first depot cannot open
    with pytest.raises(ValueError, match="row 1 leaves its solution at step"):
        env = CLRPEnv(check_actions=False)
        solution_log_likelihood(tiny_policy(), env, instances, data.actions)


def test_the_solution_loss_trains_and_unknown_choices_are_refused():
    data = expert_data("clrp10", 4, seed=9)
    env = CLRPEnv(check_actions=False)
    policy = tiny_policy()
    batch = data.__getitems__(list(range(4)))
    out = imitation_loss(policy, env, batch, likelihood="solution")
    out["loss"].backward()
    grads = [p.grad for p in policy.parameters() if p.grad is not None]
    assert grads and any(bool(g.abs().sum() > 0) for g in grads)
    assert torch.allclose(out["loss"], -out["log_likelihood"].mean())
    with pytest.raises(ValueError, match="likelihood: 'path'"):
        imitation_loss(policy, env, batch, likelihood="path")
    with pytest.raises(ValueError, match="choose: 'best'"):
        solution_log_likelihood(policy, env, data.instances, data.actions, choose="best")
    with pytest.raises(ValueError, match="likelihood: 'path'"):
        Imitation(env, policy, data, likelihood="path")


def test_a_row_scores_the_same_in_a_batch_as_alone():
    """Rows finish at different steps; the padding after a row's end adds nothing."""
    data = expert_data("clrp10", 5, seed=12)
    env = CLRPEnv(check_actions=False)
    policy = tiny_policy()
    lengths = (data.actions != PADDING_ACTION).sum(-1)
    assert len(set(lengths.tolist())) > 1
    with torch.no_grad():
        together, _ = solution_log_likelihood(policy, env, data.instances, data.actions, "greedy")
        for b in range(5):
            alone, _ = solution_log_likelihood(
                policy, env, data.instances[b : b + 1], data.actions[b : b + 1], "greedy"
            )
            torch.testing.assert_close(together[b], alone[0])


def test_the_error_names_the_step_where_the_row_leaves_its_solution():
    data = expert_data("clrp10", 8, seed=8)
    routes = CLRPSolution.from_actions(data.actions[0].tolist(), 5).routes
    depots = sorted({r.depot for r in routes})
    assert len(depots) > 1, "needs routes at two depots"
    closed = depots[-1]
    instances = data.instances.clone()
    instances["depot_capacity"][0, closed] = 0.0
    # every route at the other depots is driven first (the closed depot is masked), each taking
    # its depot, its customers and the return; then the location step finds nothing open
    step = sum(len(r.customers) + 2 for r in routes if r.depot != closed)
    with pytest.raises(ValueError, match=rf"row 0 leaves its solution at step {step} "):
        solution_log_likelihood(
            tiny_policy(), CLRPEnv(check_actions=False), instances, data.actions, "greedy"
        )
