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


def process_started() -> float:
    """The ``time.perf_counter()`` reading at which this process started (Linux: from
    ``/proc``; elsewhere, or if that cannot be read, now)."""
    import os
    import time

    now = time.perf_counter()
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        age = uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
    except (OSError, ValueError, IndexError):
        return now
    return now - max(0.0, age)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``clrp-rl4co`` and ``python -m clrp_rl4co``; returns the exit status.

    As the process's command (``argv`` None: ``sys.argv``) the first instances' budgets count
    from the start of the process; called with ``argv`` from a program that runs on (a test,
    a notebook), from this call."""
    import time

    started = process_started() if argv is None else time.perf_counter()
    from .args import parse_args

    options = parse_args(argv)
    from .solve import solve_command

    return solve_command(options, started=started)


__all__ = ["main"]
