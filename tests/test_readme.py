"""The README's Python examples run and print what they claim."""

import contextlib
import io
import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
# The examples that follow PostgreSQL need a server: tests/test_follow.py runs them.
BLOCKS = [
    block
    for block in re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
    if "dynyan.follow(" not in block
]


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs_and_matches_its_comments(code):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = out.getvalue().splitlines()
    claimed = [
        m.group(1).strip()
        for line in code.splitlines()
        if line.startswith("print(") and (m := re.search(r"#\s*(\[.*|\d+)$", line))
    ]
    for claim in claimed:
        assert claim in printed, (claim, printed)
