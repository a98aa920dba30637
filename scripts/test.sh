#!/usr/bin/env bash
# Install everything the tests need (pinned in pyproject.toml) into .venv and
# run every test tier (docs/testing.md). Extra arguments go to pytest, e.g.
#   bash scripts/test.sh -m "not slow and not spark"    # the fast tier
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# (pip itself stays as the venv made it: upgrading it would fetch an unpinned version)
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
# -rs: the reason of every skip; --durations: the slowest tests, to keep CI time in view
exec .venv/bin/python -m pytest -n 2 --dist worksteal -q -rs --durations=15 "$@"
