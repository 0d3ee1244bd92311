"""The text `SupervisedScalingLaw.summary()` shows for a fit: the fitted parameters (intervals
the identification check refused marked as not identified), the model-average weights, the
forecast-interval terms, the stack, the 1-D compute law, the chosen form and the source; and
the stack's and the calibrated interval's terms as plain dicts (what `supervised fit --json`
shows)."""

from __future__ import annotations

from ..compute.consistency import mark_summary
from ..fitting.result import FitResult
from . import intervals as iv
from . import stack as st


def fit_summary(result: FitResult) -> str:
    """The summary of a fitted supervised law's `FitResult` (`SupervisedScalingLaw.summary`)."""
    refused = result.meta.get("identification", {}).get("not_identified", {})
    s = mark_summary(result.summary(), refused)  # refused intervals: not identified
    avg = result.meta.get("average")
    if avg:
        w = ", ".join(f"{f} {v:.3f}" for f, v in avg["weights"].items())
        s = f"Model average over forms (weights by inverse backtest MSE): {w}\n" + s
    cal = result.meta.get("intervals")
    if cal and "k" in cal and result.meta.get("stack") and "k_stack" in cal:
        s += (
            f"\nForecast intervals: bootstrap over model sizes ({len(result.bootstrap)}"
            f" resamples) + run scatter {cal['noise']:.4g} + k_stack x inner RMS error "
            f"(docs/trust.md), C_max = {cal['max_compute']:.4g}"
        )
    elif cal and "k" in cal:
        s += (
            f"\nForecast intervals: bootstrap over model sizes ({len(result.bootstrap)}"
            f" resamples) + run scatter {cal['noise']:.4g} + k r, k = {cal['k']:.4g} per unit"
            f" of r = max ln(C/C_max), ln(N/N_max), ln(D/D_max) (k: {cal['method']}; "
            f"docs/trust.md), C_max = {cal['max_compute']:.4g}"
        )
    elif cal:
        m, k, lam = iv.interval_terms(cal, 0.9)
        s += (
            f"\nForecast intervals: {lam:.3g} x (bootstrap + run scatter "
            f"{cal.get('noise', 0.0):.4g}) + extrapolation drift {m:+.4g} and scatter "
            f"{k:.4g} (90%) per unit of r, C_max = {cal['max_compute']:.4g}"
        )
    meta = result.meta
    if meta.get("stack"):
        s += "\n" + st.describe(meta["stack"])
        if cal and "k_stack" in cal:
            s += f"; interval term {cal['k_stack']:.3g} x inner RMS x max(1, r / 2)"
    cl = meta.get("compute_law")
    if cl:
        s += "\n1-D compute law on the same runs: L = "
        s += f"{cl['E']:.4g} + {cl['A']:.4g} C^-{cl['a']:.4g}"
    if meta.get("form_reason"):
        s += f"\nForm: {meta['form_reason']}"
    ident = meta.get("identification")
    if ident and not ident["identified"]:
        s += f"\nWARNING: not identified: {ident['reason']}"
    src = result.meta.get("source")
    return s + (f"\nSource: {src}" if src else "")


def fit_contract(res: FitResult) -> dict:
    """The fit as `supervised fit --json` prints it (`SupervisedScalingLaw.contract`):
    parameters with their intervals (null where identification refused them), the fit's
    diagnostics, the calibrated interval's terms, the stack and the 1-D compute law."""
    ident = res.meta.get("identification", {})
    refused = ident.get("not_identified", {})
    cl = res.meta.get("compute_law")
    return {
        "params": res.params,
        "source": res.meta.get("source"),
        "n_runs": res.n_obs,
        "objective": res.objective,
        "n_starts": res.n_starts,
        "n_at_best": res.n_at_best,
        "converged": res.converged,
        "form": res.meta.get("form"),
        "form_reason": res.meta.get("form_reason"),
        "identified": ident.get("identified"),
        "identification": ident.get("reason"),
        "fixed": res.meta.get("fixed", {}),
        "ci": {k: None if k in refused else v for k, v in res.ci.items()},
        "not_identified": refused,
        "intervals": fit_interval_terms(res),
        # the forecast `predict` gives is this stack's (docs/trust.md), not `params`'s
        "stack": fit_stack_terms(res),
        "compute_law": {k: v for k, v in cl.items() if k != "theta"} if cl else None,
    }


def fit_stack_terms(res) -> dict | None:
    """The stack behind the fit's forecasts (weights, inner errors), or None (a single form)."""
    stk = res.meta.get("stack")
    if not stk:
        return None
    keys = ("weights", "inner_mae", "s_inner", "r_inner", "inner_forecasts")
    return {k: stk[k] for k in keys} | {"overtrain_ls_params": stk["overtrain_ls"]["params"]}


def fit_interval_terms(res) -> dict | None:
    """The calibrated interval's terms at 90% (docs/trust.md), or None for a point fit."""
    cal = res.meta.get("intervals")
    if not cal:
        return None
    out = {
        "max_compute": cal["max_compute"],
        "max_N": cal.get("max_N"),
        "max_D": cal.get("max_D"),
        "noise": cal.get("noise", 0.0),
        "n_bootstrap": len(res.bootstrap),
    }
    if "k" in cal:
        out.update(method=cal["method"], k_90=cal["k"], k_prior=cal.get("k_prior"))
        if "k_stack" in cal:  # the stacked interval's scale (of s_inner), used instead of k
            out.update(k_stack=cal["k_stack"])
        return out
    m, k, lam = iv.interval_terms(cal, 0.9)
    out.update(bias_slope=m, base_scale_90=lam, extrapolation_slope_90=k)
    return out
