"""Benchmark: variable projection (fitting/varpro.py) vs the grid engine it replaces (issue 23).

Times, in the same run, today's code against the code before variable projection, and prints
objectives so "same objective" is checked where the time is measured:

1. engine: `fit_law(method="grid")` (the 4,500 / 9,600-start grid, kept callable) vs
   `fit_law(method="varpro")` (the default) on simulated 250-run tables, every supervised form;
2. CLI: the whole `lmforecast supervised fit --no-intervals` call on 250 runs, and the default
   fit with intervals (bootstrap + calibration backtest), this tree vs the baseline revision
   (checked out from git into a temporary folder, run with the same Python);
3. distillation: `distill fit` on 697 simulated runs, point fit and `--bootstrap 32`, this tree
   vs the baseline (skip with --no-distill: the baseline's bootstrap takes minutes).

CPU seconds of the process are printed beside wall seconds: on a shared machine the CPU time is
the steadier of the two (the fits are single-threaded; bootstrap workers are not counted, so
the intervals and bootstrap rows run with --jobs 1).

    python benchmarks/bench_varpro.py [--baseline 6829fdd] [--runs 250] [--no-distill]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from lmforecast.fitting import engine, fit_law, huber
from lmforecast.laws import get_law
from lmforecast.supervised import PRESETS

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

_CHILD = r"""
import json, sys, time, resource, warnings
warnings.simplefilter("ignore")
t0 = time.perf_counter()
what = sys.argv[1]
if what == "cli":
    from lmforecast.cli.main import main
    try:
        main(sys.argv[2:])
    except SystemExit:
        pass
    out = {}
elif what == "distill":
    from lmforecast.distill import DistillationScalingLaw, simulate_distillation_runs
    runs = simulate_distillation_runs(seed=0)
    t0 = time.perf_counter()
    m = DistillationScalingLaw("busbridge2025", bootstrap=int(sys.argv[2]), n_jobs=1).fit(runs)
    r = m.result_
    out = {"objective": r.objective, "ci": r.ci}
ru = resource.getrusage(resource.RUSAGE_SELF)
out.update(wall=time.perf_counter() - t0, cpu=ru.ru_utime + ru.ru_stime)
print("@@" + json.dumps(out))
"""


def child(src: Path, *args: str) -> tuple[float, dict]:
    """Run _CHILD with PYTHONPATH=src; (wall seconds of the whole process, its JSON)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-c", _CHILD, *args], env=env, capture_output=True, text=True, cwd=src
    )
    wall = time.perf_counter() - t0
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("@@")]
    if p.returncode or not line or "error" in p.stderr.lower():
        raise RuntimeError(f"child failed: {p.stderr[-2000:]}")
    return wall, json.loads(line[-1][2:])


def baseline_tree(rev: str, tmp: Path) -> Path:
    arch = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=arch, check=True)
    return tmp / "src"


