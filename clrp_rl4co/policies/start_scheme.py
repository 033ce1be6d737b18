"""The CLRP multistart scheme shared by DRLHQ, POMO* and MTA*.

RL4CO's stock multistart (``multistart_*`` decode types) and ``BeamSearch`` *force the first
action* to ``env.select_start_nodes()``. In the CLRP the first step is a location step, so a
customer there is infeasible. This module replaces those paths:

- ``S`` starts (default: one per customer, ``env.get_num_starts``), start-major layout
  (row ``s * B + b`` as RL4CO's ``batchify``); start ``s`` owns customer ``s % N``, stored in the
  state as ``td["start_customer"]`` (a node index) so that beam search reorders it with the beams.
- step 0: the *policy* chooses the first depot, restricted to depots whose capacity covers the
  start customer's demand (sampled in training, greedy at test);
- step 1: the start customer is forced (a one-hot mask: log-probability exactly 0);
- then the policy decodes freely.

With ``S = k * N`` starts (inference only) start ``s`` takes the ``(s // N)``-th best covering
depot (by the policy's logits; forced, log-probability 0) and customer ``s % N``: the top-k first
depots x N customers.

The log-likelihood of a multistart solution is ``log p(depot) + sum_{t >= 2} log p(a_t)``.
Because the layout and the returned shapes are RL4CO's, ``POMO``'s shared baseline, its
augmentation and ``unbatchify`` calls work unchanged.

Plug-in: :class:`StartSchemeMixin` overrides ``forward`` of an RL4CO constructive policy (same
signature and outputs) and builds its decoding strategy with :func:`get_start_scheme_strategy`.
"""

from __future__ import annotations

import torch
from rl4co.envs.common.base import RL4COEnvBase
from rl4co.utils.decoding import (
    BeamSearch,
    DecodingStrategy,
    Evaluate,
    Greedy,
    Sampling,
    get_log_likelihood,
)
from rl4co.utils.ops import batchify, calculate_entropy
from rl4co.utils.pylogger import get_pylogger
from tensordict import TensorDict
from torch import Tensor

from clrp_rl4co.data.instance import CAPACITY_TOLERANCE

log = get_pylogger(__name__)

#: State keys added by the start scheme.
START_CUSTOMER_KEY = "start_customer"
START_RANK_KEY = "start_depot_rank"


def start_customers(td: TensorDict, env: RL4COEnvBase, num_starts: int) -> Tensor:
    """Customer node index of each start, [S * B] start-major."""
    return env.select_start_nodes(td, num_starts=num_starts)


def add_start_keys(td: TensorDict, env: RL4COEnvBase, num_starts: int) -> TensorDict:
    """Batchify ``td`` [B] to [S * B] and store each start's customer (and depot rank)."""
    batch = td.batch_size[0]
    num_customers = td["demand"].shape[-1]
    customers = start_customers(td, env, num_starts)
    td = batchify(td, num_starts)
    td.set(START_CUSTOMER_KEY, customers.reshape(-1, 1).long())
    if num_starts > num_customers:
        ranks = torch.arange(num_starts, device=td.device) // num_customers
        td.set(START_RANK_KEY, ranks.repeat_interleave(batch).reshape(-1, 1))
    return td


def restrict_start_mask(td: TensorDict, mask: Tensor, logits: Tensor | None = None) -> Tensor:
    """Apply the start scheme to the action ``mask`` [B', D+N] of the current step.

    Rows without ``td["start_customer"]`` are unchanged. At step 0 the depots are limited to
    those whose remaining capacity covers the start customer's demand (and, with a depot rank,
    to the rank-th best of them by ``logits``); at step 1 the start customer is forced. A row
    whose restriction would leave nothing feasible keeps the env mask.
    """
    if START_CUSTOMER_KEY not in td.keys():
        return mask
    step = td["i"].reshape(-1)
    first, second = step == 0, step == 1
    if not bool((first | second).any()):
        return mask
    num_depots = td["depot_capacity"].shape[-1]
    customer = td[START_CUSTOMER_KEY].reshape(-1, 1)  # node index
    nodes = torch.arange(mask.shape[-1], device=mask.device)
    restricted = mask.clone()
    if bool(first.any()):
        demand = td["demand"].gather(-1, customer - num_depots)  # [B', 1]
        covers = td["remaining_depot_capacity"] + CAPACITY_TOLERANCE >= demand  # [B', D]
        allowed = mask.clone()
        allowed[:, :num_depots] &= covers
        allowed[:, num_depots:] = False
        if START_RANK_KEY in td.keys() and logits is not None:
            allowed = _rank_depot(allowed, logits, td[START_RANK_KEY].reshape(-1))
        ok = allowed.any(-1, keepdim=True)
        restricted = torch.where(first[:, None] & ok, allowed, restricted)
    if bool(second.any()):
        forced = (nodes == customer) & mask
        ok = forced.any(-1, keepdim=True)
        restricted = torch.where(second[:, None] & ok, forced, restricted)
    return restricted


