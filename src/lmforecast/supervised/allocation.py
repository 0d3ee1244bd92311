"""Compute-optimal allocation: a golden-section search for forms without a closed form (Eq. 2),
and the N*/D* interval that adds the scatter of the runs' own isoFLOP optima (docs/trust.md), with
the note saying what that interval holds."""

from __future__ import annotations

import numpy as np

from ..compute.allocation import Allocation, compute_optimal
from ..compute.consistency import checked_rows, split_problem
from ..compute.flops import Architecture, flops_per_token
from ..errors import InputError
from ..isoflop.approaches import budget_minima
from ..isoflop.profiles import budget_flops
from ..laws import get_law
from ..uncertainty.normal import normal_ppf
from ..uncertainty.percentile import percentile_interval


def numeric_allocation(predict, C, accounting: str, arch: Architecture) -> Allocation:
    """argmin_N predict(N, D(N, C)) along each IsoFLOP by golden-section search on log N."""
    Cf = np.atleast_1d(np.asarray(C, float)).ravel()
    if not np.all(np.isfinite(Cf)) or np.any(Cf <= 0):
        raise InputError(f"compute budget must be positive and finite, got {C}")
    if accounting not in ("6ND", "F(N)"):
        raise InputError(f"unknown FLOPs accounting {accounting!r}; use '6ND' or 'F(N)'")

    def tokens(N):
        return Cf / (6.0 * N) if accounting == "6ND" else Cf / flops_per_token(N, "F(N)", arch)

    def f(logn):
        N = np.exp(logn)
        return np.asarray(predict(N, tokens(N)), float)

    a, b = np.full(Cf.shape, np.log(1e3)), np.log(Cf / 6.0) - np.log(1.0)
    r = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(120):
        c, d = b - r * (b - a), a + r * (b - a)
        left = f(c) < f(d)
        a, b = np.where(left, a, c), np.where(left, d, b)
    N = np.exp(0.5 * (a + b))
    D = tokens(N)
    shape = np.shape(C)
    return Allocation(
        C=np.asarray(C, float),
        N=N.reshape(shape),
        D=D.reshape(shape),
        loss=np.asarray(predict(N, D), float).reshape(shape),
        accounting=accounting,
    )


MIN_BUDGETS = 3  # budgets with a measured optimum needed for a scatter (one residual dof)
# an isoFLOP design puts (nearly) every run on a profile; a table of checkpoints or of random
# (N, D) puts a few runs together by chance at three digits (Gemstones' 770 checkpoints: 5%)
MIN_PROFILE_SHARE = 0.5


def optima_scatter(data, n_star, law_loss=None) -> dict | None:
    """Where the runs form isoFLOP profiles: {rms, n} of ln(vertex / law's optimum) over the
    budgets with >= 3 sizes, a convex parabola in ln N and its vertex inside the sampled sizes
    (Hoffmann et al. Approach 2). Runs are grouped by 6ND to three significant digits, the
    law's optimum being n_star(C). Where that finds no profiles and the table has its own C
    column beside D (a FLOPs count other than 6ND, e.g. with attention, spreads one budget's
    runs over several 6ND values), they are grouped by that C, and the law's optimum is the
    vertex of the same parabola through `law_loss(N, D)` at the group's runs (the law on the
    same profile). None with fewer than `MIN_BUDGETS` such budgets or when budgets of >= 3
    sizes hold less than `MIN_PROFILE_SHARE` of the runs (not an isoFLOP design). How far the
    law's N* sits from its runs' optima."""
    out = _scatter(
        data,
        budget_flops(data["N"], data["D"]),
        lambda g, c: float(np.asarray(n_star(np.array([c])), float)[0]),
    )
    own = data.attrs.get("budget")
    if out is None and law_loss is not None and own is not None and len(own) == len(data):

        def law_vertex(g, c):
            lw = np.asarray(law_loss(g["N"].to_numpy(float), g["D"].to_numpy(float)), float)
            return budget_minima(g[["N"]].assign(loss=lw, C=c, budget=0), 2)[0, 1]

        C = np.array([float(f"{v:.3g}") for v in np.asarray(own, float)])
        out = _scatter(data, C, law_vertex)
    return out


def _scatter(data, C, optimum) -> dict | None:
    """`optima_scatter` over the groups of `C`; the law's optimum of group g is `optimum(g, c)`."""
    rows, on_profiles = [], 0
    for c in np.unique(C):
        g = data[C == c]
        if g["N"].nunique() < 3:
            continue
        on_profiles += len(g)
        v = budget_minima(g[["N", "loss"]].assign(C=c, budget=0), 2)[0, 1]
        if np.isfinite(v) and g["N"].min() <= v <= g["N"].max():
            w = optimum(g, c)
            if np.isfinite(w) and w > 0:
                rows.append((v, w))
    if len(rows) < MIN_BUDGETS or on_profiles < MIN_PROFILE_SHARE * len(data):
        return None
    vb, wb = np.array(rows).T
    r = np.log(vb) - np.log(wb)
    return {"rms": float(np.sqrt(np.mean(r**2))), "n": len(rows)}


