"""Whole-trajectory forecasts: stage 1 in compute (default) vs in (N, D) (`stage1="nd"`).

Stage 1 in compute alone is fitted on the finals; a checkpoint of a larger model early in its
training has fewer tokens per parameter than they do at the same compute (on the shared
over-trained ladders it sits below the finals' loss curve: docs/downstream.md). The (N, D)
stage 1 (Eq. 1 in N and D) can follow it where checkpoints are comparable: constant learning
rate (Gemstones); under a cosine schedule (Pythia) mid-training losses sit above an annealed
run's and bias it (docs/downstream.md). On the report scenarios of the nested protocol, with
the package's interval constants, both stage 1s forecast every checkpoint of each target past
10% of its training, and its final score. Nothing is chosen here: a measurement to read.

    PYTHONPATH=src python benchmarks/downstream_trajectory_stage1.py [--bootstrap 50]
"""

from __future__ import annotations

import argparse
import copy
import time
import warnings
from pathlib import Path

import pandas as pd

from lmforecast.data.evals import load_pythia, read_evals_table
from lmforecast.downstream import nested
from lmforecast.downstream.nested_scenarios import gemstones_scenarios, pythia_scenarios

GEMSTONES = Path(__file__).resolve().parents[1].parent / "shared/data/suites/gemstones"
STAGE1 = ("saturating", "nd")


def report_scenarios(gem: Path, tasks_per_suite: int | None = None):
    out = [(load_pythia(), [s for s in pythia_scenarios("acc") if s.split == "report"])]
    if gem.exists():
        g = read_evals_table(gem / "evals.csv")
        tasks = sorted(set(g["task"]) - {"dclm", "fineweb_edu"})
        gs = gemstones_scenarios(pd.read_csv(gem / "models.csv"),
                                        pd.read_csv(gem / "chance.csv"), tasks)  # fmt: skip
        out.append((g, [s for s in gs if s.split == "report"]))
    if tasks_per_suite:
        for _, ss in out:
            for s in ss:
                s.tasks = s.tasks[:tasks_per_suite]
    return out


def rows_for(case, stage1: str, min_fraction: float = 0.1) -> list[dict]:
    est, sc = case["est"], case["scenario"]
    ck = case["target_checkpoints"]
    ck = ck[ck["step"] >= min_fraction * ck.groupby("model")["step"].transform("max")]
    N, D = ck["N"].to_numpy(float), ck["D"].to_numpy(float)
    point = est.predict(N=N, D=D)
    lo, hi = est.predict_interval(N=N, D=D, level=0.9)
    final = (ck["step"] == ck.groupby("model")["step"].transform("max")).to_numpy()
    y = ck["score"].to_numpy(float)
    return [{"suite": sc.suite, "stage1": stage1, "task": case["task"], "final": bool(f),
             "abs_error": abs(p - a), "covered": bool(lw <= a <= h), "half_width": (h - lw) / 2}
            for p, a, lw, h, f in zip(point, y, lo, hi, final)]  # fmt: skip


def run(bootstrap: int = 50, gem: Path = GEMSTONES, tasks_per_suite: int | None = None):
    rows = []
    for evals, scs in report_scenarios(gem, tasks_per_suite):
        for stage1 in STAGE1:
            scs1 = [copy.copy(s) for s in scs]
            for s in scs1:
                s.stage1 = stage1
            for case in nested.fit_cases(evals, scs1, bootstrap=bootstrap):
                rows += rows_for(case, stage1)
    df = pd.DataFrame(rows)
    out = []
    for (suite, stage1, final), g in df.groupby(["suite", "stage1", "final"], sort=False):
        out.append({"suite": suite, "stage1": stage1,
                    "checkpoints": "final" if final else "intermediate", "n": len(g),
                    "mae": g["abs_error"].mean(), "coverage": g["covered"].mean(),
                    "median_half_width": g["half_width"].median()})  # fmt: skip
    return pd.DataFrame(out).sort_values(["suite", "checkpoints", "stage1"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bootstrap", type=int, default=50)
    ap.add_argument("--tasks", type=int, default=None, help="first K tasks per suite (smoke)")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    table = run(a.bootstrap, tasks_per_suite=a.tasks)
    with pd.option_context("display.width", 140, "display.float_format", "{:.2f}".format):
        print(table.to_string(index=False))
    print(f"({time.perf_counter() - t0:.0f} s, bootstrap {a.bootstrap})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
