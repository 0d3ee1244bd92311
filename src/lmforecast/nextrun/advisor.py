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
from ..fitting import bootstrap_fit, fit_law, huber
from ..laws import get_law
from ..store import FORMAT_VERSION, dump_json, load_json, source_label
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
            "  rank          N          D      FLOPs   width after   shrink/EFLOP",
        ]
        for i, c in enumerate(self.candidates[:10]):
            lines.append(
                f"  {i + 1:4d} {c['N']:10.3g} {c['D']:10.3g} {c['flops']:10.3g}"
                f"   {c['expected_width']:11.4f}   {1e18 * c['shrink_per_flop']:.4g}"
            )
        return "\n".join([*lines, self.message])


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
    lo, hi = np.quantile(T, [(1 - level) / 2, (1 + level) / 2])
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
    data = _runs(runs)
    if len(data) < 6:
        raise InputError(
            f"runs: {len(data)} run(s); the advisor fits a 5-parameter law and needs at least 6"
        )
    cand = candidate_grid(data, target_N, budget) if candidates is None else candidates
    if len(cand) == 0:
        raise InputError(f"no candidate run fits in --budget (budget=) {budget:.3g} FLOPs (6ND)")
    law, res = fitted if fitted is not None else fit_with_bootstrap(data, n_boot, seed, level)
    th = np.asarray(res.bootstrap)
    Nc, Dc = cand["N"].to_numpy(float), cand["D"].to_numpy(float)
    Tt = law.predict_target(th, {"N": np.array([target_N]), "D": np.array([target_D])})[:, 0]
    Tc = law.predict_target(th, {"N": Nc, "D": Dc})  # (B, n)
    dt, dc = Tt - Tt.mean(), Tc - Tc.mean(axis=0)
    vt = float(np.mean(dt**2))
    s = (dt[:, None] * dc).mean(axis=0)
    vc = (dc**2).mean(axis=0)
    if noise is not None and not noise > 0:
        raise InputError(f"noise must be > 0 (run-to-run scatter of log loss), got {noise}")
    sigma2 = (noise if noise is not None else max(res.residual_scale, 1e-4)) ** 2
    vt_new = np.maximum(vt - s**2 / (vc + sigma2), 0.0)
    w = target_width(law, res, target_N, target_D, level)
    w_new = w * np.sqrt(vt_new / vt) if vt > 0 else np.full(len(cand), w)
    flops = 6 * Nc * Dc
    gain = (w - w_new) / flops
    with np.errstate(divide="ignore", invalid="ignore"):
        w_sat = w * np.sqrt(np.maximum(vt - s**2 / vc, 0.0) / vt) if vt > 0 else w_new
    to_goal = np.full(len(cand), np.inf)
    if goal_width is not None:
        if not goal_width > 0:
            raise InputError(f"goal width must be > 0, got {goal_width}")
        v_goal = vt * (goal_width / w) ** 2
        if v_goal >= vt:
            to_goal[:] = 0.0
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                room = s**2 / (vt - v_goal) - vc
                k = np.where(room > 0, np.ceil(sigma2 / room), np.inf)
            to_goal = k * flops
        order = np.lexsort((-gain, w_sat, to_goal))
    else:
        order = np.argsort(-gain)
    rows = [
        {
            "N": float(Nc[i]),
            "D": float(Dc[i]),
            "flops": float(flops[i]),
            "expected_width": float(w_new[i]),
            "shrink": float(1 - w_new[i] / w),
            "shrink_per_flop": float(gain[i]),
            "saturation_width": float(w_sat[i]),
            "flops_to_goal": float(to_goal[i]),
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
        else _best_message(next(r for r in rows if r["shrink"] >= min_gain), rows[0])
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


def _best_message(best: dict, cheapest: dict) -> str:
    """The best next run is the most shrink per FLOP among runs that shrink by `min_gain`; the
    top-ranked run may shrink the interval by less (a cheap run with a tiny gain)."""
    msg = (
        f"best next run: N={best['N']:.3g}, D={best['D']:.3g} (expected width "
        f"{best['expected_width']:.4f}, -{100 * best['shrink']:.2g}%)"
    )
    if best is not cheapest:
        msg += (
            f"; the top-ranked N={cheapest['N']:.3g}, D={cheapest['D']:.3g} gains more per FLOP "
            f"but shrinks it by only {100 * cheapest['shrink']:.2g}%"
        )
    return msg
