"""The env's RL4CO-facing methods on hand-made instances: the stored mask, replaying actions,
rewards of unfinished states, multistart start nodes, action padding and the renderer's hook.

Expectations are written from the methods' contracts (RL4CO's ``RL4COEnvBase`` API and the
class docstring), not read from the implementation.
"""

import numpy as np
import pytest
import torch
from rollout import random_rollout
from tensordict import TensorDict

from clrp_rl4co import CLRPEnv, CLRPInstance
from clrp_rl4co.data import instances_to_tensordict
from clrp_rl4co.envs.clrp import env as env_module
from clrp_rl4co.envs.clrp.validity import PADDING_ACTION

# depots 0, 1; customers 2, 3, 4 (demands 4, 5, 6); vehicle capacity 10, fixed cost 1
SMALL = CLRPInstance(
    depot_locs=np.array([[0.0, 0.0], [1.0, 0.0]]),
    customer_locs=np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 0.5]]),
    depot_capacity=np.array([9.0, 20.0]),
    opening_cost=np.array([3.0, 7.0]),
    demand=np.array([4.0, 5.0, 6.0]),
    vehicle_capacity=10.0,
    vehicle_fixed_cost=1.0,
)
# depot 1 serves 2 and 3 (load 9) then 4 (load 6): opening 7, two vehicles, routes
# 1-2-3-1 (sqrt 2 + 1 + 1) and 1-4-1 (2 * sqrt 0.5)
SOLUTION = [1, 2, 3, 1, 1, 4, 1]
COST = 7 + 2 * 1 + (np.sqrt(2) + 2) + 2 * np.sqrt(0.5)


def small(batch: int = 1) -> TensorDict:
    return instances_to_tensordict([SMALL] * batch, normalize_locs=False)


def test_get_action_mask_recomputes_the_mask_the_env_stored():
    env = CLRPEnv()
    td = env.reset(small(2))
    states = [td]
    for action in SOLUTION:
        td = td.clone()
        td.set("action", torch.tensor([action, action]))
        td = env.step(td)["next"]
        states.append(td)
    # and the state of a multistart start: customer 4 (demand 6) first, from a depot that can
    # hold it, here depot 1 only (depot 0 holds 5)
    tight = CLRPInstance(**{**vars(SMALL), "depot_capacity": np.array([5.0, 20.0])})
    start = env.reset(instances_to_tensordict([tight] * 2, normalize_locs=False))
    assert start["action_mask"][0].tolist() == [True, True, False, False, False]
    start.set("action", env.select_start_nodes(start, 3)[-2:])
    start = env.step(start)["next"]
    finished_state = states[-1]
    states += [start]
    for state in states:
        assert torch.equal(CLRPEnv.get_action_mask(state), state["action_mask"])
    assert start["action_mask"][0].tolist() == [False, True, False, False, False]
    # the reset state of this instance: only depots (location step); after the final return,
    # one-hot on the padding action
    assert CLRPEnv.get_action_mask(states[0])[0].tolist() == [True, True, False, False, False]
    finished = CLRPEnv.get_action_mask(finished_state)[0]
    assert finished.sum() == 1 and finished[PADDING_ACTION]


def test_rollout_actions_replays_a_solution_from_the_instances():
    env = CLRPEnv(check_actions=False)
    final = env.rollout_actions(small(2), torch.tensor([SOLUTION + [0, 0], SOLUTION + [1, 1]]))
    assert final["done"].all()
    np.testing.assert_allclose(CLRPEnv.cost_parts(final)["total"].numpy(), [COST, COST])
    assert env.check_actions is False  # restored after the replay
    # (padding may be any action: a finished instance ignores it) actions of any integer
    # dtype, as a flat sequence for one instance
    one = env.rollout_actions(small(1), torch.tensor(SOLUTION, dtype=torch.int32))
    assert CLRPEnv.cost_parts(one)["total"].item() == pytest.approx(COST)


