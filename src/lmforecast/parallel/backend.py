"""Run independent tasks on local joblib workers or on a Dask cluster, with identical results.

`map_tasks(func, payloads, shared=...)` calls the module-level ``func(payload, shared)`` once per
payload and returns the results in payload order. Work travels as plain data: payloads and
`shared` hold arrays, numbers, strings and small picklable specs (a law, a preset), never
closures; `shared` is sent to each Dask worker once (``Client.scatter``), not once per task.
Results are gathered by position, so they do not depend on the number of workers or on the
order in which tasks finish. A Dask worker that dies mid-task has its task re-run on another
worker by the scheduler (up to ``distributed.scheduler.allowed-failures`` times, default 3);
since every task is a pure function of its payload, the re-run returns the same result (the
shared data is itself a task, recomputed if the worker holding it dies).

Which backend runs a call: the `scheduler=` argument, else the innermost ``with
lmforecast.parallel.scheduler(...)`` block, else ``LMFORECAST_SCHEDULER``, else joblib (`n_jobs`).
"""

from __future__ import annotations

import os
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import CancelledError
from contextlib import contextmanager, suppress
from typing import Any

from ..errors import InputError
from .lifeline import pause, watch_parent, worker_config
from .session import DaskSession, quiet_client, require_distributed
from .spec import JOBLIB, SchedulerSpec, env_scheduler
from .spec import parse_scheduler as _parse

_STACK: list[Any] = []  # active `scheduler()` blocks: DaskSession or JOBLIB
NO_WORKERS_TIMEOUT_S = 60.0


def parse_scheduler(spec: str, source: str = "--scheduler") -> SchedulerSpec:
    """Parse ``joblib``, ``local:N``, ``tcp://HOST:PORT`` or ``HOST:PORT`` (no network)."""
    return _parse(spec, source)


def _as_spec(spec) -> SchedulerSpec | None:
    if spec is None or isinstance(spec, SchedulerSpec):
        return spec
    return _parse(spec, "scheduler")


@contextmanager
def scheduler(spec: str | SchedulerSpec | None = None):
    """Run every parallel loop inside the block on `spec` (None: ``LMFORECAST_SCHEDULER``, and
    joblib when that is unset). Starts and stops a LocalCluster for ``local:N``; connects to
    (and, on exit, disconnects from, without stopping) an existing scheduler for ``tcp://``.
    Yields the `DaskSession`, or None for joblib. Bad specs raise a one-line InputError before
    anything starts; an unreachable scheduler does so within 10 seconds.

    >>> with scheduler("local:2"):                       # doctest: +SKIP
    ...     law = DistillationScalingLaw(bootstrap=4096).fit(runs)
    """
    s = _as_spec(spec)
    if s is None:
        s = env_scheduler() or JOBLIB
    if not s.uses_dask:
        _STACK.append(JOBLIB)
        try:
            yield None
        finally:
            _STACK.pop()
        return
    session = DaskSession.start(s)
    _STACK.append(session)
    interrupted = False
    try:
        yield session
    except KeyboardInterrupt:  # SIGINT/SIGTERM (`parallel.lifeline`): end the workers now
        interrupted = True
        raise
    finally:
        _STACK.pop()
        session.abort() if interrupted else session.close()


def _resolve(spec) -> DaskSession | SchedulerSpec:
    """The backend of a call: a live DaskSession, a Dask spec to start, or JOBLIB."""
    if spec is not None:
        if isinstance(spec, DaskSession):
            return spec
        if type(spec).__name__ == "Client":  # a distributed.Client the caller owns
            return DaskSession(SchedulerSpec("tcp", source="scheduler"), spec)
        return _as_spec(spec)
    if _STACK:
        return _STACK[-1]
    return env_scheduler() or JOBLIB


@contextmanager
def backend_for(scheduler=None):
    """The backend a function that maps several times should use for all its calls: a live
    `DaskSession` (a spec string or ``LMFORECAST_SCHEDULER`` starts one for the block only) or
    the JOBLIB spec. Pass what it yields as ``scheduler=`` to each `map_tasks` call."""
    b = _resolve(scheduler)
    if isinstance(b, DaskSession) or not b.uses_dask:
        yield b
        return
    session = DaskSession.start(b)
    try:
        yield session
    finally:
        session.close()


