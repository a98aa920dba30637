#!/usr/bin/env bash
# Regenerate the golden record: every query in queries/ into generated/<stem>.py.
set -euo pipefail
cd "$(dirname "$0")/.."
py=python3; [ -x .venv/bin/python ] && py=.venv/bin/python
find queries -name '*.sql' ! -name schema.sql | sort | while read -r q; do
  $py -m dynyan.cli compile "$q" -o "generated/$(basename "${q%.sql}").py"
done
