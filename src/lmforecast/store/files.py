"""Atomic file writes: a failure leaves no partial output and the previous file intact."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from . import safe_write


def _umask() -> int:
    return safe_write.umask()


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write under the output policy of `store.safe_write`: atomically via a temporary sibling
    and a rename for files (a failure leaves no partial output and the previous file intact;
    the mode follows the umask), in place for devices and FIFOs, symbolic links refused unless
    ``--follow-symlinks``."""
    safe_write.write_bytes(path, data)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write text atomically (see `atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_folder(folder: str | Path, files: dict[str, bytes | str]) -> None:
    """Write a set of files so that readers see either all the old ones or all the new ones.

    The files are written into a temporary sibling folder; then the old folder (if any) is
    renamed aside, the new one renamed into place, and the old one removed. Files of the old
    folder that are not in `files` are carried over. A failure at any step leaves the previous
    folder as it was.
    """
    out = Path(folder)
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=parent))
    old = None
    try:
        if out.exists():
            for q in out.iterdir():
                if q.name not in files:
                    dest = tmp / q.name
                    if q.is_dir():
                        shutil.copytree(q, dest, symlinks=True)
                    else:
                        shutil.copy2(q, dest)
        for name, data in files.items():
            (tmp / name).write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
            os.chmod(tmp / name, 0o666 & ~_umask())
        os.chmod(tmp, 0o777 & ~_umask())
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}-old-", dir=parent))
            os.rmdir(old)
            os.replace(out, old)
        try:
            os.replace(tmp, out)
        except BaseException:
            if old is not None:
                os.replace(old, out)
                old = None
            raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
