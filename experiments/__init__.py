"""The paper-reproduction harness: the DRLHQ paper's evaluation tables on top of the
``clrp_rl4co`` package (which never imports from here).

- :mod:`.specs`: which rows each table has (structured identities; labels are rendered);
- :mod:`.published_sets` / :mod:`.paper_sets`: the test sets, drawn from pinned seeds and
  checked against pinned checksums;
- :mod:`.tables`: run a table (resumable), write its Markdown / CSV / plots;
- :mod:`.headline`: the one-line-per-preset summary;
- :mod:`.campaign`: the resumable training campaign of the shipped models on one GPU
  (``python -m experiments.campaign``);
- ``python -m experiments table <name>``: the command.
"""