def uses_dask(scheduler=None) -> bool:
    """Whether a call with this `scheduler=` argument would run on Dask."""
    b = _resolve(scheduler)
    return isinstance(b, DaskSession) or b.uses_dask


def _run_task(payload, task_func, task_shared, capture: bool, parent: int | None = None):
    """What a worker runs: ``task_func(payload, task_shared)``, with the warnings it raised.
    A `map_tasks` call nested inside the task runs on joblib: a worker never starts or joins
    another cluster (it inherits ``LMFORECAST_SCHEDULER`` from the client's environment).
    A worker started by process `parent` exits when that process dies (`lifeline`)."""
    if parent is not None:
        watch_parent(parent)
    _STACK.append(JOBLIB)
    try:
        if not capture:
            return task_func(payload, task_shared), []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = task_func(payload, task_shared)
        return out, [(w.category, str(w.message)) for w in caught]
    finally:
        _STACK.pop()


def _identity(x):
    return x


def _check_func(func: Callable) -> None:
    q = getattr(func, "__qualname__", "")
    if "<locals>" in q or "<lambda>" in q or not hasattr(func, "__module__"):
        raise TypeError(
            f"map_tasks ships work as plain data: {q or func!r} must be a module-level function"
        )


def map_tasks(
    func: Callable[[Any, Any], Any],
    payloads: Iterable[Any],
    *,
    shared: Any = None,
    scheduler=None,
    n_jobs: int = 1,
    desc: str = "tasks",
    progress: bool = False,
    unit: str = "task",
    sizes: Sequence[float] | None = None,
    on_result: Callable[[int, Any], None] | None = None,
) -> list:
    """``[func(p, shared) for p in payloads]``, run in parallel; results in payload order.

    - `func`: a module-level function (pickled by reference), ``func(payload, shared)``.
    - `shared`: data every task needs (arrays, specs), shipped once per worker on Dask.
    - `scheduler`: a spec string (``local:N``, ``tcp://HOST:PORT``, ``joblib``), a
      `DaskSession`, a `distributed.Client`, or None (context block, then the environment).
    - `n_jobs`: joblib workers when the backend is joblib (1: in this process, in order).
    - `progress`: a tqdm bar of tasks done / total with ETA (`sizes` weighs the tasks, e.g.
      resamples per chunk; `unit` names them); `on_result(i, result)` is called as each task
      finishes (in completion order).

    Warnings raised inside worker processes are re-raised here once each (category, message).
    """
    _check_func(func)
    payloads = list(payloads)
    backend = _resolve(scheduler)
    bar = _bar(payloads, desc, progress, unit, sizes)
    try:
        if isinstance(backend, DaskSession):
            return _map_dask(backend, func, payloads, shared, desc, bar, sizes, on_result)
        if backend.uses_dask:  # from the environment: a cluster for this call only
            session = DaskSession.start(backend)
            try:
                return _map_dask(session, func, payloads, shared, desc, bar, sizes, on_result)
            finally:
                session.close()
        return _map_joblib(func, payloads, shared, n_jobs, bar, sizes, on_result)
    finally:
        if bar is not None:
            bar.close()


def _bar(payloads, desc, progress, unit, sizes):
    if not progress:
        return None
    from tqdm.auto import tqdm

    total = sum(sizes) if sizes is not None else len(payloads)
    return tqdm(total=total, desc=desc, unit=unit)


def _done(i, result, bar, sizes, on_result):
    if bar is not None:
        bar.update(sizes[i] if sizes is not None else 1)
    if on_result is not None:
        on_result(i, result)


def _rewarn(caught: list, seen: set) -> None:
    for category, message in caught:
        if (category, message) not in seen:
            seen.add((category, message))
            warnings.warn(message, category, stacklevel=3)


def _map_joblib(func, payloads, shared, n_jobs, bar, sizes, on_result) -> list:
    out: list = [None] * len(payloads)
    if n_jobs == 1:  # in this process, in order: exactly the serial loop
        for i, p in enumerate(payloads):
            out[i] = func(p, shared)
            _done(i, out[i], bar, sizes, on_result)
        return out
    from joblib import Parallel, delayed

    seen: set = set()
    with worker_config():
        gen = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_run_task)(p, func, shared, True, os.getpid()) for p in payloads
        )
        for i, (res, caught) in enumerate(gen):
            out[i] = res
            _rewarn(caught, seen)
            _done(i, res, bar, sizes, on_result)
    return out