def simulated(form: str, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    N = 10 ** rng.uniform(7.5, 10.5, n)
    D = N * 10 ** rng.uniform(0.3, 3.0, n)
    if form == "overtrain":
        p = {"a": 900.0, "b": 4000.0, "E": 1.7, "eta": 0.05, "alpha_C": 0.16}
    else:
        p = dict(PRESETS["hoffmann2022" if form == "chinchilla" else "busbridge2025"]["params"])
    law = get_law(form)
    return law, {"N": N, "D": D}, law.predict(p, N=N, D=D) * np.exp(rng.normal(0, 0.01, n))


def bench_engine(n: int) -> None:
    print(
        f"[1] engine: fit_law on {n} simulated runs (grid: the published grid, kept as "
        "method='grid', polished without the whitened pre-stage: the engine as it was)"
    )
    for form in ("chinchilla", "chinchilla-gamma", "overtrain"):
        law, X, y = simulated(form, n)
        row = {}
        for method in ("grid", "varpro"):
            engine.PRECONDITION = method == "varpro"  # the grid row: the engine as it was
            w, c = time.perf_counter(), time.process_time()
            res = fit_law(law, X, y, loss=huber(1e-3), method=method)
            row[method] = (time.perf_counter() - w, time.process_time() - c, res)
        engine.PRECONDITION = True
        (wg, cg, rg), (wv, cv, rv) = row["grid"], row["varpro"]
        print(
            f"  {form:17s} grid {wg:6.3f} s (cpu {cg:6.3f})  varpro {wv:6.3f} s (cpu {cv:6.3f})"
            f"  ratio {cg / cv:5.1f}x cpu  objective grid {rg.objective:.12e} varpro "
            f"{rv.objective:.12e} (varpro - grid = {rv.objective - rg.objective:+.2e})"
        )


def bench_cli(base: Path, n: int) -> None:
    law, X, y = simulated("chinchilla-gamma", n)
    with tempfile.TemporaryDirectory() as d:
        csv = Path(d) / "runs.csv"
        rows = ["N,D,loss"] + [
            f"{float(a)!r},{float(b)!r},{float(c)!r}" for a, b, c in zip(X["N"], X["D"], y)
        ]
        csv.write_text("\n".join(rows) + "\n")
        print(f"[2] CLI: whole `lmforecast supervised fit` call on {n} runs (new process)")
        for label, extra in (("--no-intervals", ["--no-intervals"]), ("default", ["--jobs", "1"])):
            res = {}
            for name, src in (("baseline", base), ("this tree", SRC)):
                out = Path(d) / f"{name.replace(' ', '_')}{extra[0]}.json"
                wall, info = child(
                    src, "cli", "supervised", "fit", "--runs", str(csv), "--quiet", "--out",
                    str(out), *extra,
                )  # fmt: skip
                fit = json.loads(out.read_text())
                res[name] = (wall, info["cpu"], fit)
            (wb, cb, fb), (wn, cn, fn) = res["baseline"], res["this tree"]
            ob, on = fb["objective"], fn["objective"]
            print(
                f"  {label:15s} baseline {wb:6.2f} s (cpu {cb:6.2f})  this tree {wn:6.2f} s "
                f"(cpu {cn:6.2f})  ratio {wb / wn:4.1f}x wall, {cb / cn:4.1f}x cpu;  objective "
                f"baseline {ob:.12e} this tree {on:.12e}"
            )
            if fb.get("ci"):
                worst = max(
                    abs(fn["ci"][k][j] - fb["ci"][k][j]) / abs(fb["ci"][k][j])
                    for k in fb["ci"]
                    for j in (0, 1)
                )
                print(f"  {'':15s} largest relative change of a 90% parameter-interval end: "
                      f"{worst:.2e}")  # fmt: skip
        t = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import lmforecast.cli.main as m; "
             "m.build_parser()"], env={**os.environ, "PYTHONPATH": str(SRC)},
            capture_output=True, text=True,
        ).stderr  # fmt: skip
        tops = []
        for ln in t.splitlines():
            parts = ln.split("|")
            if len(parts) == 3 and parts[1].strip().isdigit():
                name = parts[2].rstrip()
                if len(name) - len(name.lstrip()) <= 3:  # top-level imports
                    tops.append((int(parts[1]) / 1e6, name.strip()))
        tops.sort(reverse=True)
        print("  import time of the CLI (python -X importtime, cumulative, top-level): "
              + ", ".join(f"{m} {s:.2f} s" for s, m in tops[:6]))  # fmt: skip


def bench_distill(base: Path) -> None:
    print("[3] distill fit on 697 simulated runs (simulate_distillation_runs(seed=0), --jobs 1)")
    for boot in (0, 32):
        res = {}
        for name, src in (("baseline", base), ("this tree", SRC)):
            res[name] = child(src, "distill", str(boot))[1]
        b, n = res["baseline"], res["this tree"]
        print(
            f"  --bootstrap {boot:2d}  baseline {b['wall']:7.2f} s (cpu {b['cpu']:7.2f})  this tree"
            f" {n['wall']:7.2f} s (cpu {n['cpu']:7.2f})  ratio {b['cpu'] / n['cpu']:4.1f}x cpu;"
            f"  objective baseline {b['objective']:.12e} this tree {n['objective']:.12e}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", default="6829fdd", help="git revision timed as the baseline")
    ap.add_argument("--runs", type=int, default=250)
    ap.add_argument("--no-distill", action="store_true")
    ap.add_argument("--only", choices=["engine", "cli", "distill"], default=None)
    args = ap.parse_args()
    if args.only in (None, "engine"):
        bench_engine(args.runs)
    if args.only == "engine":
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline_tree(args.baseline, Path(tmp))
        if args.only in (None, "cli"):
            bench_cli(base, args.runs)
        if args.only in (None, "distill") and not args.no_distill:
            bench_distill(base)


if __name__ == "__main__":
    main()
