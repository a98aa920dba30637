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
    """The text of file `name` in `folder` ("templates" or "tpch")."""
    try:
        files = importlib.resources.files(f"dynyan.{folder}")
    except ModuleNotFoundError:  # a checkout run without installing it
        return (CHECKOUT / folder / name).read_text()
    return files.joinpath(name).read_text()
