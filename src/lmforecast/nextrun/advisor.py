"""Which run to train next: rank candidates by expected shrinkage of a target forecast's
interval per FLOP.

The current runs are fitted with the Chinchilla law (Hoffmann et al. 2022, Eq. 2; shared
engine) and bootstrapped. Across the bootstrap refits, the log-loss forecast at the target t and
at a candidate c have variances v_t, v_c and covariance s. Observing c with run-to-run scatter
sigma^2 (the fit's robust residual scale) updates the target's variance as a linear-Gaussian
(ensemble Kalman) step does:

    v_t' = v_t - s^2 / (v_c + sigma^2)

so the expected interval width shrinks by the factor sqrt(v_t'/v_t). Candidates are ranked by
(width - width') / (6 N_c D_c). When even the best candidate would shrink the width by less
than `min_gain` (relative), more runs of that kind stop helping: the interval is then held by
the scatter of single runs or by the extrapolation itself, not by parameter uncertainty that
small runs can remove.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..data.validate import numeric_column
from ..display import SummaryDisplay
from ..errors import InputError
from ..fitting import fit_law, huber
from ..laws import get_law
from ..store import FORMAT_VERSION, dump_json, load_json, source_label
from ..uncertainty.bootstrap import bootstrap_fit
from ..uncertainty.percentile import percentile_interval
from ..uncertainty.resample import resample_counts
from .schema import KIND, check_advice

RATIOS = (5.0, 10.0, 20.0, 40.0, 80.0)  # tokens per parameter of the default candidate grid


@dataclass
class NextRunAdvice(SummaryDisplay):
    target: dict
    current_width: float
    level: float
    candidates: list[dict]
    stop: bool
    message: str
    n_boot: int

    def contract(self) -> dict:
        return asdict(self)

    def to_json(self, path=None) -> str:
        """JSON text (written atomically to `path` if given); loads back bit-for-bit."""
        return dump_json({"kind": KIND, "format_version": FORMAT_VERSION, **asdict(self)}, path)

    @classmethod
    def from_json(cls, text_or_path) -> NextRunAdvice:
        """Advice saved by `to_json` (`next-run --out`), validated field by field."""
        d = load_json(text_or_path, "saved next-run advice")
        check_advice(d, source_label(text_or_path))
        return cls(**{k: v for k, v in d.items() if k not in ("kind", "format_version")})

    def summary(self) -> str:
        lines = [
            f"Target N={self.target['N']:.3g}, D={self.target['D']:.3g}: current "
            f"{100 * self.level:g}% interval width {self.current_width:.4f} (log loss)",
            "  rank          N          D      FLOPs   width after   shrink/EFLOP   advised in",
        ]
        for i, c in enumerate(self.candidates[:10]):
            share = f"{100 * c['p_best']:9.0f}%"
            lines.append(
                f"  {i + 1:4d} {c['N']:10.3g} {c['D']:10.3g} {c['flops']:10.3g}"
                f"   {c['expected_width']:11.4f}   {1e18 * c['shrink_per_flop']:12.4g}   {share}"
            )
        caveat = (
            f"(the widths come from {self.n_boot} bootstrap refits and vary with the seed; "
            "before acting on the ranking, check it with more refits)"
        )
        return "\n".join([*lines, self.message, caveat])


def _runs(df: pd.DataFrame) -> pd.DataFrame:
    """Columns N, D (or C), loss, sorted by (N, D, loss); seed replicates (same N, D) are kept
    as separate runs."""
    N = numeric_column(df, "N", positive=True, what="runs")
    if "D" in df.columns:
        D = numeric_column(df, "D", positive=True, what="runs")
    else:
        D = numeric_column(df, "C", positive=True, what="runs") / (6 * N)
    if "U" in df.columns:  # the plain law has no term for repeated data
        U = numeric_column(df, "U", positive=True, what="runs")
        rep = np.flatnonzero(D > U * (1 + 1e-9))
        if len(rep):
            i = int(rep[0])
            raise InputError(
                f"runs: row {i + 1} repeats data (D={D[i]:.4g} tokens of U={U[i]:.4g} unique, "
                f"{D[i] / U[i]:.3g} epochs; {len(rep)} such rows): the advisor fits the plain "
                "law L(N, D), which has no term for repetition; keep the single-epoch rows "
                "(D <= U)"
            )
    out = pd.DataFrame(
        {"N": N, "D": D, "loss": numeric_column(df, "loss", positive=True, what="runs")}
    )
    rep = out.duplicated(keep="first").to_numpy()
    if rep.any():  # seed replicates differ in loss; an identical row is one run given twice
        i = int(np.flatnonzero(rep)[0])
        j = int(np.flatnonzero((out == out.iloc[i]).all(axis=1).to_numpy())[0])
        raise InputError(
            f"runs: row {i + 1} repeats row {j + 1} exactly (N={N[i]:.4g}, D={D[i]:.4g}, "
            f"loss={out['loss'].iloc[i]:.6g}); a run given twice would count as two pieces of "
            "evidence: keep one"
        )
    # one order whatever the file's: the bootstrap resamples rows by position, so the advice
    # would otherwise depend on the row order of the table
    return out.sort_values(["N", "D", "loss"], kind="stable").reset_index(drop=True)


def candidate_grid(runs: pd.DataFrame, target_N: float, budget: float | None) -> pd.DataFrame:
    """Sizes log-spaced from the smallest run to the target, at 5-80 tokens per parameter,
    within `budget` FLOPs (6ND)."""
    N = np.geomspace(runs["N"].min(), max(target_N, runs["N"].max()), 8)
    g = pd.DataFrame([(n, r * n) for n in N for r in RATIOS], columns=["N", "D"])
    if budget is not None:
        g = g[6 * g["N"] * g["D"] <= budget]
    return g.reset_index(drop=True)


def fit_with_bootstrap(data: pd.DataFrame, n_boot: int, seed: int, level: float = 0.9):
    """Chinchilla fit of the runs (columns N, D, loss) with `n_boot` bootstrap refits; the rows
    are put in one order (N, D, loss) first, so the result does not depend on the table's."""
    law = get_law("chinchilla")
    data = data.sort_values(["N", "D", "loss"], kind="stable")
    X = {"N": data["N"].to_numpy(float), "D": data["D"].to_numpy(float)}
    y = data["loss"].to_numpy(float)
    res = fit_law(law, X, y, loss=huber(1e-3), n_polish=16)
    bootstrap_fit(law, X, y, res, n_boot=n_boot, level=level, seed=seed, n_jobs=1, n_starts=2)
    return law, res


