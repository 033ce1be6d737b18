"""How the package runs many solves and stops them early: the one process pool
(:mod:`.parallel`: a process per task, results in input order) and the stop request that keeps
the best solution so far (:mod:`.interrupt`, Ctrl-C). Torch-free; import the modules themselves
(``from clrp_rl4co.execution import interrupt``)."""
