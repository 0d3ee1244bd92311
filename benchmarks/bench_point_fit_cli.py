"""Benchmark: the whole `lmforecast supervised fit` point-fit call on 250 runs (issue 23 target:
within 1 s), this tree vs a baseline revision, in the same run.

Each case runs `--repeat` times in fresh processes, interleaved (baseline, this tree, floor, ...)
so machine load hits all alike; medians and the ratio are printed. The floor is a bare
interpreter importing what every fit needs (numpy, pandas, scipy.optimize): no CLI can be
faster than it. The baseline revision is checked out from git into a temporary folder and run
with the same Python. Both fits' objectives are printed, so "same fit" is checked where the time
is measured.

    python benchmarks/bench_point_fit_cli.py [--baseline 13ab6b2] [--repeat 9] [--runs 250]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_varpro import baseline_tree, simulated

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
FLOOR = [sys.executable, "-c", "import numpy, pandas, scipy.optimize"]


def _time(cmd: list[str], src: Path | None) -> float:
    env = dict(os.environ) if src is None else {**os.environ, "PYTHONPATH": str(src)}
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed: {p.stderr[-2000:]}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", default="13ab6b2", help="git revision timed as the baseline")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--runs", type=int, default=250)
    args = ap.parse_args()
    law, X, y = simulated("chinchilla-gamma", args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "base").mkdir()
        base = baseline_tree(args.baseline, d / "base")
        csv = d / "runs.csv"
        cols = zip(X["N"].tolist(), X["D"].tolist(), y.tolist())
        rows = ["N,D,loss"] + [f"{a!r},{b!r},{c!r}" for a, b, c in cols]
        csv.write_text("\n".join(rows) + "\n")
        flags = {"point fit (--no-intervals --no-stack)": ["--no-intervals", "--no-stack"],
                 "point fit with the stack (--no-intervals)": ["--no-intervals"]}  # fmt: skip
        for label, extra in flags.items():
            cmds = {
                name: [sys.executable, "-m", "lmforecast", "supervised", "fit", "--runs",
                       str(csv), "--quiet", "--out", str(d / f"{i}.json"), *extra]
                for i, name in enumerate(("baseline", "this tree"))
            }  # fmt: skip
            srcs = {"baseline": base, "this tree": SRC}
            times: dict[str, list[float]] = {"baseline": [], "this tree": [], "floor": []}
            for _ in range(args.repeat):
                for name in ("baseline", "this tree"):
                    times[name].append(_time(cmds[name], srcs[name]))
                times["floor"].append(_time(FLOOR, None))
            med = {k: statistics.median(v) for k, v in times.items()}
            objs = [json.loads((d / f"{i}.json").read_text())["objective"] for i in (0, 1)]
            print(f"{label} on {args.runs} runs, median of {args.repeat}:")
            ratio = med["baseline"] / med["this tree"]
            print(f"  baseline {args.baseline}: {med['baseline']:.3f} s   this tree: "
                  f"{med['this tree']:.3f} s   ratio {ratio:.2f}x")  # fmt: skip
            print(f"  floor (python -c 'import numpy, pandas, scipy.optimize'): "
                  f"{med['floor']:.3f} s;  this tree above the floor: "
                  f"{med['this tree'] - med['floor']:.3f} s")  # fmt: skip
            print(f"  objective baseline {objs[0]:.12e}  this tree {objs[1]:.12e}")
            if extra == ["--no-intervals", "--no-stack"]:
                ok = "yes" if med["this tree"] <= 1.0 else "NO"
                print(f"  within 1 s: {ok} (range {min(times['this tree']):.3f}-"
                      f"{max(times['this tree']):.3f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
