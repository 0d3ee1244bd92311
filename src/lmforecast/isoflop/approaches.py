"""Hoffmann et al. (2022) Approaches 1 and 2 for compute-optimal allocation, with bootstrap.

Approach 2 (Sec. 3.2): for every compute budget C, fit a parabola to loss against log N over
the isoFLOP profile; its vertex is N*(C), D*(C) = C/(6 N*). Approach 1 (Sec. 3.1): the lowest
loss reached at each budget; Hoffmann et al. take the envelope of training curves, on a table
of final isoFLOP runs this is the best run of each budget (so N* lies on the grid of sizes).
Both then fit the power laws N*(C) = G_N C^a and D*(C) = G_D C^b by least squares in log-log.
Intervals: percentiles over `n_boot` resamples of the runs within each budget (each budget
keeps its size; a resample with fewer than 3 distinct sizes or a concave parabola is redrawn
once, else dropped and counted in `n_dropped`). Approach 2's N*, D* at a budget (`at_flops`)
get a prediction interval: that sampling spread plus the scatter of the budgets' optima about
the power law (`_prediction_sd`; docs/isoflop.md, "At your budget").
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas loads inside the functions that use it
    import pandas as pd

from ..compute.consistency import NOT_IDENTIFIED, interval_problem
from ..errors import InputError
from ..fitting import fit_law, huber
from ..laws import get_law
from ..uncertainty.percentile import percentile_interval
from ..uncertainty.resample import stratified_indices
from .profiles import MIN_SIZES, isoflop_table
from .result import IsoFlopResult

APPROACHES = (1, 2)
# Approach 1's optimum is a grid size: its resampled argmin already jumps between sizes, which
# is the scatter (Porian: 0.89 coverage without the term, 0.97 with it; docs/isoflop.md)
SCATTER_APPROACHES = (2,)


def budget_minima(t: pd.DataFrame, approach: int) -> np.ndarray:
    """(n_budgets, 4): C, N*, D*, L* per budget (rows of `isoflop_table`)."""
    rows = []
    for _, g in t.groupby("budget", sort=True):
        C = float(g["C"].iloc[0])
        x, y = np.log(g["N"].to_numpy()), g["loss"].to_numpy()
        if approach == 1:
            i = int(np.argmin(y))
            N = float(g["N"].iloc[i])
            rows.append((C, N, C / (6.0 * N), float(y[i])))
            continue
        c2, c1, c0 = np.polyfit(x, y, 2)
        if not c2 > 0:
            return np.array([[C, np.nan, np.nan, np.nan]])  # concave: no minimum at budget C
        lnN = -c1 / (2 * c2)
        L = c0 - c1 * c1 / (4 * c2)
        with np.errstate(over="ignore", under="ignore"):
            N = float(np.exp(lnN))
        if not 0 < N < np.inf:
            return np.array([[C, np.nan, np.nan, np.nan]])  # vertex at 0 or infinity
        rows.append((C, N, C / (6.0 * N), float(L)))
    return np.array(rows)


def _warn_outside(t: pd.DataFrame, m: np.ndarray) -> None:
    """A budget whose vertex N* lies outside the sizes it sampled is an extrapolation of its
    parabola (Hoffmann et al. sample both sides of the optimum): say which, and how far."""
    out = []
    for (_, g), (C, N, _D, _L) in zip(t.groupby("budget", sort=True), m):
        lo, hi = float(g["N"].min()), float(g["N"].max())
        if not lo <= N <= hi:
            out.append(f"C={C:.3g}: N*={N:.3g} outside its sizes [{lo:.3g}, {hi:.3g}]")
    if out:
        more = " ..." if len(out) > 3 else ""
        warnings.warn(
            f"isoFLOP optimum outside the sampled sizes ({'; '.join(out[:3])}{more}): "
            "add sizes beyond it",
            stacklevel=3,
        )


def power_laws(m: np.ndarray) -> tuple[float, float, float, float]:
    """(a, log G_N, b, log G_D) of N* = G_N C^a, D* = G_D C^b by least squares in log-log."""
    lc = np.log(m[:, 0])
    a, ga = np.polyfit(lc, np.log(m[:, 1]), 1)
    b, gb = np.polyfit(lc, np.log(m[:, 2]), 1)
    return float(a), float(ga), float(b), float(gb)


def fit_isoflop(
    t: pd.DataFrame,
    approach: int = 2,
    *,
    n_boot: int = 200,
    level: float = 0.9,
    seed: int = 0,
    at_flops=(),
) -> IsoFlopResult:
    """Approach 1 or 2 on an `isoflop_table` (or a raw runs table); returns an IsoFlopResult
    with percentile intervals over `n_boot` within-budget resamples. `at_flops`: budgets at
    which N*(C), D*(C) are read off the power laws, with intervals from the same resamples
    (`meta["at_flops"]`)."""
    import pandas as pd

    if approach not in APPROACHES:
        raise InputError(f"--approach must be 1 or 2, got {approach}")
    if list(t.columns) != ["C", "N", "D", "loss", "budget"]:  # a raw runs table: group it
        t = isoflop_table(t)
    if not 0 < level < 1:
        raise InputError(f"level must be strictly between 0 and 1, got {level}")
    m = budget_minima(t, approach)
    if not np.isfinite(m).all():
        raise InputError(
            f"runs: the isoFLOP profile of budget C={m[0, 0]:.4g} is concave in log N (no "
            "minimum); add sizes on both sides of its optimum, or check that budget's losses "
            "(column 'loss')"
        )
    _warn_outside(t, m)
    a, ga, b, gb = power_laws(m)
    rng = np.random.default_rng(seed)
    groups = [g for _, g in t.groupby("budget", sort=True)]
    boots, dropped = [], 0
    for _ in range(n_boot):
        for _attempt in range(2):
            rows = stratified_indices(rng, [len(g) for g in groups])
            parts = [g.iloc[i] for g, i in zip(groups, rows)]
            if all(p["N"].nunique() >= MIN_SIZES for p in parts):
                mb = budget_minima(pd.concat(parts), approach)
                if np.isfinite(mb).all():
                    boots.append(power_laws(mb))
                    break
        else:
            dropped += 1
    boots = np.array(boots).reshape(-1, 4)

    def iv(col):
        if not len(boots):
            return [float("nan")] * 2
        return [float(v) for v in percentile_interval(boots[:, col], level)]

    # the exponents of N* ~ C^a and D* ~ C^b lie in (0, 1) (a + b = 1 under 6ND): an interval
    # reaching outside, or excluding its estimate, says the budgets do not pin it
    refused = {}
    a_iv, b_iv = iv(0), iv(2)
    for name, point, pair in (("a", a, a_iv), ("b", b, b_iv)):
        why = len(boots) and interval_problem(point, *pair, positive=False, valid=(0.0, 1.0))
        if why:
            refused[name] = f"{NOT_IDENTIFIED}: {why}"
            pair[:] = [float("nan")] * 2
    res = IsoFlopResult(
        approach=approach,
        a=a,
        b=b,
        log_GN=ga,
        log_GD=gb,
        a_interval=a_iv,
        b_interval=b_iv,
        level=level,
        n_boot=n_boot,
        n_dropped=dropped,
        seed=seed,
        budgets=m.tolist(),
        n_runs=len(t),
    )
    res.meta["grouping"] = t.attrs.get("grouping", "budgets as given")
    if refused:
        res.meta["not_identified"] = refused
    m_scatter = m if approach in SCATTER_APPROACHES else m[:2]  # two rows: no scatter term
    at = [
        _at_budget(res, C, boots, m_scatter, level)
        for C in np.atleast_1d(np.asarray(at_flops, float))
    ]
    if at:
        res.meta["at_flops"] = at
    return res


def _prediction_sd(m: np.ndarray, C: float) -> tuple[float, int]:
    """(sd, dof) of a new budget's ln N* about the fitted power law: the residual scale of the
    budgets' optima in log-log times sqrt(1 + 1/n + leverage), the textbook prediction term of
    a least-squares line (dof = n - 2; (0, 0) with two budgets, which leave no residual)."""
    x, y = np.log(m[:, 0]), np.log(m[:, 1])
    n = len(x)
    if n < 3:
        return 0.0, 0
    r = y - np.polyval(np.polyfit(x, y, 1), x)
    s2 = float(r @ r) / (n - 2)
    sxx = float(((x - x.mean()) ** 2).sum())
    return float(np.sqrt(s2 * (1 + 1 / n + (np.log(C) - x.mean()) ** 2 / sxx))), n - 2


def _at_budget(
    res: IsoFlopResult, C: float, boots: np.ndarray, m: np.ndarray, level: float
) -> dict:
    """N*(C), D*(C) at a budget (`IsoFlopResult.optimal`), with prediction intervals in log
    space: the resampled power laws' half-range (rows a, log G_N, b, log G_D) and t_{n-2} times
    the prediction sd of a new budget's optimum about the law, combined in quadrature (only
    the resamples' percentiles with two budgets, only the scatter term without resamples)."""
    from scipy.special import stdtrit

    if not (np.isfinite(C) and C > 0):
        raise InputError(f"--flops must be a positive number, got {C:g}")
    N, D = res.optimal(C)
    row = {"C": float(C), "N_star": float(N), "D_star": float(D)}
    q_hi = (1 + level) / 2  # the t quantile of the scatter term's one-sided end
    sd, dof = _prediction_sd(m, C)
    if len(boots) or dof:  # no resamples (bootstrap 0): the scatter term alone
        lc = np.log(C)
        for key, col, centre in (("N_interval", 1, N), ("D_interval", 3, D)):
            lo = hi = np.log(centre)
            if len(boots):
                lo, hi = percentile_interval(boots[:, col] + boots[:, col - 1] * lc, level)
            if dof:  # ln D* = ln C - ln 6 - ln N*: the same scatter; t on the part from n budgets
                h = np.hypot((hi - lo) / 2, stdtrit(dof, q_hi) * sd)
                lo, hi = np.log(centre) - h, np.log(centre) + h
            row[key] = np.exp([lo, hi]).tolist()
            why = interval_problem(centre, *row[key])  # spans > 3 decades or misses its point
            if why:
                row[key] = None
                row.setdefault("not_identified", {})[key[0] + "*"] = f"{NOT_IDENTIFIED}: {why}"
    return row


def approach3(t: pd.DataFrame, huber_delta: float = 1e-3) -> dict:
    """Approach 3 beside them: fit L = E + A/N^alpha + B/D^beta (the shared engine) and read
    a = beta/(alpha+beta), b = alpha/(alpha+beta) (Hoffmann et al. Eq. 4)."""
    law = get_law("chinchilla")
    X = {"N": t["N"].to_numpy(float), "D": t["D"].to_numpy(float)}
    r = fit_law(law, X, t["loss"].to_numpy(float), loss=huber(huber_delta))
    al, be = r.params["alpha"], r.params["beta"]
    return {"a": be / (al + be), "b": al / (al + be), "params": r.params}
