"""The output policy every writer follows (bottom layer: imports nothing of the package but
`errors`).

- A new or regular-file target is written atomically: a temporary sibling is written, given the
  usual mode (0666 minus the umask, or the mode of the file it replaces) and renamed over the
  target, so a failure leaves the previous file intact.
- An existing target that is not a regular file is never replaced: a character or block device
  (``/dev/null``) or a FIFO is written in place; a symbolic link is refused in one line unless
  the user passed ``--follow-symlinks`` (`set_follow_symlinks`), in which case its final target
  gets the same treatment; a folder or a socket is refused.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import InputError

_FOLLOW = [False]


def set_follow_symlinks(follow: bool) -> bool:
    """Whether an output path that is a symbolic link may be written through; returns the old
    setting (the CLI's ``--follow-symlinks``)."""
    old = _FOLLOW[0]
    _FOLLOW[0] = bool(follow)
    return old


def follow_symlinks() -> bool:
    return _FOLLOW[0]


def umask() -> int:
    """The process umask (read from /proc where possible: no window where it is changed)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def target_kind(path: str | Path, flag: str = "--out") -> tuple[Path, str]:
    """Where a write to `path` lands and how: ``(path, "new" | "file" | "special")``.

    A symbolic link is refused unless following is on (then its resolved target is returned);
    a folder or socket is refused."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return p, "new"
    except OSError as exc:
        raise InputError(f"{flag} {p}: {exc.strerror or type(exc).__name__}") from None
    if stat.S_ISLNK(st.st_mode):
        if not _FOLLOW[0]:
            raise InputError(
                f"{flag} {p}: is a symbolic link; refusing to replace it "
                "(pass --follow-symlinks to write to its target)"
            )
        try:
            to = os.stat(p)  # what the link leads to (a pipe behind /dev/stdout has no path)
        except OSError:
            to = None
        if to is not None and (stat.S_ISCHR(to.st_mode) or stat.S_ISFIFO(to.st_mode)):
            return p, "special"  # opened through the link, written in place
        real = Path(os.path.realpath(p))
        if real.is_symlink():  # a loop
            raise InputError(f"{flag} {p}: symbolic link loop")
        return target_kind(real, flag)
    if stat.S_ISREG(st.st_mode):
        return p, "file"
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{flag} {p}: is a directory, expected a file path")
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return p, "special"
    raise InputError(f"{flag} {p}: is not a regular file (a socket?); choose another path")


def _write_in_place(p: Path, data: bytes) -> None:
    """A device or FIFO: opened for writing without truncating or replacing it. A FIFO with no
    reader is refused instead of waiting forever."""
    try:
        fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if exc.errno == 6:  # ENXIO: a FIFO nobody reads
            raise InputError(f"{p}: a FIFO with no reader; start the reader first") from None
        raise
    try:
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    finally:
        os.close(fd)


def _mode_for(p: Path, kind: str) -> int:
    if kind == "file":
        try:
            return stat.S_IMODE(os.stat(p).st_mode)
        except OSError:
            pass
    return 0o666 & ~umask()


@contextmanager
def output_file(path: str | Path, flag: str = "--out", suffix: str = "") -> Iterator[Path]:
    """A temporary path to write the output to (for writers that need a file name, such as
    ``savefig`` or ``to_parquet``); on success it becomes `path` under the policy above, on
    failure it is removed and `path` is left as it was."""
    target, kind = target_kind(path, flag)
    folder = target.parent if str(target.parent) else Path(".")
    if kind == "special":
        folder = Path(tempfile.gettempdir())
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix or target.suffix, dir=folder)
    os.close(fd)
    try:
        yield Path(tmp)
        if kind == "special":
            _write_in_place(target, Path(tmp).read_bytes())
        else:
            os.chmod(tmp, _mode_for(target, kind))
            os.replace(tmp, target)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def write_bytes(path: str | Path, data: bytes, flag: str = "--out") -> None:
    """Write `data` to `path` under the output policy (atomic for files, in place for devices
    and FIFOs, symbolic links refused unless followed)."""
    target, kind = target_kind(path, flag)
    if kind == "special":
        _write_in_place(target, data)
        return
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, _mode_for(target, kind))
        os.replace(tmp, target)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def file_identity(path: str | Path) -> tuple:
    """What `path` names on disk, symbolic links resolved: ``(st_dev, st_ino)`` of an existing
    file, else the identity of its (resolved) folder and its name. Two spellings of one file
    (``o.csv``, ``./o.csv``, a link to it, a hard link) have one identity."""
    p = Path(path)
    try:
        st = os.stat(p)
        return ("file", st.st_dev, st.st_ino)
    except OSError:
        pass
    real = Path(os.path.realpath(p))
    try:
        st = os.stat(real.parent)
        return ("new", st.st_dev, st.st_ino, real.name)
    except OSError:
        return ("path", str(real))


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file (compares files, not strings: see `file_identity`)."""
    return file_identity(a) == file_identity(b)


def refuse_same_outputs(outputs: list[tuple[str, str | Path | None]]) -> None:
    """One line naming two outputs ``(flag, path)`` that land on one file (``--out o.csv
    --checkpoints-out ./o.csv``): the second write would replace the first."""
    named = [(flag, p) for flag, p in outputs if p is not None]
    for i, (fa, pa) in enumerate(named):
        for fb, pb in named[i + 1 :]:
            if same_file(pa, pb):
                raise InputError(f"{fb} {pb} and {fa} {pa} name the same file; choose two files")


def write_many(items: list[tuple[str | Path, bytes, str]]) -> None:
    """Write several outputs ``(path, data, flag)`` so that a failure leaves every one of them as
    it was: each file's data is written to a temporary sibling first, then devices and FIFOs are
    written, and only then are the temporaries renamed into place (two outputs naming one file
    are refused)."""
    refuse_same_outputs([(flag, p) for p, _, flag in items])
    plan = [(target_kind(p, flag), data, flag) for p, data, flag in items]
    temps: list[tuple[str, Path, str]] = []
    try:
        for (target, kind), data, _flag in plan:
            if kind == "special":
                continue
            folder = target.parent if str(target.parent) else Path(".")
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
            temps.append((tmp, target, kind))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, _mode_for(target, kind))
        for (target, kind), data, flag in plan:
            if kind == "special":
                try:
                    _write_in_place(target, data)
                except OSError as exc:
                    raise InputError(f"{flag} {target}: {exc.strerror or exc}") from None
        for tmp, target, _kind in temps:
            os.replace(tmp, target)
    finally:
        for tmp, _target, _kind in temps:
            if os.path.lexists(tmp):
                os.unlink(tmp)


def probe_folder(folder: Path, what: str) -> None:
    """Really try to create (and remove) a file in `folder`: permissions, read-only mounts,
    /proc and full disks all fail here, before any work starts."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".lmforecast-probe-", dir=folder)
    except OSError as exc:
        raise InputError(
            f"{what}: cannot write in folder {folder} ({exc.strerror or type(exc).__name__})"
        ) from None
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:  # pragma: no cover
        pass


def check_writable_dir(path: str | Path) -> Path:
    """An output *folder*: it may exist (a folder) or not (its nearest existing ancestor must be
    writable)."""
    p = Path(path)
    if str(path).strip() == "":
        raise InputError("--out: empty folder name")
    if p.is_symlink() and not _FOLLOW[0]:
        raise InputError(
            f"{p}: is a symbolic link; refusing to write through it "
            "(pass --follow-symlinks to write into its target)"
        )
    if p.exists() and not p.is_dir():
        raise InputError(f"{p}: exists and is not a folder")
    probe = p
    while not probe.exists():
        probe = probe.parent if probe.parent != probe else Path(".")
        if str(probe) in ("", "."):
            probe = Path(".")
            break
    if not probe.is_dir():
        raise InputError(f"{p}: {probe} is not a folder")
    probe_folder(probe, str(p))
    return p


__all__ = [
    "set_follow_symlinks",
    "follow_symlinks",
    "umask",
    "target_kind",
    "output_file",
    "write_bytes",
    "probe_folder",
    "check_writable_dir",
    "file_identity",
    "same_file",
    "refuse_same_outputs",
    "write_many",
]
