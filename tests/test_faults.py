"""Faults on the real process tree: SIGINT/SIGTERM to a running command end it and
every worker within seconds and leave the previous output intact; after a SIGKILL of the main
process its workers notice (`parallel.lifeline`) and exit. A killed external Dask scheduler or
worker gives one line, not a hang."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil")

REPO = Path(__file__).resolve().parents[1]
WORKER_MARKS = ("loky", "distributed", "multiprocessing.spawn", "spawn_main")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("LMFORECAST_SCHEDULER", None)
    return env


def _workers(proc) -> list:
    out = []
    for c in proc.children(recursive=True):
        try:
            cmd = " ".join(c.cmdline())
        except psutil.Error:
            continue
        if any(m in cmd for m in WORKER_MARKS) and "resource_tracker" not in cmd:
            out.append(c)
    return out


def _alive(procs) -> list:
    out = []
    for c in procs:
        try:
            if c.is_running() and c.status() != psutil.STATUS_ZOMBIE:
                out.append(c)
        except psutil.NoSuchProcess:
            continue
    return out


def _start_fit(tmp_path, *pre, n_workers=2):
    runs = tmp_path / "runs.csv"
    from lmforecast.examples import path

    runs.write_bytes(path("supervised/runs.csv").read_bytes())
    out = tmp_path / "fit.json"
    out.write_text("previous output")
    err = open(tmp_path / "stderr.txt", "wb")  # noqa: SIM115 - a file: survivors cannot block it
    cmd = [sys.executable, "-m", "lmforecast", *pre, "supervised", "fit", "--runs", str(runs)]
    cmd += ["--bootstrap", "2000", "--jobs", str(n_workers), "--out", str(out), "--quiet"]
    p = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=err, env=_env(), start_new_session=True
    )
    proc = psutil.Process(p.pid)
    deadline = time.monotonic() + 240
    while len(_workers(proc)) < n_workers:
        assert p.poll() is None, (tmp_path / "stderr.txt").read_text()
        assert time.monotonic() < deadline, "no workers started"
        time.sleep(0.2)
    return p, proc, out


def _check_no_survivors(procs, within_s=15.0):
    deadline = time.monotonic() + within_s
    while _alive(procs) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _alive(procs)
    for c in left:  # clean up before failing: only the processes this test started
        c.kill()
    assert not left, f"surviving workers: {[' '.join(c.cmdline())[:80] for c in left]}"


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_signal_ends_main_and_every_worker(tmp_path, sig):
    p, proc, out = _start_fit(tmp_path)
    tree = proc.children(recursive=True)
    assert len(tree) >= 2
    os.kill(p.pid, sig)
    try:
        code = p.wait(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
    _check_no_survivors(tree)
    assert out.read_text() == "previous output"
    assert not [q.name for q in tmp_path.iterdir() if q.name.startswith(".tmp")]
    if sig != signal.SIGKILL:
        assert code == 128 + sig  # 130 for SIGINT, 143 for SIGTERM
        err = (tmp_path / "stderr.txt").read_text()
        assert "lmforecast: interrupted" in err and "Traceback" not in err


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_signal_with_local_dask_cluster_leaves_no_worker(tmp_path, sig):
    pytest.importorskip("distributed")
    p, proc, out = _start_fit(tmp_path, "--scheduler", "local:2")
    time.sleep(2.0)  # the workers have run tasks (the watchdog starts on the first one)
    tree = proc.children(recursive=True)
    # the resource tracker, which outlives the command, reports its clean-up to the null device
    trackers = [c for c in tree if "resource_tracker" in " ".join(c.cmdline())]
    if os.path.isdir("/proc"):
        assert [os.readlink(f"/proc/{c.pid}/fd/2") for c in trackers] == ["/dev/null"]
    os.kill(p.pid, sig)
    try:
        code = p.wait(timeout=20)
    finally:  # a main process still running after 20 s is killed, never left behind
        if p.poll() is None:
            p.kill()
    _check_no_survivors(tree, within_s=20.0)
    assert out.read_text() == "previous output"
    if sig == signal.SIGTERM:
        err = (tmp_path / "stderr.txt").read_text()
        assert code == 143 and "Traceback" not in err and "lmforecast: interrupted" in err


@pytest.mark.slow
def test_signal_while_the_local_cluster_starts_ends_it_quietly(tmp_path):
    """SIGTERM as the first worker process appears, while the LocalCluster is still starting:
    the half-made cluster's loop starts no worker after the command has ended its workers (one
    would fail on its vanished semaphores with a traceback); 143 and "interrupted" last."""
    pytest.importorskip("distributed")
    p, proc, out = _start_fit(tmp_path, "--scheduler", "local:2", n_workers=1)
    os.kill(p.pid, signal.SIGTERM)
    seen, deadline = {}, time.monotonic() + 30
    while p.poll() is None and time.monotonic() < deadline:  # every child it ever had
        try:
            seen.update({c.pid: c for c in proc.children(recursive=True)})
        except psutil.Error:
            pass
        time.sleep(0.05)
    if p.poll() is None:
        p.kill()
    _check_no_survivors(list(seen.values()), within_s=20.0)
    err = (tmp_path / "stderr.txt").read_text()
    assert p.returncode == 143 and out.read_text() == "previous output"
    assert err.strip().splitlines()[-1] == "lmforecast: interrupted" and "Traceback" not in err


@pytest.mark.slow
def test_a_local_cluster_command_runs_with_stderr_closed(tmp_path):
    """The resource tracker is started with stderr on the null device only where there is a
    stderr: a command run with descriptor 2 closed (``2>&-``) still fits and writes."""
    pytest.importorskip("distributed")
    from lmforecast.examples import path

    out = tmp_path / "fit.json"
    cmd = [sys.executable, "-m", "lmforecast", "--scheduler", "local:1", "supervised", "fit"]
    cmd += ["--runs", str(path("supervised/runs.csv")), "--out", str(out), "--quiet"]
    r = subprocess.run(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       preexec_fn=lambda: os.close(2), timeout=120)  # fmt: skip
    assert r.returncode == 0 and json.loads(out.read_text())["kind"]


def test_signal_inside_an_exec_of_a_string_ends_python_m_with_143(tmp_path):
    """CPython marks a KeyboardInterrupt leaving an ``exec`` of a string as unhandled even when
    the command catches it (dataclasses and scipy import through such code): ``python -m``
    must still end with 143 and "interrupted", not by SIGINT (-2)."""
    from lmforecast.examples import path

    runs = str(path("supervised/runs.csv"))
    (tmp_path / "drive.py").write_text(
        "import sys\n"
        "from lmforecast.cli import main, supervised\n"
        "def _fit(args):\n"
        "    exec('import os, signal, time\\nos.kill(os.getpid(), signal.SIGTERM)\\n'\n"
        "         'time.sleep(30)')\n"
        "    return 0\n"
        "supervised._fit = _fit\n"
        f"sys.argv = ['lmforecast', 'supervised', 'fit', '--runs', {runs!r},"
        f" '--out', {str(tmp_path / 'fit.json')!r}]\n"
        "sys.exit(main.main())\n"
    )
    cmd = [sys.executable, "-m", "drive"]
    r = subprocess.run(cmd, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 143, (r.returncode, r.stderr)
    assert r.stderr.strip().splitlines()[-1] == "lmforecast: interrupted"
    assert not (tmp_path / "fit.json").exists()


def test_worker_initializer_exits_when_parent_is_already_gone():
    """A worker still importing when its parent was killed exits at its initializer."""
    code = subprocess.run(
        [sys.executable, "-c", "from lmforecast.parallel.lifeline import worker_init; "
         "worker_init(1 if __import__('os').getppid() != 1 else 2); print('survived')"],
        env=_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert code.returncode == 1 and "survived" not in code.stdout


def test_watchdog_ends_an_orphaned_worker(tmp_path):
    """A grandchild watching its parent exits once the parent is SIGKILLed."""
    ready = tmp_path / "ready"
    grandchild = (
        "import os, sys, time\n"
        "from lmforecast.parallel.lifeline import watch_parent\n"
        "watch_parent(os.getppid())\n"
        "open(sys.argv[1], 'w').close()\n"
        "time.sleep(120)\n"
    )
    script = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {grandchild!r}, {str(ready)!r}])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=_env()
    )
    child = psutil.Process(int(p.stdout.readline()))
    deadline = time.monotonic() + 60
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists() and _alive([child])
    p.kill()
    p.wait()
    _check_no_survivors([child], within_s=10.0)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.parametrize("victim", ["worker", "scheduler"])
def test_killed_external_dask_worker_or_scheduler_is_one_line_not_a_hang(tmp_path, victim):
    """``--scheduler tcp://...``: killing the only worker (no nanny to restart it) ends the run
    after LMFORECAST_NO_WORKERS_TIMEOUT seconds; killing the scheduler ends it at once. Both
    with one error line, exit 2, and the previous output intact."""
    pytest.importorskip("distributed")
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": _env()}
    sched = subprocess.Popen(
        [*dask, "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], **quiet
    )
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", addr, "--nthreads", "1",
         "--no-nanny", "--no-dashboard"], **quiet,
    )  # fmt: skip
    errf = tmp_path / "stderr.txt"
    try:
        until = time.monotonic() + 120  # the scheduler listens before the command connects
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < until and sched.poll() is None, "no scheduler"
                time.sleep(0.2)
        runs = tmp_path / "runs.csv"
        from lmforecast.examples import path

        runs.write_bytes(path("supervised/runs.csv").read_bytes())
        out = tmp_path / "fit.json"
        out.write_text("previous output")
        env = dict(_env(), LMFORECAST_NO_WORKERS_TIMEOUT="5")
        cmd = [sys.executable, "-m", "lmforecast", "--scheduler", addr, "supervised", "fit"]
        cmd += ["--runs", str(runs), "--bootstrap", "2000", "--out", str(out)]
        with open(errf, "wb") as err:
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        deadline = time.monotonic() + 240
        while "bootstrap" not in errf.read_text(errors="replace"):  # the tasks are on Dask
            assert p.poll() is None, errf.read_text()
            assert time.monotonic() < deadline
            time.sleep(0.2)
        time.sleep(1.0)
        (worker if victim == "worker" else sched).kill()
        t0 = time.monotonic()
        code = p.wait(timeout=90)
        took = time.monotonic() - t0
    finally:
        for q in (worker, sched):
            q.kill()
            q.wait()
        if "p" in locals() and p.poll() is None:
            p.kill()
    lines = [x for x in errf.read_text(errors="replace").splitlines() if "lmforecast:" in x]
    assert code == 2 and len(lines) == 1 and "Traceback" not in errf.read_text(), lines
    assert ("no worker" if victim == "worker" else "lost the Dask scheduler") in lines[0]
    assert took < 60
    assert out.read_text() == "previous output"


def test_pools_get_the_lifeline_only_inside_a_command_and_a_poolless_command_skips_joblib(
    tmp_path,
):
    from contextlib import nullcontext

    from joblib.parallel import get_active_backend

    from lmforecast.examples import path
    from lmforecast.parallel import lifeline

    assert isinstance(lifeline.worker_config(), nullcontext)  # library use: joblib's own config
    with lifeline.signals_end_workers(), lifeline.worker_config():
        backend = get_active_backend()[0]
        assert type(backend).__name__ == "LokyBackend"
        assert backend.backend_kwargs["initializer"] is lifeline.worker_init
        assert backend.backend_kwargs["initargs"] == (os.getpid(),)
    assert isinstance(lifeline.worker_config(), nullcontext)  # the command is over
    runs = tmp_path / "runs.csv"
    runs.write_bytes(path("supervised/runs.csv").read_bytes())
    code = subprocess.run(
        [sys.executable, "-c", "import sys; from lmforecast.cli.main import main; "
         "main(['supervised', 'fit', '--runs', sys.argv[1], '--no-intervals', '--no-stack', "
         "'--quiet']); print('joblib' in sys.modules)", str(runs)],
        env=_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert code.returncode == 0, code.stderr
    assert code.stdout.strip().endswith("False")  # a point fit starts no pool: no joblib import


def test_a_signal_inside_a_gc_callback_is_raised_by_the_next_poll_and_stays_ignored(monkeypatch):
    """A signal that lands in distributed's garbage-collector callback (where Python prints
    and drops an exception) is kept: the Dask loop's next `pause` raises it. After a signal the
    handlers stay ignored (a late SIGINT from the cluster's teardown cannot kill the exiting
    command); a command without one restores them."""
    import inspect

    from lmforecast.parallel import lifeline

    monkeypatch.setattr(lifeline, "end_children", lambda: None)  # not this test's processes
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(KeyboardInterrupt) as exc:
            with lifeline.signals_end_workers():

                def _gc_callback():
                    lifeline._on_signal(signal.SIGTERM, inspect.currentframe())

                _gc_callback()  # dropped-exception context: no raise here
                assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
                lifeline.pause(0.0)  # the poll raises it
        assert lifeline.signal_number(exc.value) == signal.SIGTERM
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        with pytest.raises(KeyboardInterrupt):  # outside a GC callback it raises at once
            with lifeline.signals_end_workers():
                lifeline._on_signal(signal.SIGINT, inspect.currentframe())
        signal.signal(signal.SIGTERM, before[0])
        signal.signal(signal.SIGINT, before[1])
        with lifeline.signals_end_workers():
            lifeline.pause(0.0)  # nothing pending: returns
        assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
    finally:
        signal.signal(signal.SIGTERM, before[0])
        signal.signal(signal.SIGINT, before[1])
