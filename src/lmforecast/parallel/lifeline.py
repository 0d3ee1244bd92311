"""Workers that die with their parent, and a command that ends its workers on SIGINT/SIGTERM.

- `watch_parent(pid)` runs in a worker process (a joblib/loky worker, through the pool's
  initializer, or a Dask ``LocalCluster`` worker, on its first task): a daemon thread polls the
  worker's parent pid twice a second and ends the worker as soon as the parent is gone, so a
  SIGKILLed command leaves no worker computing on behind it.
- `signals_end_workers()` wraps a CLI command: SIGINT and SIGTERM raise `KeyboardInterrupt`,
  so the command unwinds through its ``finally`` blocks (no output is renamed into place, the
  Dask cluster is closed, its start-up/teardown log lines silenced), then every child process
  still alive is terminated (SIGKILL after a grace period). Inside the block, joblib's loky
  workers are started with `worker_init` as their initializer: every pool of the package opens
  itself inside `worker_config()`, so a command that starts no pool never imports joblib.
  A signal landing in a garbage-collector callback (distributed registers one; Python drops an
  exception raised there) is kept and raised by the next poll of the Dask loop (`pause`).
  After a signal both stay ignored until the command has exited.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager, nullcontext

POLL_S = 0.5
GRACE_S = 2.0
_WATCHING: list[int] = []
_COMMAND_PID: list[int] = []  # set while a CLI command runs inside `signals_end_workers`
_PENDING: list[int] = []  # the signals received while a command runs


def _watch(pid: int) -> None:
    while True:
        time.sleep(POLL_S)
        if os.getppid() != pid:  # re-parented: the process that started us is gone
            os._exit(1)


def watch_parent(pid: int) -> None:
    """In a worker: exit as soon as process `pid` (the worker's parent) is gone. Does nothing
    when `pid` is not this process's parent (an external Dask worker, a thread backend)."""
    if _WATCHING or os.getpid() == pid or os.getppid() != pid:
        return
    _WATCHING.append(pid)
    threading.Thread(target=_watch, args=(pid,), name="lmforecast-lifeline", daemon=True).start()


def worker_init(pid: int) -> None:
    """A pool initializer: the worker was started by process `pid`; if that process is already
    gone (killed while the worker was still importing), exit now, else `watch_parent`."""
    if os.getppid() != pid:
        os._exit(1)
    watch_parent(pid)


def _children(pid: int) -> list[int]:
    """Every descendant of `pid` (Linux /proc; empty elsewhere)."""
    parent: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:  # pragma: no cover - not Linux
        return []
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
            parent[int(e)] = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _is_resource_tracker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"resource_tracker" in fh.read()
    except OSError:
        return False


def end_children(grace_s: float = GRACE_S) -> None:
    """Terminate every descendant of this process: SIGTERM, then SIGKILL after `grace_s`.

    loky's resource tracker is left to exit with this process (it does when its pipe closes):
    killed, it was relaunched by the unwinding pool and the new one printed a KeyError
    traceback for a semaphore it never saw."""
    # listed again before each signal: a nanny handling SIGTERM may still spawn a worker, whose
    # start-up would fail with a traceback on the shared stderr once this process is gone
    for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGKILL):
        kids = [k for k in _children(os.getpid()) if _alive(k) and not _is_resource_tracker(k)]
        if not kids:
            return
        for k in kids:
            try:
                os.kill(k, sig)
            except OSError:
                pass
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(_alive(k) for k in kids):
            time.sleep(0.05)


