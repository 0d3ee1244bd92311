"""Small example inputs for every method, shipped inside the package.

``lmforecast examples copy DIR`` (or `copy`) lays them out as ``DIR/<method>/<file>``, which is
what the README's quick starts use. `path(name)` gives one file's installed location, e.g.
``path("supervised/runs.csv")``. Sources: the supervised and distillation runs are simulated from
the Busbridge et al. (2025) Table 6 laws (``scripts/make_examples.py``); the FLP and salience files
are simulated as described in docs/flp.md and docs/salience.md; ``osl/base_models.csv`` is the
bundled Table B.1 of Ruan et al. (2024).
"""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from ..errors import InputError

_FILES = Path(__file__).resolve().parent / "files"
_BUNDLED = Path(__file__).resolve().parents[1] / "data" / "bundled"
# examples that are bundled data tables, not copies of them
_ALIASES = {"osl/base_models.csv": _BUNDLED / "osl" / "table_b1_base_models.csv"}


def names() -> list[str]:
    """Every example file, as ``method/file`` names."""
    own = [p.relative_to(_FILES).as_posix() for p in _FILES.rglob("*") if p.is_file()]
    return sorted(own + list(_ALIASES))


def path(name: str) -> Path:
    """The installed location of example ``name`` (``method/file``, see `names`)."""
    if name in _ALIASES:
        return _ALIASES[name]
    p = _FILES / name
    if name not in names():
        raise InputError(f"no example named {name!r}; available: {', '.join(names())}")
    return p


def copy(dest: str | Path) -> list[Path]:
    """Copy every example into ``dest/<method>/<file>``; returns the paths written.

    Refuses, before writing anything, when ``dest`` already holds a different file of the same
    name (identical files are left as they are, so copying twice is harmless).
    """
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise InputError(f"{dest}: exists and is not a folder")
    plan = [(path(n), dest / n) for n in names()]
    for src, dst in plan:
        if dst.exists() and (dst.is_dir() or not filecmp.cmp(src, dst, shallow=False)):
            raise InputError(
                f"{dst}: already exists with different content; copy into another folder or "
                "remove it first"
            )
    written = []
    for src, dst in plan:
        if dst.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        written.append(dst)
    return written


__all__ = ["names", "path", "copy"]
