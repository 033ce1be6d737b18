"""``python -m clrp_rl4co``: the ``clrp-rl4co`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
