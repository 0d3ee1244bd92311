"""Benchmark: whole `lmforecast supervised` CLI calls a user makes, this tree vs a baseline
revision (and vs the shell loop the batch flag replaces), in one run.

Cases (targets: one predict within 1 s; a 50-row table within 2 s; a default fit with its
intervals on the 240-run Chinchilla replication plus one predict within 2 s):

1. `supervised predict` of one point on a saved default fit: baseline revision vs this tree.
2. `supervised predict --table` of 50 rows (this tree) vs the naive baseline it replaces: a
   loop of 50 single `supervised predict` calls (timed on `--loop-sample` calls, scaled to 50).
3. `supervised fit` (default: stack, 20 cluster-bootstrap refits, calibrated intervals) on 240
   runs simulated from the Hoffmann et al. (2022) preset as in benchmarks/bench_supervised_fit.py
   (the size of the Besiroglu et al. 2024 replication), plus one predict: baseline vs this tree.

Each call runs in a fresh process, cases interleaved (baseline, this tree, ...) so machine load
hits both alike; medians of wall time and of the child processes' CPU time (user + sys, less
sensitive to a loaded machine) are printed with the ratios. The baseline revision is checked
out with `git archive` into a temporary folder and run with the same Python.

    python benchmarks/bench_predict_cli.py [--baseline fd09b6a] [--repeat 5] [--loop-sample 5]
    (`--baseline-src DIR` times another checkout's src/ instead of a revision)
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

from bench_supervised_fit import data as chinchilla_runs
from bench_varpro import baseline_tree

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
LM = [sys.executable, "-m", "lmforecast", "supervised"]


def timed_call(cmd: list[str], src: Path) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one call in a fresh process with `src` on its path (CPU:
    user + sys of the finished child)."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONWARNINGS": "ignore"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed: {p.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stdout


def median_times(v: list[tuple]) -> tuple[float, float]:
    """Median wall and CPU seconds of `timed_call` results."""
    return statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)


def _line(label: str, base: tuple[float, float], ours: tuple[float, float], target: float):
    print(
        f"  {label}: baseline {base[0]:.3f} s wall / {base[1]:.3f} s CPU   this tree "
        f"{ours[0]:.3f} s wall / {ours[1]:.3f} s CPU   ratio {base[0] / ours[0]:.2f}x wall, "
        f"{base[1] / ours[1]:.2f}x CPU; within {target:g} s: wall "
        f"{'yes' if ours[0] <= target else 'NO'}, CPU {'yes' if ours[1] <= target else 'NO'}"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="fd09b6a", help="git revision timed as the baseline")
    ap.add_argument(
        "--baseline-src",
        default=None,
        help="a src/ folder timed as the baseline instead of a git revision",
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--loop-sample", type=int, default=5, help="single calls timed for case 2")
    ap.add_argument("--runs", type=int, default=240)
    ap.add_argument("--rows", type=int, default=50)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "base").mkdir()
        base = Path(a.baseline_src) if a.baseline_src else baseline_tree(a.baseline, d / "base")
        srcs = {"baseline": base, "this tree": SRC}
        _, X, y = chinchilla_runs("chinchilla", a.runs)
        runs = d / "runs.csv"
        lines = [f"{float(n)!r},{float(t)!r},{float(v)!r}" for n, t, v in zip(X["N"], X["D"], y)]
        runs.write_text("N,D,loss\n" + "\n".join(lines) + "\n")
        rng = np.random.default_rng(1)
        N = (10 ** rng.uniform(8, 10.5, a.rows)).tolist()
        rows = d / "rows.csv"
        rows.write_text("run,N,D\n" + "\n".join(f"r{i},{n!r},{20 * n!r}" for i, n in
                                                  enumerate(N)) + "\n")  # fmt: skip
        fits = {k: d / f"fit-{i}.json" for i, k in enumerate(srcs)}
        predict = ["predict", "--params", "7e9", "--tokens", "1.4e11"]
        t = {k: {"fit": [], "predict": []} for k in srcs}
        for _ in range(a.repeat):
            for k, src in srcs.items():
                f = timed_call(
                    [*LM, "fit", "--runs", str(runs), "--quiet", "--out", str(fits[k])], src
                )
                p = timed_call([*LM, *predict, "--fit", str(fits[k])], src)
                t[k]["fit"].append((f[0] + p[0], f[1] + p[1]))
                t[k]["predict"].append(p)
        floor = [timed_call([sys.executable, "-c", "import numpy, pandas, scipy.special"], SRC)
                 for _ in range(a.repeat)]  # fmt: skip
        table = [timed_call([*LM, "predict", "--fit", str(fits["this tree"]), "--table", str(rows)],
                      SRC) for _ in range(a.repeat)]  # fmt: skip
        loop = [timed_call([*LM, "predict", "--fit", str(fits["this tree"]), "--params", f"{n!r}",
                      "--tokens", f"{20 * n!r}"], SRC) for n in N[: a.loop_sample]]  # fmt: skip
    print(
        f"baseline {a.baseline} vs this tree, medians of {a.repeat} "
        f"(load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print("[1] supervised predict, one point, on a saved default fit")
    _line(
        "predict",
        median_times(t["baseline"]["predict"]),
        median_times(t["this tree"]["predict"]),
        1.0,
    )
    fl = median_times(floor)
    print(f"  floor (python -c 'import numpy, pandas, scipy.special', what any predict loads): "
          f"{fl[0]:.3f} s wall / {fl[1]:.3f} s CPU")  # fmt: skip
    print(f"[2] supervised predict --table of {a.rows} rows vs a loop of {a.rows} single predict "
          f"calls (this tree; {a.loop_sample} timed, scaled)")  # fmt: skip
    one = median_times(loop)
    _line("table", (one[0] * a.rows, one[1] * a.rows), median_times(table), 2.0)
    print(f"[3] supervised fit (default, with intervals) on {a.runs} runs + one predict")
    _line(
        "fit + predict",
        median_times(t["baseline"]["fit"]),
        median_times(t["this tree"]["fit"]),
        2.0,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
