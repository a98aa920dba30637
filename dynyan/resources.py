"""Files that ship with dynyan: the Jinja templates and the TPC schemas.

In a checkout they are the folders `templates/` and `tpch/` at its top; an
installed wheel carries them as the packages `dynyan.templates` and
`dynyan.tpch` (pyproject.toml maps one onto the other).
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


def resource_text(folder: str, name: str) -> str:
    """The text of file `name` in `folder` ("templates" or "tpch"): the
    checkout's own where this code runs from a checkout (a second checkout
    of an earlier commit must render with its own templates, not with those
    an editable install maps `dynyan.templates` to), else the package's."""
    local = CHECKOUT / folder / name
    if local.is_file():
        return local.read_text()
    return importlib.resources.files(f"dynyan.{folder}").joinpath(name).read_text()
