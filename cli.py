"""Shim so `python cli.py …` works from a checkout; the installed command is `dynyan`."""

import sys

from dynyan.cli import main

if __name__ == "__main__":
    sys.exit(main())
