"""Diagnostics of a fitted distillation law (Table 6 layout): coefficient table, identifiability of
the coefficients and their combinations (App. F.2), the plain-text summary and the fit's
contract. `DistillationScalingLaw`'s methods of the same names call these functions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..uncertainty.percentile import percentile_interval
from .uncertainty import spread_status

UNKNOWN = "unknown (no bootstrap)"


def coefficient_table(model) -> pd.DataFrame:
    """Estimates, bootstrap intervals, relative widths and an identifiability status of a fitted
    `DistillationScalingLaw`.

    Besides the nine coefficients it lists the combinations the data can pin when one term
    of (A'/N^alpha' + B'/D^beta')^gamma' is negligible over the runs: gamma' log A',
    alpha' gamma' (and gamma' log B', beta' gamma'), and the teacher-to-supervised loss
    ratio where the bracket of Eq. 8 halves, d1 (2^(1/(c1 f1)) - 1)^f1, which pins the
    (c1, d1) pair when c1 alone is flat. `status` comes from
    `identifiability()`; a zero-width interval on a coefficient marked "not identified"
    means the objective is flat there (resamples do not move it), not that it is pinned.
    `outside_interval` is True where the estimate lies outside its own bootstrap interval
    (the refits disagree with the fit): its status is then "not identified (estimate
    outside its bootstrap interval)" unless another rule already says not identified (the
    CLI marks the row `*`).
    """
    status = model.identifiability() if hasattr(model, "data_") else {}
    intervals = coefficient_intervals(model.result_, model.params_)
    rows = [(k, v, lo, hi, status.get(k, "")) for k, (v, lo, hi) in intervals.items()]
    df = pd.DataFrame(rows, columns=["coefficient", "estimate", "lower", "upper", "status"])
    with np.errstate(all="ignore"):
        df.insert(4, "relative_width", (df["upper"] - df["lower"]) / df["estimate"].abs())
    df["outside_interval"] = [_outside(v, lo, hi) for _, v, lo, hi, _ in rows]
    return df.set_index("coefficient")


def coefficient_intervals(res, params) -> dict[str, tuple[float, float, float]]:
    """(estimate, lower, upper) of each coefficient (`params`, with the fit `res`'s intervals)
    and combination (NaN bounds without a bootstrap interval)."""
    boot = np.asarray(res.bootstrap, float)
    level = res.ci_level or 0.9
    out = {}
    for k, v in params.items():
        lo, hi = res.ci.get(k, [np.nan, np.nan])
        out[k] = (float(v), float(lo), float(hi))
    theta = np.asarray(res.theta, float)
    for k, v in _combinations(theta).items():
        lo = hi = np.nan
        if boot.size:
            lo, hi = percentile_interval(_combinations(boot)[k], level)
        out[k] = (float(v[0]), float(lo), float(hi))
    return out


def identifiability(model, negligible: float = 0.01) -> dict[str, str]:
    """Which coefficients the runs a `DistillationScalingLaw` was fitted to can determine (see
    docs/distill.md).

    Without bootstrap samples (bootstrap=0) nothing can confirm a coefficient: its status
    is "unknown (no bootstrap)" unless a structural check below says it is not identified.

    With bootstrap samples, a coefficient whose resampled values span more than a decade
    (`uncertainty.spread_status`: P95/P5 > 10; exponents: 5-95% range > median) is "not
    identified (bootstrap ...)" whatever the structural checks below say.
    An estimate outside its own bootstrap interval (`coefficient_table`'s
    `outside_interval`) is "not identified (estimate outside its bootstrap interval)".
    A' and alpha' (B' and beta') are "not identified" when the A' (B') term is below
    `negligible` of the power sum on every run; then only gamma' log A' and alpha' gamma'
    (resp. the B' pair) are. c1, f1, d1 shape the bracket's break: they are "weakly
    identified" when fewer than 5% of runs sit inside the break, 0.01 < bracket < 0.99.
    """
    d = model.data_
    p = model.params_
    res = model.result_
    N, D, LT = (d[c].to_numpy(float) for c in ("N_S", "D_S", "L_T"))
    ta = p["A'"] / N ** p["alpha'"]
    tb = p["B'"] / D ** p["beta'"]
    share_a, share_b = ta / (ta + tb), tb / (ta + tb)
    x = LT / (model.supervised_loss(N, D) * p["d1"])
    with np.errstate(all="ignore"):
        br = (1.0 + x ** (1.0 / p["f1"])) ** (-p["c1"] * p["f1"])
    inside = float(np.mean((br > 0.01) & (br < 0.99)))
    fixed = set((res.meta.get("fixed") or {}).keys())
    # without resamples nothing says a coefficient is pinned: only the structural checks
    # below (which need no bootstrap) can say it is not
    ok = "identified" if res.bootstrap else UNKNOWN
    out = {k: ok for k in [*model.params_, *_combinations(res.theta)]}
    pairs = {"A'": ("A'", "alpha'", share_a), "B'": ("B'", "beta'", share_b)}
    for c, e, share in pairs.values():
        if np.max(share) < negligible:
            other, oe = ("B'", "beta'") if c == "A'" else ("A'", "alpha'")
            out[c] = out[e] = "not identified (term negligible over the runs)"
            out[f"gamma' log {c}"] = out[f"{e} gamma'"] = out[c]
            joint = f"only via gamma' log {other} and {oe} gamma'"
            out[other] = out[oe] = out["gamma'"] = joint
            out[f"gamma' log {other}"] = out[f"{oe} gamma'"] = ok
    if inside < 0.05:
        for c in ("c1", "f1", "d1"):
            out[c] = "weakly identified (few runs inside the break)"
    for c, (lo, hi) in res.ci.items():
        if (
            res.bootstrap
            and c not in fixed
            and out.get(c) == "identified"
            and hi - lo <= 1e-6 * abs(model.params_[c])
        ):
            out[c] = "flat (resamples do not move it)"
    if out.get("c1", "").startswith("flat") and out.get("d1") == "identified":
        out["c1"] = out["d1"] = "only via the break location (c1 flat)"
    # the bootstrap rule is decisive: resamples spanning a decade are never "identified"
    spreads = dict(model.uncertainty_report().get("coefficients") or {})
    if res.bootstrap:  # the combinations too, by the range rule (they can be <= 0)
        cmb = _combinations(res.bootstrap)
        names = list(cmb)
        spreads.update(
            spread_status(np.column_stack([cmb[k] for k in names]), names, exponents=names)
        )
    for c, sp in spreads.items():
        if not sp["identified"] and c not in fixed:
            out[c] = f"not identified (bootstrap P5-P95 {sp['p05']:.3g} to {sp['p95']:.3g})"
    # an estimate outside its own bootstrap interval: the refits disagree with the fit
    for c, (v, lo, hi) in coefficient_intervals(res, p).items():
        if _outside(v, lo, hi) and c not in fixed and not out[c].startswith("not identified"):
            out[c] = OUTSIDE
    for c in fixed:
        out[c] = "fixed"
    return out


def summary(model) -> str:
    """The plain-text summary of a fitted `DistillationScalingLaw`: the fit, its source and
    supervised law, the bootstrap's settings and, with bootstrap samples, each coefficient's
    identifiability and share of the variance at the reference forecast."""
    s = model.result_.summary()
    src = model.result_.meta.get("source")
    sup = ", ".join(f"{k}={v:.4g}" for k, v in model.supervised_.params_.items())
    s += (f"\nSource: {src}" if src else "") + (
        f"\nSupervised law for L~_S (Eq. 1): {model.supervised_source_}\n  {sup}"
    )
    boot = model.result_.meta.get("bootstrap") or {}
    if boot:
        s += f"\nBootstrap: {boot.get('mode')} resamples" + (
            f" ({boot['n_polish']} best of {boot['grid_starts']:,} grid starts + "
            f"{boot['n_warm']} warm starts each; {boot['winner_from_grid']} of "
            f"{len(model.result_.bootstrap)} winners came from the grid)"
            if boot.get("n_polish")
            else " (warm-started only: intervals too narrow where the data do not pin "
            "a coefficient)"
        )
    rep = model.uncertainty_report()
    if rep:
        f = rep["forecast"]
        status = model.identifiability() if hasattr(model, "data_") else {}
        lines = [
            "",
            "",
            "Identifiability over the bootstrap (not identified: P95/P5 > 10; for exponents"
            " also 5-95% range > median)",
            f"and each coefficient's share of the variance of log L_S at the reference "
            f"forecast N_S={f['N_S']:.3g}, D_S={f['D_S']:.3g}, L_T={f['L_T']:.4g}",
            f"(90% interval {rep['interval'][0]:.4f} to {rep['interval'][1]:.4f}; share = "
            "corr(log L_S, coefficient)^2 over the draws):",
            f"{'coefficient':<12}{'P5':>12}{'P95':>12}{'P95/P5':>10}{'share':>8}  status",
        ]
        for k, v in rep["coefficients"].items():
            st = status.get(k, "identified" if v["identified"] else "not identified")
            lines.append(
                f"{k:<12}{v['p05']:>12.4g}{v['p95']:>12.4g}{v['ratio']:>10.3g}"
                f"{v['share']:>8.2f}  {st}"
            )
        s += "\n".join(lines)
    return s


def contract(model) -> dict:
    """A fitted `DistillationScalingLaw` as plain JSON-able data (what `distill fit --json`
    prints): parameters, diagnostics, the supervised law behind L~_S, intervals with their
    relative widths, each coefficient's identifiability, estimates outside their own interval,
    the bootstrap's settings and the uncertainty report."""
    res = model.result_
    tab = model.coefficient_table()
    return {
        "params": res.params,
        "objective": res.objective,
        "n_obs": res.n_obs,
        "n_starts": res.n_starts,
        "converged": res.converged,
        "supervised": {
            "source": res.meta.get("supervised_source"),
            "params": res.meta.get("supervised"),
        },
        "ci": res.ci,
        "ci_relative_width": tab["relative_width"].to_dict() if res.ci else {},
        "identifiability": tab["status"].to_dict(),
        "outside_interval": list(tab.index[tab["outside_interval"]]),
        "bootstrap": res.meta.get("bootstrap", {}),
        "uncertainty": model.uncertainty_report(),
    }


def coefficient_text(tab: pd.DataFrame) -> str:
    """A `coefficient_table` as text, `*` after the status of an estimate outside its own
    interval, with the note saying what that means."""
    show = tab.drop(columns="outside_interval")
    out = tab["outside_interval"]
    show["status"] = [s + (" *" if o else "") for s, o in zip(show["status"], out)]
    text = show.to_string(float_format=lambda v: f"{v:.4g}")
    if out.any():
        text += (
            f"\n* estimate outside its own bootstrap interval ({', '.join(tab.index[out])}): "
            "the refits do not agree with the fit, so it is not identified (more "
            "resamples or runs)"
        )
    return text


OUTSIDE = "not identified (estimate outside its bootstrap interval)"


def _outside(v: float, lo: float, hi: float) -> bool:
    """`v` outside [lo, hi] beyond rounding (False without an interval: NaN bounds)."""
    slack = 1e-9 * abs(v)
    return bool(v < lo - slack or v > hi + slack)


def _combinations(th) -> dict[str, np.ndarray]:
    """The combinations of coefficients a ridge can leave pinned (see `coefficient_table`)."""
    th = np.atleast_2d(np.asarray(th, float))
    lA, lB, al, be, g, _, c1, f1, ld1 = th.T
    with np.errstate(all="ignore"):
        half = np.exp(ld1) * np.expm1(np.log(2.0) / (c1 * f1)) ** f1
    return {
        "gamma' log A'": g * lA,
        "alpha' gamma'": al * g,
        "gamma' log B'": g * lB,
        "beta' gamma'": be * g,
        "break L_T/L~_S": half,
    }
