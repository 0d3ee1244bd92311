"""Report section: the small-model zoo (really trained tiny LMs) and the supervised law on it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import InputError
from ...zoo.tables import load_zoo
from ..builder import ReportContext, Section


def supervised_fit_summary(runs: pd.DataFrame, form: str = "chinchilla") -> dict:
    """Fit the supervised law (Hoffmann et al. 2022 Approach 3 / Busbridge et al. 2025 Eq. 1)
    to the zoo's supervised runs; in-sample relative errors, and held-out errors of a fit that
    never saw the largest model size."""
    from ...fitting.threads import single_blas_thread
    from ...supervised import SupervisedScalingLaw

    with single_blas_thread():
        law = SupervisedScalingLaw(form=form).fit(runs)
        rel = law.predict(runs["N"].to_numpy(), runs["D"].to_numpy()) / runs["loss"] - 1
        largest = runs["N"] == runs["N"].max()
        rel_held = np.array([np.nan])
        if (~largest).sum() > 5:  # enough runs left to fit 5 parameters
            held = SupervisedScalingLaw(form=form).fit(runs[~largest])
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
    fit = supervised_fit_summary(sup)
    p = fit["params"]
    held = fit["held_out_max_rel_error"]
    held_text = (
        f"Held out: fitted without the largest size (N={fit['held_out_N']:,}), its runs are "
        f"predicted within {held:.2%}."
        if np.isfinite(held)
        else "Too few runs for a held-out fit without the largest size."
    )
    sec.text(
        f"Chinchilla law fitted by Huber (delta 1e-3) on log loss over the 4,500-start grid: "
        f"E={p['E']:.3g}, A={p['A']:.3g}, B={p['B']:.3g}, alpha={p['alpha']:.3g}, "
        f"beta={p['beta']:.3g}. In-sample relative error: max {fit['max_rel_error']:.2%}, mean "
        f"{fit['mean_rel_error']:.2%}. " + held_text
    )
    if fit["max_rel_error"] > 0.02:
        sec.text(
            "The law does not fit this zoo within 2%: these tiny models are pre-asymptotic. "
            "Their loss against tokens steepens on log-log axes (they are still leaving the "
            "n-gram plateau), which no E + A/N^alpha + B/D^beta can follow, so the fit drives "
            "E to its floor and alpha to its bound, and the largest runs fall below it. Use the "
            "zoo to test the methods' mechanics on real measurements, not to extrapolate."
        )
    sec.figure(zplots.loss_vs_compute(sup, fit["law"]), "Validation loss vs FLOPs, with the fit.")
    sec.figure(
        zplots.score_vs_loss(z.checkpoints, z.tasks),
        "Task scores over all checkpoints against validation loss; dashed: random baseline.",
    )
    tasks = z.tasks.set_index("name")
    arith_best = float(runs["arith"].max())
    smallest = sup[sup["N"] == sup["N"].min()]["arith"].max()
    sec.text(
        f"Arithmetic exact match rises from {smallest:.1f}% for the smallest models (random "
        f"{tasks.loc['arith', 'random_performance']:.2f}%) to {arith_best:.1f}% for the best."
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
        "supervised_held_out_max_rel_error": fit["held_out_max_rel_error"],
        "arith_best": arith_best,
        "arith_random": float(tasks.loc["arith", "random_performance"]),
        "distillation": gap,
        "wall_s": meta["wall_s_total"],
    }
    return sec
