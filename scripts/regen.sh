#!/usr/bin/env bash
# Regenerate the golden record: every query in queries/ into generated/<stem>.py.
# A query the compiler refuses gets no module (its message is printed).
set -uo pipefail
cd "$(dirname "$0")/.."
py=python3; [ -x .venv/bin/python ] && py=.venv/bin/python
find queries -name '*.sql' ! -name schema.sql | sort | while read -r q; do
  out="generated/$(basename "${q%.sql}").py"
  if ! $py -m dynyan.cli compile "$q" -o "$out"; then
    rm -f "$out"
    echo "  (no module for $q)"
  fi
done