def _rank_depot(allowed: Tensor, logits: Tensor, rank: Tensor) -> Tensor:
    """One-hot on the ``rank``-th best allowed action by ``logits`` (the last allowed one when
    fewer are allowed)."""
    scores = logits.detach().masked_fill(~allowed, float("-inf"))
    order = scores.argsort(dim=-1, descending=True)
    count = allowed.sum(-1)
    pick = torch.minimum(rank, (count - 1).clamp(min=0))
    chosen = order.gather(-1, pick[:, None])
    nodes = torch.arange(allowed.shape[-1], device=allowed.device)
    return (nodes == chosen) & allowed


class _StartSchemeHook:
    """Replaces the forced-first-action multistart of :class:`DecodingStrategy`."""

    def pre_decoder_hook(
        self, td: TensorDict, env: RL4COEnvBase, action: Tensor | None = None
    ) -> tuple[TensorDict, RL4COEnvBase, int]:
        if not self.multistart:
            return DecodingStrategy.pre_decoder_hook(self, td, env)
        if self.num_starts is None:
            self.num_starts = env.get_num_starts(td)
        if action is not None:  # evaluate given multistart actions [S * B, T]
            self.num_starts = action.shape[0] // td.batch_size[0]
            td = batchify(td, self.num_starts)
            td.set(START_CUSTOMER_KEY, action[:, 1:2].long())
        else:
            td = add_start_keys(td, env, self.num_starts)
        return td, env, self.num_starts


class StartGreedy(_StartSchemeHook, Greedy):
    """Greedy / multistart greedy with the CLRP start scheme."""


class StartSampling(_StartSchemeHook, Sampling):
    """Sampling / multistart sampling with the CLRP start scheme."""


class StartEvaluate(_StartSchemeHook, Evaluate):
    """Log-likelihood of given actions; multistart actions [S * B, T] take their start
    customers from step 1."""


class StartBeamSearch(BeamSearch):
    """RL4CO's beam search (cumulative log-probability) whose beams are CLRP starts.

    Beam ``s`` starts with customer ``s % N`` (carried in the state, so reordering the beams
    reorders the starts); step 0 chooses a covering depot, step 1 forces the customer.
    """

    def pre_decoder_hook(self, td: TensorDict, env: RL4COEnvBase, **kwargs):
        if self.beam_width is None:
            self.beam_width = env.get_num_starts(td)
        if self.beam_width <= 1:
            raise ValueError(f"beam_width must be larger than 1, got {self.beam_width}")
        td = add_start_keys(td, env, self.beam_width)
        td = td.exclude(START_RANK_KEY)  # beams compete: no depot ranks
        self.parent_beam_logprobs = torch.zeros(td.batch_size[0], 1, device=td.device)
        return td, env, self.beam_width


_STRATEGIES = {
    "greedy": StartGreedy,
    "sampling": StartSampling,
    "multistart_greedy": StartGreedy,
    "multistart_sampling": StartSampling,
    "beam_search": StartBeamSearch,
    "evaluate": StartEvaluate,
}