def test_rollout_actions_rejects_infeasible_and_unfinished_sequences():
    env = CLRPEnv(check_actions=False)
    # customer 4 (demand 6) after 2 and 3 (load 9 of 10): masked, whatever check_actions says
    with pytest.raises(ValueError, match="^action 4 is infeasible for batch index 1 "):
        env.rollout_actions(small(2), torch.tensor([SOLUTION, [1, 2, 3, 4, 1, 1, 1]]))
    assert env.check_actions is False  # restored after the error too
    with pytest.raises(ValueError, match="^instance 1: actions end before the solution is fin"):
        env.rollout_actions(small(2), torch.tensor([SOLUTION, [1, 2, 1, 1, 3, 1, 1]]))


def test_reward_of_a_reset_state_replays_the_actions():
    env = CLRPEnv()
    reward = env.get_reward(env.reset(small(2)), torch.tensor([SOLUTION, SOLUTION]))
    assert reward.dtype == torch.float32
    np.testing.assert_allclose(reward.numpy(), [-COST, -COST], rtol=1e-6)
    with pytest.raises(
        ValueError, match="^get_reward: state is not finished and no actions were given$"
    ):
        env.get_reward(env.reset(small(1)), None)
    # a finished state needs no actions
    final = env.rollout_actions(small(1), torch.tensor([SOLUTION]))
    assert env.get_reward(final, None).item() == pytest.approx(-COST)


def test_start_nodes_are_start_major_and_wrap_over_the_customers():
    env = CLRPEnv()
    td = env.reset(small(2))
    assert env.get_num_starts(td) == 3  # one per customer
    # row s * B + b holds customer s mod N, as a node index (after the 2 depots)
    starts = env.select_start_nodes(td, 5)
    assert starts.tolist() == [2, 2, 3, 3, 4, 4, 2, 2, 3, 3]


def test_replace_selected_actions_pads_with_the_no_op():
    env = CLRPEnv()
    current = torch.tensor([[1, 2, 1], [0, 3, 0]])
    new = torch.tensor([[0, 4], [1, 2]])
    selected = torch.tensor([True, False])
    out = env.replace_selected_actions(current, new, selected)
    assert out.tolist() == [[0, 4, PADDING_ACTION], [0, 3, 0]]
    # the longer one may be the new one
    out = env.replace_selected_actions(new, current, torch.tensor([False, True]))
    assert out.tolist() == [[0, 4, PADDING_ACTION], [0, 3, 0]]


def test_replace_builds_a_new_tensordict_with_or_without_the_unchecked_constructor(monkeypatch):
    td = TensorDict({"a": torch.zeros(3, 2), "b": torch.ones(3)}, batch_size=[3])

    class Checked:  # a TensorDict constructor without the unchecked one (older tensordict)
        def __new__(cls, fields, batch_size, device):
            return TensorDict(fields, batch_size=batch_size, device=device)

    for unchecked in (True, False):
        if not unchecked:
            monkeypatch.setattr(env_module, "TensorDict", Checked)
        out = env_module._replace(td, {"b": torch.full((3,), 5.0)})
        assert out is not td and out.batch_size == td.batch_size and out.device == td.device
        assert torch.equal(out["b"], torch.full((3,), 5.0)) and out["a"] is td["a"]
        assert torch.equal(td["b"], torch.ones(3))  # the input is left as it was


def test_render_titles_the_replayed_cost(tmp_path):
    import matplotlib.pyplot as plt  # the Agg backend: MPLBACKEND in conftest.py

    env = CLRPEnv()
    td = env.reset(small(2))
    ax = env.render(td, torch.tensor([SOLUTION, SOLUTION]))
    assert f"{COST:.2f}" in ax.get_title() or f"{COST:.3f}" in ax.get_title()
    plt.close(ax.figure)
    fig, given = plt.subplots()
    assert env.render(td, None, ax=given) is given  # draws into the axes it is given
    plt.close(fig)


