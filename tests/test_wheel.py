"""The wheel works on its own: built from the checkout, installed into a
fresh venv outside it with only the core dependencies, it compiles and
explains a query, and the module it writes runs on the standard library and
sortedcontainers alone. Commands that need an extra say so in one line.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds a wheel and a venv: about 10 s of CPU
ROOT = Path(__file__).resolve().parent.parent
# What a wheel is built from (pyproject.toml maps templates/ and tpch/ into
# the package); copied so the build leaves nothing in the checkout.
SOURCES = ("pyproject.toml", "README.md", "dynyan", "templates", "tpch")
EXTRAS_ONLY = ("pyarrow", "duckdb", "tqdm", "pyspark", "matplotlib")

QUERY = """\
CREATE TABLE r (a INT, b INT);
CREATE TABLE s (b INT, c INT);
SELECT r.a, s.c FROM r, s WHERE r.b = s.b AND r.a < s.c
"""

# Runs in the fresh venv: the generated module imports nothing outside the
# standard library but sortedcontainers.
RUN_MODULE = """\
import sys
before = set(sys.modules)
import view_mod
third_party = {
    name.split(".")[0]
    for name in set(sys.modules) - before
    if name.split(".")[0] not in sys.stdlib_module_names
} - {"view_mod", "sortedcontainers"}
assert not third_party, third_party
view = view_mod.View(push=True)
view.update("r", [(1, 10), (2, 10), (9, 10)])
view.insert("s", (10, 5))
print(sorted(view.rows()), sorted(view.deltas()))
"""


def run(*args, cwd, check=True):
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True
    )
    if check and result.returncode != 0:
        pytest.fail(f"{args} failed:\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh venv outside the checkout with the built wheel installed."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(ROOT / name, src / name)
    dist = work / "dist"
    pip = (sys.executable, "-m", "pip", "--disable-pip-version-check")
    run(
        *pip,
        "wheel",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        dist,
        src,
        cwd=work,
    )
    (wheel,) = dist.glob("dynyan-*.whl")
    env = work / "venv"
    run(sys.executable, "-m", "venv", env, cwd=work)
    bin_ = env / "bin"
    run(
        bin_ / "python",
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        wheel,
        cwd=work,
    )
    return work, bin_


def test_wheel_installs_core_dependencies_only(venv):
    work, bin_ = venv
    probe = "import importlib.util as u, sys; print([m for m in sys.argv[1:] if u.find_spec(m)])"
    found = run(bin_ / "python", "-c", probe, *EXTRAS_ONLY, cwd=work).stdout.strip()
    assert found == "[]", f"extras installed with the core: {found}"
    # Every module of the compiler and the CLI imports without the extras.
    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for folder in ("dynyan/compiler", "dynyan/cli")
        for p in (ROOT / folder).rglob("*.py")
        if p.name != "__main__.py"  # runs the command
    )
    run(
        bin_ / "python",
        "-c",
        "import importlib, sys; [importlib.import_module(m) for m in sys.argv[1:]]",
        *modules,
        cwd=work,
    )


def test_wheel_compiles_and_the_module_runs(venv):
    work, bin_ = venv
    (work / "q.sql").write_text(QUERY)
    out = run(bin_ / "dynyan", "compile", "q.sql", "-o", "view_mod.py", cwd=work)
    assert out.stdout.strip() == "wrote view_mod.py"
    explained = run(bin_ / "dynyan", "explain", "q.sql", cwd=work).stdout
    assert "GJT pair (T, N)" in explained and "Complexity" in explained
    printed = run(bin_ / "python", "-c", RUN_MODULE, cwd=work).stdout
    assert printed.strip() == "[(1, 5), (2, 5)] [((1, 5), 1), ((2, 5), 1)]"


def test_wheel_commands_needing_an_extra_say_which(venv):
    work, bin_ = venv
    (work / "tables").mkdir(exist_ok=True)
    result = run(bin_ / "dynyan", "stats", "tables", cwd=work, check=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "dynyan[pipeline]" in result.stderr