def get_start_scheme_strategy(decode_type: str, **config) -> DecodingStrategy:
    """The RL4CO decoding strategy for ``decode_type`` with the CLRP start scheme.

    Same names and keyword arguments as :func:`rl4co.utils.decoding.get_decoding_strategy`.
    """
    if decode_type not in _STRATEGIES:
        raise ValueError(f"decode_type: unknown {decode_type!r}; choose one of {list(_STRATEGIES)}")
    if "multistart" in decode_type:
        config["multistart"] = True
    return _STRATEGIES[decode_type](**config)


def _resolve_env(env: str | RL4COEnvBase | None) -> RL4COEnvBase:
    if isinstance(env, RL4COEnvBase):
        return env
    if env is None or env == "clrp":
        from clrp_rl4co.envs import CLRPEnv

        log.info("Instantiated environment not provided; instantiating CLRPEnv")
        return CLRPEnv()
    from rl4co.envs import get_env

    return get_env(env)


class StartSchemeMixin:
    """Mixin for RL4CO constructive policies: ``forward`` with the CLRP start scheme.

    Put it before the RL4CO policy class (``class P(StartSchemeMixin, AttentionModelPolicy)``).
    The signature, the decoding loop and the output dictionary are those of
    :meth:`rl4co.models.common.constructive.base.ConstructivePolicy.forward`; the differences are
    the decoding strategies (:func:`get_start_scheme_strategy`) and the per-step mask
    restriction (:func:`restrict_start_mask`).
    """

    def forward(
        self,
        td: TensorDict,
        env: str | RL4COEnvBase | None = None,
        phase: str = "train",
        calc_reward: bool = True,
        return_actions: bool = True,
        return_entropy: bool = False,
        return_hidden: bool = False,
        return_init_embeds: bool = False,
        return_sum_log_likelihood: bool = True,
        actions: Tensor | None = None,
        max_steps: int = 1_000_000,
        **decoding_kwargs,
    ) -> dict:
        """Decode solutions for the reset states ``td`` [B].

        Returns a dict with ``reward`` [B'] (negative cost), ``log_likelihood`` [B'] (or
        [B', T]) and optionally ``actions`` [B', T], ``entropy``, ``hidden``, ``init_embeds``;
        ``B' = S * B`` under multistart / beam search without ``select_best``.
        """
        hidden, init_embeds = self.encoder(td)
        env = _resolve_env(env)

        decode_type = decoding_kwargs.pop("decode_type", None)
        if actions is not None:
            decode_type = "evaluate"
        elif decode_type is None:
            decode_type = getattr(self, f"{phase}_decode_type")

        strategy = get_start_scheme_strategy(
            decode_type,
            temperature=decoding_kwargs.pop("temperature", self.temperature),
            tanh_clipping=decoding_kwargs.pop("tanh_clipping", self.tanh_clipping),
            mask_logits=decoding_kwargs.pop("mask_logits", self.mask_logits),
            store_all_logp=decoding_kwargs.pop("store_all_logp", return_entropy),
            **decoding_kwargs,
        )

        if isinstance(strategy, StartEvaluate):
            td, env, num_starts = strategy.pre_decoder_hook(td, env, action=actions)
        else:
            td, env, num_starts = strategy.pre_decoder_hook(td, env)
        td, env, hidden = self.decoder.pre_decoder_hook(td, env, hidden, num_starts)

        step = 0
        while not td["done"].all():
            logits, mask = self.decoder(td, hidden, num_starts)
            mask = restrict_start_mask(td, mask, logits)
            td = strategy.step(
                logits, mask, td, action=actions[..., step] if actions is not None else None
            )
            td = env.step(td)["next"]
            step += 1
            if step > max_steps:
                log.error(f"Exceeded maximum number of steps ({max_steps}) during decoding")
                break

        logprobs, actions, td, env = strategy.post_decoder_hook(td, env)

        if calc_reward:
            td.set("reward", env.get_reward(td, actions))

        out = {
            "reward": td["reward"],
            "log_likelihood": get_log_likelihood(
                logprobs, actions, td.get("mask", None), return_sum_log_likelihood
            ),
        }
        if return_actions:
            out["actions"] = actions
        if return_entropy:
            out["entropy"] = calculate_entropy(logprobs)
        if return_hidden:
            out["hidden"] = hidden
        if return_init_embeds:
            out["init_embeds"] = init_embeds
        return out
