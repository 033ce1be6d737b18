"""Depot choice (issue item 3, a first measured step): what a depot set's routes cost, learned
from PyVRP runs on sets, against non-learned estimates.

``python -m experiments.depot_choice collect`` routes a few depot sets per instance (the sets
the depot-set search would look at: the best ranked by :class:`clrp_rl4co.solvers.set_estimate.
SetEstimate` and the first set's moves) with :func:`clrp_rl4co.solvers.pyvrp_solver.route_on_set`
on a fixed iteration budget and records each as a labelled example (:mod:`.collect`);
``evaluate`` compares the estimates on held-out instances (:mod:`.evaluate`). Instances
(:mod:`.instances`): seeded generated ones (heterogeneous and nearly free depots, 100-600
customers) and the 44 development files of Schneider & Löffler's set, kept in separate files.
"""