def no_workers_timeout() -> float:
    """Seconds a run waits with no Dask worker connected before giving up
    (``LMFORECAST_NO_WORKERS_TIMEOUT``, default 60)."""
    try:
        v = float(os.environ.get("LMFORECAST_NO_WORKERS_TIMEOUT", NO_WORKERS_TIMEOUT_S))
    except ValueError:
        return NO_WORKERS_TIMEOUT_S
    return v if v > 0 else NO_WORKERS_TIMEOUT_S


def _completed(distributed, session, futures):
    """The futures as they finish. Raises a one-line InputError when no worker has been
    connected for `no_workers_timeout()` seconds while tasks wait (every worker was killed,
    or the scheduler is unreachable): a run never waits forever on a cluster that has
    nothing left to run it."""
    client = session.client
    ac = distributed.as_completed(futures, loop=client.loop)
    limit = no_workers_timeout()
    checked, since = time.monotonic(), None
    while not ac.is_empty():
        batch = ac.next_batch(block=False)
        if batch:
            since = None
            yield from batch
            continue
        pause(0.02)
        now = time.monotonic()
        if now - checked < 1.0:
            continue
        checked = now
        try:
            n = len(client.nthreads())
        except Exception:  # noqa: BLE001 - the scheduler is unreachable: no workers either
            n = 0
        if n:
            since = None
        elif since is None:
            since = now
        elif now - since > limit:
            raise InputError(
                f"the Dask scheduler {session.spec} has had no worker for {limit:g} s with "
                f"{ac.count()} task(s) left (workers killed?); nothing was written"
            )


def _map_dask(session, func, payloads, shared, desc, bar, sizes, on_result) -> list:
    distributed = require_distributed()
    from distributed.comm.core import CommClosedError  # the optional extra, imported lazily

    client = session.client
    if not payloads:
        return []
    if not client.nthreads():
        limit = no_workers_timeout()
        try:
            client.wait_for_workers(1, timeout=limit)
        except (TimeoutError, OSError):
            raise InputError(
                f"the Dask scheduler {session.spec} has no workers "
                f"(none joined within {limit:g} s); start some with `dask worker`"
            ) from None
    tag = "".join(c if c.isalnum() else "-" for c in desc)[:40]
    run = uuid.uuid4().hex[:8]
    shared_f = None
    if shared is not None:
        # a task, not `scatter`: the scheduler keeps its recipe, so the shared data is rebuilt
        # if the worker holding it dies (scattered data would be lost with it)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ll]arge.*")
            shared_f = client.submit(_identity, shared, key=f"lmforecast-shared-{run}", pure=False)
    keys = [f"lmforecast-{tag}-{run}-{i}" for i in range(len(payloads))]
    futures = client.map(
        _run_task,
        payloads,
        task_func=func,
        task_shared=shared_f,
        capture=True,
        parent=os.getpid(),
        key=keys,
        pure=False,
    )
    index = {f.key: i for i, f in enumerate(futures)}
    out: list = [None] * len(payloads)
    seen: set = set()
    try:
        with quiet_client():
            for fut in _completed(distributed, session, futures):
                i = index[fut.key]
                try:
                    res, caught = fut.result()  # re-raises the task's own exception
                except distributed.KilledWorker as exc:  # the task's workers kept dying
                    raise InputError(
                        f"Dask workers of {session.spec} died running a task, past the "
                        f"scheduler's allowed failures ({_one(exc)}); nothing was written"
                    ) from None
                out[i] = res
                fut.release()
                _rewarn(caught, seen)
                _done(i, res, bar, sizes, on_result)
    except (CancelledError, CommClosedError):  # FutureCancelledError: the scheduler went away
        raise InputError(
            f"lost the Dask scheduler {session.spec} before the tasks finished "
            "(it stopped or cancelled them); nothing was written"
        ) from None
    except BaseException:
        with suppress(Exception):  # the scheduler may be gone already
            client.cancel(futures)
        raise
    finally:
        if shared_f is not None:
            with suppress(Exception):
                shared_f.release()
    return out


def _one(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:120] + "...") if len(text) > 120 else text or type(exc).__name__
