"""The generalist: DRLHQ-CF trained on the ``mixed`` preset by a resumable background command.

``python -m experiments.generalist train --hours H`` continues the run from its committed state
(``results/generalist/state/``) on one CPU thread at low priority, saves a local checkpoint every
15 minutes, stops cleanly at its deadline or on SIGTERM, and writes the committed state back once
at the end. ``status`` prints one line; ``ship`` compares the run's weights with the shipped
generalist on the validation sets and ships them as ``drlhqcf_mixed`` when they are better.

Modules: :mod:`.settings` (model size, curriculum, batch rule, paths), :mod:`.state` (the
resumable state), :mod:`.validation` (the fixed validation sets and their metrics),
:mod:`.loop` (the training loop), :mod:`.report` (curve, status line, extrapolation),
:mod:`.ship` (shipping), :mod:`.__main__` (the command).
"""
