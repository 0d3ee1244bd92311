"""The default loss forecast: three laws stacked by the fit's own inner backtest (docs/trust.md).

On real suites no single law wins everywhere (leave-one-suite-out, docs/trust.md): the
Chinchilla-type form is best where its exponents are identified (datablations, Gemstones), the
over-training law fitted by least squares (Gadre et al. 2024, Eq. 4) on isoFLOP ladders (Porian)
and the 1-D compute law E + A C^-a on checkpoint proxies (Pythia). The runs themselves say which
extrapolates well on *this* suite: hold out the largest one and the two largest fitted model
sizes, refit each candidate from scratch below the cut, and weight each by the inverse square of
its mean absolute log error on the held-out runs. The forecast is the weighted geometric mean

    log L(x) = sum_c w_c log L_c(x),   w_c ~ 1 / mean|e_c|^2

and the interval's extrapolation term is the root-mean-square error of that stacked forecast on
the same inner backtest (`s_inner`), scaled by k_stack from the real-suite prior:

    log L(x) +- z ( sqrt(s_noise^2 + s_boot(x)^2) + k_stack s_inner max(1, r / R_MEASURED) ).

r = max(0, ln C/C_max, ln N/N_max, ln D/D_max) as for a single form. The term is constant over
the distances the real suites measured (r <= R_MEASURED = 2, about their 95th percentile: the
errors there did not grow with r once s_inner was known, and every growth we tried lost coverage
on Gemstones leave-one-suite-out) and grows in proportion beyond them, where there is no evidence.

The over-training law enters only where the runs span at least MIN_RATIOS token ratios D/N:
its M-term a M^eta + b M^-eta has three parameters, and at two ratios a whole family of them
fits equally well (their forecasts off those ratios differed 2.8 vs 12.9 on one table, by row
order). A forecast at a D/N outside the fitted runs' range, further than the inner check's
held-out runs lay outside theirs, is untested: `untested_reach` counts that distance at the
single form's prior scale.

A stack needs at least MIN_SIZES model sizes and MIN_RUNS runs below an inner cut, and MIN_INNER
held-out runs over its cuts; with fewer, the fit keeps its single form and the prior k r term
(`calibration`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..backtest.suites import distance
from ..fitting.result import FitResult
from . import forms as fm

if TYPE_CHECKING:  # pandas loads where a table is read or built, not at import
    import pandas as pd

HOLDOUTS = (1, 2)  # inner cuts: the largest fitted size out, the two largest out
HELD_SHARE = (0.05, 0.10)  # ... or at least this share of the runs, whichever is more
MIN_SIZES = 3  # model sizes an inner fit needs below its cut
MIN_RUNS = 8
MIN_INNER = 5  # held-out runs below which the inner errors cannot set a scale or weights
R_MEASURED = 2.0  # ~95th percentile of the distance r of the suites' held-out forecasts
MAE_FLOOR = 1e-4  # a candidate that is exact on the inner backtest does not take every weight
CANDIDATES = ("form", "overtrain-ls", "compute-law")
MIN_RATIOS = 4  # token ratios D/N the over-training law's M-term (a, b, eta) needs, and one more
RATIO_GAP = 0.02  # decades: ratios closer than this (5%) are one ratio (rounded N or D)
FIX_NO_STACK = (
    "--fix / fixed=: forecasting with the pinned form alone, not the stack (the over-training "
    "and 1-D compute laws it averages with cannot take the form's pinned parameters)"
)


def inner_cuts(data: pd.DataFrame) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train mask, test mask) of each inner cut that leaves enough runs to fit: cut k holds
    out the k largest sizes, or more of the largest sizes until HELD_SHARE[k] of the runs are
    held out (runs that each have their own size would otherwise leave 1-2 held-out runs)."""
    N = data["N"].to_numpy(float)
    sizes = np.unique(N)
    out, seen = [], set()
    for k, share in zip(HOLDOUTS, HELD_SHARE):
        if sizes.size <= k:
            continue
        j = k
        while j < sizes.size and np.sum(N >= sizes[-j]) < share * N.size:
            j += 1
        tr = N < sizes[-j]
        if j in seen or np.unique(N[tr]).size < MIN_SIZES or tr.sum() < MIN_RUNS:
            continue
        seen.add(j)
        out.append((tr, ~tr))
    return out


