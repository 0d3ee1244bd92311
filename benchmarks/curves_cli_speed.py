"""Benchmark: the whole `lmforecast curves fit` + `lmforecast curves predict` command-line calls of
one model size's multi-power-law protocol (Luo et al. 2025: fit cosine_24000, constant_24000 and
wsdcon_9, forecast every logged step of the other six schedules; target: within 5 s on 2 cores),
against a first-order baseline timed in the same run: Adam on the same Huber objective with the
same O(T) evaluation (`curves_mpl_protocol.adam`), followed by the same forecasts, timed as one
process of its own (imports included; our two calls pay the start-up twice) and in-process
beside our in-process fit and forecast (no start-up on either side).

Each case runs `--repeat` times, interleaved (ours, baseline, floor, ...), so machine load hits
all alike; medians, wall and CPU (user + system) times and the ratios baseline / ours are
printed, with the floor (a bare interpreter importing numpy, pandas and scipy.optimize, as the
fit needs, and one importing numpy and pandas, as the forecast needs: no pair of CLI calls can
beat it), and both fits' errors on the forecast curves (mean
relative error over every logged point), so "as good a fit" is checked where the time is
measured. On a loaded machine the wall times grow with the load and the CPU times do not.
Without the shared curves it times the bundled example instead.

    python benchmarks/curves_cli_speed.py [--shared ../shared] [--size 25M] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from curves_mpl_protocol import adam, errors  # noqa: E402
from lmforecast.curves import CurveLaw, read_curves  # noqa: E402
from lmforecast.curves.fit import RunPoints, design, run_schedule  # noqa: E402
from lmforecast.curves.laws import value  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _tables(shared: Path, size: str):
    """(train, test, label): the protocol's split of one size, or the bundled example's."""
    folder = shared / "data" / "curves" / "mpl"
    if folder.is_dir():
        from lmforecast.curves.mpl_data import PROTOCOL_FIT, read_mpl_size

        table = read_curves(read_mpl_size(folder, size))
        fit = [f"{size}/{r}" for r in PROTOCOL_FIT]
        return table[table["run"].isin(fit)], table[~table["run"].isin(fit)], f"MPL {size}"
    from lmforecast import examples

    table = read_curves(examples.path("curves/curves.csv"))
    test = table[table["run"] == "cosine_8k"]
    return table[table["run"] != "cosine_8k"], test, "bundled example (no shared curves)"


CPU: list[float] = []  # CPU seconds (user + system) of every CLI call, beside its wall time


def _cli(args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    own = args[0] == "-c" or args[0].endswith(".py")  # a bare interpreter, or this script
    cmd = [sys.executable, *(args if own else ["-m", "lmforecast", *args])]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if p.returncode:
        raise RuntimeError(f"lmforecast {' '.join(args)} failed: {p.stderr[-2000:]}")
    return wall


def _baseline_process(train_csv: str, sched_csv: str, iters: str, out: str) -> None:
    """The baseline as a process of its own, as the CLI calls are: read the tables, Adam on the
    fit's objective, the forecasts at every schedule row (saved as .npy)."""
    from lmforecast.curves import read_schedule

    train, sched = read_curves(train_csv), read_schedule(sched_csv)
    z, _ = adam("mpl", train, int(iters))
    parts = [RunPoints(r, run_schedule(rows, r), rows["step"].to_numpy(float))
             for r, rows in sched.groupby("run", sort=False)]  # fmt: skip
    np.save(out, np.concatenate([value("mpl", z, design("mpl", [p])) for p in parts]))


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--baseline-run":
        return _baseline_process(*argv[1:5])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--size", default="25M")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--adam-iters", type=int, default=3000)
    a = ap.parse_args(argv)
    train, test, label = _tables(a.shared, a.size)
    load_before = os.getloadavg()
    ours, base, floor, inproc, cpu_ours, cpu_in, cpu_base = [], [], [], [], [], [], []
    base_proc, cpu_base_proc = [], []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        train.to_csv(d / "train.csv", index=False)
        test.drop(columns=["loss"]).to_csv(d / "schedule.csv", index=False)
        for _ in range(a.repeat):
            t_fit = _cli(["curves", "fit", "--runs", str(d / "train.csv"), "--out",
                          str(d / "fit.json"), "--quiet"])  # fmt: skip
            t_pred = _cli(["curves", "predict", "--fit", str(d / "fit.json"), "--schedule",
                           str(d / "schedule.csv"), "--out", str(d / "fc.csv")])  # fmt: skip
            ours.append((t_fit, t_pred))
            cpu_ours.append(CPU[-2] + CPU[-1])
            t0, c0 = time.perf_counter(), time.process_time()
            CurveLaw("mpl").fit(train).forecast(test.drop(columns=["loss"]))
            inproc.append(time.perf_counter() - t0)
            cpu_in.append(time.process_time() - c0)
            t0, c0 = time.perf_counter(), time.process_time()
            z, _ = adam("mpl", train, a.adam_iters)
            parts = [RunPoints(r, run_schedule(rows, r), rows["step"].to_numpy(float))
                     for r, rows in test.groupby("run", sort=False)]  # fmt: skip
            pa = np.concatenate([value("mpl", z, design("mpl", [p])) for p in parts])
            base.append(time.perf_counter() - t0)
            cpu_base.append(time.process_time() - c0)
            floor.append(_cli(["-c", "import numpy, pandas, scipy.optimize"])
                         + _cli(["-c", "import numpy, pandas"]))  # fmt: skip
            base_proc.append(_cli([str(Path(__file__).resolve()), "--baseline-run",
                                   str(d / "train.csv"), str(d / "schedule.csv"),
                                   str(a.adam_iters), str(d / "base.npy")]))  # fmt: skip
            cpu_base_proc.append(CPU[-1])
        import pandas as pd

        fc = pd.read_csv(d / "fc.csv")
    e_ours = errors(fc["loss"].to_numpy(), test.reset_index(drop=True))
    e_base = errors(pa, test.reset_index(drop=True))
    fit_s = statistics.median(t for t, _ in ours)
    pred_s = statistics.median(t for _, t in ours)
    total = statistics.median(t + p for t, p in ours)
    b = statistics.median(base)
    print(f"{label}: {len(train)} training rows, {len(test)} forecast rows; "
          f"{os.cpu_count()} cores; medians of {a.repeat}")  # fmt: skip
    load = ", ".join(f"{v:.2f}" for v in (*load_before, *os.getloadavg()))
    print(f"  load average (1, 5, 15 min) before and after the runs: {load}")
    print(f"  curves fit (CLI)         {fit_s:6.2f} s")
    print(f"  curves predict (CLI)     {pred_s:6.2f} s")
    cpu = statistics.median(cpu_ours)
    print(f"  both, CPU time (user + system)   {cpu:6.2f} s   (about the wall time on an idle "
          "machine)")  # fmt: skip
    print(f"  both, whole CLI calls (wall)    {total:6.2f} s")
    print(f"  target within 5 s: {'met' if total <= 5 else 'not met'} in wall time here, "
          f"{'met' if cpu <= 5 else 'not met'} in CPU time (a loaded machine inflates the "
          "wall time; the floor below shows how much)")  # fmt: skip
    fl = statistics.median(floor)
    print(f"  floor: bare interpreters importing numpy, pandas, scipy.optimize (fit) and "
          f"numpy, pandas (predict) {fl:6.2f} s "
          f"(ours above it: {total - fl:.2f} s)")  # fmt: skip
    print(f"  first-order baseline (Adam, {a.adam_iters} iterations, in-process, + forecasts) "
          f"{b:6.2f} s")  # fmt: skip
    ip = statistics.median(inproc)
    bp, cbp = statistics.median(base_proc), statistics.median(cpu_base_proc)
    print(f"  first-order baseline as one process (imports, Adam, forecasts) {bp:6.2f} s wall, "
          f"{cbp:.2f} s CPU")  # fmt: skip
    print(f"  RATIO baseline process / our two CLI calls: {bp / total:.2f}x wall, "
          f"{cbp / cpu:.2f}x CPU")  # fmt: skip
    print(
        f"  ratio in-process baseline / ours: {b / total:.2f}x (whole CLI calls); "
        f"{b / ip:.2f}x in-process "
        f"(our fit with its 200 resampled replicates and forecasts with intervals {ip:.2f} s); "
        f"in CPU time {statistics.median(cpu_base) / cpu:.2f}x (CLI calls) and "
        f"{statistics.median(cpu_base) / statistics.median(cpu_in):.2f}x (in-process)"
    )
    print(f"  mean relative error on the forecast curves: ours {e_ours[0]:.3f}%, "
          f"baseline {e_base[0]:.3f}% (worst {e_ours[3]:.2f}% / {e_base[3]:.2f}%)")  # fmt: skip


if __name__ == "__main__":
    main()
