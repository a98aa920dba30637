"""`python -m dynyan.cli …` runs the `dynyan` command."""

import sys

from . import main

sys.exit(main())