def token_ratios(data: pd.DataFrame) -> int:
    """How many distinct token ratios D/N the runs have: sorted, a ratio more than RATIO_GAP
    decades above the first of the current group starts a new one (no chaining: checkpoints
    spread densely over decades are many ratios, not one)."""
    lr = np.sort(np.log10(data["D"].to_numpy(float) / data["N"].to_numpy(float)))
    n, start = 0, -np.inf
    for v in lr:
        if v > start + RATIO_GAP:
            n, start = n + 1, v
    return n


def _log_excess(lo: float, hi: float, v) -> tuple[np.ndarray, np.ndarray]:
    """ln of how far each value lies below `lo` and above `hi` (0 inside)."""
    v = np.asarray(v, float)
    return np.maximum(0.0, np.log(lo / v)), np.maximum(0.0, np.log(v / hi))


def ratio_reach(data: pd.DataFrame) -> dict:
    """The fitted runs' token-ratio range and how far below / above the training runs' range
    the inner check's held-out runs lay (the ratio distance it tested)."""
    ratio = data["D"].to_numpy(float) / data["N"].to_numpy(float)
    tested = [0.0, 0.0]
    for tr, te in inner_cuts(data):
        below, above = _log_excess(ratio[tr].min(), ratio[tr].max(), ratio[te])
        tested = [max(tested[0], float(below.max())), max(tested[1], float(above.max()))]
    return {"ratio_range": [float(ratio.min()), float(ratio.max())], "ratio_tested": tested}


def _point_fit(est, form: str, loss: str, fixed, data: pd.DataFrame) -> FitResult:
    """A point fit from scratch (the form's grid; no bootstrap, stack or compute law)."""
    m = type(est)(
        form,
        loss=loss,
        huber_delta=est.huber_delta,
        intervals=False,
        fixed=fixed,
        n_jobs=1,
        replicates="keep",
        stack=False,
    )
    return m._fit_form(fm.choose_form(form, data)[0], data, 0)


def _fitters(est, form: str):
    """Each candidate as fit(data) -> predict(N, D): the estimator's own form (its loss and
    pinned parameters), the over-training law by squared log error, the 1-D compute law."""

    def point(f, loss, fixed):
        def fit(d):
            res = _point_fit(est, f, loss, fixed, d)
            return lambda N, D: res.predict(N=N, D=D)

        return fit

    def compute_law(d):
        cl = fm.compute_law(d)
        return lambda N, D: fm.compute_law_predict(cl, N, D)

    return {
        # an automatic form is re-chosen on each inner cut's runs, as a user's fit would be
        "form": point(fm.AUTO if est.form == fm.AUTO else form, est.loss, est.fixed),
        "overtrain-ls": point("overtrain", "squared", None),
        "compute-law": compute_law,
    }


def inner_backtest(
    est, form: str, data: pd.DataFrame, n_ratios: int | None = None
) -> tuple[dict, np.ndarray] | None:
    """The inner backtest of a stack: ({candidate: log errors of its held-out runs, every cut
    concatenated}, distance r of each held-out run), or None where no inner cut is possible.
    Every inner fit starts from scratch (the form's grid), never from the full-data optimum.
    `n_ratios`: the runs' `token_ratios` where the caller has counted them already."""
    cuts = inner_cuts(data)
    if not cuts:
        return None
    fitters = _fitters(est, form)
    n_ratios = token_ratios(data) if n_ratios is None else n_ratios
    if n_ratios < MIN_RATIOS:  # its M-term is not identified: never weighted
        fitters["overtrain-ls"] = lambda d: lambda N, D: np.full(np.size(N), np.nan)
    errs = {c: [] for c in CANDIDATES}
    r_in = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for tr, te in cuts:
            train = data[tr].reset_index(drop=True)
            # one held-out forecast per configuration: seed replicates kept as rows
            # (`replicates="keep"`) are averaged, or they would count as independent errors
            test = (
                data[te]
                .assign(logl=np.log(data.loc[te, "loss"].to_numpy(float)))
                .groupby(["N", "D"], sort=False, as_index=False)["logl"]
                .mean()
            )
            N, D = test["N"].to_numpy(float), test["D"].to_numpy(float)
            y = test["logl"].to_numpy(float)
            for c, fit in fitters.items():
                errs[c].append(y - np.log(np.asarray(fit(train)(N, D), float).ravel()))
            r_in.append(distance(train, test))
    return {c: np.concatenate(v) for c, v in errs.items()}, np.concatenate(r_in)


