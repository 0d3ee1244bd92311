"""Benchmark: serial vs a Dask LocalCluster on the same machine, in one run (issue 13).

Workload: the bootstrap of the distillation law (Eq. 8, Busbridge et al. 2025) on the 697-run
simulated design (`lmforecast.distill.simulate`), every resample multi-started, exactly as
`lmforecast --scheduler local:N distill fit --bootstrap B` runs it
(`distill.uncertainty.multistart_bootstrap`: the resample re-scores a product grid with the
separable scorer, then polishes its `--n-polish` best starts and the 2 best full-data optima).
Baseline: the same call in this process, one core (`n_jobs=1`). Resample i depends only on
child i of the seed, so the serial baseline may time just the first `--serial-boot` resamples
(default: all of them); their thetas must equal the cluster's first ones bit for bit (checked).
Also measured: the cluster's own costs (start-up, the per-task overhead of a trivial task
mapped `--tasks` times) and the CPU seconds a resample, projected to 4,096 on N machines.

    python benchmarks/bench_scale_out.py [--workers 2] [--boot 32] [--serial-boot K]
                                         [--n-polish 4] [--grid thin|full] [--tasks 200]

``--grid thin`` (the default of `distill fit`, 8,748 starts); ``--grid full`` is the paper's
App. F.2 grid (216,000 starts, about 4 CPU s a resample). The paper-size run of
docs/scaling-out.md: ``--boot 4096 --serial-boot 64``.
"""

from __future__ import annotations

import argparse
import copy
import os
import time

import numpy as np

from lmforecast.distill.model import DistillationScalingLaw
from lmforecast.distill.simulate import simulate_distillation_runs
from lmforecast.distill.uncertainty import BOOTSTRAP_GRID, multistart_bootstrap
from lmforecast.laws import get_law
from lmforecast.parallel import map_tasks, scheduler

BETA = "beta'"


def _noop(payload, shared):
    return payload


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--boot", type=int, default=32)
    ap.add_argument("--serial-boot", type=int, default=None)
    ap.add_argument("--n-polish", type=int, default=4)
    ap.add_argument("--grid", choices=["thin", "full"], default="thin")
    ap.add_argument("--tasks", type=int, default=200)
    args = ap.parse_args()
    n_serial = min(args.boot, args.serial_boot or args.boot)

    law = get_law("busbridge-distillation")
    grid = BOOTSTRAP_GRID if args.grid == "thin" else law.default_grid()
    n_grid = int(np.prod([len(v) for v in grid.values()]))
    runs = simulate_distillation_runs(seed=0)
    m = DistillationScalingLaw("busbridge2025", bootstrap=0, n_jobs=1).fit(runs)
    X = m._inputs(m.data_["N_S"], m.data_["D_S"], m.data_["L_T"])
    y = m.data_["L_S"].to_numpy()

    def boot(n, **kw):
        return multistart_bootstrap(law, X, y, copy.deepcopy(m.result_), n_boot=n, grid=grid,
                                    n_polish=args.n_polish, seed=0, **kw)  # fmt: skip

    print(
        f"distillation law, {len(y)} runs, {args.boot} resamples (serial baseline: the first "
        f"{n_serial}), multi-start n_polish={args.n_polish} + 2 warm starts over a "
        f"{n_grid:,}-start grid ({args.grid})"
    )
    t0, c0 = time.perf_counter(), time.process_time()
    serial = boot(n_serial, n_jobs=1)
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
        dask = boot(args.boot, scheduler=sess)
        t_dask = time.perf_counter() - t0
        cpu1 = sess.client.run(time.process_time)
        cpu_dask = sum(cpu1[w] - cpu0[w] for w in cpu1 if w in cpu0)
        t1 = time.perf_counter()
    t_stop = time.perf_counter() - t1

    same = dask.bootstrap[:n_serial] == serial.bootstrap
    per = cpu_serial / n_serial
    t_serial_all = t_serial * args.boot / n_serial
    load = os.getloadavg()[0]
    measured = "" if n_serial == args.boot else f" for {n_serial}, so {t_serial_all:.1f} s for all"
    print(f"serial (this process, 1 core)      : {t_serial:8.1f} s{measured}  "
          f"({per:.2f} CPU s a resample)")  # fmt: skip
    print(f"Dask LocalCluster, {args.workers} workers        : {t_dask:8.1f} s = "
          f"{t_dask / 60:.1f} min (start-up {t_start:.1f} s, shut-down {t_stop:.1f} s, "
          f"not included)")  # fmt: skip
    print(f"speed ratio serial / cluster = {t_serial_all / t_dask:.2f}x  "
          f"(ideal {args.workers}x); thetas identical: {same}")  # fmt: skip
    print(f"CPU: serial {per:.3f} s a resample, cluster workers {cpu_dask / args.boot:.3f} s a "
          f"resample; the workers ran {100 * cpu_dask / (args.workers * t_dask):.0f}% of the "
          f"wall time (load average {load:.1f} on {os.cpu_count()} cores)")  # fmt: skip
    print(
        f"resamples won by a grid start: {dask.meta['bootstrap']['winner_from_grid']} of "
        f"{args.boot}; beta' 90% interval {dask.ci[BETA]}"
    )
    over = max(t_noop - t_noop_serial, 0.0) / args.tasks
    print(f"per-task overhead: {1e3 * over:.2f} ms ({args.tasks} trivial tasks in "
          f"{t_noop:.2f} s on the cluster, {t_noop_serial:.4f} s serial); one-task round trip "
          f"{1e3 * t_one:.1f} ms")  # fmt: skip
    eff = min(1.0, t_serial_all / (args.workers * t_dask))
    for machines, cores in [(1, 16), (4, 16), (16, 16), (64, 16)]:
        w = machines * cores
        t = 4096 * per / (w * eff)
        print(
            f"projected 4,096 resamples on {machines:>2} x {cores} cores: {t / 60:8.1f} min "
            f"(4,096 x {per:.2f} CPU s / {w} workers / parallel efficiency {eff:.2f})"
        )
    if not same:
        raise SystemExit("cluster and serial thetas differ")


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