def test_render_reads_the_cost_of_a_final_state_without_replaying(monkeypatch):
    import matplotlib.pyplot as plt  # the Agg backend: MPLBACKEND in conftest.py

    env = CLRPEnv()
    final = env.rollout_actions(small(2), torch.tensor([SOLUTION, SOLUTION]))

    def no_replay(*args, **kwargs):
        raise AssertionError("render replayed the actions of a final state")

    monkeypatch.setattr(CLRPEnv, "rollout_actions", no_replay)
    ax = env.render(final, torch.tensor([SOLUTION, SOLUTION]), index=1)
    assert ax.get_title().startswith(f"cost {COST:.10g} = depots 7 + vehicles 2 + routing ")
    assert ax.get_title().endswith("\n1 open depots, 2 routes")
    plt.close(ax.figure)


def test_render_module_takes_the_cost_parts_it_shows():
    import ast
    import importlib
    import inspect

    import matplotlib.pyplot as plt  # the Agg backend: MPLBACKEND in conftest.py

    # the module (the package's attribute ``render`` is the function)
    render_module = importlib.import_module("clrp_rl4co.envs.clrp.render")
    tree = ast.parse(inspect.getsource(render_module))
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "env" not in imported and not any(name.endswith(".env") for name in imported)
    costs = {"total": 12.5, "opening": 7.0, "vehicles": 2.0, "routing": 3.5, "penalty": 0.0}
    ax = render_module.render(small(1), torch.tensor(SOLUTION), costs=costs)
    assert ax.get_title() == (
        "cost 12.5 = depots 7 + vehicles 2 + routing 3.5\n1 open depots, 2 routes"
    )
    plt.close(ax.figure)
    # an instance (not a final state) and no costs: the routes only
    ax = render_module.render(small(1), torch.tensor(SOLUTION))
    assert ax.get_title() == "CLRP: 2 depots, 3 customers\n1 open depots, 2 routes"
    plt.close(ax.figure)


def test_the_title_prints_costs_in_full_not_in_exponent_notation():
    import importlib

    import matplotlib.pyplot as plt  # the Agg backend: MPLBACKEND in conftest.py

    render_module = importlib.import_module("clrp_rl4co.envs.clrp.render")
    # a Prins-scale cost (coord50-5-1's size): all its digits, as the CLI's plot_title
    costs = {"total": 90111.0, "opening": 31582.0, "vehicles": 12000.0, "routing": 46529.0}
    ax = render_module.render(small(1), torch.tensor(SOLUTION), costs=costs)
    assert ax.get_title().split("\n")[0] == (
        "cost 90111 = depots 31582 + vehicles 12000 + routing 46529"
    )
    plt.close(ax.figure)
    # real costs: 10 significant digits
    costs = {"total": 1234567.891234, "opening": 7.0, "vehicles": 2.0, "routing": 1234558.891234}
    ax = render_module.render(small(1), torch.tensor(SOLUTION), costs=costs)
    assert ax.get_title().split("\n")[0] == (
        "cost 1234567.891 = depots 7 + vehicles 2 + routing 1234558.891"
    )
    plt.close(ax.figure)


def test_plot_solution_writes_a_png_titled_with_its_heading_and_cost_parts(tmp_path, monkeypatch):
    # a library function: the caller's backend is not switched, no figure stays with pyplot
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from clrp_rl4co.envs.clrp import plot_solution

    titles = []
    save = Figure.savefig

    def savefig(fig, *args, **kwargs):
        titles.append(fig.axes[0].get_title())
        return save(fig, *args, **kwargs)

    switches = []
    monkeypatch.setattr(matplotlib, "use", lambda *args, **kw: switches.append(args))
    monkeypatch.setattr(Figure, "savefig", savefig)
    figures = plt.get_fignums()
    actions = torch.tensor([SOLUTION, SOLUTION])
    final = CLRPEnv().rollout_actions(small(2), actions)
    path = plot_solution(final, actions, tmp_path / "out" / "solution.png", "small: NN", index=1)
    assert path == tmp_path / "out" / "solution.png"
    assert path.read_bytes().startswith(b"\x89PNG") and path.stat().st_size > 1000
    heading, cost, summary = titles[0].split("\n")
    assert heading == "small: NN" and summary == "1 open depots, 2 routes"
    assert cost.startswith(f"cost {COST:.10g} = depots 7 + vehicles 2 + routing ")
    # given cost parts, on an instance (no final state) without a heading
    parts = {"total": 12.5, "opening": 7.0, "vehicles": 2.0, "routing": 3.5}
    plot_solution(small(1), torch.tensor(SOLUTION), tmp_path / "given.png", costs=parts)
    assert titles[1] == "cost 12.5 = depots 7 + vehicles 2 + routing 3.5\n1 open depots, 2 routes"
    assert switches == [] and plt.get_fignums() == figures