def inner_mae(e: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Each candidate's mean |log error| on the inner backtest (inf where a forecast failed)."""
    return {
        c: float(np.mean(np.abs(v))) if np.all(np.isfinite(v)) else float("inf")
        for c, v in e.items()
    }


def stack_weights(e: Mapping[str, np.ndarray], noise: float = 0.0) -> dict[str, float]:
    """w_c ~ 1 / (mean|e_c|^2 - (2/pi) noise^2) over the inner backtest's errors (0 for a
    candidate that failed).

    Every candidate's held-out errors carry the same run-to-run scatter (`noise`, the fit's
    robust residual scale): on its own it gives mean|e| = sqrt(2/pi) noise (Gaussian), which is
    taken off so that well-fitted runs with scatter do not weigh a biased law like an unbiased
    one. The remainder is floored at (noise / sqrt(n))^2, the resolution of a mean over n
    held-out runs (and at MAE_FLOOR^2)."""
    mae = inner_mae(e)
    n = max(1, min(v.size for v in e.values()))
    floor = max(MAE_FLOOR, float(noise) / float(np.sqrt(n))) ** 2
    inv = {
        c: (1.0 / max(m * m - (2.0 / np.pi) * float(noise) ** 2, floor) if np.isfinite(m) else 0.0)
        for c, m in mae.items()
    }
    tot = sum(inv.values())
    return {c: inv[c] / tot for c in CANDIDATES}


def stacked_errors(e: Mapping[str, np.ndarray], weights: Mapping[str, float]) -> np.ndarray:
    """The stacked forecast's log errors on the inner backtest."""
    return sum(weights[c] * np.nan_to_num(e[c]) for c in CANDIDATES if weights[c] > 0)


def fit_stack(est, form: str, data: pd.DataFrame, noise: float = 0.0) -> dict | None:
    """The stack of a fit (stored as ``meta.stack``), or None where no inner cut is possible.
    `noise`: the runs' scatter (the form's robust residual scale), see `stack_weights`."""
    n_ratios = token_ratios(data)
    inner = inner_backtest(est, form, data, n_ratios)
    if inner is None:
        return None
    e, r_in = inner
    if min(v.size for v in e.values()) < MIN_INNER:
        return None
    mae = inner_mae(e)
    weights = stack_weights(e, noise)
    stacked = stacked_errors(e, weights)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ot = _point_fit(est, "overtrain", "squared", None, data)
    excluded = {}
    if n_ratios < MIN_RATIOS:
        excluded["overtrain-ls"] = (
            f"the runs have {n_ratios} token ratio(s) D/N; the over-training law's M-term needs "
            f">= {MIN_RATIOS}"
        )
    return {
        "weights": weights,
        "excluded": excluded,
        **ratio_reach(data),
        "inner_mae": {c: (m if np.isfinite(m) else None) for c, m in mae.items()},
        "s_inner": float(np.sqrt(np.mean(stacked**2))),
        "r_inner": float(np.median(r_in)),
        "inner_forecasts": int(stacked.size),
        "overtrain_ls": ot.to_dict(),
    }


def stacked_target(stack: Mapping, t_form: np.ndarray, compute_law: Mapping, X) -> np.ndarray:
    """sum_c w_c log L_c(x) given the form's own log forecast `t_form`."""
    w = stack["weights"]
    t = w["form"] * t_form
    if w["overtrain-ls"] > 0:
        ot = FitResult.from_dict(stack["overtrain_ls"])
        t = t + w["overtrain-ls"] * ot.law_.predict_target(np.asarray(ot.theta)[None, :], X)[0]
    if w["compute-law"] > 0:
        t = t + w["compute-law"] * np.log(fm.compute_law_predict(compute_law, X["N"], X["D"]))
    return t


def unit_term(s_inner, r) -> np.ndarray:
    """s_inner max(1, r / R_MEASURED): the inner backtest's RMS error, constant over the
    distances the real suites measured and growing in proportion beyond them."""
    return np.asarray(s_inner, float) * np.maximum(1.0, np.asarray(r, float) / R_MEASURED)


def extrapolation_term(
    stack: Mapping, r: np.ndarray, k_stack: float, excess=None, k_single: float = 0.0
) -> np.ndarray:
    """k_stack s_inner max(1, r / R_MEASURED), never below k_single x `excess`
    (`untested_reach`)."""
    term = k_stack * unit_term(float(stack["s_inner"]), r)
    return term if excess is None else np.maximum(term, k_single * np.asarray(excess, float))


def untested_reach(cal: Mapping, D, N=None, stack: Mapping | None = None) -> np.ndarray | None:
    """How far, in log units, a stacked forecast lies where the inner check tested nothing;
    None where neither direction below applies (runs whose D spans `forms.ONE_D_DECADES`
    decades or more, or a preset, which stores no D range; and no stack or no N to take D/N
    with).

    - Runs at one token count (D spanning less than `forms.ONE_D_DECADES`): how far D lies
      outside theirs. They carry nothing on how loss moves with D, and the inner check (which
      holds out sizes at that same D) tests nothing there: its error set a 3% interval around
      forecasts 14-25% too high (a Gemstones ladder at D = 20B forecast at 350B).
    - A token ratio D/N outside the fitted runs' range (`untested_ratio`).
    Over that distance the single form's prior k r applies instead (docs/trust.md)."""
    D = np.asarray(D, float)
    parts = []
    lo, hi = cal.get("min_D"), cal.get("max_D")
    if lo and hi and np.log10(hi / lo) < fm.ONE_D_DECADES:
        parts.append(np.maximum(*_log_excess(lo, hi, D)))
    ratio = untested_ratio(cal, D, N, stack)
    if ratio is not None:
        parts.append(ratio)
    return np.maximum.reduce(parts) if parts else None


def untested_ratio(cal: Mapping, D, N, stack: Mapping | None) -> np.ndarray | None:
    """How far D/N lies outside the fitted runs' range beyond how far the inner check's held-out
    runs lay outside theirs (`ratio_reach`) and beyond how far N or D alone lies outside the
    runs (that step is the distance r the stack's own term counts: a model trained 8x longer
    than its fitted checkpoints is 8x off in D and in D/N alike, and such forecasts held); None
    without a stack (presets, a named form, `--no-stack`, `--fix`, too few runs) or without N.
    A forecast inside the fitted N, D and C but off their ratios (r = 0) leans on the laws' N-D
    trade-off untested."""
    if N is None or not stack:
        return None
    D, N = np.asarray(D, float), np.asarray(N, float)
    below, above = _log_excess(*stack["ratio_range"], D / N)
    tb, ta = stack["ratio_tested"]
    box = np.zeros_like(below)
    for v, key in ((N, "N"), (D, "D")):
        lo_v, hi_v = cal.get(f"min_{key}"), cal.get(f"max_{key}")
        if lo_v and hi_v:
            box = np.maximum(box, np.maximum(*_log_excess(lo_v, hi_v, v)))
    return np.maximum(0.0, np.maximum(below - tb, above - ta) - box)


def describe(stack: Mapping) -> str:
    w = ", ".join(f"{c} {stack['weights'][c]:.2f}" for c in CANDIDATES)
    out = (
        f"Forecast: stack weighted by an inner backtest ({stack['inner_forecasts']} held-out "
        f"runs of the largest fitted sizes): {w}; inner RMS error {stack['s_inner']:.3g}"
    )
    for c, why in (stack.get("excluded") or {}).items():
        out += f"; {c} left out: {why}"
    return out


__all__ = [
    "CANDIDATES",
    "describe",
    "extrapolation_term",
    "untested_ratio",
    "untested_reach",
    "fit_stack",
    "inner_backtest",
    "stack_weights",
    "stacked_errors",
    "stacked_target",
    "token_ratios",
    "unit_term",
]
