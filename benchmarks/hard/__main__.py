"""``python -m benchmarks.hard``: see :mod:`benchmarks.hard.cli`."""

import sys

from .cli import command

sys.exit(command())