def test_random_rollouts_of_a_generated_batch_reach_done():
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    td = env.reset(batch_size=[4])
    actions, final = random_rollout(env, td, seed=1)
    assert final["done"].all()
    replayed = env.rollout_actions(td, actions)
    assert torch.equal(CLRPEnv.cost_parts(replayed)["total"], CLRPEnv.cost_parts(final)["total"])


def test_load_data_reads_a_saved_dataset(tmp_path):
    from clrp_rl4co.envs.clrp import save_dataset

    td = small(2)
    save_dataset(td, tmp_path / "small.npz", seed=3)
    loaded = CLRPEnv.load_data(tmp_path / "small.npz")
    assert loaded.batch_size == td.batch_size
    for key in td.keys():
        assert torch.equal(loaded[key], td[key]), key


def test_a_customer_whose_demand_equals_the_load_left_can_be_served():
    # depot 1 (capacity 20): load min(10, 20) = 10; after customer 2 (demand 4) 6 are left,
    # exactly customer 4's demand (rule 3: demand <= load); customer 3 (5) fits too
    env = CLRPEnv()
    td = env.reset(small(1))
    for action in (1, 2):
        td.set("action", torch.tensor([action]))
        td = env.step(td)["next"]
    assert td["vehicle_load"].item() == 6
    assert td["action_mask"][0].tolist() == [False, True, False, True, True]


def test_reset_fills_in_the_optional_instance_keys():
    # without cost_locs (costs from locs) and rounded_costs (False): the same state and costs
    env = CLRPEnv()
    full = small(2)
    bare = full.exclude("cost_locs", "rounded_costs")
    a, b = env.reset(full), env.reset(bare)
    assert torch.equal(b["cost_locs"], full["locs"].double())
    assert b["rounded_costs"].dtype == torch.bool and not b["rounded_costs"].any()
    assert b["rounded_costs"].shape == (2,)
    actions = torch.tensor([SOLUTION, SOLUTION])
    assert torch.equal(env.get_reward(b, actions), env.get_reward(a, actions))


def test_step_counter_and_start_customer_follow_the_docstring():
    # i counts the steps taken; start_customer holds the start customer's node until it is
    # served, -1 otherwise
    env = CLRPEnv()
    td = env.reset(small(1))
    assert td["i"].item() == 0 and td["start_customer"].item() == -1
    for step, action in enumerate([3, 1, 3, 2, 1, 1, 4, 1], start=1):  # start customer 3
        td.set("action", torch.tensor([action]))
        td = env.step(td)["next"]
        assert td["i"].item() == step
        # the start step stores node 3; it stays until the step that serves it (step 3)
        assert td["start_customer"].item() == (3 if step < 3 else -1), step
    assert td["done"].all()
    assert CLRPEnv.cost_parts(td)["total"].item() == pytest.approx(COST)


def test_render_passes_its_options_on():
    import matplotlib.pyplot as plt  # the Agg backend: MPLBACKEND in conftest.py

    ax = CLRPEnv().render(small(1), None, title="my instance")
    assert ax.get_title() == "my instance"
    plt.close(ax.figure)


def _random_states(env, td, seed=0):
    """The states of a random rollout (reset state first)."""
    generator = torch.Generator().manual_seed(seed)
    states = [td]
    while not td["done"].all():
        probs = td["action_mask"].float()
        action = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
        td = td.clone()
        td.set("action", action)
        td = env.step(td)["next"]
        states.append(td)
    return states


