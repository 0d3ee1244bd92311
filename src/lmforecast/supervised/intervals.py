"""Calibrated forecast intervals for supervised laws (docs/trust.md).

A forecast's log-space interval at compute C is

    [log L_hat(x) - z s - max(0, -m r),  log L_hat(x) + z s + max(0, m r)],
    s = sqrt(lambda^2 (s_boot(x)^2 + s_noise^2) + (k r)^2),
    r = max(0, ln(C / C_max), ln(N / N_max), ln(D / D_max))

- s_boot(x): spread of the forecast over multi-start bootstrap refits (half the 16-84 percentile
  range of the resampled log forecasts, `uncertainty.percentile.quantile_sd`): what the data
  cannot pin down about the parameters;
- s_noise: the fit's robust residual scale (a new run scatters around the law);
- m r and k r: the systematic drift (it widens the side it points to, so the point forecast
  always lies inside its interval) and the extra scatter of forecasts that grow with the distance
  r beyond the fitted runs, i.e. what the form gets wrong when it extrapolates. r is the largest
  log excess over the fitted range along compute, model size or data: a 2.8B checkpoint with
  less compute than the largest fitted run is still an extrapolation in N (presets, which do
  not state their runs' largest token count, measure compute and N). m and k are
  calibrated on the user's OWN runs by a rolling-origin backtest (`lmforecast.backtest`): fit
  below a compute cutoff, forecast above, for several cutoffs, per unit of the compute distance
  ln(C / C_max) that backtest measures. Counting N and D as well therefore only ever widens
  an interval.
  m is the weighted median of e_i / r_i (e_i = log truth - log forecast); k is the smallest
  value for which the interval above (with each backtest fit's own s_noise and delta-method
  parameter spread in place of s_noise and s_boot) covers a fraction
  `level` of the backtest forecasts, each cutoff weighted by its number of fitted runs and
  shared equally by its forecasts (a weighted quantile of the
  per-forecast k each would need). Robust by construction: a few wild early-cutoff forecasts move
  a quantile, not a mean, and forecasts already covered by noise need k = 0.
  lambda in [0.3, 1] rescales the base (parameter + run) spread: both the bootstrap and the
  delta method overstate the errors of flexible forms extrapolating (a shrinkage the backtest
  shows); (lambda, k) is the pair with the narrowest mean backtest interval at that coverage.

Nothing here fits: it turns stored bootstrap thetas and stored backtest pairs into intervals.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np

from ..errors import InputError, first_time
from ..uncertainty.normal import z_of
from ..uncertainty.percentile import quantile_sd, weighted_quantile

#: internal names of the public kinds "prediction", "confidence", "bootstrap", in that order
KINDS = ("forecast", "confidence", "prediction")


def distance(compute, cal: Mapping, N=None, D=None) -> np.ndarray:
    """r = max(0, ln(C / C_max), ln(N / N_max), ln(D / D_max)): how far a forecast lies beyond
    the fitted runs in log units. The N and D terms count only where `cal` stores ``max_N`` /
    ``max_D`` (and N, D are given). Below the fitted runs (fits that store
    ``min_compute``, ``min_N``, ``min_D``) the distance counts the same way: ln(C_min / C), ..."""
    compute = np.asarray(compute, float)
    r = np.log(compute / float(cal["max_compute"]))
    for key, v in (("max_N", N), ("max_D", D)):
        if v is not None and cal.get(key):
            r = np.maximum(r, np.log(np.asarray(v, float) / float(cal[key])))
    for key, v in (("min_compute", compute), ("min_N", N), ("min_D", D)):
        if v is not None and cal.get(key):
            r = np.maximum(r, np.log(float(cal[key]) / np.asarray(v, float)))
    return np.maximum(0.0, r)


def bias_slope(pairs: Mapping) -> float:
    """m: weighted median of e_i / r_i over backtest forecasts (weights w_i r_i)."""
    e = np.asarray(pairs["log_error"], float)
    r = np.asarray(pairs["log_ratio"], float)
    w = np.asarray(pairs["weight"], float) * r
    ok = r > 0
    if not ok.any():
        return 0.0
    return weighted_quantile(e[ok] / r[ok], w[ok], 0.5)


LAMBDAS = np.linspace(0.3, 1.0, 15)


def scale_and_slope(pairs: Mapping, level: float, m: float) -> tuple[float, float]:
    """(lambda, k) at `level`: for each base scale lambda in LAMBDAS the smallest k covering
    `level` of the backtest forecasts (`extrapolation_slope`), keeping the pair with the
    narrowest mean interval. lambda <= 1 shrinks the base spread where the backtest shows it
    overstates the errors (it never widens it: k does that)."""
    best = None
    r = np.asarray(pairs["log_ratio"], float)
    b = np.asarray(pairs["noise"], float)
    w = np.asarray(pairs["weight"], float)
    for lam in LAMBDAS:
        k = extrapolation_slope(pairs, level, m, lam)
        width = float(np.sum(w * np.sqrt((lam * b) ** 2 + (k * r) ** 2)))
        if best is None or width < best[0] - 1e-15:
            best = (width, float(lam), k)
    return best[1], best[2]


def extrapolation_slope(pairs: Mapping, level: float, m: float, lam: float = 1.0) -> float:
    """k at `level`: weighted `level`-quantile of the k each backtest forecast needs to be
    covered by the interval of `log_interval` (drift |m| r added on the side of sign(m), base
    spread scaled by `lam`)."""
    z = z_of(level)
    e = np.asarray(pairs["log_error"], float)
    r = np.asarray(pairs["log_ratio"], float)
    s = lam * np.asarray(pairs["noise"], float)
    w = np.asarray(pairs["weight"], float)
    shift = np.abs(m) * r
    same = np.sign(e) == np.sign(m)
    d = np.where(same, np.maximum(np.abs(e) - shift, 0.0), np.abs(e)) / z
    need = np.where(d <= s, 0.0, np.sqrt(np.maximum(d * d - s * s, 0.0)) / np.maximum(r, 1e-300))
    need = np.where((d > s) & (r <= 0), np.inf, need)
    k = weighted_quantile(need, w, level)
    return k if np.isfinite(k) else float(np.max(need[np.isfinite(need)], initial=0.0))


def interval_terms(cal: Mapping, level: float) -> tuple[float, float, float]:
    """(m, k, lambda) for `level` from a stored calibration: backtest pairs, or fixed values
    (presets: lambda = 1)."""
    if cal.get("pairs"):
        m = float(cal.get("bias_slope", 0.0))
        lam, k = scale_and_slope(cal["pairs"], level, m)
        return m, k, lam
    return float(cal.get("bias_slope", 0.0)), float(cal.get("k_fixed", 0.0)), 1.0


def log_interval(
    t_point: np.ndarray,
    t_boot: np.ndarray | None,
    compute: np.ndarray,
    cal: Mapping,
    level: float,
    N=None,
    D=None,
    lower_bound: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) in target (log) space from the point, bootstrap and calibration terms
    (r = `distance(compute, cal, N, D)`). `lower_bound` (presets: log of the smallest E among
    their parameter draws from the published CIs) marks them as independent draws: the lower
    end is then kept within the draws' own support, the lowest draw at each point less the
    interval's other terms (run noise, the distance term), and never below `lower_bound` (no
    draw reaches a loss below its own E). The log-symmetric spread of heavily right-skewed
    draws put besiroglu2024's lower end at 1.17 under E's CI [1.70, 1.94]."""
    z = z_of(level)
    if t_boot is not None and len(t_boot):
        s_boot = quantile_sd(t_boot)
    else:
        s_boot = np.zeros_like(t_point)
    r = distance(compute, cal, N, D)
    m, k, lam = interval_terms(cal, level)
    s = np.sqrt(lam**2 * (s_boot**2 + float(cal.get("noise", 0.0)) ** 2) + (k * r) ** 2)
    lo, hi = t_point - z * s - np.maximum(0.0, -m * r), t_point + z * s + np.maximum(0.0, m * r)
    if lower_bound is not None:
        if t_boot is not None and len(t_boot):
            rest = np.sqrt(lam**2 * float(cal.get("noise", 0.0)) ** 2 + (k * r) ** 2)
            support = np.nanmin(t_boot, axis=0) - z * rest - np.maximum(0.0, -m * r)
            lo = np.maximum(lo, support)
        lo = np.maximum(lo, lower_bound)
    return lo, hi