def allocation_interval(est, C, level: float, accounting: str, chinchilla_forms) -> dict:
    """N*, D*, L* intervals of a fitted `SupervisedScalingLaw` at budget(s) C: percentiles over
    its bootstrap refits; where its runs showed isoFLOP optima (`meta.allocation`), N* and D*
    get sqrt((z s_boot)^2 + (t_{n-1} rms sqrt(1 + 1/n))^2) in ln around the point: the
    refits' spread and the runs' optima's offset from the law, the Student t on the part
    estimated from n budgets only (docs/trust.md, "Compute-optimal N*"). An interval that
    excludes its point or spans more than three decades is NaN, its reason under
    "not_identified" (`consistency.checked_rows`); runs at one D/N are refused."""
    from scipy.special import stdtrit

    est._check()
    form = est._fitted_form()
    if form not in chinchilla_forms or est.result_.meta.get("average"):
        raise InputError(f"allocate_interval supports {chinchilla_forms}, not {form!r}")
    check_split(est)
    law = get_law(form)
    rows = [compute_optimal(law.to_natural(th), C, accounting) for th in est.result_.bootstrap]
    if not rows:
        preset = est.result_.meta.get("preset")
        raise InputError(
            f"the {preset!r} preset has no bootstrap refits for an N*, D* interval (its published "
            "CIs give only the loss's forecast interval)"
            if preset
            else "no bootstrap refits for an N*, D* interval: fit with bootstrap >= 2"
        )
    a = (1 - level) / 2
    out = {}
    for key in ("N", "D", "loss"):
        vals = np.array([getattr(r, key) for r in rows])
        out[key] = np.array(percentile_interval(vals, level))
    sc = est.result_.meta.get("allocation")
    if sc:
        point = est.allocate(C, accounting=accounting)
        z, t = normal_ppf(1 - a), stdtrit(int(sc["n"]) - 1, 1 - a)
        for key in ("N", "D"):
            lo, hi = np.log(out[key])
            s_boot = (hi - lo) / (2 * z)
            h = np.hypot(z * s_boot, t * sc["rms"] * np.sqrt(1 + 1 / sc["n"]))
            c = np.log(np.asarray(getattr(point, key), float))
            out[key] = np.exp(np.stack([c - h, c + h]))
    point = est.allocate(C, accounting=accounting)
    own = compute_optimal(est.params_, C, accounting)  # the form's L*, which the refits spread
    notes = []
    for key, label in (("N", "N*"), ("D", "D*"), ("loss", "L*")):
        at = getattr(own if key == "loss" else point, key)
        lo, hi, why = checked_rows(at, out[key][0], out[key][1], label)
        out[key] = np.stack([lo, hi]).reshape(np.shape(out[key]))
        notes += why
    out["not_identified"] = notes
    return out


def check_split(est) -> None:
    """Refuse N*/D* from runs whose D/N barely varies (`consistency.split_problem`)."""
    why = split_problem(est.result_.meta)
    if why:
        raise InputError(f"runs: {why}")


def allocation_ranges(model, flops, level, accounting) -> dict | None:
    """{"N": [lo, hi], "D": [lo, hi], "loss": [lo, hi]} of N*, D*, L* over the bootstrap refits,
    or None where the fit has no bootstrap (presets) or its form has no closed-form optimum."""
    try:
        q = model.allocate_interval(flops, level=level, accounting=accounting)
    except ValueError:
        return None
    out = {k: interval_pair(q[k]) for k in ("N", "D", "loss")}
    return out | {"not_identified": list(q.get("not_identified", []))}


def interval_pair(v) -> list[float] | None:
    """[lo, hi] of one budget's interval, or None where it was refused (NaN: not identified)."""
    lo, hi = float(np.ravel(v[0])[0]), float(np.ravel(v[1])[0])
    return [lo, hi] if np.isfinite(lo) and np.isfinite(hi) else None


ALLOCATION_CAVEAT = (
    "(the N*/D* intervals are the law's sampling spread only, not calibrated: on held-out "
    "isoFLOP optima such intervals covered 0.53 (default form) and 0.07 (chinchilla; "
    "docs/trust.md); with isoFLOP profiles, `isoflop fit --flops` gives a prediction interval)"
)


def allocation_note(model) -> str:
    """What the N*/D* intervals of a fit hold: the runs' optima scatter where the fit has one,
    else `ALLOCATION_CAVEAT`."""
    sc = model.result_.meta.get("allocation")
    if not sc:
        return ALLOCATION_CAVEAT
    return (
        "(the N*/D* intervals include the scatter of the runs' own isoFLOP optima about the "
        f"law's N*: {sc['n']} budgets, rms {sc['rms']:.3g} in ln N*; docs/trust.md)"
    )
