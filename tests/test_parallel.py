"""The parallel switch: joblib by default, a Dask cluster on request, same results.

The cluster tests run on a real `distributed.LocalCluster` of 2 worker processes (one module
fixture), not threads or a mock.
"""

import copy
import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError, OptionalDependencyError
from lmforecast.fitting import fit_law
from lmforecast.laws import get_law
from lmforecast.osl.data import FAMILY, FLOPS, MODEL, SIZE
from lmforecast.osl.robustness import robustness_sweep
from lmforecast.parallel import (
    ENV_VAR,
    map_tasks,
    parse_scheduler,
    scheduler,
    uses_dask,
)
from lmforecast.supervised.presets import PRESETS
from lmforecast.supervised.simulate import simulate_supervised_runs
from lmforecast.uncertainty.bootstrap import _resample_chunk, bootstrap_fit

# ---- specs and resolution (no cluster) -----------------------------------------------------


@pytest.mark.parametrize(
    "text, kind, n, address",
    [
        ("local:2", "local", 2, ""),
        (" local:16 ", "local", 16, ""),
        ("tcp://10.0.0.5:8786", "tcp", 0, "tcp://10.0.0.5:8786"),
        ("sched.example.org:8786", "tcp", 0, "tcp://sched.example.org:8786"),
        ("joblib", "joblib", 0, ""),
    ],
)
def test_specs_parse(text, kind, n, address):
    s = parse_scheduler(text)
    assert (s.kind, s.n_workers, s.address) == (kind, n, address)


@pytest.mark.parametrize(
    "text, needle",
    [
        ("local:0", "at least 1 worker"),
        ("local:-3", "at least 1 worker"),
        ("local:two", "must be an integer"),
        ("local:", "must be an integer"),
        ("tcp://host", "not a scheduler address"),
        ("tls://host:8786", "not a scheduler address"),
        ("host:port", "not a scheduler address"),
        ("http://host:80/x", "not a scheduler address"),
        ("host:70000", "port 70000 is outside 1-65535"),
        ("ray", "not a scheduler address"),
    ],
)
def test_bad_specs_are_one_line_input_errors(text, needle):
    with pytest.raises(InputError, match=needle) as e:
        parse_scheduler(text, "--scheduler")
    assert "\n" not in str(e.value) and str(e.value).startswith("--scheduler")


