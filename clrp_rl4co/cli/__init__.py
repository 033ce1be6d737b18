"""The ``clrp-rl4co`` command line (``clrp-rl4co solve``, also ``python -m clrp_rl4co``).

- :mod:`.args`: the options;
- :mod:`.inputs`: instance files, folders and globs, read into jobs;
- :mod:`.run`: running one method on one instance (what ``auto`` picks);
- :mod:`.outputs`: solution JSON / ``.sol`` / PNG, ``summary.csv`` and the printed table;
- :mod:`.solve`: the command itself.
"""

from .solve import main, solve_command

__all__ = ["main", "solve_command"]
