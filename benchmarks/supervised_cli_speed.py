"""Benchmark: the three `lmforecast supervised` command-line calls a user makes, timed as whole
processes, this tree beside a baseline revision (by default the tree before the forecast path
stopped loading the evals and table readers and before the fitting engine shared one evaluation
per point between the polish, its whitened pre-stage and L-BFGS-B) in the same run.

Targets on 2 cores:

1. `supervised predict` of one point on a saved default fit: within 1 s;
2. `supervised predict --table` of 50 rows: within 2 s;
3. a default `supervised fit` (the stack, 20 cluster-bootstrap refits, calibrated intervals) of
   the 240-run Chinchilla replication plus one `supervised predict`: within 2 s for both calls.
   The runs are simulated from the Hoffmann et al. (2022) preset as in
   benchmarks/bench_supervised_fit.py, 240 of them: the size of the Besiroglu et al. (2024)
   replication (the `besiroglu2024` preset's n_obs), whose extracted data is not bundled.

Every call runs in a fresh process; the cases are interleaved (baseline, this tree, ...) so the
machine's load hits both sides alike. Medians of `--repeat` calls are printed, wall time and the
child's CPU time (user + system: less sensitive to a loaded machine), with the ratios baseline /
this tree. Both sides' forecasts are compared (the loss and its 90% interval, to 4 significant
digits): a faster fit that moved the forecast would show here. Also printed: the floor of any
call, a bare interpreter importing numpy, and the floor of any fit, an interpreter importing
numpy, pandas and scipy.optimize (what a fit loads before fitting), which with the predict
call bounds [3] from below.

    python benchmarks/supervised_cli_speed.py [--baseline f07373e] [--repeat 5] [--runs 240]
    (`--baseline-src DIR` times another checkout's src/ instead of a revision)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_predict_cli import median_times, timed_call  # noqa: E402
from bench_supervised_fit import data as chinchilla_runs  # noqa: E402
from bench_varpro import baseline_tree  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
LM = [sys.executable, "-m", "lmforecast", "supervised"]
TARGETS = {"predict": 1.0, "table": 2.0, "fit + predict": 2.0}


def _sig4(x: float) -> str:
    return f"{x:.4g}"


def _forecast(stdout: str) -> tuple[str, ...]:
    """The predict JSON's loss and interval, each to 4 significant digits."""
    d = json.loads(stdout)
    return tuple(_sig4(v) for v in [d["loss"], *d.get("interval", [])])


def _write_inputs(d: Path, n_runs: int, n_rows: int) -> tuple[Path, Path]:
    _, X, y = chinchilla_runs("chinchilla", n_runs)
    runs = d / "runs.csv"
    lines = [f"{float(n)!r},{float(t)!r},{float(v)!r}" for n, t, v in zip(X["N"], X["D"], y)]
    runs.write_text("N,D,loss\n" + "\n".join(lines) + "\n")
    N = (10 ** np.random.default_rng(1).uniform(8, 10.5, n_rows)).tolist()
    rows = d / "rows.csv"
    text = "\n".join(f"r{i},{n!r},{20 * n!r}" for i, n in enumerate(N))
    rows.write_text("run,N,D\n" + text + "\n")
    return runs, rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="f07373e", help="git revision timed as the baseline")
    ap.add_argument(
        "--baseline-src", default=None, help="a src/ folder timed as the baseline, not a revision"
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--runs", type=int, default=240)
    ap.add_argument("--rows", type=int, default=50)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "base").mkdir()
        base = Path(a.baseline_src) if a.baseline_src else baseline_tree(a.baseline, d / "base")
        srcs = {"baseline": base, "this tree": SRC}
        runs, rows = _write_inputs(d, a.runs, a.rows)
        fits = {k: d / f"fit-{i}.json" for i, k in enumerate(srcs)}
        point = ["predict", "--params", "7e9", "--tokens", "1.4e11", "--json"]
        t = {k: {c: [] for c in TARGETS} for k in srcs}
        forecasts = {k: set() for k in srcs}
        for _ in range(a.repeat):
            for k, src in srcs.items():
                f = timed_call(
                    [*LM, "fit", "--runs", str(runs), "--quiet", "--out", str(fits[k])], src
                )
                p = timed_call([*LM, *point, "--fit", str(fits[k])], src)
                t[k]["fit + predict"].append((f[0] + p[0], f[1] + p[1]))
                t[k]["predict"].append(p)
                t[k]["table"].append(
                    timed_call([*LM, "predict", "--fit", str(fits[k]), "--table", str(rows)], src)
                )
                forecasts[k].add(_forecast(p[2]))
        floor = [timed_call([sys.executable, "-c", "import numpy"], SRC) for _ in range(a.repeat)]
        # what any fit loads before it fits: the table reader and the optimiser
        fit_floor = [
            timed_call([sys.executable, "-c", "import numpy, pandas, scipy.optimize"], SRC)
            for _ in range(a.repeat)
        ]
    print(
        f"baseline {a.baseline_src or a.baseline} vs this tree, medians of {a.repeat} calls "
        f"(load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    labels = {
        "predict": "[1] supervised predict, one point, on a saved default fit",
        "table": f"[2] supervised predict --table of {a.rows} rows",
        "fit + predict": f"[3] supervised fit (default, with intervals) on {a.runs} runs + one "
        "predict",
    }
    for case, target in TARGETS.items():
        b, o = median_times(t["baseline"][case]), median_times(t["this tree"][case])
        print(labels[case])
        print(
            f"  baseline {b[0]:.3f} s wall / {b[1]:.3f} s CPU   this tree {o[0]:.3f} s wall / "
            f"{o[1]:.3f} s CPU   ratio {b[0] / o[0]:.2f}x wall, {b[1] / o[1]:.2f}x CPU; within "
            f"{target:g} s: wall {'yes' if o[0] <= target else 'NO'}, CPU "
            f"{'yes' if o[1] <= target else 'NO'}"
        )
    fl = median_times(floor)
    print(f"floor (python -c 'import numpy'): {fl[0]:.3f} s wall / {fl[1]:.3f} s CPU")
    ff, pr = median_times(fit_floor), median_times(t["this tree"]["predict"])
    print(
        f"floor of a fit (python -c 'import numpy, pandas, scipy.optimize'): {ff[0]:.3f} s wall "
        f"/ {ff[1]:.3f} s CPU; with this tree's predict, a fit that cost nothing would make [3] "
        f"{ff[0] + pr[0]:.3f} s wall / {ff[1] + pr[1]:.3f} s CPU (target "
        f"{TARGETS['fit + predict']:g} s)"
    )
    same = forecasts["baseline"] == forecasts["this tree"] and len(forecasts["baseline"]) == 1
    shown = "; ".join(f"{k}: {sorted(v)}" for k, v in forecasts.items())
    print(f"forecast (loss, 90% interval) to 4 significant digits: {shown}; "
          f"{'identical' if same else 'DIFFERENT'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