def target_width(law, res, N, D, level: float = 0.9) -> float:
    """Width of the bootstrap percentile interval of log loss at (N, D)."""
    T = law.predict_target(
        np.asarray(res.bootstrap), {"N": np.atleast_1d(float(N)), "D": np.atleast_1d(float(D))}
    )[:, 0]
    lo, hi = percentile_interval(T, level)
    return float(hi - lo)


def advise(
    runs: pd.DataFrame,
    target_N: float,
    target_D: float,
    *,
    budget: float | None = None,
    candidates: pd.DataFrame | None = None,
    n_boot: int = 60,
    level: float = 0.9,
    min_gain: float = 0.02,
    goal_width: float | None = None,
    noise: float | None = None,
    seed: int = 0,
    fitted=None,
) -> NextRunAdvice:
    """Rank candidate runs (columns N, D; default `candidate_grid`) best first.

    With `goal_width` (the interval width in log loss one wants to reach), candidates are
    ranked by the FLOPs that k replicates of them need to reach it under the same update,
    k = ceil(sigma^2 / (s^2/(v_t - v_goal) - v_c)), infinite where even infinitely many cannot
    (the saturation width sqrt-scaled from v_t - s^2/v_c is above the goal): those runs stop
    helping, and come last, the ones that saturate lowest first. Without it, by width shrinkage
    per FLOP of one run. `noise`: the run-to-run scatter of log loss (e.g. from seed replicates);
    default the fit's robust residual scale, which underestimates it with few runs."""
    if not (target_N > 0 and target_D > 0):
        raise InputError(f"target N and D must be > 0, got {target_N}, {target_D}")
    if budget is not None and not budget > 0:
        raise InputError(f"--budget (budget=) must be > 0 FLOPs, got {budget}")
    if fitted is None and n_boot < 2:  # one refit has no spread: widths of 0, "-nan%" gains
        raise InputError(
            f"--bootstrap (n_boot=) must be >= 2 (the widths come from the refits' spread), "
            f"got {n_boot}"
        )
    data = _runs(runs)
    if len(data) < 6:
        raise InputError(
            f"runs: {len(data)} run(s); the advisor fits a 5-parameter law and needs at least 6"
        )
    cand = candidate_grid(data, target_N, budget) if candidates is None else candidates
    if len(cand) == 0:
        raise InputError(f"no candidate run fits in --budget (budget=) {budget:.3g} FLOPs (6ND)")
    if noise is not None and not noise > 0:
        raise InputError(f"noise must be > 0 (run-to-run scatter of log loss), got {noise}")
    if goal_width is not None and not goal_width > 0:
        raise InputError(f"goal width must be > 0, got {goal_width}")
    law, res = fitted if fitted is not None else fit_with_bootstrap(data, n_boot, seed, level)
    th = np.asarray(res.bootstrap)
    Nc, Dc = cand["N"].to_numpy(float), cand["D"].to_numpy(float)
    Tt = law.predict_target(th, {"N": np.array([target_N]), "D": np.array([target_D])})[:, 0]
    Tc = law.predict_target(th, {"N": Nc, "D": Dc})  # (B, n)
    sigma2 = (noise if noise is not None else max(res.residual_scale, 1e-4)) ** 2
    w = target_width(law, res, target_N, target_D, level)
    flops = 6 * Nc * Dc
    ev = _evaluate(Tt, Tc, np.full((1, len(Tt)), 1 / len(Tt)), w, sigma2, flops, goal_width)
    shrink, gain, w_sat, to_goal = (v[0] for v in ev)
    w_new = w * (1 - shrink)
    order = _order(gain, w_sat, to_goal, goal_width)
    p_best = _advised_share(Tt, Tc, w, sigma2, flops, goal_width, min_gain, seed)
    rows = [
        {
            "N": float(Nc[i]),
            "D": float(Dc[i]),
            "flops": float(flops[i]),
            "expected_width": float(w_new[i]),
            "shrink": float(shrink[i]),
            "shrink_per_flop": float(gain[i]),
            "saturation_width": float(w_sat[i]),
            "flops_to_goal": float(to_goal[i]),
            "p_best": float(p_best[i]),
        }
        for i in order
    ]
    best_rel = max(r["shrink"] for r in rows)
    unreachable = goal_width is not None and not np.isfinite(to_goal).any()
    stop = best_rel < min_gain or unreachable
    msg = (
        f"more runs of these sizes stop helping: no candidate can bring the width to "
        f"{goal_width:g} (best saturation width {min(r['saturation_width'] for r in rows):.4f})"
        if unreachable
        else f"more runs stop helping: the best candidate shrinks the interval by "
        f"{100 * best_rel:.2g}% (< {100 * min_gain:g}%); what remains is run scatter and "
        "extrapolation"
        if stop
        else _best_message(next(r for r in rows if r["shrink"] >= min_gain), rows[0], rows, len(th))
    )
    return NextRunAdvice(
        target={"N": float(target_N), "D": float(target_D)},
        current_width=w,
        level=level,
        candidates=rows,
        stop=bool(stop),
        message=msg,
        n_boot=len(th),
    )


