"""Studies of Eq. 8 (Busbridge et al. 2025) on the bundled small-model zoo's distilled students.

`zoo_distillation_summary` fits the distillation law to the zoo's really distilled students and
measures how well it predicts students it was not fitted to: leave-one-out over every student,
and the strongest teacher's students held out one IsoFLOP budget at a time. The report's
distillation section shows its numbers; this module computes them.

The held-out refits (one per student, one per budget) score the same App. F.2 grid as the
in-sample fit and polish its `refit_polish` best starts. The in-sample fit also polishes the best
start at every grid value of each axis (the engine's stratified selection); on the zoo the best
few starts already land in the same optimum: with 4 (2) of them the held-out predictions agree
with fully stratified refits to 3e-9 (4e-7) relative, at a half (a third) of the cost.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..errors import DomainWarning
from ..fitting.engine import fit_law
from ..fitting.losses import huber
from ..fitting.threads import single_blas_thread
from ..laws import get_law
from ..laws.distillation import BUSBRIDGE_DISTILL_GRID
from ..supervised import SupervisedScalingLaw
from .fitting import score_product_grid
from .model import LAW_NAME, DistillationScalingLaw
from .planning import SCENARIOS
from .simulate import simulate_distillation_runs
from .versus_supervised import crossover_compute
from .zoo_data import ZOO_FREE, student_groups, zoo_distillation_runs, zoo_fixed_coefficients


def refit_on_subset(template, runs: pd.DataFrame, n_polish: int):
    """Eq. 8 refitted to `runs` with `template`'s supervised law, fixed coefficients, grid and
    Huber loss, polishing the `n_polish` best grid starts (no stratified extra starts).

    Returns a fitted `DistillationScalingLaw` (from the engine's FitResult); for held-out
    refits inside a study, where one number per refit is kept and the fit's bookkeeping
    (ranges, domain notes) belongs to the in-sample fit.
    """

    law = get_law(LAW_NAME)
    d = runs.reset_index(drop=True)
    X = template._inputs(d["N_S"], d["D_S"], d["L_T"])
    y = d["L_S"].to_numpy(float)
    loss = huber(template.huber_delta)
    grid, bounds = template._grid_and_bounds(law)
    starts, scores = score_product_grid(law, X, law.target_of(y), loss, grid)
    res = fit_law(
        law,
        X,
        y,
        loss=loss,
        grid=starts,
        scores=scores,
        bounds=bounds,
        n_polish=n_polish,
        stratify=False,
    )
    return DistillationScalingLaw.from_result(res, supervised=template.supervised_)


def zoo_distillation_summary(
    zoo, *, n_polish: int = 8, leave_one_out: bool = True, refit_polish: int = 4
) -> dict:
    """Eq. 8 on the zoo's distilled students with A', B', c0, d1 free (the rest at Table 6) and
    L~_S from the supervised law fitted to the zoo's supervised runs: in-sample fit,
    leave-one-out errors, a fit without the strongest teacher predicting its students, and the
    capacity gap in the data and in the fit (Sec. 5.2).

    `n_polish`: grid starts polished by the in-sample fit (stratified, as every fit of the
    estimator); `refit_polish`: best grid starts polished by each held-out refit (see the
    module docstring).
    """

    runs = zoo_distillation_runs(zoo.distillation)
    fixed = zoo_fixed_coefficients()

    def pred(est, df):
        return est.predict(df["N_S"].to_numpy(), df["D_S"].to_numpy(), df["L_T"].to_numpy())

    with single_blas_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainWarning)  # E -> 0 on the zoo (zoo section)
        sup = SupervisedScalingLaw(form="chinchilla", intervals=False).fit(zoo.supervised_runs())
        est = DistillationScalingLaw(sup, fixed=fixed, n_polish=n_polish, bootstrap=0).fit(runs)
        base = runs.copy()

        def refit(df):
            return refit_on_subset(est, df, refit_polish)

        runs["fit"] = pred(est, runs)
        loo = np.full(len(runs), np.nan)
        if leave_one_out and len(runs) > 9:
            for i in range(len(runs)):
                loo[i] = pred(refit(base.drop(index=i)), runs.iloc[[i]])[0]
        runs["loo"] = loo
        # the strongest teacher's students of one IsoFLOP budget held out at a time (the
        # engine needs as many runs as Eq. 8 has coefficients, fixed ones included, so all
        # strongest-teacher runs at once would leave too few)
        strongest = (runs["L_T"] <= runs["L_T"].min() * (1 + 1e-9)).to_numpy()
        budget = np.round(np.log10(6.0 * runs["N_S"] * runs["D_S"]), 1).to_numpy()
        held = np.full(len(runs), np.nan)
        for b in np.unique(budget[strongest]):
            out = strongest & (budget == b)
            if (~out).sum() >= 9:
                held[out] = pred(refit(base[~out]), runs[out])
        held = held[strongest]
    rel = runs["fit"] / runs["L_S"] - 1
    rel_loo = runs["loo"] / runs["L_S"] - 1
    rel_held = held / runs.loc[strongest, "L_S"].to_numpy() - 1
    # capacity gap: the strongest teacher is not the best one for a student
    gap_data, gap_fit = [], []
    for _, g in student_groups(runs):
        gap_data.append(bool(g["L_S"].idxmin() != g["L_T"].idxmin()))
        gap_fit.append(bool(g["fit"].idxmin() != g["L_T"].idxmin()))
    return {
        "runs": runs,
        "law": est,
        "supervised": sup,
        "free": list(ZOO_FREE),
        "fixed": fixed,
        "params": {k: est.params_[k] for k in ZOO_FREE},
        "max_rel_error": float(np.abs(rel).max()),
        "mean_rel_error": float(np.abs(rel).mean()),
        "loo_max_rel_error": float(np.abs(rel_loo).max()) if np.isfinite(loo).all() else None,
        "loo_mean_rel_error": float(np.abs(rel_loo).mean()) if np.isfinite(loo).all() else None,
        "strongest_teacher_L_T": float(runs["L_T"].min()),
        "strongest_teacher_rel_errors": [float(v) for v in rel_held],
        "strongest_teacher_mean_rel_error": float(np.abs(rel_held).mean()),
        "supervised_ref_rel_error": float(
            np.abs(
                sup.predict(runs["N_S"].to_numpy(), runs["D_S"].to_numpy()) / runs["L_S_supervised"]
                - 1
            ).max()
        ),
        "capacity_gap_students_data": int(sum(gap_data)),
        "capacity_gap_students_fit": int(sum(gap_fit)),
        "n_students": len(gap_data),
    }


__all__ = ["refit_on_subset", "zoo_distillation_summary"]


def recovery_study(seed: int = 0, quick: bool = False) -> dict:
    """Recovery of known coefficients (the report's distillation study): runs simulated from the
    Table 6 law over the protocols of Sec. 4.2 refitted with Eq. 8 (max / median relative error
    against the noiseless law), a fit on the runs with L_S > 2.3 checked on the others
    (extrapolation to lower losses), and the best-case crossover compute of 1B / 3B students
    from the refit beside the Table 6 law's for every scenario (Sec. 5). `quick`: every other
    value of each axis of the App. F.2 grid, fewer polishes and a coarser crossover search."""
    preset = DistillationScalingLaw.from_preset()
    runs = simulate_distillation_runs(preset, seed=seed)
    # 8 polishes (24 starts with the stratified ones) reach the 16-polish fits exactly, on all
    # runs and on the L_S > 2.3 subset, in ~70% of the time
    grid, n_polish = None, 8
    if quick:
        grid, n_polish = {k: v[::2] for k, v in BUSBRIDGE_DISTILL_GRID.items()}, 4
    settings = {"grid": grid, "n_polish": n_polish, "bootstrap": 0}
    fit = DistillationScalingLaw("busbridge2025", **settings).fit(runs)
    err = np.abs(fit.predict(runs.N_S, runs.D_S, runs.L_T) / runs.L_S_true - 1)
    hi, lo = runs[runs.L_S > 2.3], runs[runs.L_S <= 2.3]
    ext = DistillationScalingLaw("busbridge2025", **settings).fit(hi)
    ext_err = np.abs(ext.predict(lo.N_S, lo.D_S, lo.L_T) / lo.L_S - 1)
    NS = np.array([3e8, 1e9, 3e9, 1e10])
    rows = []
    for name in SCENARIOS:
        cross = crossover_compute(preset, NS, name, n_grid=13 if quick else 41)
        rows += [{"scenario": name, "N_S": n, "crossover_flops": c} for n, c in zip(NS, cross)]
    table = pd.DataFrame(rows).pivot(index="N_S", columns="scenario", values="crossover_flops")
    fit_cross = crossover_compute(fit, NS[1:3], "best-case", n_grid=13, bisections=8)
    return {
        "preset": preset,
        "runs": runs,
        "fit": fit,
        "errors": err,
        "n_high": len(hi),
        "n_low": len(lo),
        "extrapolation_errors": ext_err,
        "crossover": table,
        "fit_best_case_crossover_1b_3b": fit_cross,
    }