def test_resolution_argument_then_context_then_environment(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert not uses_dask()  # the default: joblib, as before
    monkeypatch.setenv(ENV_VAR, "local:2")
    assert uses_dask()
    with scheduler("joblib"):  # a block beats the environment
        assert not uses_dask()
        assert uses_dask("local:1")  # an argument beats the block
    monkeypatch.setenv(ENV_VAR, "local:0")
    with pytest.raises(InputError, match=f"{ENV_VAR} 'local:0'"):
        uses_dask()


def _square(payload, shared):
    return payload**2 + shared


def test_joblib_default_and_plain_data_only():
    assert map_tasks(_square, range(5), shared=1) == [1, 2, 5, 10, 17]
    assert map_tasks(_square, range(5), shared=1, n_jobs=2) == [1, 2, 5, 10, 17]
    with pytest.raises(TypeError, match="module-level function"):
        map_tasks(lambda p, s: p, [1])


def test_missing_distributed_names_the_extra(monkeypatch, cli, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(OptionalDependencyError, match=r"lmforecast\[dask\]"):
        with scheduler("local:2"):
            pass
    code, _, err = cli("--scheduler", "local:2", "examples", "copy", tmp_path / "ex")
    assert code == 2 and "lmforecast[dask]" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "ex").exists()


# ---- the CLI's door --------------------------------------------------------------------------


def _runs_csv(tmp_path: Path) -> Path:
    p = tmp_path / "runs.csv"
    simulate_supervised_runs(PRESETS["busbridge2025"]["params"], seed=3).to_csv(p, index=False)
    return p


@pytest.fixture
def silent_port():
    """A port that accepts TCP connections but never speaks (a firewall, a wrong service)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    conns = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conns.append(srv.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    for c in conns:
        c.close()
    srv.close()


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize("which", ["local:0", "malformed", "refused", "silent"])
def test_bad_scheduler_exits_2_in_one_line_within_10_s_and_writes_nothing(
    which, cli, tmp_path, silent_port
):
    pytest.importorskip("distributed")
    spec = {
        "local:0": "local:0",
        "malformed": "tcp//127.0.0.1:8786",
        "refused": f"tcp://127.0.0.1:{_closed_port()}",
        "silent": f"127.0.0.1:{silent_port}",
    }[which]
    runs, out = _runs_csv(tmp_path), tmp_path / "fit.json"
    t0 = time.perf_counter()
    code, stdout, err = cli("--scheduler", spec, "supervised", "fit", "--runs", runs,
                            "--bootstrap", "4", "--out", out)  # fmt: skip
    elapsed = time.perf_counter() - t0
    assert code == 2 and stdout == "" and not out.exists()
    assert len(err.strip().splitlines()) == 1 and err.startswith("lmforecast: error: --scheduler")
    assert elapsed < 10  # the bound for an unreachable scheduler (a timeout, not speed)


def test_bad_environment_scheduler_exits_2(cli, tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, "local:zero")
    out = tmp_path / "fit.json"
    code, _, err = cli("supervised", "fit", "--runs", _runs_csv(tmp_path), "--out", out)
    assert code == 2 and f"{ENV_VAR} 'local:zero'" in err and not out.exists()


# ---- a real LocalCluster of 2 worker processes --------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    """Started while Dask's default HTTP port 8787 is held, as another command's cluster holds
    it; the warnings of the start are kept for `test_the_cluster_takes_a_free_http_port`."""
    pytest.importorskip("distributed")
    import warnings

    with socket.socket() as hold, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            hold.bind(("127.0.0.1", 8787))
            hold.listen()
        except OSError:  # held already (another test's cluster): the same situation
            pass
        with scheduler("local:2") as session:
            session.client.wait_for_workers(2, timeout=60)
            session.start_warnings = [str(w.message) for w in caught]
            yield session


def _ran_on(cluster, stream, tag: str) -> tuple[int, set]:
    """(tasks whose key carries `tag`, the workers that ran them) from a Dask task stream: the
    proof that the work went to the cluster's worker processes, not the test's own process."""
    recs = [t for t in stream.data if f"lmforecast-{tag}-" in str(t["key"])]
    workers = {t["worker"] for t in recs}
    assert workers <= set(cluster.client.scheduler_info()["workers"]), workers
    return len(recs), workers


def _pid(payload, shared):
    return os.getpid()


def test_jobs_run_the_tasks_in_other_processes():
    # n_jobs=2 is not silently serial: the tasks see worker process ids, not the parent's
    pids = map_tasks(_pid, range(4), n_jobs=2)
    assert os.getpid() not in pids and len(pids) == 4
    assert map_tasks(_pid, range(2), n_jobs=1) == [os.getpid()] * 2


@pytest.fixture(scope="module")
def chinchilla_fit():
    df = simulate_supervised_runs(PRESETS["busbridge2025"]["params"], noise=0.01, seed=5)
    law = get_law("chinchilla")
    X = {"N": df["N"].to_numpy(), "D": df["D"].to_numpy()}
    y = df["loss"].to_numpy()
    return law, X, y, fit_law(law, X, y)


def test_the_cluster_takes_a_free_http_port(cluster):
    """Two commands on local clusters at once: neither warns "Port 8787 is already in use"."""
    assert not [m for m in cluster.start_warnings if "already in use" in m]
    assert cluster.cluster.scheduler.http_server.port != 8787


@pytest.mark.slow
@pytest.mark.parametrize("n_polish", [0, 2])
def test_bootstrap_on_the_cluster_equals_the_serial_run_bit_for_bit(
    cluster, chinchilla_fit, n_polish
):
    law, X, y, res = chinchilla_fit
    kw = dict(n_boot=8, seed=11, n_polish=n_polish)
    from distributed import get_task_stream

    serial = bootstrap_fit(law, X, y, copy.deepcopy(res), n_jobs=1, **kw)
    with get_task_stream(client=cluster.client) as ts:
        on_dask = bootstrap_fit(law, X, y, copy.deepcopy(res), scheduler=cluster, **kw)
    n, workers = _ran_on(cluster, ts, "bootstrap-chinchilla")
    assert n >= 2 and workers  # the resamples ran as tasks on the cluster's workers
    # the same through a block connected to the running cluster by address (tcp://...)
    with get_task_stream(client=cluster.client) as ts:
        with scheduler(cluster.client.scheduler.address):
            in_block = bootstrap_fit(law, X, y, copy.deepcopy(res), n_jobs=1, **kw)
    assert _ran_on(cluster, ts, "bootstrap-chinchilla")[0] == n
    assert in_block.bootstrap == serial.bootstrap
    assert np.array(on_dask.bootstrap).shape == (8, 5)
    assert on_dask.bootstrap == serial.bootstrap  # every resampled theta, bit for bit
    assert on_dask.ci == serial.ci and on_dask.meta == serial.meta
    # the resamples are real refits: they differ from one another and from the full fit
    assert len({tuple(t) for t in on_dask.bootstrap}) == 8


@pytest.mark.slow
def test_backtest_on_the_cluster_equals_the_serial_run(cluster):
    # rolling-origin backtests ship (cutoff, adapter) tasks; the forecast table is
    # the serial one, bit for bit, whatever finishes first
    from lmforecast.backtest import PersistenceBaseline, rolling_origin
    from lmforecast.supervised.adapter import PointAdapter

    df = simulate_supervised_runs(PRESETS["busbridge2025"]["params"], noise=0.01, seed=5)
    ads = [PointAdapter("chinchilla"), PersistenceBaseline()]
    from distributed import get_task_stream

    serial = rolling_origin(df, ads, n_cutoffs=3)
    with get_task_stream(client=cluster.client) as ts:
        on_dask = rolling_origin(df, ads, n_cutoffs=3, scheduler=cluster)
    n, workers = _ran_on(cluster, ts, "backtest")
    assert n >= 3 and workers  # (cutoff, adapter) tasks ran on the cluster's workers
    pd.testing.assert_frame_equal(serial.forecasts, on_dask.forecasts, check_exact=True)
    assert set(serial.forecasts["method"]) == {a.name for a in ads}


def _bench_table(n: int = 14, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    logc = 21 + np.arange(n) / 4
    df = pd.DataFrame({MODEL: [f"m{i}" for i in range(n)], FAMILY: "f", FLOPS: 10 ** (logc - 21)})
    df[SIZE] = 10 ** (0.5 * (logc - 21)) * rng.uniform(0.5, 2, n)
    for j in range(4):
        z = (logc - 22.0) * (0.8 + 0.2 * j) + rng.normal(0, 0.3, n)
        df[f"B{j}"] = 0.25 + 0.7 / (1 + np.exp(-z))
    df["y"] = 0.1 + 0.8 / (1 + np.exp(-2.5 * (logc - 22.6))) + rng.normal(0, 0.02, n)
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True)


@pytest.mark.slow
def test_robustness_sweep_on_the_cluster_equals_the_serial_run(cluster, cli, tmp_path):
    t = _bench_table()
    kw = dict(predictors=["pcs:1", "pcs:2", "flops"], fractions=[0.5, 0.35, 0.2, 0.1])
    from distributed import get_task_stream

    serial = robustness_sweep(t, "y", **kw)
    with get_task_stream(client=cluster.client) as ts:
        on_dask = robustness_sweep(t, "y", scheduler=cluster, **kw)
    n, workers = _ran_on(cluster, ts, "robustness-y")
    assert n >= 2 and workers  # the sweep's fractions ran as tasks on the cluster's workers
    assert on_dask.to_json() == serial.to_json()  # records, MSEs and AUEs, bit for bit
    assert np.isfinite(serial.curves["test_mse"]).all() and len(serial.points) == 12
    # the CLI's global flag, pointed at the running cluster's address (tcp://...)
    bench = tmp_path / "b.csv"
    t.to_csv(bench, index=False)
    args = ["osl", "robustness", "--benchmarks", bench, "--target", "y", "--predictors",
            "pcs:1,flops", "--n-fractions", "3", "--json"]  # fmt: skip
    code, ref, err = cli(*args)
    assert code == 0, err
    address = cluster.client.scheduler.address
    with get_task_stream(client=cluster.client) as ts:
        code, got, err = cli("--scheduler", address, *args)
    assert code == 0, err
    assert json.loads(got) == json.loads(ref)
    assert _ran_on(cluster, ts, "robustness-y")[0] >= 2  # the flag sent the sweep there


def _die_once(payload, shared):
    """A bootstrap chunk whose first attempt kills its own worker process (SIGKILL)."""
    marker = Path(shared["marker"])
    if payload == shared["victim"] and not marker.exists():
        marker.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return _resample_chunk(payload, shared)


@pytest.mark.slow
def test_a_killed_worker_is_survived_with_the_same_result(cluster, chinchilla_fit, tmp_path):
    law, X, y, res = chinchilla_fit
    root = np.random.SeedSequence(7)
    chunks = [[0, 1], [2, 3], [4, 5], [6, 7]]
    shared = {
        "law": law, "X": X, "y": y, "starts": np.array([res.theta]), "loss": res.loss,
        "bounds": None, "grid": None, "n_polish": 0, "entropy": root.entropy,
        "spawn_key": root.spawn_key, "marker": str(tmp_path / "killed"), "victim": [2, 3],
    }  # fmt: skip
    pids_before = set(cluster.client.run(os.getpid).values())
    done = []
    got = map_tasks(_die_once, chunks, shared=shared, scheduler=cluster,
                    on_result=lambda i, r: done.append(i))  # fmt: skip
    killed = int((tmp_path / "killed").read_text())
    assert killed in pids_before  # a worker really died mid-task ...
    ref = map_tasks(_die_once, chunks, shared=shared, n_jobs=1)  # marker present: no kill
    same = [np.array_equal(ra[0], rb[0]) and ra[1:] == rb[1:] for a, b in zip(got, ref)
            for ra, rb in zip(a, b)]  # fmt: skip
    assert len(same) == 8 and all(same)  # ... and nothing changed
    assert sorted(done) == [0, 1, 2, 3]
    cluster.client.wait_for_workers(2, timeout=60)  # the nanny restarted it
    assert killed not in set(cluster.client.run(os.getpid).values())


def _nested_backend(payload, shared):
    os.environ[ENV_VAR] = "local:2"  # as a worker inherits it from the client's environment
    return uses_dask()


@pytest.mark.slow
def test_a_task_never_starts_a_nested_cluster(cluster):
    assert map_tasks(_nested_backend, [0, 1], scheduler=cluster) == [False, False]


@pytest.mark.slow
def test_progress_bar_counts_tasks_done_on_the_cluster(cluster, capsys):
    done = []
    got = map_tasks(_square, range(5), shared=1, scheduler=cluster, progress=True,
                    desc="squares", on_result=lambda i, r: done.append(i))  # fmt: skip
    assert got == [1, 2, 5, 10, 17] and sorted(done) == [0, 1, 2, 3, 4]
    err = capsys.readouterr().err
    assert "squares" in err and "5/5" in err


@pytest.mark.slow
def test_distillation_multistart_bootstrap_runs_on_the_cluster_bit_for_bit(cluster):
    # the default `distill fit --bootstrap` path (multi-started resamples re-scoring a product
    # grid with the separable scorer) ships one task per resample to the cluster of a block;
    # the claim (one task a resample, every draw bit for bit) is the same at any size, so the
    # fit polishes one grid start and each of 4 resamples one grid start besides its warm ones
    from distributed import get_task_stream

    from lmforecast.distill.model import DistillationScalingLaw
    from lmforecast.distill.simulate import simulate_distillation_runs
    from lmforecast.distill.uncertainty import BOOTSTRAP_GRID

    runs = simulate_distillation_runs(n_runs=60, seed=3)
    kw = dict(grid=BOOTSTRAP_GRID, n_polish=1, bootstrap=4, boot_polish=1, seed=4)
    serial = DistillationScalingLaw("paper", n_jobs=1, **kw).fit(runs).result_
    with get_task_stream(client=cluster.client) as ts:
        with scheduler(cluster.client.scheduler.address):
            on_dask = DistillationScalingLaw("paper", n_jobs=1, **kw).fit(runs).result_
    keys = [t["key"] for t in ts.data]
    assert sum("bootstrap--multi-start" in str(k) for k in keys) == 4  # one task a resample
    assert np.array(on_dask.bootstrap).shape == (4, 9)
    assert on_dask.bootstrap == serial.bootstrap and on_dask.ci == serial.ci
    assert on_dask.meta["bootstrap"] == serial.meta["bootstrap"]
    assert on_dask.meta["bootstrap"]["mode"] == "multi-start"


@pytest.mark.slow
def test_distill_fit_cli_with_the_global_scheduler_flag_equals_the_serial_fit(
    cluster, cli, tmp_path
):
    """Two resamples (the fewest the flag takes), each polishing one grid start besides its
    warm starts, of a fit with two coefficients pinned (7 free: a third of the fitting time):
    one task each on the cluster, the saved draws and intervals equal to the serial fit's (the
    equality holds at any number of resamples, polished starts and free coefficients)."""
    from distributed import get_task_stream

    from lmforecast.distill.simulate import simulate_distillation_runs

    runs = tmp_path / "runs.csv"
    simulate_distillation_runs(n_runs=60, seed=2).to_csv(runs, index=False)
    args = ["distill", "fit", "--runs", runs, "--supervised", "paper", "--bootstrap", "2",
            "--boot-polish", "1", "--fix", "gamma'=0.764", "--fix", "c1=1"]  # fmt: skip
    code, _, err = cli(*args, "--out", tmp_path / "serial.json", "--jobs", "1")
    assert code == 0, err
    with get_task_stream(client=cluster.client) as ts:
        code, _, err = cli("--scheduler", cluster.client.scheduler.address, *args,
                           "--out", tmp_path / "dask.json")  # fmt: skip
    assert code == 0, err
    assert sum("bootstrap--multi-start" in str(t["key"]) for t in ts.data) == 2
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("serial.json", "dask.json"))
    assert a["bootstrap"] == b["bootstrap"] and a["ci"] == b["ci"] and len(a["bootstrap"]) == 2
    boot = a["meta"]["bootstrap"]
    assert boot == b["meta"]["bootstrap"] and (boot["mode"], boot["n_polish"]) == ("multi-start", 1)
    assert a["params"]["gamma'"] == 0.764 and a["params"]["c1"] == 1.0
