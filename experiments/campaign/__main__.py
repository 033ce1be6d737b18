"""``python -m experiments.campaign``: see :mod:`experiments.campaign.cli`."""

import sys

from .cli import main

sys.exit(main())
