#!/usr/bin/env bash
# The main job in one command: TPC-H at SF 0.01 -> Spark update stream with
# deletions -> compile queries/tpch/fq4.sql -> replay with a progress bar ->
# result rows and throughput. Creates .venv and installs the pinned packages
# if needed; nothing else is downloaded. Extra arguments go to `dynyan demo`
# (e.g. --sf 0.1 --window 50000).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
exec .venv/bin/dynyan demo "$@"
