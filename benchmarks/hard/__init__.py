"""The hard benchmark: CLRP families with heterogeneous or nearly free depots at 100 to 600
customers, where ``clrp-rl4co solve`` was measured furthest from the best-known values on
public files (:mod:`.families`), with a lower bound per instance (:mod:`.bound`), long
reference runs and a gap table (:mod:`.runs`, :mod:`.table`).

Every (instance, run) is appended to ``<out>/cache/`` as it finishes, so a rerun computes only
what is missing; the table (``<out>/table.md``) shows each evaluation run's objective above the
best reference and above the bound, per instance and per (family, size). Examples::

    python -m benchmarks.hard check                      # files and draws match the checksums
    python -m benchmarks.hard run --workers 2            # everything (days on two cores)
    python -m benchmarks.hard run --sizes 100 --only hetero --seconds 1 --reference-seconds 2
    python -m benchmarks.hard table                      # the table from the cache only
"""
