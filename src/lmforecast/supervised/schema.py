"""Schema of what a saved supervised fit carries beyond its `FitResult`: the interval
calibration and model average in ``meta`` (docs/trust.md), and the
prior-calibrated interval (k, k_prior), the form choice, the identification verdict, the 1-D
compute law shown beside the forecast, pinned parameters and the replicate spread."""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..fitting.schema import check_fit_result
from ..laws import get_law
from ..store import Checker

PAIR_KEYS = ("log_error", "log_ratio", "noise", "weight", "cutoff")
WEIGHT_SUM_TOL = 1e-9  # stack weights as saved sum to 1 within rounding (~1e-16)


# constructor arguments a saved supervised fit keeps (meta.config): `load` rebuilds from them
CONFIG_ARGS = (
    "form",
    "loss",
    "huber_delta",
    "bootstrap",
    "intervals",
    "calibration",
    "fixed",
    "replicates",
    "ci_level",
    "seed",
    "stack",
)


def check_supervised_meta(d: Mapping, where: str) -> None:
    """The interval calibration and model average a supervised fit carries in ``meta``
    (docs/trust.md): numbers where numbers are read, equal-length backtest pairs, positive
    compute; components of an average are full `FitResult`s."""
    c = Checker(where)
    meta = c.obj(d.get("meta", {}), "meta")
    cal = meta.get("intervals")
    if cal is not None:
        cal = c.obj(cal, "meta.intervals")
        c.num(
            c.get(cal, "max_compute", "meta.intervals"),
            "meta.intervals.max_compute",
            lo=0.0,
            lo_open=True,
        )
        for k in ("max_N", "max_D", "min_compute", "min_N", "min_D"):
            if cal.get(k) is not None:
                c.num(cal[k], f"meta.intervals.{k}", lo=0.0, lo_open=True)
        c.num(cal.get("noise", 0.0), "meta.intervals.noise", lo=0.0)
        if cal.get("ratio_range") is not None:  # optional: the fitted runs' D/N span
            pair = c.nums(cal["ratio_range"], "meta.intervals.ratio_range", length=2, lo=1e-300)
            if pair[0] > pair[1]:
                c.fail(
                    "meta.intervals.ratio_range",
                    "must be [smallest, largest] D/N",
                    cal["ratio_range"],
                )
        c.num(cal.get("bias_slope", 0.0), "meta.intervals.bias_slope")
        c.num(cal.get("k_fixed", 0.0), "meta.intervals.k_fixed", lo=0.0)
        if cal.get("pairs") is not None:
            pairs = c.obj(cal["pairs"], "meta.intervals.pairs")
            n = None
            for k in PAIR_KEYS[:4]:
                v = c.nums(c.get(pairs, k, "meta.intervals.pairs"), f"meta.intervals.pairs.{k}", n)
                n = len(v)
            for k in ("noise", "weight"):
                if any(x < 0 for x in pairs[k]):
                    c.fail(f"meta.intervals.pairs.{k}", "must hold numbers >= 0")
            if "cutoffs" in cal:
                c.nums(cal["cutoffs"], "meta.intervals.cutoffs")
        if cal.get("param_samples") is not None:
            c.matrix(cal["param_samples"], "meta.intervals.param_samples", len(d["theta"]))
    alloc = meta.get("allocation")  # the runs' isoFLOP optima about the law's N* (allocation.py)
    if alloc is not None:
        alloc = c.obj(alloc, "meta.allocation")
        c.keys(alloc, ("rms", "n"), "meta.allocation")
        c.num(c.get(alloc, "rms", "meta.allocation"), "meta.allocation.rms", lo=0.0)
        c.int_(c.get(alloc, "n", "meta.allocation"), "meta.allocation.n", lo=3)
    avg = meta.get("average")
    if avg is not None:
        avg = c.obj(avg, "meta.average")
        weights = c.obj(c.get(avg, "weights", "meta.average"), "meta.average.weights")
        comps = c.obj(c.get(avg, "components", "meta.average"), "meta.average.components")
        for f, w in weights.items():
            c.num(w, f"meta.average.weights.{f}", lo=0.0)
            if f not in comps:
                c.fail(f"meta.average.components.{f}", "is missing (every weighted form needs one)")
            check_fit_result(comps[f], where, f"meta.average.components.{f}")


