"""``python -m benchmarks.parity``: see :mod:`benchmarks.parity.cli`."""

from .cli import main

main()