RESAMPLES = 400  # resamples of the bootstrap refits behind `p_best`


def _evaluate(Tt, Tc, wts, w, sigma2, flops, goal_width):
    """(shrink, gain per FLOP, saturation width, FLOPs to goal), each (R, n), for R weightings
    `wts` (R, B) of the B bootstrap refits (one row of 1/B: the advice itself). A weighting's
    width is w scaled by its sd of the target's log loss over the full ensemble's, so the goal
    width means one variance whatever the weighting."""
    mt, mc = wts @ Tt, wts @ Tc  # (R,), (R, n)
    vt = np.maximum(wts @ Tt**2 - mt**2, 0.0)[:, None]
    s = wts @ (Tt[:, None] * Tc) - mt[:, None] * mc
    vc = np.maximum(wts @ Tc**2 - mc**2, 0.0)
    v0 = float(np.mean((Tt - Tt.mean()) ** 2))
    wr = w * np.sqrt(vt / v0) if v0 > 0 else np.full_like(vt, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(vt > 0, np.sqrt(np.maximum(vt - s**2 / (vc + sigma2), 0.0) / vt), 1.0)
        w_sat = np.where(vt > 0, wr * np.sqrt(np.maximum(vt - s**2 / vc, 0.0) / vt), wr * ratio)
    to_goal = np.full(s.shape, np.inf)
    if goal_width is not None:
        v_goal = v0 * (goal_width / w) ** 2 if w > 0 else np.inf
        with np.errstate(divide="ignore", invalid="ignore"):
            room = s**2 / (vt - v_goal) - vc
            k = np.where(room > 0, np.ceil(sigma2 / room), np.inf)
        to_goal = np.where(v_goal >= vt, 0.0, k * flops)
    return 1 - ratio, wr * (1 - ratio) / flops, w_sat, to_goal


def _order(gain, w_sat, to_goal, goal_width):
    """Candidates best first: by FLOPs to the goal (then saturation width, then gain) with a
    goal width, else by gain per FLOP."""
    if goal_width is not None:
        return np.lexsort((-gain, w_sat, to_goal))
    return np.argsort(-gain, kind="stable")


def _advised(order, shrink, min_gain) -> int:
    """The advised run: the first in `order` that shrinks the width by `min_gain` (else the
    first), as `_best_message` names it."""
    ok = order[shrink[order] >= min_gain]
    return int(ok[0]) if len(ok) else int(order[0])


def _advised_share(Tt, Tc, w, sigma2, flops, goal_width, min_gain, seed) -> np.ndarray:
    """p_best: the share of `RESAMPLES` resamples of the B bootstrap refits in which each
    candidate is the advised run: how firmly B refits pick it (Monte Carlo noise of the
    advice, which more refits reduce; two candidates that split the share are tied on this
    evidence)."""
    B = len(Tt)
    rng = np.random.default_rng([seed, 7])
    wts = resample_counts(rng, B, size=RESAMPLES) / B
    shrink, gain, w_sat, to_goal = _evaluate(Tt, Tc, wts, w, sigma2, flops, goal_width)
    picks = [
        _advised(_order(gain[r], w_sat[r], to_goal[r], goal_width), shrink[r], min_gain)
        for r in range(RESAMPLES)
    ]
    return np.bincount(picks, minlength=len(flops)) / RESAMPLES


FIRM = 0.8  # below this share of resamples the advised run is called near-tied


def _best_message(best: dict, cheapest: dict, rows: list[dict], n_boot: int) -> str:
    """The best next run is the most shrink per FLOP among runs that shrink by `min_gain`; the
    top-ranked run may shrink the interval by less (a cheap run with a tiny gain). Says how
    firmly the refits pick it (`p_best`) and, below `FIRM`, its close rivals."""
    msg = (
        f"best next run: N={best['N']:.3g}, D={best['D']:.3g} (expected width "
        f"{best['expected_width']:.4f}, -{100 * best['shrink']:.2g}%; advised in "
        f"{100 * best['p_best']:.0f}% of resamples of the {n_boot} refits"
    )
    if best["p_best"] < FIRM:
        rivals = sorted(
            (r for r in rows if r is not best and r["p_best"] >= 0.05), key=lambda r: -r["p_best"]
        )[:3]
        names = ", ".join(
            f"N={r['N']:.3g}, D={r['D']:.3g} ({100 * r['p_best']:.0f}%)" for r in rivals
        )
        msg += (
            f"; near-tied with {names or 'many candidates'}: equally good picks on this "
            "evidence (a larger --bootstrap separates them only where they truly differ)"
        )
    msg += ")"
    if best is not cheapest:
        msg += (
            f"; the top-ranked N={cheapest['N']:.3g}, D={cheapest['D']:.3g} gains more per FLOP "
            f"but shrinks it by only {100 * cheapest['shrink']:.2g}%"
        )
    return msg
