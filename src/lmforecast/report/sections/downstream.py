"""Report section: downstream forecasts on real models (the bundled Pythia zero-shot table).

Forecasts the final zero-shot accuracy of Pythia-2.8B from the 70M-1.4B models (standard and
deduplicated suites) with every method of `lmforecast.downstream`, beside the FP and
persistence baselines; the full set of backtests is in docs/downstream_validation.md.
"""

from __future__ import annotations

import warnings

from ...downstream.backtest import backtest, pythia_name
from ...plots import downstream as plots
from ..builder import ReportContext, Section

FIT_SIZES = ("70m", "160m", "410m", "1b", "1.4b")
TARGET = "2.8b"
METHODS = ("ensemble", "sigmoid", "local-linear", "trend", "flp", "fp", "persistence")


def _load():
    try:
        from ...data.evals import load_pythia
    except ImportError:
        return None
    return load_pythia()


def build_section(ctx: ReportContext) -> Section:
    sec = Section("downstream", "Downstream forecasts on real models (Pythia)")
    evals = _load()
    if evals is None:
        sec.text("The bundled Pythia evaluation table (lmforecast.data.evals) is not installed.")
        return sec
    sec.text(
        "Real data: the zero-shot lm-evaluation-harness results of the Pythia suite (Biderman "
        "et al. 2023), every model's checkpoints from step 1 to 143,000. Stage-1 loss = ln of "
        "the LAMBADA (OpenAI) perplexity; runs = each model's final checkpoint; checkpoints = "
        "all steps; FLOPs from the table's accounting. Each method is fitted on 70M-1.4B and "
        "forecasts the final accuracy of the 2.8B model, which it never sees. Persistence "
        "(the 1.4B's own score) and FP (Chen et al. Eq. 3) are the naive baselines: a method "
        "that does not beat persistence is not a forecast. Full backtests (2.8B from <= 1B, "
        "1B/1.4B from <= 410M) and the choice of the default are in docs/downstream_validation.md."
    )
    suites = ("standard",) if ctx.quick else ("standard", "deduped")
    boot = 20 if ctx.quick else 50
    parts = []
    for suite in suites:
        fm = [pythia_name(s, suite) for s in FIT_SIZES]
        tgt = pythia_name(TARGET, suite)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bt = backtest(
                evals,
                fit_models=fm,
                target_model=tgt,
                methods=METHODS,
                scenario=f"{suite}: {TARGET} from <= 1.4b",
                bootstrap=boot,
                seed=ctx.seed,
                interval_methods=("ensemble",),
            )
        parts.append(bt)
        e = bt.errors().copy()
        e.loc["MAE"] = bt.mae().iloc[0]
        sec.html(f"<h3>{suite} suite: Pythia-2.8B forecast from 70M-1.4B</h3>")
        cap = (
            "Absolute error (points) of the forecast 2.8B final accuracy; 'refused': FLP's "
            "5-point filter leaves < 2 checkpoints."
        )
        sec.table(e.reset_index(), cap, "{:.2f}", na_rep="refused")
        bad = next(iter(bt.not_beating_persistence().values()))
        sec.text(
            "Methods that do NOT beat persistence here (not a forecast): "
            + (", ".join(bad) or "none")
            + "."
        )
        cov = bt.coverage()
        if "ensemble" in cov:
            sec.text(
                f"Coverage of the ensemble's 90% prediction intervals over the 7 tasks: "
                f"{cov['ensemble']:.2f}."
            )
        sec.numbers[suite] = {
            "mae": bt.mae().iloc[0].to_dict(),
            "refused": bt.refused().iloc[0].to_dict(),
            "not_beating_persistence": bad,
        }
    _figures(sec, parts[0], ctx)
    return sec


def _figures(sec: Section, bt, ctx: ReportContext) -> None:
    """Score vs loss and vs FLOPs for a few tasks, reusing the backtest's fitted ensembles."""
    tasks = (
        ("arc_easy", "arc_challenge")
        if ctx.quick
        else ("arc_easy", "arc_challenge", "piqa", "winogrande")
    )
    scenario = bt.rows["scenario"].iloc[0]
    for task in tasks:
        est = bt.models[(scenario, task, "ensemble")]
        fit, t = bt.data[(scenario, task)]
        target = {
            "C": float(t["C"]),
            "loss": float(t["loss"]),
            "score": float(t["score"]),
            "model": str(t["model"]),
        }
        base = {"persistence": (target["C"], est.largest_["score"])}
        sec.figure(
            plots.score_vs_loss(est, fit.checkpoints, target),
            f"{task}: score vs ln LAMBADA perplexity, every checkpoint of 70M-1.4B; the "
            "fitted maps, the 2.8B forecast at its forecast loss (90% PI) and the actual.",
        )
        sec.figure(
            plots.score_vs_flops(est, fit.runs, target, baselines=base),
            f"{task}: final scores vs FLOPs, the ensemble forecast with its 90% band, "
            "the persistence baseline and the actual 2.8B score.",
        )