def quiet_resource_tracker() -> None:
    """Inside a CLI command, start multiprocessing's resource tracker (if it is not running)
    with its stderr on the null device. A local Dask cluster's workers register semaphores with
    it; after an interrupt ends them, the tracker, which outlives the command by a moment, prints
    what it cleans up ("leaked semaphore objects", "No such file") below "interrupted"."""
    if not _COMMAND_PID:
        return
    from multiprocessing import resource_tracker

    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no stderr (closed, or None): nothing to spare
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)  # the tracker inherits descriptor 2 as it is when it starts
        resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def silence_stderr() -> None:
    """Send what is written to stderr from now on (by this process, its exit handlers and any
    helper process it starts) to the null device, and ignore warnings: called by the CLI as it
    exits after an interrupt, when the last line it meant to print has been printed."""
    import warnings

    sys.stderr.flush()
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 2)
    os.close(fd)
    warnings.simplefilter("ignore")


def _in_gc_callback(frame) -> bool:
    """Whether `frame` runs inside a garbage-collector callback (distributed registers one):
    an exception raised there is printed as "Exception ignored" and dropped."""
    while frame is not None:
        if frame.f_code.co_name == "_gc_callback":
            return True
        frame = frame.f_back
    return False


def _on_signal(signum, frame):
    # a second interrupt while unwinding is ignored, of either kind: ending a local cluster's
    # workers can send SIGINT to the whole process group
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)
    # a Dask cluster torn down mid-start logs tracebacks; the command says "interrupted"
    for name in ("distributed", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    _PENDING.append(signum)
    if _in_gc_callback(frame):  # raised here it would be dropped: the next poll raises it
        return
    raise KeyboardInterrupt(signum)


def pause(seconds: float) -> None:
    """Sleep, then raise the interrupt of a signal that arrived where an exception is dropped
    (a garbage-collector callback): the wait of a loop polling workers."""
    time.sleep(seconds)
    if _PENDING:
        raise KeyboardInterrupt(_PENDING[-1])


def clear_interrupt_mark() -> None:
    """Let an interrupted command end with its own status (130/143) under ``python -m``.

    CPython marks a KeyboardInterrupt that leaves an ``exec`` of a string as unhandled, even
    when the command catches it further up; dataclasses and scipy build code that way while
    they import, so a signal landing in a lazy import sets the mark, and ``python -m
    lmforecast`` would end itself by SIGINT (status -2) after printing "interrupted". Each
    ``exec`` of a string clears the mark first, so an empty one clears it."""
    exec("")  # noqa: S102 - a constant empty string: nothing runs


def signal_number(exc: KeyboardInterrupt) -> int:
    """The signal behind a `KeyboardInterrupt` (SIGINT when not raised by `_on_signal`)."""
    arg = exc.args[0] if exc.args else None
    return int(arg) if isinstance(arg, int) else int(signal.SIGINT)


def worker_config():
    """The context a joblib pool of the package opens in: inside a CLI command, loky workers
    with `worker_init` as their initializer; elsewhere joblib's own configuration."""
    if not _COMMAND_PID:
        return nullcontext()
    from joblib import parallel_config

    return parallel_config(backend="loky", initializer=worker_init, initargs=(_COMMAND_PID[-1],))


@contextmanager
def signals_end_workers():
    """Run a command so that SIGINT/SIGTERM end it and all its workers (see the module doc)."""
    sigs = (signal.SIGINT, signal.SIGTERM)
    in_main = threading.current_thread() is threading.main_thread()
    old = {s: signal.signal(s, _on_signal) for s in sigs} if in_main else {}
    _COMMAND_PID.append(os.getpid())
    _PENDING.clear()
    try:
        yield
    except KeyboardInterrupt:
        end_children()
        raise
    finally:
        _COMMAND_PID.pop()
        # after a signal the command is exiting: its handlers stay ignored, or a late SIGINT
        # sent to the process group by the cluster's teardown would kill it on the way out
        if not _PENDING:
            for s, h in old.items():
                signal.signal(s, h)
        _PENDING.clear()


__all__ = [
    "watch_parent",
    "worker_init",
    "worker_config",
    "signal_number",
    "clear_interrupt_mark",
    "end_children",
    "quiet_resource_tracker",
    "pause",
    "signals_end_workers",
]
