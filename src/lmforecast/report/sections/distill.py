"""Report section: distillation scaling laws (Busbridge et al. 2025) on simulated runs (recovery
of known coefficients) and on the small-model zoo's really distilled students (held-out error)."""

from __future__ import annotations

import numpy as np

from ...distill.studies import zoo_distillation_summary
from ...errors import InputError
from ..builder import ReportContext, Section


def build_section(ctx: ReportContext) -> Section:
    """Refit Eq. 8 on runs simulated from Table 6, check extrapolation, and plan distillation."""

    from ...distill.planning import SCENARIOS, plan_distillation
    from ...distill.studies import recovery_study
    from ...plots.distill import compute_optimal_allocations, student_loss_contours

    sec = Section("distill", "Distillation scaling laws (Busbridge et al. 2025)")
    sec.text(
        "The first part checks recovery of known coefficients: its runs are SIMULATED from the "
        "paper's Table 6 law over the protocols of Sec. 4.2 (students 143M-12.6B, teachers "
        "198M-7.75B) with 0.5% lognormal noise on the student loss. The last subsection fits "
        "the really distilled students of the bundled small-model zoo."
    )
    study = recovery_study(seed=ctx.seed, quick=ctx.quick)
    preset, runs, fit, table = (study[k] for k in ("preset", "runs", "fit", "crossover"))
    err, ext_err = study["errors"], study["extrapolation_errors"]
    sec.pre(fit.summary())
    sec.table(
        fit.coefficient_table().reset_index(),
        "Which coefficients these runs pin (no bootstrap in the report; see docs/distill.md)",
    )
    sec.text(
        f"Refit on {len(runs)} runs ({fit.result_.n_starts} grid starts): max relative error "
        f"against the noiseless law {err.max():.3%} (median {np.median(err):.3%}). Fit on the "
        f"{study['n_high']} runs with L_S > 2.3, held-out error on the other {study['n_low']}: "
        f"mean {ext_err.mean():.3%}, max {ext_err.max():.3%} (against noisy observations). The "
        "student power term (A', B', alpha', beta', gamma') is not identified by such data: "
        "it drifts along a ridge while predictions stay put (see docs/distill.md)."
    )
    C = np.logspace(20, 26, 13 if ctx.quick else 25)
    shown = table.astype(object).map(
        lambda c: (
            "not reached by 1e28"
            if c != c
            else ("<= 1e18 (search floor)" if c <= 1e18 * (1 + 1e-9) else f"{c:.4g}")
        )
    )
    sec.table(
        shown.reset_index(),
        "Compute beyond which supervised training beats compute-optimal distillation (Table 6 "
        "preset; C range 1e18-1e28; '<= 1e18': supervised already wins at the range's floor)",
    )
    fit_cross = study["fit_best_case_crossover_1b_3b"]
    sec.text(
        "Best-case crossover for 1B / 3B students from the refit: "
        + ", ".join(f"{c:.2g}" for c in fit_cross)
        + " FLOPs, against "
        + ", ".join(f"{c:.2g}" for c in table["best-case"].to_numpy()[1:3])
        + " from the true (Table 6) coefficients: the crossover rests on a ~0.01-nat "
        "asymptotic difference and on coefficients the runs do not pin, so treat it as an "
        "order of magnitude."
    )
    plans = [plan_distillation(preset, 3e9, C, s) for s in SCENARIOS]
    sec.figure(compute_optimal_allocations(plans), "Compute-optimal distillation, N_S = 3B")
    sec.figure(student_loss_contours(preset, 1e12), "Distilled minus supervised loss, D_S = 1T")
    sec.numbers.update(
        n_runs=len(runs),
        refit_max_rel_error=float(err.max()),
        refit_median_rel_error=float(np.median(err)),
        extrapolation_mean_rel_error=float(ext_err.mean()),
        extrapolation_max_rel_error=float(ext_err.max()),
        fitted=fit.params_,
        crossover_flops={s: table[s].tolist() for s in table.columns},
        refit_best_case_crossover_flops_1b_3b=fit_cross.tolist(),
        identifiability=fit.identifiability(),
    )
    _zoo_part(sec, ctx)
    return sec


