"""A Dask session: a connected `distributed.Client`, and the `LocalCluster` it owns for
``local:N``, started quietly and ended at once after an interrupt (`DaskSession.abort`).
`backend.scheduler` opens one per block; `backend._map_dask` runs tasks on it."""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager, suppress

from ..errors import InputError, require
from .lifeline import end_children, quiet_resource_tracker
from .spec import CONNECT_TIMEOUT_S, SchedulerSpec, check_reachable

_ENVIRON = "distributed.nanny.pre-spawn-environ"


def require_distributed():
    return require("distributed", "dask")


class DaskSession:
    """A connected `distributed.Client` (and the `LocalCluster` it owns, for ``local:N``)."""

    def __init__(self, spec: SchedulerSpec, client, cluster=None, env=None) -> None:
        self.spec, self.client, self.cluster, self._env = spec, client, cluster, env

    @classmethod
    def start(cls, spec: SchedulerSpec) -> DaskSession:
        """Start a LocalCluster (``local:N``) or connect to a scheduler (``tcp://``)."""
        distributed = require_distributed()
        if spec.kind == "local":
            import dask

            quiet_resource_tracker()
            env = dict(os.environ)  # the nannies export their workers' variables here too
            # Dask's default MALLOC_TRIM_THRESHOLD_=65536 pins glibc's mmap threshold, so every
            # large temporary array is a fresh mmap: +50% CPU on a 216,000-start grid rescoring
            # (docs/scaling-out.md). Workers keep glibc's default; OMP/MKL/OpenBLAS stay at 1.
            # No dashboard, so no use for the workers' statistical profiler (a 10 ms sampler).
            cfg = {
                f"{_ENVIRON}.MALLOC_TRIM_THRESHOLD_": None,
                "distributed.worker.profile.enabled": False,
            }
            try:
                with dask.config.set(cfg):
                    cluster = distributed.LocalCluster(
                        n_workers=spec.n_workers,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        # its HTTP server on a free port: Dask's default 8787 is taken by any
                        # other command's cluster, which costs a "Port 8787 is already in use"
                        scheduler_kwargs={"dashboard": False, "dashboard_address": ":0"},
                        # CRITICAL: a worker whose scheduler went away (the user's Ctrl-C or
                        # SIGTERM) logs its failed heartbeat with a traceback at ERROR; task
                        # errors reach the client as exceptions, so nothing else is lost
                        silence_logs=logging.CRITICAL,
                    )
            except KeyboardInterrupt as exc:  # half made: its loop thread still starts workers
                for half in _instances_in(exc.__traceback__, distributed.LocalCluster):
                    _end_local_cluster(half)
                _restore(env)
                raise
            except Exception as exc:  # e.g. a script without `if __name__ == "__main__":`
                _restore(env)
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise InputError(
                    f"{spec.source} {spec}: could not start a local Dask cluster ({why}); "
                    "a script must start it under `if __name__ == '__main__':`"
                ) from exc
            try:
                client = distributed.Client(cluster, set_as_default=False)
            except BaseException as exc:
                interrupted = isinstance(exc, KeyboardInterrupt)
                _end_local_cluster(cluster) if interrupted else cluster.close()
                _restore(env)
                raise
            return cls(spec, client, cluster, env)
        check_reachable(spec)
        try:
            client = distributed.Client(
                spec.address, timeout=f"{CONNECT_TIMEOUT_S}s", set_as_default=False
            )
        except Exception as exc:  # a peer that greeted like Dask but then failed
            _drop_half_made_clients(_instances_in(exc.__traceback__, distributed.Client))
            raise InputError(
                f"{spec.source} {spec.address}: no Dask scheduler handshake within "
                f"{CONNECT_TIMEOUT_S:g} s ({type(exc).__name__})"
            ) from None
        return cls(spec, client)

    @property
    def parallelism(self) -> int:
        """Worker threads connected now (the number of tasks that can run at once)."""
        return int(sum(self.client.nthreads().values()))

    def close(self) -> None:
        try:
            with quiet_client():
                self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()
            if self._env is not None:
                _restore(self._env)

    def abort(self) -> None:
        """Close after an interrupt, with 1 s limits (a local cluster: `_end_local_cluster`)."""
        if self.cluster is not None:
            _end_local_cluster(self.cluster, self.client)
        else:
            with quiet_client(), suppress(BaseException):
                self.client.close(timeout=1)
        _restore(self._env) if self._env is not None else None

    def __repr__(self) -> str:
        return f"DaskSession({self.spec}, {self.parallelism} worker threads)"


def _end_local_cluster(cluster, client=None) -> None:
    """End a local cluster after an interrupt, started or half made. Its nannies are told not
    to restart a worker, every worker process is ended (a graceful close waits on their tasks,
    tens of seconds on a loaded machine), the client and cluster are closed with 1 s limits,
    and a worker a nanny started meanwhile is ended too: one still starting as the command
    exits finds its semaphores gone and prints a traceback below "interrupted"."""
    for nanny in list(getattr(cluster, "workers", {}).values()):
        with suppress(Exception):
            nanny.close_gracefully()
    end_children()
    for close in filter(None, (getattr(client, "close", None), getattr(cluster, "close", None))):
        with quiet_client(), suppress(BaseException):  # the workers are gone
            close(timeout=1)
    end_children()
    cluster.shutdown_on_close = False  # else Dask's exit hook waits 10 s more on dead workers


def _instances_in(tb, cls) -> list:
    """The objects of class `cls` that frames of traceback `tb` were methods of (a client or
    cluster whose constructor raised is reachable only there)."""
    found = []
    while tb is not None:
        obj = tb.tb_frame.f_locals.get("self")
        if isinstance(obj, cls) and all(obj is not f for f in found):
            found.append(obj)
        tb = tb.tb_next
    return found


def _drop_half_made_clients(clients) -> None:
    """Close clients whose constructor failed, quietly, and disarm their ``__del__`` (which
    would otherwise print a traceback at exit, after the one-line error)."""
    for c in clients:
        try:
            with quiet_client():
                c.close(timeout=1)
        except Exception:  # noqa: BLE001 - the connection is already broken
            pass
        finally:
            c._Client__loop = None  # `Client.__del__` closes only a client with a loop


@contextmanager
def quiet_client():
    """Silence the client's own log lines (a lost scheduler's reconnect logs a traceback and
    'Failed to reconnect'): the run reports it in one line (`_map_dask`)."""
    log = logging.getLogger("distributed.client")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def _restore(env: dict) -> None:
    for k in set(os.environ) - set(env):
        del os.environ[k]
    os.environ.update(env)