def test_states_match_the_observation_and_action_specs():
    # every observed entry has its spec's dtype and shape and lies in its bounds, written from
    # the class docstring: node indices in [0, D+N-1], route depot in [0, D-1], start customer
    # -1 or a node, bool masks and flags, float32 quantities
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    num_depots, num_nodes = 5, 15
    spec = env.observation_spec
    expected = {
        "locs": ((num_nodes, 2), torch.float32),
        "depot_capacity": ((num_depots,), torch.float32),
        "remaining_depot_capacity": ((num_depots,), torch.float32),
        "opening_cost": ((num_depots,), torch.float32),
        "demand": ((10,), torch.float32),
        "vehicle_capacity": ((1,), torch.float32),
        "vehicle_fixed_cost": ((1,), torch.float32),
        "current_node": ((1,), torch.int64),
        "route_depot": ((1,), torch.int64),
        "vehicle_load": ((1,), torch.float32),
        "served": ((10,), torch.bool),
        "is_location_step": ((1,), torch.bool),
        "depot_used": ((num_depots,), torch.bool),
        "current_route": ((10,), torch.bool),
        "last_route": ((10,), torch.bool),
        "start_customer": ((1,), torch.int64),
        "action_mask": ((num_nodes,), torch.bool),
    }
    assert set(spec.keys()) == set(expected)
    for key, (shape, dtype) in expected.items():
        assert spec[key].shape == shape and spec[key].dtype == dtype, key
    for key, (low, high) in {
        "current_node": (0, num_nodes - 1),
        "route_depot": (0, num_depots - 1),
        "start_customer": (-1, num_nodes - 1),
    }.items():
        assert spec[key].space.low.item() == low and spec[key].space.high.item() == high, key
    action = env.action_spec
    assert action.shape == (1,) and action.dtype == torch.int64
    assert action.space.low.item() == 0 and action.space.high.item() == num_nodes - 1
    assert env.reward_spec.shape == (1,)
    assert env.done_spec["done"].shape == (1,) and env.done_spec["done"].dtype == torch.bool
    # a multistart start and a plain rollout: every state is in the spec
    td = env.reset(batch_size=[4])
    start = td.clone()
    start.set("action", env.select_start_nodes(td, 10)[:4])
    for state in _random_states(env, td) + _random_states(env, env.step(start)["next"], 1):
        for key, (shape, dtype) in expected.items():
            assert state[key].dtype == dtype and state[key].shape == (4, *shape), key
            assert spec[key].expand(4, *shape).is_in(state[key]), key


def test_reset_converts_the_instance_entries_to_the_documented_dtypes():
    # float64 inputs, costs as float32, rounded_costs as integers, one value per instance as [B]
    td = small(2)
    td64 = TensorDict(
        {
            "locs": td["locs"].double(),
            "cost_locs": td["cost_locs"].float(),
            "depot_capacity": td["depot_capacity"].double(),
            "opening_cost": td["opening_cost"].double(),
            "demand": td["demand"].double(),
            "vehicle_capacity": td["vehicle_capacity"].double().reshape(2),
            "vehicle_fixed_cost": td["vehicle_fixed_cost"].double().reshape(2),
            "rounded_costs": torch.zeros(2, dtype=torch.uint8),
        },
        batch_size=[2],
    )
    state = CLRPEnv().reset(td64)
    for key in ("locs", "depot_capacity", "opening_cost", "demand"):
        assert state[key].dtype == torch.float32, key
    assert state["cost_locs"].dtype == torch.float64
    assert state["rounded_costs"].dtype == torch.bool
    for key in ("vehicle_capacity", "vehicle_fixed_cost"):
        assert state[key].dtype == torch.float32 and state[key].shape == (2, 1), key
    for key in ("cost_opening", "cost_vehicles", "cost_routing"):
        assert state[key].dtype == torch.float64 and state[key].shape == (2,), key
    for key in ("i", "num_routes"):
        assert state[key].dtype == torch.int64 and state[key].shape == (2, 1), key
    assert state["done"].dtype == torch.bool and state["infeasible"].dtype == torch.bool