def _zoo_part(sec: Section, ctx: ReportContext) -> None:
    from ...plots.distill import zoo_students_vs_teacher
    from ...zoo.tables import load_zoo

    sec.html("<h3>On the small-model zoo (really distilled students)</h3>")
    try:
        z = load_zoo()
        runs = z.distillation
    except InputError as exc:
        sec.text(f"No zoo tables in this installation ({exc}).")
        return
    if len(runs) < 10:
        sec.text(f"The zoo has {len(runs)} distilled students: too few for a held-out fit.")
        return
    # 4 polishes reach the 8-polish numbers to 2e-9 (8 reach 16's to 1e-8) in 75% of the time;
    # the held-out refits polish their 2 best grid starts: the stratified refits' predictions
    # to 4e-7 relative, in a third of the time
    s = zoo_distillation_summary(z, n_polish=4, leave_one_out=not ctx.quick, refit_polish=2)
    runs = s["runs"]
    p = s["params"]
    a_prime, b_prime = p["A'"], p["B'"]
    sec.text(
        f"{len(runs)} students of the bundled zoo ({s['n_students']} student configurations "
        f"x {runs['teacher'].nunique()} teachers, pure distillation), far too few for the nine "
        "coefficients of Eq. 8: the exponents alpha', beta', gamma' and the break shape c1, "
        "f1 are held at Table 6, and A', B', c0, d1 are fitted (Huber 1e-4 on log L_S, grid of "
        "App. F.2 over the free axes). L~_S comes from the Chinchilla law fitted to the zoo's "
        "supervised runs, which misses the measured supervised students by up to "
        f"{s['supervised_ref_rel_error']:.1%} (the zoo is pre-asymptotic, see the zoo "
        f"section). Fitted: A'={a_prime:.3g}, B'={b_prime:.3g}, c0={p['c0']:.3g}, "
        f"d1={p['d1']:.3g}."
    )
    tab = runs[["N_S", "D_S", "N_T", "L_T", "L_S", "fit", "loo", "L_S_supervised"]].copy()
    tab["LOO err %"] = 100 * (tab["loo"] / tab["L_S"] - 1)
    if tab["loo"].isna().all():
        tab = tab.drop(columns=["loo", "LOO err %"])
    sec.table(
        tab.rename(columns={"fit": "Eq. 8 fit", "loo": "leave-one-out"}),
        "Zoo students: measured L_S, the in-sample fit, the leave-one-out prediction (full "
        "report), and the "
        "same student trained supervised (nats/token)",
        "{:.4g}",
    )
    held = s["strongest_teacher_rel_errors"]
    loo_text = (
        "Leave-one-out: skipped in quick mode. "
        if s["loo_max_rel_error"] is None
        else f"Held out: leave-one-out max {s['loo_max_rel_error']:.2%}, mean "
        f"{s['loo_mean_rel_error']:.2%}. "
    )
    gd, gf, ns = (
        s[k] for k in ("capacity_gap_students_data", "capacity_gap_students_fit", "n_students")
    )
    sec.text(
        f"In-sample relative error: max {s['max_rel_error']:.2%}, mean {s['mean_rel_error']:.2%}. "
        + loo_text
        + f"Fitted without the strongest teacher (L_T = "
        f"{s['strongest_teacher_L_T']:.3f}) at one IsoFLOP budget (its other runs stay in: the "
        "engine needs at least nine runs), its students at that budget are predicted with "
        f"mean error {s['strongest_teacher_mean_rel_error']:.2%} over all {len(held)} such "
        "students (max "
        f"{np.nanmax(np.abs(held)):.2%}). Capacity gap: for {gd} of {ns} students a weaker "
        f"teacher beats the strongest in the data; the fitted law puts it there for {gf} of {ns}."
    )
    sec.figure(
        zoo_students_vs_teacher(s["law"], runs),
        "Zoo students against teacher loss with the Eq. 8 fit; dashed: the measured "
        "supervised student.",
    )
    sec.numbers["zoo"] = {k: v for k, v in s.items() if k not in ("runs", "law", "supervised")}
