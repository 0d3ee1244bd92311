"""Report section: observational scaling laws on the bundled Tables B.1/B.2 (Ruan et al. 2024)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ...osl import (
    CapabilitySpace,
    ObservationalScalingLaw,
    SubsetSelector,
    family_fits,
    load_table_b1,
    load_table_b2,
    robustness_sweep,
    sweep_fractions,
)
from ...osl.data import INSTRUCT_METRICS
from ...plots import osl as plots
from ..builder import ReportContext, Section

B1_METRICS = ["MMLU", "ARC-C", "HellaSwag", "Winograd", "TruthfulQA", "XWinograd", "HumanEval"]


def _holdout_table(b1: pd.DataFrame, targets: list[str]) -> tuple[pd.DataFrame, dict]:
    rows, fits = [], {}
    for t in targets:
        row = {"target": t}
        for x in ("pcs", "flops", "size"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = ObservationalScalingLaw(x=x).fit(b1, t).result_
            row[f"test MSE ({x})"] = res.test_mse  # points^2
            row["n train / test"] = f"{res.n_train} / {res.n_test}"
            fits[(t, x)] = res
        rows.append(row)
    return pd.DataFrame(rows), fits


def build_section(ctx: ReportContext) -> Section:
    sec = Section("osl", "Observational scaling laws (Ruan, Maddison & Hashimoto 2024)")
    b1 = load_table_b1()
    sec.text(
        "Data: Table B.1 of the paper as printed (77 base models, 21 families, 7 benchmarks; the "
        "printed table has no GSM8K column) and Table B.2 (27 instruction-tuned models), bundled "
        "with the package. Real published scores, no simulation. Table 1's subset selections use "
        "the authors' 8-benchmark CSV and are reproduced exactly in the test suite."
    )

    # ---- capability space (Sec. 3.2-3.3) --------------------------------------------------------
    space = CapabilitySpace(3).fit(b1, B1_METRICS)
    S = space.transform(b1)
    ff = family_fits(b1, S)
    pc1 = ff[ff["pc"] == "PC-1"]
    ev = space.explained_variance_ratio_
    sec.text(
        f"PCA (App. B.3 imputation, mean-centred scores): PC-1 explains {ev[0]:.1%} of the "
        f"variance and the top 3 {ev.sum():.1%} (paper: nearly 80% and ~97% with 8 benchmarks). "
        f"PC-1 is linear in log training FLOPs within every family with 3+ models: min R^2 "
        f"{pc1['r2'].min():.3f} over {len(pc1)} families (paper, Fig. 3: R^2 > 0.9)."
    )
    sec.figure(plots.explained_variance(space), "Explained variance of the top-3 PCs (Fig. 2a).")
    sec.figure(plots.loadings_heatmap(space), "PC loadings gamma (Fig. 2b).")
    sec.figure(plots.pc_vs_flops(b1, S, ff), "PC-1 vs log10 training FLOPs per family (Fig. 3).")
    sec.table(
        pc1[["Model Family", "n_models", "slope", "r2"]].reset_index(drop=True),
        "PC-1 ~ log10 FLOPs within families (Eq. 4).",
    )

    # ---- holdout forecasts (Sec. 4) -------------------------------------------------------------
    targets = ["HumanEval", "MMLU"] if ctx.quick else B1_METRICS
    table, fits = _holdout_table(b1, targets)
    sec.text(
        "Each benchmark predicted from the other six with the Sec. 4 holdout: train on models "
        "with training FLOPs <= 8.4e22 (Llama-2-7B), test on the stronger ones and on models "
        "with unknown FLOPs (Mistral-7B, Mixtral-8x7B; the FLOPs baseline cannot use them). "
        "Test MSE in squared points (accuracies in points, 0-100); lower is better."
    )
    sec.table(
        table,
        "Held-out test MSE (points^2): PC law (K=3) vs log-FLOPs and log-size sigmoids.",
        "{:.4g}",
    )
    wins = int((table["test MSE (pcs)"] < table["test MSE (flops)"]).sum())
    sec.text(
        f"The PC law has the lower test MSE than the FLOPs baseline on {wins} of {len(table)} "
        "targets. Where it loses, the target carries information the remaining benchmarks do not "
        "(HumanEval: code ability, which PC-3 captures only when HumanEval itself is a predictor)."
    )
    show = fits[("MMLU", "pcs")]
    sec.figure(plots.scaling_curve(show), "MMLU from the other benchmarks (Fig. 4 style).")
    sec.figure(plots.weight_bars(show), "Benchmark weights beta^T gamma of the MMLU law.")
    sec.pre(show.summary())

    # ---- holdout-cutoff robustness (App. C.4) ---------------------------------------------------
    rob = _robustness(sec, b1, ctx)

    # ---- model-subset selection (Sec. 5) --------------------------------------------------------
    sel = SubsetSelector(3, include=["Llama-2"]).fit(b1)
    sel_rows, random_objs = [], []
    for budget in (8, 12) if ctx.quick else (8, 12, 20):
        best = sel.search(budget)
        rand = sel.random_baseline(budget, n_samples=20, seed=ctx.seed)
        random_objs = [r.objective for r in rand]
        sel_rows.append(
            {
                "budget": budget,
                "families": ", ".join(best.families),
                "objective": best.objective,
                "random median": float(np.median(random_objs)),
                "subsets searched": best.n_candidates,
            }
        )
    sec.table(
        pd.DataFrame(sel_rows),
        "V-optimal families (Eq. 9, Llama-2 forced, <= 10 families) on the 7 printed benchmarks.",
    )
    sec.figure(
        plots.selection_objectives(best.objective, random_objs),
        f"Eq. 9 objective, V-optimal vs 20 random family subsets (budget {best.budget}).",
    )

    # ---- instruction-tuned models (App. C.1) ---------------------------------------------------
    b2 = load_table_b2()
    metrics2 = [m for m in INSTRUCT_METRICS if m in b2.columns]
    ev2 = CapabilitySpace(3).fit(b2, metrics2).explained_variance_ratio_
    sec.text(
        f"Instruction-tuned models (Table B.2, {len(b2)} models, {len(metrics2)} benchmarks, "
        f"missing Claude scores imputed): top-3 PCs explain {ev2.sum():.1%} (paper, with GSM8K: "
        "~98.6%)."
    )
    sec.numbers.update(
        {
            "explained_variance": ev.tolist(),
            "pc1_flops_r2_min": float(pc1["r2"].min()),
            "holdout_test_mse": {
                r["target"]: {x: r[f"test MSE ({x})"] for x in ("pcs", "flops", "size")}
                for _, r in table.iterrows()
            },
            "selection": sel_rows,
            "instruct_explained_variance_top3": float(ev2.sum()),
            "robustness_aue": rob.aue,
            "robustness_best": rob.best(),
            "robustness_pcs3_beats_flops": rob.head_to_head("pcs:3", "flops").to_dict(),
        }
    )
    return sec


def _robustness(sec: Section, b1: pd.DataFrame, ctx: ReportContext):
    """App. C.4: test MSE vs test fraction (FLOPs cutoff) and AUE per predictor."""
    targets = (
        ["HumanEval"]
        if ctx.quick
        else ["MMLU", "HellaSwag", "TruthfulQA", "XWinograd", "HumanEval"]
    )
    fractions = sweep_fractions(6 if ctx.quick else 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rob = robustness_sweep(b1, targets, fractions=fractions)
    sec.text(
        "Robustness to the holdout cutoff (App. C.4): the FLOPs cutoff is moved so that "
        f"{fractions[0]:.0%} down to {fractions[-1]:.0%} of the models with known FLOPs are held "
        f"out ({len(fractions)} linearly spaced fractions); at each cutoff the imputation, PCA "
        "and sigmoid are refitted on the training models, and each predictor's test MSE curve is "
        "summarised by its area (AUE, trapezoid of the test MSE in points^2 over the test "
        "fractions; lower is better). "
        "Predictors: the PC law with K = 1-4 and the log-FLOPs / log-size sigmoids."
    )
    sec.table(
        rob.aue_table().reset_index(names="predictor"),
        "AUE (points^2) per predictor (rows) and target (columns), Table B.1, FLOPs cutoff.",
        "{:.3g}",
    )
    best = rob.best()
    aue_t = rob.aue_table()
    beats = [
        t for t in rob.targets if aue_t.loc[["pcs:2", "pcs:3"], t].min() < aue_t.loc["flops", t]
    ]
    pcs = [p for p in rob.predictors if p.startswith("pcs:")]
    k3_best = [t for t in rob.targets if aue_t[t].loc[pcs].idxmin() == "pcs:3"]
    compute_best = [t for t, p in best.items() if p in ("flops", "size")]
    sec.text(
        "Lowest AUE: " + ", ".join(f"{t}: {p}" for t, p in best.items()) + ". "
        f"A PC law with K = 2 or 3 has a lower AUE than log-FLOPs on {len(beats)} of "
        f"{len(rob.targets)} targets; K = 3 is the best number of PCs on {len(k3_best)} of them"
        + (f"; a compute measure is best on {', '.join(compute_best)}" if compute_best else "")
        + ". The paper's finding that K = 3 is best across its tasks (emergent, post-training; "
        "their scores are not bundled) does not carry over uniformly to predicting one standard "
        "benchmark from the others (docs/osl.md)."
    )
    h2h = rob.head_to_head("pcs:3", "flops")
    sec.text(
        "Share of cutoffs at which the K = 3 law has a lower test MSE than log-FLOPs (the AUE "
        "can be dominated by one blow-up at a large holdout): "
        + ", ".join(f"{t}: {v:.0%}" for t, v in h2h.items())
        + "."
    )
    sec.figure(
        plots.robustness_curves(rob),
        "Test MSE (points^2) vs held-out fraction per predictor (Fig. C.10 style), FLOPs cutoff.",
    )
    return rob
