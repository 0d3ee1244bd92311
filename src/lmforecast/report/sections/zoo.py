"""Report section: the small-model zoo (really trained tiny LMs) and the supervised law on it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import InputError
from ...zoo.diagnostics import local_log_log_slopes, steepening_steps
from ...zoo.tables import LAW_MIN_TOKENS_PER_PARAM, load_zoo
from ..builder import ReportContext, Section


def supervised_fit_summary(
    runs: pd.DataFrame, form: str = "chinchilla", held_out: bool = True
) -> dict:
    """Fit the supervised law (Hoffmann et al. 2022 Approach 3 / Busbridge et al. 2025 Eq. 1)
    to the zoo's supervised runs; in-sample relative errors, and held-out errors of a fit that
    never saw the largest model size. Point fits (`intervals=False`): the section reports
    errors, not intervals, and 7-8 runs are too few for the calibration backtest."""
    from ...fitting.threads import single_blas_thread
    from ...supervised import SupervisedScalingLaw

    with single_blas_thread():
        law = SupervisedScalingLaw(form=form, intervals=False).fit(runs)
        rel = law.predict(runs["N"].to_numpy(), runs["D"].to_numpy()) / runs["loss"] - 1
        largest = runs["N"] == runs["N"].max()
        rel_held = np.array([np.nan])
        if held_out and (~largest).sum() > 5:  # enough runs left to fit 5 parameters
            held = SupervisedScalingLaw(form=form, intervals=False).fit(runs[~largest])
            big = runs[largest]
            rel_held = held.predict(big["N"].to_numpy(), big["D"].to_numpy()) / big["loss"] - 1
    return {
        "law": law,
        "params": law.params_,
        "max_rel_error": float(np.abs(rel).max()),
        "mean_rel_error": float(np.abs(rel).mean()),
        "held_out_N": int(runs["N"].max()),
        "held_out_rel_errors": [float(v) for v in rel_held],
        "held_out_max_rel_error": float(np.abs(rel_held).max()),
    }


def build_section(ctx: ReportContext) -> Section:
    from ...plots import zoo as zplots

    sec = Section("zoo", "Small-model zoo: really trained language models")
    try:
        z = load_zoo()
    except InputError as exc:
        sec.text(f"No zoo tables are bundled with this installation ({exc}).")
        return sec
    meta, runs = z.metadata, z.runs
    counts = runs.groupby("kind").size().to_dict()
    sec.text(
        f"The zoo ({meta['preset']} preset) holds {len(runs)} decoder-only transformers trained "
        f"from scratch on CPU by `lmforecast zoo build` (torch {meta['versions']['torch']}, "
        f"{meta['wall_s_total'] / 60:.0f} min wall time, seed {meta['seed']}): "
        + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        + f". Non-embedding sizes span {runs['N'].min():,} to {runs['N'].max():,} parameters; "
        "text is standard-library docstrings and comments (prose), standard-library source "
        "(code) and synthetic arithmetic. These are real measurements, not data drawn from a "
        "law, so the fits below are honest tests of the methods."
    )
    sup = z.supervised_runs()
    cols = ["model", "N", "D", "tokens_per_param", "loss", "loss_prose", "loss_code"]
    cols += ["loss_arith", "hellaswag_like", "arith", "code_mc"]
    sec.table(
        sup[cols],
        "Supervised runs (BPE tokenizer, reference mixture): losses in "
        "nats/token, task scores in percent.",
    )
    law_runs = z.law_runs()
    fit = supervised_fit_summary(law_runs)
    # quick reports skip the slower extras (the 9,600-start held-out fit, the all-runs fit)
    fit_gamma = supervised_fit_summary(law_runs, "chinchilla-gamma", held_out=not ctx.quick)
    all_runs_fit = supervised_fit_summary(sup, held_out=False) if not ctx.quick else None
    p = fit["params"]
    held = fit["held_out_max_rel_error"]
    held_text = (
        f"Held out: fitted without the largest size (N={fit['held_out_N']:,}), its runs are "
        f"predicted within {held:.2%}"
        + (
            f" (Busbridge form: {fit_gamma['held_out_max_rel_error']:.2%})."
            if np.isfinite(fit_gamma["held_out_max_rel_error"])
            else "."
        )
        if np.isfinite(held)
        else "Too few runs for a held-out fit without the largest size."
    )
    n_decades = np.log10(law_runs["N"].max() / law_runs["N"].min())
    sec.text(
        f"Supervised law fitted on the {len(law_runs)} runs with at least "
        f"{LAW_MIN_TOKENS_PER_PARAM:g} tokens per parameter ({n_decades:.2f} decades of N; the "
        f"{len(sup) - len(law_runs)} runs at 5 tokens/parameter are still on the initial "
        "plateau and are left out, see docs/zoo.md), Huber (delta 1e-3) on log loss over the "
        f"published start grids. Chinchilla form: E={p['E']:.3g}, A={p['A']:.3g}, "
        f"B={p['B']:.3g}, alpha={p['alpha']:.3g}, beta={p['beta']:.3g}; in-sample relative "
        f"error max {fit['max_rel_error']:.2%}, mean {fit['mean_rel_error']:.2%}. Busbridge "
        f"form (with gamma): max {fit_gamma['max_rel_error']:.2%}, mean "
        f"{fit_gamma['mean_rel_error']:.2%}. "
        + held_text
        + (
            " With the 5-tokens/parameter runs included the Chinchilla fit's max error is "
            f"{all_runs_fit['max_rel_error']:.2%}."
            if all_runs_fit
            else ""
        )
    )
    within = [
        name
        for name, f in (("Chinchilla", fit), ("Busbridge", fit_gamma))
        if f["max_rel_error"] <= 0.02
    ]
    slopes = local_log_log_slopes(sup, LAW_MIN_TOKENS_PER_PARAM)
    n_steep = steepening_steps(slopes)
    sec.table(
        slopes.round(4).assign(
            N_lo=slopes["N_lo"].map("{:,}".format), N_hi=slopes["N_hi"].map("{:,}".format)
        ),
        f"Local log-log slopes d ln L / d ln N between consecutive sizes at "
        f"{LAW_MIN_TOKENS_PER_PARAM:g} tokens/parameter.",
    )
    sec.text(
        (
            f"Within 2% on every run: {' and '.join(within)} form."
            if within
            else "Neither form fits every run within 2%."
        )
        + (
            f" The measured curve steepens {n_steep} time(s) from one size to the next (slopes "
            f"{slopes['slope'].min():.3f} to {slopes['slope'].max():.3f}): there it is concave "
            "in log-log, while every law E + (A/N^alpha + B/D^beta)^gamma is convex in log-log "
            "along a fixed tokens-per-parameter line, so no fit of the family can follow it "
            "(`lmforecast.zoo.diagnostics`, docs/zoo.md)."
            if n_steep
            else ""
        )
        + " These tiny models are pre-asymptotic, so use the zoo to test the methods' "
        "mechanics on real measurements, not to extrapolate."
    )
    sec.figure(
        zplots.loss_vs_compute(sup, fit["law"]),
        "Validation loss vs FLOPs, with the Chinchilla fit (fitted on runs with >= 20 "
        "tokens/parameter).",
    )
    sec.figure(
        zplots.score_vs_loss(z.checkpoints, z.tasks),
        "Task scores over all checkpoints against validation loss; dashed: random baseline.",
    )
    tasks = z.tasks.set_index("name")
    arith_best = float(runs["arith"].max())
    small = sup[sup["N"] == sup["N"].min()]["arith"]
    arith_chance = float(tasks.loc["arith", "chance"])
    sec.text(
        f"Arithmetic exact match (the 155 single-digit problems) rises from "
        f"{small.min():.1f}-{small.max():.1f}% for the smallest models' {len(small)} runs "
        f"(chance {arith_chance:.2f}%) to {arith_best:.1f}% for the best "
        f"({arith_best / arith_chance:.1f}x chance)."
    )
    d = z.distillation
    gap = {}
    if len(d):
        sec.figure(
            zplots.student_vs_teacher(d),
            "Distilled students vs teacher loss "
            "(pure distillation, lambda=1, tau=1); dashed: the same student trained "
            "supervised.",
        )
        for (n, dd), g in d.groupby(["N_S", "D_S"]):
            best = g.loc[g["L_S"].idxmin()]
            gap[f"{n}/{dd}"] = {
                "best_teacher_L_T": float(best["L_T"]),
                "lowest_teacher_L_T": float(g["L_T"].min()),
                "spread_L_S": float(g["L_S"].max() - g["L_S"].min()),
            }
        capacity_gap = any(v["best_teacher_L_T"] > v["lowest_teacher_L_T"] for v in gap.values())
        sec.text(
            "Students' loss depends on the teacher's loss (spread across teachers up to "
            f"{max(v['spread_L_S'] for v in gap.values()):.3f} nats). "
            + (
                "A capacity gap is visible: for some students the strongest teacher is not the "
                "best one."
                if capacity_gap
                else "No capacity gap is visible at this scale: the strongest teacher is the "
                "best for every student."
            )
        )
    sec.numbers = {
        "n_runs": len(runs),
        "runs_by_kind": counts,
        "N_range": [int(runs["N"].min()), int(runs["N"].max())],
        "supervised_params": p,
        "supervised_max_rel_error": fit["max_rel_error"],
        "supervised_mean_rel_error": fit["mean_rel_error"],
        "supervised_held_out_max_rel_error": fit["held_out_max_rel_error"],
        "supervised_gamma_max_rel_error": fit_gamma["max_rel_error"],
        "supervised_gamma_held_out_max_rel_error": fit_gamma["held_out_max_rel_error"],
        "supervised_all_runs_max_rel_error": (
            all_runs_fit["max_rel_error"] if all_runs_fit else float("nan")
        ),
        "supervised_law_runs": len(law_runs),
        "supervised_local_slopes": [float(v) for v in slopes["slope"]],
        "supervised_steepening_steps": n_steep,
        "supervised_law_min_tokens_per_param": LAW_MIN_TOKENS_PER_PARAM,
        "arith_best": arith_best,
        "arith_chance": arith_chance,
        "distillation": gap,
        "wall_s": meta["wall_s_total"],
    }
    return sec
