"""The docs' examples run: the Python blocks of README.md and docs/design.md
print what their comments claim, and the shell commands name a `dynyan`
that exists on a fresh clone (`.venv/bin/dynyan`), and work."""

import contextlib
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON_DOCS = ("README.md", "design.md")
BLOCKS = [
    (path.name, block)
    for path in DOCS
    if path.name in PYTHON_DOCS
    for block in re.findall(r"```python\n(.*?)```", path.read_text(), re.DOTALL)
    # The examples that follow PostgreSQL need a server: tests/test_follow.py runs them.
    if "dynyan.follow(" not in block
]


def shell_lines(path: Path) -> list[str]:
    """The lines of the fenced shell blocks (bash, sh or none) of `path`."""
    lines, fence = [], None
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fence = line[3:].strip() if fence is None else None
        elif fence in ("bash", "sh", ""):
            lines.append(line)
    return lines


@pytest.mark.parametrize(
    "name, code", BLOCKS, ids=[f"{n}-block{i}" for i, (n, _) in enumerate(BLOCKS)]
)
def test_python_example_runs_and_matches_its_comments(name, code):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, name, "exec"), {})
    printed = out.getvalue().splitlines()
    claimed = [
        m.group(1).strip()
        for line in code.splitlines()
        if line.lstrip().startswith("print(")
        and (m := re.search(r"#\s*(\[.*|\(.*|\d+)$", line))
    ]
    for claim in claimed:
        assert claim in printed, (claim, printed)


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_shell_examples_do_not_assume_an_activated_venv(path):
    """A bare `dynyan …` fails on a fresh clone (`command not found`)."""
    bare = [line for line in shell_lines(path) if re.match(r"\s*dynyan\s", line)]
    assert bare == [], f"say .venv/bin/dynyan in {path.name}: {bare}"


def test_readme_explain_commands_run():
    """The README's `explain` lines, with the `dynyan` of this interpreter."""
    script = Path(sys.executable).parent / "dynyan"
    commands = [
        shlex.split(line.split("#")[0])
        for line in shell_lines(ROOT / "README.md")
        if line.startswith(".venv/bin/dynyan explain") and "--stats" not in line
    ]
    assert commands
    for argv in commands:
        result = subprocess.run(
            [str(script), *argv[1:]], cwd=ROOT, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
        assert "GJT pair (T, N)" in result.stdout
