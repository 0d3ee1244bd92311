"""Benchmark: serial vs a Dask LocalCluster on the same machine, in one run (issue 13).

Workload: bootstrap of the distillation law (Eq. 8, Busbridge et al. 2025) on the 697-run
simulated design (`lmforecast.distill.simulate`), every resample multi-started (`n_polish`
best grid starts + the warm start, `bootstrap_fit(n_polish=...)`). Baseline: the same call in
this process, one core (`n_jobs=1`). Also measured: the cost of the cluster itself (start-up,
and the per-task overhead of a trivial task mapped `--tasks` times), and the per-resample cost
that docs/scaling-out.md projects to 4,096 resamples on N machines. The thetas of both runs
must be identical (checked).

    python benchmarks/bench_scale_out.py [--workers 2] [--boot 32] [--n-polish 4]
                                         [--grid coarse|full] [--tasks 200]

``--grid coarse`` keeps every other value of the law's 216,000-start grid (1,728 starts);
``--grid full`` is the paper's grid (about a minute a resample on one core).
"""

from __future__ import annotations

import argparse
import copy
import os
import time

import numpy as np

from lmforecast.distill.model import DistillationScalingLaw
from lmforecast.distill.simulate import simulate_distillation_runs
from lmforecast.fitting import bootstrap_fit
from lmforecast.laws import get_law
from lmforecast.parallel import map_tasks, scheduler


def _noop(payload, shared):
    return payload


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--boot", type=int, default=32)
    ap.add_argument("--n-polish", type=int, default=4)
    ap.add_argument("--grid", choices=["coarse", "full"], default="coarse")
    ap.add_argument("--tasks", type=int, default=200)
    args = ap.parse_args()

    law = get_law("busbridge-distillation")
    grid = law.default_grid()
    if args.grid == "coarse":
        grid = {k: np.asarray(v)[::2] for k, v in grid.items()}
    n_grid = int(np.prod([len(v) for v in grid.values()]))
    runs = simulate_distillation_runs(seed=0)
    m = DistillationScalingLaw("busbridge2025", grid=grid, n_polish=8, n_jobs=1).fit(runs)
    res, law = m.result_, m.result_.law_
    X = m._inputs(m.data_["N_S"], m.data_["D_S"], m.data_["L_T"])
    y = m.data_["L_S"].to_numpy()
    kw = dict(n_boot=args.boot, seed=0, n_polish=args.n_polish, grid=grid)
    print(
        f"distillation law, {len(y)} runs, {args.boot} resamples, multi-start n_polish="
        f"{args.n_polish} over a {n_grid:,}-start grid ({args.grid})"
    )

    t0, c0 = time.perf_counter(), time.process_time()
    serial = bootstrap_fit(law, X, y, copy.deepcopy(res), n_jobs=1, **kw)
    t_serial, cpu_serial = time.perf_counter() - t0, time.process_time() - c0
    t_noop_serial = _time(lambda: map_tasks(_noop, range(args.tasks), n_jobs=1))

    t0 = time.perf_counter()
    with scheduler(f"local:{args.workers}") as sess:
        sess.client.wait_for_workers(args.workers, timeout=120)
        t_start = time.perf_counter() - t0
        map_tasks(_noop, range(4), scheduler=sess)  # warm the workers' imports
        t_noop = _time(lambda: map_tasks(_noop, range(args.tasks), scheduler=sess))
        t_one = _time(lambda: map_tasks(_noop, [0], scheduler=sess))
        cpu0 = sess.client.run(time.process_time)
        t0 = time.perf_counter()
        dask = bootstrap_fit(law, X, y, copy.deepcopy(res), scheduler=sess, **kw)
        t_dask = time.perf_counter() - t0
        cpu1 = sess.client.run(time.process_time)
        cpu_dask = sum(cpu1[w] - cpu0[w] for w in cpu1 if w in cpu0)
        t1 = time.perf_counter()
    t_stop = time.perf_counter() - t1

    same = dask.bootstrap == serial.bootstrap
    per = cpu_serial / args.boot
    load = os.getloadavg()[0]
    print(f"serial (this process, 1 core)      : {t_serial:8.1f} s  ({per:.2f} CPU s a resample)")
    print(f"Dask LocalCluster, {args.workers} workers        : {t_dask:8.1f} s  (start-up "
          f"{t_start:.1f} s, shut-down {t_stop:.1f} s, not included)")  # fmt: skip
    print(f"speed ratio serial / cluster = {t_serial / t_dask:.2f}x  "
          f"(ideal {args.workers}x); thetas identical: {same}")  # fmt: skip
    print(f"CPU: serial {cpu_serial:.1f} s, cluster workers {cpu_dask:.1f} s in all; the workers "
          f"ran {100 * cpu_dask / (args.workers * t_dask):.0f}% of the wall time "
          f"(load average {load:.1f} on {os.cpu_count()} cores)")  # fmt: skip
    over = max(t_noop - t_noop_serial, 0.0) / args.tasks
    print(f"per-task overhead: {1e3 * over:.2f} ms ({args.tasks} trivial tasks in "
          f"{t_noop:.2f} s on the cluster, {t_noop_serial:.4f} s serial); one-task round trip "
          f"{1e3 * t_one:.1f} ms")  # fmt: skip
    for machines, cores in [(1, 16), (4, 16), (16, 16), (64, 16)]:
        w = machines * cores
        t = 4096 * per / w
        print(f"projected 4,096 resamples on {machines:>2} x {cores} cores: {t / 60:8.1f} min "
              f"(4,096 x {per:.2f} CPU s / {w} workers , ideal: no overhead)")  # fmt: skip
    if not same:
        raise SystemExit("cluster and serial thetas differ")


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
