"""Small example inputs for every method, shipped inside the package.

``lmforecast examples copy DIR`` (or `copy`) lays them out as ``DIR/<method>/<file>``, which is
what the README's quick starts use. `path(name)` gives one file's installed location, e.g.
``path("supervised/runs.csv")``. Sources: the supervised and distillation runs are simulated from
the Busbridge et al. (2025) Table 6 laws (``scripts/make_examples.py``); the FLP and salience files
are simulated as described in docs/flp.md and docs/salience.md; ``osl/base_models.csv`` is the
bundled Table B.1 of Ruan et al. (2024).
"""

from __future__ import annotations

import errno
import filecmp
import os
import shutil
import stat
import tempfile
from pathlib import Path

from ..errors import InputError
from ..store.safe_write import umask

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


def _lexists_as(p: Path) -> str | None:
    """What is at `p` without following links: None, "link", "dir", "file" or "other"."""
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return "link"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    return "file" if stat.S_ISREG(st.st_mode) else "other"


def _plan(dest: Path) -> list[tuple[Path, str]]:
    """(source, relative name) of every file to write; refuses, naming the path, anything in
    the way: a link anywhere under `dest` on the way to a file, a file where a folder goes, a
    different file of the same name. Identical files are skipped."""
    plan = []
    for name in names():
        src, parts = path(name), Path(name).parts
        for i in range(1, len(parts) + 1):
            q = dest.joinpath(*parts[:i])
            kind = _lexists_as(q)
            last = i == len(parts)
            if kind is None:
                break
            if kind == "link":
                raise InputError(
                    f"{q}: is a symbolic link; examples are never written through links"
                )
            if not last and kind != "dir":
                raise InputError(f"{q}: exists and is not a folder")
            if last and (kind != "file" or not filecmp.cmp(src, q, shallow=False)):
                raise InputError(
                    f"{q}: already exists with different content; copy into another folder or "
                    "remove it first"
                )
        else:
            continue  # the same file is already there
        plan.append((src, name))
    return plan


def _place(src: Path, target: Path) -> None:
    """Create `target` with the content of `src`; never replaces or follows anything there."""
    try:
        os.link(src, target)  # fails if the name was taken meanwhile
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        with open(target, "xb") as fh:  # O_EXCL: fails on an existing name or link
            fh.write(src.read_bytes())


def copy(dest: str | Path) -> list[Path]:
    """Copy every example into ``dest/<method>/<file>``; returns the paths written.

    Refuses, before writing anything, when ``dest`` (or anything under it on the way to an
    example's place) is a symbolic link or holds a different file of the same name (identical
    files are left as they are, so copying twice is harmless). The files are first copied into
    a temporary folder beside ``dest`` (inside it when its parent is not writable) and then
    moved into place; a failure removes what was moved, so ``dest`` is left as it was.
    """
    dest = Path(dest)
    kind = _lexists_as(dest)
    if kind == "link":
        raise InputError(f"{dest}: is a symbolic link; examples are never written through links")
    if kind not in (None, "dir"):
        raise InputError(f"{dest}: exists and is not a folder")
    plan = _plan(dest)
    parent = Path(os.path.abspath(dest)).parent
    if kind is None:
        parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name or 'examples'}-new-", dir=parent))
    except OSError as exc:
        if kind is None:  # name the user's folder, not the temporary one beside it
            raise InputError(f"{dest}: cannot write in folder {parent} ({exc.strerror})") from None
        tmp = Path(tempfile.mkdtemp(prefix=".examples-new-", dir=dest))
    os.chmod(tmp, 0o777 & ~umask())
    moved: list[Path] = []  # files and folders created under dest, in creation order
    try:
        for src, name in plan:
            q = tmp / name
            q.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, q)  # a new file: mode 0666 minus the umask
        if kind is None:
            os.rename(tmp, dest)  # fails if something appeared there meanwhile
            return [dest / name for _, name in plan]
        for _, name in plan:
            parts = Path(name).parts
            for i in range(1, len(parts)):
                d = dest.joinpath(*parts[:i])
                if _lexists_as(d) is None:
                    os.mkdir(d)
                    moved.append(d)
                elif _lexists_as(d) != "dir":
                    raise InputError(f"{d}: exists and is not a folder")
            target = dest / name
            _place(tmp / name, target)
            moved.append(target)
        return [dest / name for _, name in plan]
    except BaseException:
        for q in reversed(moved):
            if q.is_dir() and not q.is_symlink():
                os.rmdir(q)
            else:
                q.unlink()
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


__all__ = ["names", "path", "copy"]
