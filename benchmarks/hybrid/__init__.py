"""The hybrid against PyVRP alone at the same wall time per instance, on the DRLHQ paper's test
sets, the package presets' published test sets, 1,000-customer instances of the generator's size
rule (``clrp1000``) and the Prins instances.

Per instance (one torch thread, one instance at a time) the time-limited methods run one after
the other, in alternating order (reversed on odd instances): ``hybrid``
(:func:`clrp_rl4co.solvers.hybrid.solve_hybrid` with ``--seconds``) and ``pyvrp``
(:func:`clrp_rl4co.solvers.solve_pyvrp`, its time limit less the margin the hybrid keeps, so both
return within ``--seconds``); ``--ablation`` adds the hybrid's variants
(:data:`.runs.HYBRID_VARIANTS`: one start, no exploration of the starts, no SGBS, no PyVRP
candidate, recombined rollouts), ``--ablation VARIANT...`` only those named. Every solution is
checked and priced in the instance's units. The same model's x8 (untimed, decoded in batches;
not on ``clrp1000``) is shown beside; on the paper's sets it is also computed over the whole set
(``--x8-all`` caps it) to correct the paper's DRLHQ-SGBS figure
(:data:`experiments.headline.PAPER`) for the subset.

Each (instance, method) is appended to ``<out>/<set>_<seconds>s[...].csv`` when done and a
rerun skips what is there; x8 rows go to ``<out>/<set>_x8_<model>.csv``. The summary is printed
and written to ``<out>/<set>_<seconds>s[...].md``. Example::

    python -m benchmarks.hybrid --set paper-clrp50 --num 200 --seconds 9.3
"""
