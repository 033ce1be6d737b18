"""``python -m benchmarks.hybrid``: see :mod:`benchmarks.hybrid.cli`."""

import sys

from .cli import main

try:
    status = main()
except (ValueError, FileNotFoundError) as exc:  # bad input: one line, no traceback
    print(f"error: {exc}", file=sys.stderr)
    status = 2
sys.exit(status)
