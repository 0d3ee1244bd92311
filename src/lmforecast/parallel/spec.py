"""Scheduler specifications: parse and validate ``--scheduler`` / ``LMFORECAST_SCHEDULER``.

Accepted forms (docs/scaling-out.md):

- ``joblib``: the default, local joblib worker processes (``n_jobs``), no Dask;
- ``local:N``: a ``distributed.LocalCluster`` of N worker processes (one thread each) started and
  shut down by lmforecast;
- ``tcp://HOST:PORT`` or ``HOST:PORT``: an existing Dask scheduler (``dask scheduler``).

Every mistake is an `InputError` with a one-line message naming the flag and the value.
"""

from __future__ import annotations

import os
import re
import socket
import struct
from dataclasses import dataclass

from ..errors import InputError

ENV_VAR = "LMFORECAST_SCHEDULER"
FLAG = "--scheduler"
CONNECT_TIMEOUT_S = 2.5  # TCP connect; the Dask handshake gets the same again (< 10 s in all)
_FORMS = "use joblib, local:N (N >= 1 worker processes) or tcp://HOST:PORT"
_LOCAL = re.compile(r"^local:(.*)$")
_ADDR = re.compile(r"^(?:tcp://)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.\-]+):([0-9]+)/?$")


@dataclass(frozen=True)
class SchedulerSpec:
    """A parsed scheduler: kind "joblib", "local" (n_workers) or "tcp" (host, port)."""

    kind: str
    n_workers: int = 0
    host: str = ""
    port: int = 0
    source: str = FLAG  # where it came from, for error messages

    @property
    def address(self) -> str:
        return f"tcp://{self.host}:{self.port}" if self.kind == "tcp" else ""

    @property
    def uses_dask(self) -> bool:
        return self.kind != "joblib"

    def __str__(self) -> str:
        if self.kind == "local":
            return f"local:{self.n_workers}"
        return self.address or "joblib"


JOBLIB = SchedulerSpec("joblib")


def parse_scheduler(text: str, source: str = FLAG) -> SchedulerSpec:
    """Parse a scheduler spec (no network access); `source` names the flag or variable."""
    raw = str(text).strip()
    if raw.lower() in ("joblib", "default", ""):
        if raw == "":
            raise InputError(f"{source}: empty scheduler; {_FORMS}")
        return SchedulerSpec("joblib", source=source)
    m = _LOCAL.match(raw)
    if m:
        try:
            n = int(m.group(1))
        except ValueError:
            raise InputError(
                f"{source} {raw!r}: the number of workers must be an integer; {_FORMS}"
            ) from None
        if n < 1:
            raise InputError(f"{source} {raw!r}: a local cluster needs at least 1 worker")
        if n > 1024:
            raise InputError(f"{source} {raw!r}: at most 1024 local workers")
        return SchedulerSpec("local", n_workers=n, source=source)
    m = _ADDR.match(raw)
    if not m or "://" in raw and not raw.startswith("tcp://"):
        raise InputError(f"{source} {raw!r}: not a scheduler address; {_FORMS}")
    host, port = m.group(1).strip("[]"), int(m.group(2))
    if not 0 < port < 65536:
        raise InputError(f"{source} {raw!r}: port {port} is outside 1-65535")
    return SchedulerSpec("tcp", host=host, port=port, source=source)


def env_scheduler() -> SchedulerSpec | None:
    """The spec in ``LMFORECAST_SCHEDULER``, or None when the variable is unset or empty."""
    raw = os.environ.get(ENV_VAR, "").strip()
    return parse_scheduler(raw, ENV_VAR) if raw else None


def check_reachable(spec: SchedulerSpec, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """A Dask scheduler answers at `spec` (TCP connect, then its handshake, `timeout` seconds
    each), or a one-line InputError. Reads only the scheduler's greeting (Dask's TCP framing:
    a little-endian uint64 length, then msgpack frames naming ``pickle-protocol``)."""
    where = f"{spec.source} {spec.address}"
    try:
        sock = socket.create_connection((spec.host, spec.port), timeout=timeout)
    except TimeoutError:
        raise InputError(f"{where}: no Dask scheduler answered within {timeout:g} s") from None
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise InputError(f"{where}: cannot reach a Dask scheduler ({why})") from None
    try:
        with sock:
            sock.settimeout(timeout)
            head = _recv(sock, 8)
            n = struct.unpack("<Q", head)[0] if len(head) == 8 else -1
            body = _recv(sock, n) if 0 < n < 1 << 16 else b""
    except OSError:  # includes the timeout
        body = b""
    if b"pickle-protocol" not in body:
        raise InputError(f"{where}: no Dask scheduler handshake within {timeout:g} s")


def _recv(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            break
        buf += chunk
    return buf
