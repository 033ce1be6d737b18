"""The ``clrp-rl4co`` command line (``clrp-rl4co solve``, also ``python -m clrp_rl4co``): a thin
shell over the library's :func:`clrp_rl4co.solve_many`.

- :mod:`.args`: the options (parsed before anything heavy is imported, so ``--help`` and
  option errors answer at once);
- :mod:`.inputs`: instance files, folders and globs, read into jobs with distinct output names;
- :mod:`.outputs`: solution JSON / ``.sol`` / PNG, ``summary.csv`` and the printed table;
- :mod:`.progress`: a bar on a terminal, one line per instance elsewhere;
- :mod:`.solve`: the command itself.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``clrp-rl4co`` and ``python -m clrp_rl4co``; returns the exit status."""
    from .args import parse_args

    options = parse_args(argv)
    from .solve import solve_command

    return solve_command(options)


__all__ = ["main"]
