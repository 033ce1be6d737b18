"""The plan of a policy's decoding within a budget: which units run, and what they are predicted
to cost.

The paper's x8 decoding (every customer as a first move, times the 8 dihedral transforms of the
coordinates) is one batch when it fits in memory and time; larger instances are decoded in
*units*: one greedy rollout first, then blocks of start customers (a seeded random order of the
customers, one transform at a time), each unit no larger than
:attr:`DecodeParams.trajectory_node_limit` trajectory-nodes (:func:`plan_units`). The encoder's
attention over all node pairs grows with the square of the nodes, so nothing is decoded when the
encoder alone is predicted above :attr:`DecodeParams.encoder_memory_gb`
(:func:`predict_encoder_gb`; from about 4,700 customers with the generator's 6% depots).
Predicted times start from a prior (:func:`predict_decode_seconds`);
:func:`.learned_starts.learned_starts` rescales them by the units it has run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..data import CLRPInstance

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DecodeParams:
    """How decoding is fitted in its budget.

    Attributes:
        trajectory_node_limit: largest ``trajectories x nodes`` decoded in one batch (bounds
            the decoder's memory: about 0.5 GB of activations at the default embedding size).
        encoder_memory_gb: most memory (GB) the encoder may take (:func:`predict_encoder_gb`);
            above it nothing is decoded.
        prediction_safety: multiplier on predicted decode times once a unit was measured (the
            prior's shape is rough).
        sgbs_factor: SGBS ``4x4+aug8`` takes about this many times the x8 decode (measured 20x
            at 50 customers, 35x at 100; the multiple is kept on the safe side). An SGBS start
            is added only when all of it is predicted to fit.
        sgbs_first_step_factor: SGBS asked for by name (``sgbs=True``) is anytime: it runs when
            its own first step, a greedy multistart as long as the x8 decode, fits this many
            times over in what is left, and stops at the deadline with the best solutions found
            so far (:func:`clrp_rl4co.search.sgbs`).
        pool_size: distinct rollouts kept from decoding (the best by cost): the starts are
            chosen among them and :func:`clrp_rl4co.solvers.recombine.recombine` takes their
            routes.
    """

    trajectory_node_limit: int = 1_000_000
    encoder_memory_gb: float = 2.5
    prediction_safety: float = 1.5
    sgbs_factor: float = 40.0
    sgbs_first_step_factor: float = 2.0
    pool_size: int = 100


#: The decoding's parameters.
PARAMS = DecodeParams()


class Unit(NamedTuple):
    """One decode unit.

    Attributes:
        transforms: the dihedral transforms decoded (None: the identity only).
        starts: start customers (0: one greedy rollout; the instance's customer count: every
            customer).
        order: the instance's customers as the unit lists them (its starts first).
    """

    transforms: list[int] | None
    starts: int
    order: np.ndarray

    @property
    def rows(self) -> int:
        """The rollouts it decodes."""
        return max(1, self.starts) * (len(self.transforms) if self.transforms else 1)


def predict_decode_seconds(num_customers: int, num_depots: int, trajectories: int) -> float:
    """Prior estimate of one decode's wall time on one CPU thread.

    A rollout takes about ``2.2 N`` steps; a step costs a fixed part plus a part proportional to
    ``trajectories x nodes``. Fitted on single-thread CPU decodes of 20 to 1,000 customers; it
    errs on the slow side, and :func:`.learned_starts.learned_starts` rescales it by measured
    times.
    """
    steps = 2.2 * num_customers
    return steps * (1.5e-3 + 7e-8 * trajectories * (num_customers + num_depots))


def predict_encoder_gb(num_customers: int, num_depots: int) -> float:
    """Prior estimate of the encoder's peak memory on one instance, in GB: about 100 bytes per
    pair of nodes (its attention scores: heads x float32, and their copies). Measured on the
    generalist with one CPU thread: one greedy rollout of 10,000 customers and 600 depots took
    11.6 GB above the process's 0.44 GB."""
    nodes = num_customers + num_depots
    return 100.0 * nodes * nodes / 1e9


def plan_units(instance: CLRPInstance, seed: int, seconds: float) -> list[Unit]:
    """The decode plan, in run order: x8 in one unit when it fits in memory and (by the prior)
    in ``seconds``, else greedy first and then growing blocks of start customers, one transform
    after the other; none when the encoder alone would take more than
    :attr:`DecodeParams.encoder_memory_gb`."""
    num_customers, num_depots = instance.num_customers, instance.num_depots
    encoder_gb = predict_encoder_gb(num_customers, num_depots)
    if encoder_gb > PARAMS.encoder_memory_gb:
        logger.info("%s: no decoding (the encoder would take about %.1f GB, above %.1f GB)",
                    instance.name, encoder_gb, PARAMS.encoder_memory_gb)  # fmt: skip
        return []
    per_unit = max(1, PARAMS.trajectory_node_limit // (num_customers + num_depots))
    identity = np.arange(num_customers)
    x8 = 8 * num_customers
    if x8 <= per_unit and predict_decode_seconds(num_customers, num_depots, x8) <= seconds:
        return [Unit(list(range(8)), num_customers, identity)]
    units = [Unit(None, 0, identity)]
    rng = np.random.default_rng(seed)
    for transform in range(8):
        order = rng.permutation(num_customers)
        block, done = 16, 0
        while done < num_customers:
            size = min(block, per_unit, num_customers - done)
            # customers order[done:done + size] first: they are the starts of this unit
            first = np.concatenate([order[done : done + size], order[:done], order[done + size :]])
            units.append(Unit([transform] if transform else None, size, first))
            done += size
            block *= 4
    return units
