"""The solvers on env batches: ``solvers.solve_td`` and ``solvers.local_search_td``.

Every solution must replay through the env (``check_solution_validity``), the env's reward must
equal minus the solver's cost, local search must never make a solution worse, and malformed or
infeasible input must fail before any solving.
"""

from __future__ import annotations

import pytest
import torch
from tensordict import TensorDict

import clrp_rl4co.solvers.api as solver_api
from clrp_rl4co import CLRPEnv
from clrp_rl4co.data import CLRPInstance, instances_to_tensordict
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
from clrp_rl4co.solvers import local_search_td, solve_td

#: Seed of the generated clrp10 instances.
DATA_SEED = 7


@pytest.fixture(scope="module")
def env() -> CLRPEnv:
    return CLRPEnv(generator_params={"preset": "clrp10"})


@pytest.fixture(scope="module")
def td() -> TensorDict:
    """Three seeded clrp10 instances (an instance TensorDict, not a reset state)."""
    return generate_dataset(CLRPGenerator(preset="clrp10"), 3, DATA_SEED)


def random_feasible_rollout(env: CLRPEnv, td: TensorDict, seed: int) -> torch.Tensor:
    """Actions [B, T] of a uniformly random feasible policy (a seeded ``torch.Generator``)."""
    gen = torch.Generator().manual_seed(seed)
    state = env.reset(td.clone())
    actions = []
    while not bool(state["done"].all()):
        action = torch.multinomial(state["action_mask"].float(), 1, generator=gen).squeeze(-1)
        state.set("action", action)
        state = env.step(state)["next"]
        actions.append(action)
    assert not bool(state["infeasible"].any()), "the random rollout dead-ended: change the seed"
    return torch.stack(actions, dim=1)


def costs_of(env: CLRPEnv, td: TensorDict, actions: torch.Tensor) -> torch.Tensor:
    """Positive float64 costs [B] (instance units) of ``actions`` replayed from ``td``."""
    return env.cost_parts(env.rollout_actions(td, actions))["total"]


@pytest.mark.parametrize(
    "solver, kwargs",
    [
        ("pyvrp", dict(seconds=None, max_iterations=200, seed=0)),
        # time-limited: the adapter must return valid solutions whether or not HiGHS closes
        # the gap (a clrp10 proof takes 1-15 s on a loaded 2-core machine)
        ("exact", dict(seconds=2.0, threads=1)),
    ],
)
def test_solve_valid_and_reward_matches(env, td, solver, kwargs):
    actions, costs = solve_td(td, solver=solver, **kwargs)
    assert actions.dtype == torch.long and actions.shape[0] == 3
    assert costs.dtype == torch.float64 and costs.shape == (3,)
    assert bool((costs > 0).all())
    reset = env.reset(td.clone())
    env.check_solution_validity(reset, actions)
    reward = env.get_reward(reset, actions)
    torch.testing.assert_close(reward.double(), -costs, rtol=1e-6, atol=1e-5)
    torch.testing.assert_close(costs_of(env, td, actions), costs, rtol=1e-12, atol=1e-9)


def test_solve_exact_not_worse_than_pyvrp():
    """On 5-customer instances of the clrp10 distribution HiGHS proves optimality in < 1 s."""
    env = CLRPEnv(generator_params={"preset": "clrp10", "num_loc": 5})
    small = generate_dataset(env.generator, 3, DATA_SEED)
    _, heuristic = solve_td(small, seconds=None, max_iterations=200, seed=0)
    actions, exact = solve_td(small, seconds=20.0, solver="exact", threads=1)
    env.check_solution_validity(env.reset(small.clone()), actions)
    assert bool((exact <= heuristic + 1e-6).all())


@pytest.mark.parametrize("mode", ["full", "routes"])
def test_local_search_never_worse_and_valid(env, td, mode):
    actions = random_feasible_rollout(env, td, seed=3)
    before = costs_of(env, td, actions)
    out = local_search_td(td, actions, seconds=None, max_iterations=150, mode=mode)
    assert out.dtype == torch.long and out.shape[0] == 3
    reset = env.reset(td.clone())
    env.check_solution_validity(reset, out)
    after = costs_of(env, td, out)
    assert bool((after <= before + 1e-9).all())
    assert bool((after < before - 1e-9).any()), "random solutions should improve"
    torch.testing.assert_close(env.get_reward(reset, out).double(), -after, rtol=1e-6, atol=1e-5)


def test_local_search_zero_iterations_returns_input(env, td):
    actions = random_feasible_rollout(env, td, seed=5)
    for mode in ("full", "routes"):
        same = local_search_td(td, actions, seconds=1.0, max_iterations=0, mode=mode)
        assert torch.equal(same, actions)


def _feasible_small() -> CLRPInstance:
    return CLRPInstance(
        depot_locs=[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
        customer_locs=[[0.5, 0.5], [0.4, 0.6]],
        depot_capacity=[40.0, 40.0, 40.0, 40.0],
        opening_cost=[1.0, 1.0, 1.0, 1.0],
        demand=[19.0, 19.0],
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
    )


@pytest.mark.parametrize("solver", ["pyvrp", "exact"])
def test_solve_rejects_bin_packing_infeasible_before_solving(env, solver, monkeypatch):
    # instance 1: total capacity 84 >= demand 38 and every demand fits some depot, but the two
    # customers of demand 19 fit only into the one depot of capacity 30 (the others hold 18)
    td = instances_to_tensordict([_feasible_small()] * 2)
    td["depot_capacity"][1] = torch.tensor([18.0, 18.0, 18.0, 30.0])
    calls = []
    monkeypatch.setattr(solver_api, "_solve_one", lambda job: calls.append(job))
    with pytest.raises(ValueError, match="demand >= 19 need 38"):
        solve_td(td, seconds=1.0, solver=solver)
    assert calls == [], "a solver ran before the infeasible instance was rejected"


def test_solve_rejects_total_demand_above_capacity(env, td, monkeypatch):
    bad = td.clone()
    num_depots = bad["depot_capacity"].shape[-1]
    short = 0.9 * float(bad["demand"][1].sum()) / num_depots  # every demand still fits a depot
    assert short >= float(bad["demand"][1].max())
    bad["depot_capacity"][1] = torch.full((num_depots,), short)
    calls = []
    monkeypatch.setattr(solver_api, "_solve_one", lambda job: calls.append(job))
    with pytest.raises(ValueError, match="total demand.*exceeds total depot"):
        solve_td(bad, seconds=1.0)
    assert calls == []
