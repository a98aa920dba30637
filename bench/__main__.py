"""`python -m bench run|report …` from the checkout (see bench/cli.py)."""

import sys

from .cli import main

sys.exit(main())
