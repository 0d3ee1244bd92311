"""Honest intervals for the distillation law (Busbridge et al. 2025, Eq. 8; Table 6 intervals).

- `multistart_bootstrap`: the percentile bootstrap of Table 6 (resample runs with replacement,
  refit), with every resample multi-started: the initialisation grid is re-scored on the
  resample's own data with the separable scorer of `fitting.py`, and its `n_polish` best starts
  are polished with L-BFGS-B together with the full-data optimum (warm start); the best wins.
  A resample can therefore leave the full-data basin, which a warm-start-only bootstrap cannot.
  Same resample rows as `uncertainty.bootstrap.bootstrap_fit` (`resample_indices` of the same
  child seeds), so the two modes are comparable draw for draw.
- `published_draws`: parameter draws consistent with published 90% intervals (for presets).
- intervals of log L_S from parameter draws plus run noise: `uncertainty.percentile.
  interval_from_draws`.
- `spread_status` / `variance_shares`: the bootstrap identifiability rule and each coefficient's
  share of a forecast's variance (docs/distill.md, "How far to trust it").
- the forecast intervals of a fitted `DistillationScalingLaw`, which its methods of the same
  names call: `parameter_draws`, `noise_scale`, `interval_basis`, `predict_interval` and the
  `uncertainty_report` at its `reference_forecast`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..errors import InputError
from ..fitting import refit_from
from ..fitting.result import FitResult
from ..laws import get_law
from ..laws.distillation import BUSBRIDGE_DISTILL_GRID, DistillationLaw
from ..uncertainty.bootstrap import attach_bootstrap, bootstrap_thetas
from ..uncertainty.normal import z_of
from ..uncertainty.percentile import interval_from_draws
from .fitting import score_product_grid
from .schema import LAW_NAME
from .teacher_uncertainty import shifted_log_draws, teacher_log_sd

# The bootstrap's per-resample grid: the App. F.2 axes thinned to their ends and middle (a
# product subgrid, so the separable scorer applies): 8,748 of the 216,000 starts (4%).
# Re-scoring it costs ~0.1 s per resample on 697 runs against ~3 s for the full grid;
# `boot_grid="full"` re-scores the whole App. F.2 grid (benchmarks/bench_distill_bootstrap.py).
BOOTSTRAP_GRID = {
    "log_A'": np.array([0.0, 10.0, 20.0]),
    "log_B'": np.array([0.0, 10.0, 20.0]),
    "alpha'": np.array([0.0, 0.5, 1.0]),
    "beta'": np.array([0.0, 0.5, 1.0]),
    "gamma'": np.array([0.0, 0.5, 1.0]),
    "c0": np.array([0.0, 1.0, 1.5]),
    "c1": np.array([0.0, 1.0]),
    "f1": BUSBRIDGE_DISTILL_GRID["f1"][[0, 2]],
    "log_d1": np.array([-1.0, 0.0, 1.0]),
}

# Coefficients that act as exponents (spread rule on the range, not the ratio; see below)
EXPONENTS = ("alpha'", "beta'", "gamma'", "c0", "c1", "f1")
DECADE = 10.0  # "spans more than a decade": P95 / P5 > 10 for positive scale coefficients


def bootstrap_grid(law: DistillationLaw, which, fixed_grid: Mapping[str, np.ndarray]):
    """The per-resample grid: "thin" (BOOTSTRAP_GRID), "full" (App. F.2) or a dict of axes;
    axes of fixed coefficients (single values in `fixed_grid`) are kept as fixed."""
    if isinstance(which, Mapping):
        g = {k: np.atleast_1d(np.asarray(v, float)) for k, v in which.items()}
    elif which == "full":
        g = law.default_grid()
    elif which == "thin":
        g = dict(BOOTSTRAP_GRID)
    else:
        raise InputError(f"boot_grid must be 'thin', 'full' or a dict of axes, got {which!r}")
    for k, v in fixed_grid.items():
        if np.size(v) == 1:
            g[k] = np.atleast_1d(np.asarray(v, float))
    return g


def multistart_bootstrap(
    law: DistillationLaw,
    X: Mapping[str, np.ndarray],
    y: np.ndarray,
    result: FitResult,
    *,
    n_boot: int,
    grid: Mapping[str, np.ndarray],
    n_polish: int = 4,
    level: float = 0.9,
    seed: int = 0,
    n_jobs: int = -1,
    bounds=None,
    n_warm: int = 2,
    maxiter: int = 2000,
    progress: bool = False,
    scheduler=None,
) -> FitResult:
    """Percentile bootstrap (Table 6: resample runs, refit, percentile intervals) with each
    resample multi-started from its own best `n_polish` grid starts plus the `n_warm` best
    distinct full-data optima. Fills `ci`, `ci_level`, `bootstrap` (fit-space thetas) and
    `meta["bootstrap"]` (mode, grid size, how often a resample's winner came from the grid).

    One task per resample through `uncertainty.bootstrap.bootstrap_thetas`, so `scheduler`
    (``local:N``, ``tcp://HOST:PORT``, a ``parallel.scheduler`` block or
    ``LMFORECAST_SCHEDULER``) runs them on Dask with the same thetas as the serial run.
    """
    bnds = list(bounds) if bounds is not None else law.bounds
    n_warm = min(max(1, n_warm), 1 + len(result.warm_starts))
    thetas, from_grid = bootstrap_thetas(
        law,
        X,
        y,
        result,
        n_boot=n_boot,
        seed=seed,
        n_jobs=n_jobs,
        bounds=bnds,
        progress=progress,
        n_starts=n_warm,
        n_polish=n_polish,
        grid=grid,
        grid_scorer=score_product_grid if n_polish else None,
        scheduler=scheduler,
        maxiter=maxiter,
        desc="bootstrap (multi-start)" if n_polish else None,
    )
    attach_bootstrap(law, result, thetas, level=level, seed=seed, n_polish=n_polish)
    n_grid = int(np.prod([np.size(grid[p.name]) for p in law.parameters])) if n_polish else 0
    result.meta["bootstrap"] = {
        "mode": "multi-start" if n_polish else "warm-start",
        "n_polish": int(n_polish),
        "n_warm": int(n_warm),
        "grid_starts": n_grid,
        "winner_from_grid": from_grid,
    }
    return result


def published_draws(
    law: DistillationLaw,
    params: Mapping[str, float],
    ci: Mapping[str, list[float]],
    ci_level: float,
    n: int = 1000,
    seed: int = 0,
) -> np.ndarray:
    """Fit-space parameter draws consistent with published intervals (no bootstrap samples).

    Each coefficient is drawn independently from a split normal around its estimate whose
    lower/upper halves put the published interval's ends at its quantiles (ci_level, e.g. 90%:
    the ends are estimate -/+ 1.645 sd on each side). Degenerate intervals (Table 6's c1 =
    (522.6, 522.6)) stay fixed. Independence ignores the correlations of the published
    bootstrap (unknown), so where the estimates sit on a ridge these draws are wider than the
    paper's own joint distribution would be.
    """
    rng = np.random.default_rng(seed)
    z = z_of(ci_level)
    Z = rng.standard_normal((n, len(law.parameters)))
    out = np.empty_like(Z)
    for j, p in enumerate(law.parameters):
        est = float(params[p.natural_name])
        lo, hi = ci.get(p.natural_name, (est, est))
        lo, hi = min(lo, est), max(hi, est)
        v = np.where(Z[:, j] > 0, est + Z[:, j] * (hi - est) / z, est + Z[:, j] * (est - lo) / z)
        if p.transform == "exp":
            v = np.maximum(v, est * 1e-12)
        out[:, j] = np.clip(p.from_natural(v), p.lower, p.upper)
    return out


def spread_status(nat: np.ndarray, names, exponents=EXPONENTS) -> dict[str, dict]:
    """The bootstrap identifiability rule, per coefficient, over natural-space draws (B, P).

    Every coefficient whose 5th percentile is positive: NOT identified when P95 / P5 > 10 (the
    resamples span more than a decade). Exponents (alpha', beta', gamma', c0, c1, f1) can sit at
    or near 0, where a ratio is meaningless, so they are also NOT identified when their 5-95%
    range is wider than their median, P95 - P5 > |P50| (for a positive exponent this fires from
    P95/P5 of about 3, so it is stricter than the decade rule); `exponents` names the
    quantities given the range rule (the identifiability report also passes the combinations
    gamma' log A', alpha' gamma', ... and the break location). Returns
    {name: {p05, p50, p95, ratio, identified}}.
    """
    q05, q50, q95 = np.nanquantile(np.asarray(nat, float), [0.05, 0.5, 0.95], axis=0)
    out = {}
    for j, k in enumerate(names):
        with np.errstate(all="ignore"):
            ratio = float(q95[j] / q05[j]) if q05[j] > 0 else float("inf")
        ok = bool(q05[j] <= 0 or ratio <= DECADE)
        if k in exponents:
            ok = ok and bool(q95[j] - q05[j] <= abs(q50[j]))
        elif q05[j] <= 0:
            ok = False
        out[k] = {
            "p05": float(q05[j]),
            "p50": float(q50[j]),
            "p95": float(q95[j]),
            "ratio": ratio,
            "identified": ok,
        }
    return out


def variance_shares(f: np.ndarray, theta: np.ndarray, names) -> dict[str, float]:
    """Each coefficient's share of a forecast's variance over the bootstrap draws.

    share_j = corr(log L_S, theta_j)^2 over the draws, theta in fit space (log A', log B',
    log d1, exponents as they are): the fraction of the log-forecast's variance that a linear
    function of theta_j alone explains. Shares of correlated coefficients overlap and need not
    sum to 1; a coefficient that does not move over the draws has share 0.
    """
    f = np.asarray(f, float)
    theta = np.asarray(theta, float)
    ok = np.isfinite(f)  # a draw whose forecast overflows says nothing linear
    f, theta = f[ok], theta[ok]
    out = {}
    if f.size < 3:
        return {k: 0.0 for k in names}
    fc = f - f.mean()
    sf = np.sqrt(np.sum(fc**2))
    for j, k in enumerate(names):
        x = theta[:, j] - theta[:, j].mean()
        sx = np.sqrt(np.sum(x**2))
        if sf == 0 or sx <= 1e-12 * (1 + abs(theta[:, j].mean())):
            out[k] = 0.0
        else:
            out[k] = float(min(1.0, (np.sum(fc * x) / (sf * sx)) ** 2))
    return out


__all__ = [
    "BOOTSTRAP_GRID",
    "bootstrap_grid",
    "multistart_bootstrap",
    "published_draws",
    "spread_status",
    "variance_shares",
]


#: What every distillation interval holds fixed (said in `interval_basis`). Where the teacher
#: loss comes from a teacher's size and tokens, `teacher_uncertainty.teacher_basis` adds a line.
SUPERVISED_FIXED = "supervised law (L~_S) at its point estimate"


# ---- the forecast intervals of a fitted `DistillationScalingLaw` (its methods call these) ----
def parameter_draws(res: FitResult, published: np.ndarray | None = None) -> np.ndarray:
    """Fit-space parameter draws (B, 9) behind every interval.

    A fit: its (multi-started) bootstrap refits. A preset: 1,000 draws consistent with the
    published 90% intervals (`published_draws`, seed 0; `published`, when given, are those
    draws computed before and are returned as they are). Raises InputError when there are
    neither (a fit made with bootstrap=0).
    """
    if res.bootstrap:
        return np.asarray(res.bootstrap, float)
    if res.ci and res.ci_level:
        if published is None:
            published = published_draws(get_law(LAW_NAME), res.params, res.ci, res.ci_level)
        return published
    raise InputError(
        "this distillation fit has no bootstrap samples, so its forecasts have no interval: "
        "refit with bootstrap > 0 (CLI: distill fit --bootstrap B)"
    )


def interval_basis(res: FitResult) -> str:
    """One line saying what the intervals of the fit `res` contain (printed by the CLI, in its
    JSON)."""
    if res.bootstrap:
        b = res.meta.get("bootstrap") or {}
        return (
            f"{len(res.bootstrap)} {b.get('mode', 'bootstrap')} bootstrap refits + run noise "
            f"(sd {noise_scale(res):.3g} on log L_S); excludes model-form error; "
            f"{SUPERVISED_FIXED}"
        )
    if res.ci:
        return (
            "draws from the published intervals (independent); no run noise, no model-form "
            f"or extrapolation error; {SUPERVISED_FIXED}"
        )
    return "none (no bootstrap samples)"


def noise_scale(res: FitResult) -> float:
    """Run-to-run noise sd on log L_S added to prediction intervals: the fit's robust
    residual scale (1.4826 MAD of the log residuals) times sqrt(n / (n - p)), p the free
    coefficients (in-sample residuals understate new-run noise, badly with few runs); for
    fits of at most LOO_MAX_RUNS runs, at least the leave-one-out RMS error (`loo_noise`,
    a within-data backtest); 0 for a preset (Table 6 reports no residual scale)."""
    s = float(res.residual_scale or 0.0)
    p = len(res.params) - len(res.meta.get("fixed") or {})
    if res.n_obs > p:
        s *= float(np.sqrt(res.n_obs / (res.n_obs - p)))
    loo = (res.meta.get("noise") or {}).get("loo_rms")
    return max(s, float(loo)) if loo is not None else s


def log_draws(model, N_S, D_S, L_T) -> tuple[np.ndarray, tuple]:
    """log L_S (B, n) of a fitted `DistillationScalingLaw` over its parameter draws (NaN where a
    draw overflows), and the broadcast shape of the inputs."""
    N_S, D_S, L_T = np.broadcast_arrays(*(np.asarray(v, float) for v in (N_S, D_S, L_T)))
    X = {k: v.ravel() for k, v in model._inputs(N_S, D_S, L_T).items()}
    law = get_law(LAW_NAME)
    with np.errstate(all="ignore"):
        T = law.predict_target(model.parameter_draws(), X)
    return np.where(np.isfinite(T), T, np.nan), N_S.shape


def predict_interval(
    model, N_S, D_S, teacher_loss, N_T, D_T, level: float, kind: str
) -> tuple[np.ndarray, np.ndarray]:
    """Interval (lo, hi) for the student loss L_S of a fitted `DistillationScalingLaw` at
    `level`, vectorised (`level` and `kind` checked by the caller).

    kind="prediction": where a new run's measured L_S should fall: the spread of Eq. 8 over the
    parameter draws (`parameter_draws`) convolved with the run noise `noise_scale` on log L_S.
    kind="confidence": the parameter spread only. Neither includes model-form error: how far
    the law itself is off beyond the fitted range (docs/distill.md, "How far to trust it"). The
    supervised law giving L~_S is held at its point estimate; a teacher given by N_T, D_T (a
    forecast L_T) is drawn log-normally above E from that law's 90% interval (its forecast
    interval; bootstrap only for kind="confidence"), paired with the parameter draws
    (`teacher_uncertainty`); a measured `teacher_loss` is taken as it is.
    """
    s_T = None
    if teacher_loss is None:
        if N_T is None or D_T is None:
            raise InputError("give the teacher's loss, or its parameters and tokens")
        teacher_loss = model.teacher_loss(N_T, D_T)
        s_T = teacher_log_sd(model, N_T, D_T, kind)
    model.predict(N_S, D_S, teacher_loss)  # validation and the domain warning
    if s_T is not None and np.any(s_T > 0):  # L_T is a forecast: draw the teacher too
        T, shape = shifted_log_draws(model, N_S, D_S, teacher_loss, s_T)
    else:
        T, shape = log_draws(model, N_S, D_S, teacher_loss)
    sigma = model.noise_scale_ if kind == "prediction" else 0.0
    lo, hi = interval_from_draws(T, sigma, level)
    return np.exp(lo).reshape(shape), np.exp(hi).reshape(shape)


def reference_forecast(data: pd.DataFrame | None) -> dict[str, float]:
    """The forecast the fit report decomposes: beyond the fitted runs `data`, as a user would
    ask, at 4x the largest student, 4x the most distillation tokens and the strongest teacher
    (a fixed point for a fit without its runs: a preset or a loaded fit)."""
    if data is None:
        return {"N_S": 1e10, "D_S": 2e11, "L_T": 2.0}
    return {
        "N_S": 4.0 * float(data["N_S"].max()),
        "D_S": 4.0 * float(data["D_S"].max()),
        "L_T": float(data["L_T"].min()),
    }


def uncertainty_report(model, N_S=None, D_S=None, L_T=None) -> dict:
    """Bootstrap spread and identifiability of each coefficient of a fitted
    `DistillationScalingLaw`, and its share of the variance of log L_S at one forecast (default
    its `reference_forecast()`).

    Rule (`spread_status`): a scale coefficient whose resampled values span more than a decade
    (P95/P5 > 10), or an exponent whose 5-95% range exceeds its median, is NOT identified.
    Share (`variance_shares`): corr(log L_S, theta_j)^2 over the draws. Empty without bootstrap
    samples.
    """
    res = model.result_
    if not res.bootstrap:
        return {}
    ref = model.reference_forecast()
    N_S = ref["N_S"] if N_S is None else float(N_S)
    D_S = ref["D_S"] if D_S is None else float(D_S)
    L_T = ref["L_T"] if L_T is None else float(L_T)
    law = get_law(LAW_NAME)
    th = model.parameter_draws()
    nat = np.array([[p.to_natural(v) for p, v in zip(law.parameters, t)] for t in th])
    spread = spread_status(nat, law.natural_names)
    T, _ = log_draws(model, N_S, D_S, L_T)
    shares = variance_shares(T[:, 0], th, law.natural_names)
    fixed = set((res.meta.get("fixed") or {}).keys())
    for k in spread:
        spread[k]["share"] = shares[k]
        if k in fixed:
            spread[k]["identified"] = True
    lo, hi = interval_from_draws(T, model.noise_scale_, res.ci_level or 0.9)
    return {
        "forecast": {"N_S": N_S, "D_S": D_S, "L_T": L_T},
        "sd_log_forecast": float(np.std(T[:, 0])),
        "interval": [float(np.exp(lo[0])), float(np.exp(hi[0]))],
        "coefficients": spread,
    }


LOO_MAX_RUNS = 40  # fits this small also estimate the run noise by leave-one-out


def intervals_in_chunks(model, N_S, D_S, L_T, level, chunk: int, N_T=None, D_T=None):
    """`model.predict_interval` over teachers in chunks of about `chunk` (teachers x draws)
    elements, so memory stays bounded; with N_T, D_T the teachers' losses are forecasts and
    get the teacher term (L_T is then recomputed from them, the same values)."""
    n_draws = max(1, len(model.parameter_draws()))
    step = max(1, int(chunk) // n_draws)
    lo, hi = np.empty(len(D_S)), np.empty(len(D_S))
    for a in range(0, len(D_S), step):
        b = min(a + step, len(D_S))
        kw = {"teacher_loss": L_T[a:b]} if N_T is None else {"N_T": N_T[a:b], "D_T": D_T[a:b]}
        lo[a:b], hi[a:b] = model.predict_interval(np.full(b - a, N_S), D_S[a:b], level=level, **kw)
    return lo, hi


def loo_noise(law, X, y, res: FitResult, loss, bounds) -> dict:
    """Leave-one-out errors of log L_S: refit without each run (polished from the full fit's
    optima) and predict it. Returns {"loo_rms", "loo_max", "n"}; with few runs the in-sample
    residuals say almost nothing about a new run's error (the zoo's 6-run fits interpolate)."""
    starts = np.array(([res.theta] + res.warm_starts)[:2], float)
    t = law.target_of(y)
    errs = []
    for i in range(y.size):
        keep = np.arange(y.size) != i
        th, _ = refit_from(
            law, {k: v[keep] for k, v in X.items()}, y[keep], starts, loss=loss, bounds=bounds
        )
        with np.errstate(all="ignore"):
            pred = law.predict_target(th[None, :], {k: v[i : i + 1] for k, v in X.items()})
        errs.append(float(pred[0, 0] - t[i]))
    e = np.array(errs)
    e = e[np.isfinite(e)]
    return {
        "loo_rms": float(np.sqrt(np.mean(e**2))) if e.size else None,
        "loo_max": float(np.max(np.abs(e))) if e.size else None,
        "n": int(e.size),
    }


#: Fewer bootstrap resamples than this give intervals too rough to read (with 4, point
#: estimates fell outside their own 90% intervals and nothing said so).
MIN_RELIABLE_BOOTSTRAP = 20


def tiny_bootstrap_note(n_boot: int, params: Mapping, ci: Mapping, level: float) -> str | None:
    """The warning a fit with 0 < `n_boot` < MIN_RELIABLE_BOOTSTRAP resamples gives, naming
    the coefficients whose estimate lies outside its own percentile interval; None otherwise."""
    if not 0 < n_boot < MIN_RELIABLE_BOOTSTRAP:
        return None
    outside = [k for k, (lo, hi) in (ci or {}).items() if k in params and not lo <= params[k] <= hi]
    return (
        f"only {n_boot} bootstrap resamples: the {100 * level:g}% intervals are rough"
        + (f" ({', '.join(outside)} outside their own interval)" if outside else "")
        + f"; use {MIN_RELIABLE_BOOTSTRAP} or more (default 32)"
    )