ONE_SIGMA = math.erf(1 / math.sqrt(2))  # level whose z is 1: a backtest's noise-only band


def _public(kind: str) -> str:
    return ("prediction", "confidence", "bootstrap")[KINDS.index(kind)]


def bootstrap_interval(est, N, D, level: float, kind: str):
    """(lower, upper) loss of a fitted `SupervisedScalingLaw` over its bootstrap refits:
    percentiles (kind="confidence"), plus the residual scale ("prediction", and "forecast" for a
    fit without a calibration, which warns once: not calibrated); a stacked fit's are moved to
    the stack's forecast. InputError where there are no refits (presets: their published CIs
    give only kind="forecast")."""
    res = est.result_
    if kind != "forecast" and res.meta.get("average"):
        raise InputError("an averaged fit has only kind='prediction' intervals")
    if not res.bootstrap:
        if res.meta.get("preset"):
            raise InputError(
                f"the {res.meta['preset']!r} preset carries only a forecast interval, built from "
                f"its published CIs: use kind='prediction', not {_public(kind)!r} (which needs "
                "bootstrap refits of a fit to runs)"
            )
        if kind == "forecast":
            raise InputError("this fit has no intervals: fit with intervals=True")
        raise InputError(
            f"kind={_public(kind)!r} needs bootstrap refits, and this fit has none "
            "(bootstrap=0): refit with bootstrap >= 2"
        )
    if kind == "forecast" and first_time(est, "bootstrap-only"):
        warnings.warn(
            "this fit has no calibrated forecast interval (intervals=False, --no-intervals): the "
            "interval given is its bootstrap's prediction interval (parameter spread + residual "
            "scale) only, not calibrated for extrapolation and typically several times narrower "
            "than the calibrated one (docs/trust.md); refit with intervals for that",
            stacklevel=3,
        )
    k = "prediction" if kind == "forecast" else kind
    lo, hi = res.predict_interval(level=level, kind=k, N=N, D=D)
    if res.meta.get("stack"):  # the form's spread around the stack's forecast
        shift = est.predict(N, D) / res.predict(N=N, D=D)
        lo, hi = lo * shift, hi * shift
    return lo, hi
