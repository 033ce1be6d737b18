"""``python -m benchmarks.hybrid``: see :mod:`benchmarks.hybrid.cli`."""

import sys

from .cli import main

sys.exit(main())
