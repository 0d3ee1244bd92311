"""The teacher term of distillation intervals (docs/distill_validation.md):
L_S intervals with the teacher held at its point (the supervised law given as its coefficients,
as before the term) and with its loss drawn from the supervised law's interval, for the
preset (Busbridge et al. 2025, Table 6) and the bundled example fit; plus the student token
budgets where the verdict changes. Prints the markdown table docs/distill_validation.md carries.

    PYTHONPATH=src python benchmarks/distill_teacher_term.py [--no-fit]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

from lmforecast.distill import DistillationScalingLaw
from lmforecast.distill.checks import verdict
from lmforecast.distill.plan_intervals import plan_interval
from lmforecast.distill.planning import get_scenario, plan_distillation
from lmforecast.distill.teacher_uncertainty import plan_teacher_log_sd, teacher_log_sd
from lmforecast.examples import path as example_path

N_S, D_S = 1e9, 2e10


def point_only(m: DistillationScalingLaw) -> DistillationScalingLaw:
    """The same law, the supervised law given as coefficients: no teacher term."""
    return DistillationScalingLaw.from_result(m.result_, supervised=dict(m.supervised_.params_))


def iv(lo, hi) -> str:
    return f"[{float(lo):.4f}, {float(hi):.4f}]"


def predict_row(m, label, NT, DT) -> str:
    LT = float(m.teacher_loss(NT, DT))
    sd = float(teacher_log_sd(m, NT, DT))
    before = iv(*point_only(m).predict_interval(N_S, D_S, N_T=NT, D_T=DT))
    now = iv(*m.predict_interval(N_S, D_S, N_T=NT, D_T=DT))
    LS = float(m.predict(N_S, D_S, LT))
    return (f"| {label}, teacher {NT:g} / {DT:g} (L_T {LT:.4f}, sd {sd:.2g}) | {LS:.4f} "
            f"{before} | {now} |")  # fmt: skip


def plan_row(m, scenario) -> str:
    p = plan_distillation(m, N_S, 1e22, scenario)
    sd = plan_teacher_log_sd(m, p, get_scenario(scenario))
    b = plan_interval(point_only(m), N_S, 1e22, scenario)
    a = plan_interval(m, N_S, 1e22, scenario)
    cell = lambda d: (f"L_S* {iv(*d['student_loss'])}, L_T* {iv(*d['teacher_loss'])}, "  # noqa: E731
                      f"N_T* [{float(d['teacher_params'][0]):.3g}, "
                      f"{float(d['teacher_params'][1]):.3g}]")  # fmt: skip
    s = "-" if sd is None else f"{float(np.max(sd)):.2g}"
    return (f"| `plan --student-params 1e9 --flops 1e22 --scenario {scenario}` (L_S* "
            f"{float(p.student_loss):.4f}, L_T* {float(p.teacher_loss):.4f}, sd {s}) | "
            f"{cell(b)} | {cell(a)} |")  # fmt: skip


def verdict_flips(m, NT=3e9, DT=6e10) -> str:
    DS = np.logspace(np.log10(2e10), 12, 400)
    LT = float(m.teacher_loss(NT, DT))
    LS, sup = m.predict(N_S, DS, LT), m.supervised_loss(N_S, DS)
    meas = verdict(LS, sup, *m.predict_interval(N_S, DS, LT))
    fc = verdict(LS, sup, *m.predict_interval(N_S, DS, N_T=NT, D_T=DT))
    out = []
    for a, b in (
        ("distill", "too close to call"),
        ("train supervised", "too close to call"),
        ("too close to call", "distill"),
        ("too close to call", "train supervised"),
    ):
        k = (meas == a) & (fc == b)
        if k.any():
            out.append(f"{a} -> {b} at D_S {DS[k].min():.3g}-{DS[k].max():.3g} ({int(k.sum())} "
                       "of 400 budgets)")  # fmt: skip
    return f"teacher {NT:g} / {DT:g} (L_T {LT:.4f}), student 1e9 on 2e10-1e12 tokens: " + (
        "; ".join(out) or "no verdict changes"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-fit", action="store_true", help="the preset only (quick)")
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    pre = DistillationScalingLaw.from_preset("busbridge2025")
    rows = ["| forecast | teacher held at its point | teacher drawn |", "|---|---|---|",
            predict_row(pre, "preset `predict --student-params 1e9 --student-tokens 2e10`",
                        1e9, 2e10),
            predict_row(pre, "preset, same student", 7e9, 1.4e11),
            plan_row(pre, "teacher-pretraining-inference"),
            plan_row(pre, "teacher-inference")]  # fmt: skip
    if not a.no_fit:
        runs = pd.read_csv(example_path("distill/distill_runs.csv"))
        sup = pd.read_csv(example_path("supervised/runs.csv")).rename(
            columns={"N": "N_S", "D": "D_S", "loss": "L_S"}
        )
        both = pd.concat([runs, sup[["N_S", "D_S", "L_S"]]])
        fit = DistillationScalingLaw(bootstrap=8).fit(both)
        rows.append(predict_row(fit, "the example fit (bundled runs, 8 resamples)", 1e9, 2e10))
    print("\n".join(rows))
    print()
    print("Verdicts (preset): " + verdict_flips(pre))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