def check_trust_meta(d: Mapping, where: str) -> None:
    c = Checker(where)
    meta = c.obj(d.get("meta", {}), "meta")
    cal = meta.get("intervals")
    if isinstance(cal, Mapping) and "k" in cal:
        c.num(cal["k"], "meta.intervals.k", lo=0.0)
        c.num(c.get(cal, "noise", "meta.intervals"), "meta.intervals.noise", lo=0.0)
        if cal.get("k_prior") is not None:
            c.num(cal["k_prior"], "meta.intervals.k_prior", lo=0.0)
        c.str_(c.get(cal, "method", "meta.intervals"), "meta.intervals.method")
        if cal.get("k_stack") is not None:
            c.num(cal["k_stack"], "meta.intervals.k_stack", lo=0.0)
    if "identification" in meta:
        ident = c.obj(meta["identification"], "meta.identification")
        c.bool_(c.get(ident, "identified", "meta.identification"), "meta.identification.identified")
        c.str_(c.get(ident, "reason", "meta.identification"), "meta.identification.reason")
        for k, v in c.obj(ident.get("not_identified", {}), "meta.identification").items():
            c.str_(v, f"meta.identification.not_identified.{k}")
    if "form_reason" in meta:
        c.str_(meta["form_reason"], "meta.form_reason")
    if "config" in meta:  # the constructor arguments `load` rebuilds the estimator from
        cfg = c.obj(meta["config"], "meta.config")
        p = "meta.config"
        c.keys(cfg, CONFIG_ARGS, p)
        c.str_(c.get(cfg, "form", p), f"{p}.form")
        c.str_(c.get(cfg, "loss", p), f"{p}.loss", ("huber", "squared"))
        c.num(c.get(cfg, "huber_delta", p), f"{p}.huber_delta", lo=0.0, lo_open=True)
        c.int_(c.get(cfg, "bootstrap", p), f"{p}.bootstrap", none=True)
        c.str_(c.get(cfg, "calibration", p), f"{p}.calibration", ("prior", "prior+backtest"))
        for k, v in c.obj(c.get(cfg, "fixed", p), f"{p}.fixed").items():
            c.num(v, f"{p}.fixed.{k}")
        c.str_(c.get(cfg, "replicates", p), f"{p}.replicates", ("mean", "keep"), none=True)
        c.num(
            c.get(cfg, "ci_level", p), f"{p}.ci_level", lo=0.0, hi=1.0, lo_open=True, hi_open=True
        )
        c.int_(c.get(cfg, "seed", p), f"{p}.seed", lo=None)
        for k in ("intervals", "stack"):
            c.bool_(c.get(cfg, k, p), f"{p}.{k}")
    if "compute_law" in meta:
        _check_compute_law(c, meta["compute_law"])
    if "fixed" in meta:
        fx = c.obj(meta["fixed"], "meta.fixed")
        for k, v in fx.items():
            c.num(v, f"meta.fixed.{k}")
    if "stack" in meta:
        _check_stack(c, meta["stack"], where)
        c.get(meta, "compute_law", "meta")  # the stack's third member
    if "replicate_sd" in meta:
        c.num(meta["replicate_sd"], "meta.replicate_sd", lo=0.0)


def _check_stack(c: Checker, stack, where: str) -> None:
    """``meta.stack`` (`supervised.stack`): weights of the three candidates, the inner
    backtest's RMS error and distance, and the over-training law's full fit."""
    stk = c.obj(stack, "meta.stack")
    w = c.obj(c.get(stk, "weights", "meta.stack"), "meta.stack.weights")
    candidates = ("form", "overtrain-ls", "compute-law")
    c.keys(w, candidates, "meta.stack.weights")
    for name in candidates:
        c.num(c.get(w, name, "meta.stack.weights"), f"meta.stack.weights.{name}", lo=0.0)
    total = math.fsum(float(w[name]) for name in candidates)
    if not abs(total - 1.0) <= WEIGHT_SUM_TOL:  # the stack is a weighted mean of log forecasts
        c.fail("meta.stack.weights", f"must sum to 1 (they sum to {total:.10g})")
    for k in ("s_inner", "r_inner"):
        c.num(c.get(stk, k, "meta.stack"), f"meta.stack.{k}", lo=0.0)
    c.num(c.get(stk, "inner_forecasts", "meta.stack"), "meta.stack.inner_forecasts", lo=1.0)
    for k, lo in (("ratio_range", 1e-300), ("ratio_tested", 0.0)):
        pair = c.nums(c.get(stk, k, "meta.stack"), f"meta.stack.{k}", length=2, lo=lo)
        if k == "ratio_range" and pair[0] > pair[1]:
            c.fail("meta.stack.ratio_range", "must be [smallest, largest] D/N", stk[k])
    excluded = c.obj(stk.get("excluded", {}), "meta.stack.excluded")
    for name, why in excluded.items():
        if name not in candidates or not isinstance(why, str):
            c.fail(f"meta.stack.excluded.{name}", "must name a stack candidate with a reason", why)
    check_fit_result(c.get(stk, "overtrain_ls", "meta.stack"), where, "meta.stack.overtrain_ls")


def _check_compute_law(c: Checker, cl) -> None:
    """``meta.compute_law`` (`forms.compute_law`): the 1-D law L = E + A C^-a shown beside the
    forecast (E, A > 0, a finite) and the fit-space theta (log A, log E, a) the stack forecasts
    with; the two must say the same law (relative 1e-9), so what is shown is what is used."""
    p = "meta.compute_law"
    cl = c.obj(cl, p)
    c.keys(cl, ("E", "A", "a", "theta"), p)
    shown = {k: c.num(c.get(cl, k, p), f"{p}.{k}", lo=0.0, lo_open=True) for k in ("E", "A")}
    shown["a"] = c.num(c.get(cl, "a", p), f"{p}.a")
    theta = c.nums(c.get(cl, "theta", p), f"{p}.theta", 3)
    law = get_law("compute")
    for k, v in law.to_natural(theta).items():
        if not math.isclose(float(v), shown[k], rel_tol=1e-9, abs_tol=1e-300):
            c.fail(f"{p}.{k}", f"disagrees with {p}.theta, which gives {float(v):.10g}", shown[k])
