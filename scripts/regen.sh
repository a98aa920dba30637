#!/usr/bin/env bash
# Regenerate the golden record: generated/ mirrors queries/ (one module per
# query). A query the compiler refuses gets no module (its message is printed).
set -uo pipefail
cd "$(dirname "$0")/.."
py=python3; [ -x .venv/bin/python ] && py=.venv/bin/python
rm -rf generated && mkdir -p generated
find queries -name '*.sql' ! -name schema.sql | sort | while read -r q; do
  $py -m dynyan.cli compile "$q" || echo "  (no module for $q)"
done
