"""Priors for the multi-power-law parameters a run's own points cannot identify.

A prefix of one run at a constant learning rate says nothing about how the loss answers a
decay (B, C, beta, gamma of Luo et al. 2025, Eq. 8-9: the drop term LD(t)); fitted alone, that
answer is "not identified". With a `CurvePrior` those parameters are held at values fitted on
other runs (other models' curves), the run's prefix fits the rest (L0, A, alpha), and the
intervals add the prior's spread: each resampling replicate draws the held parameters from the
prior (a normal in fit space: log B, log C, beta, gamma) and moves the fitted ones to the
least-squares answer to that draw.

The bundled ``"mpl-25m"`` prior: the decay parameters fitted by `CurveLaw` to all nine 25M
curves of the multi-power-law authors' public repository (``loss_curve_repo``, MIT licence;
only these fitted numbers are bundled, not the curves), with the spread of log B chosen by the
mid-run backtests on the 25M curves (benchmarks/curves_midrun_backtest.py, docs/curves.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..fitting.threads import single_blas_thread
from .fit import bounds_for
from .laws import LAWS, LOG_PARAMS, value

HELD = ("B", "C", "beta", "gamma")  # the decay response (the drop term's parameters)


@dataclass(frozen=True)
class CurvePrior:
    """Values (natural units) of the held parameters, their spreads (standard deviations in fit
    space: of log B and log C, of beta and gamma as they are), where they come from, and
    `widen`: a factor on the half-widths of the forecasts of a fit that uses the prior (a short
    prefix's own resampling understates how far its L0 + A S^-alpha extrapolates)."""

    values: dict
    spread: dict = field(default_factory=dict)
    source: str = ""
    law: str = "mpl"
    widen: float = 1.0

    def __post_init__(self):
        names = LAWS.get(self.law, ())
        if self.law != "mpl":
            raise InputError(f"CurvePrior: law {self.law!r}: only the 'mpl' law takes a prior")
        for k, v in {**self.values, **self.spread}.items():
            if k not in HELD:
                raise InputError(
                    f"CurvePrior: {k!r} is not one of the held parameters "
                    f"{', '.join(HELD)} of {', '.join(names)}"
                )
            if not (isinstance(v, int | float) and np.isfinite(v)):
                raise InputError(f"CurvePrior: {k} must be a finite number, got {v!r}")
        if set(self.values) != set(HELD):
            raise InputError(f"CurvePrior: values must give {', '.join(HELD)}")
        if any(v < 0 for v in self.spread.values()):
            raise InputError("CurvePrior: a spread must be >= 0")
        if any(self.values[k] <= 0 for k in ("B", "C")):
            raise InputError("CurvePrior: B and C must be > 0")
        if not (isinstance(self.widen, int | float) and 1 <= self.widen < np.inf):
            raise InputError(f"CurvePrior: widen must be a number >= 1, got {self.widen!r}")

    def to_dict(self) -> dict:
        return {
            "law": self.law,
            "values": {k: float(self.values[k]) for k in HELD},
            "spread": {k: float(v) for k, v in self.spread.items()},
            "source": self.source,
            "widen": float(self.widen),
        }

    def fit_values(self) -> np.ndarray:
        """The held parameters in fit space (log B, log C, beta, gamma)."""
        idx = [LAWS[self.law].index(k) for k in HELD]
        return np.array(
            [
                np.log(self.values[k]) if i in LOG_PARAMS[self.law] else self.values[k]
                for k, i in zip(HELD, idx, strict=True)
            ]
        )

    def fit_spread(self) -> np.ndarray:
        return np.array([float(self.spread.get(k, 0.0)) for k in HELD])

    @classmethod
    def from_fit(
        cls, est, spread: dict | None = None, source: str = "", widen: float = 1.0
    ) -> CurvePrior:
        """The prior from a fitted `CurveLaw` of other runs: the held parameters' mean over its
        models (in fit space)."""
        if getattr(est, "law", None) != "mpl" or "models_" not in est.__dict__:
            raise InputError("CurvePrior.from_fit: needs a fitted CurveLaw(law='mpl')")
        idx = [LAWS["mpl"].index(k) for k in HELD]
        z = np.mean([np.asarray(m["z"], float)[idx] for m in est.models_.values()], axis=0)
        vals = {
            k: float(np.exp(v)) if i in LOG_PARAMS["mpl"] else float(v)
            for k, v, i in zip(HELD, z, idx, strict=True)
        }
        return cls(vals, dict(spread or {}), source or "a CurveLaw fit of other runs", "mpl", widen)


#: the spread of log B and the widening, chosen together on the 25M mid-run backtests (each
#: run's prior fitted on the other eight 25M runs): the narrowest median 90% interval whose
#: pooled coverage of the 27 "alone, with prior" forecasts reaches 90% (93%); reported on 100M
#: and 400M (benchmarks/curves_midrun_backtest.py, docs/curves.md)
SPREAD_25M = {"B": 0.1}
WIDEN_25M = 2.5
BUNDLED = {
    "mpl-25m": CurvePrior(
        {"B": 341.23, "C": 0.0033528, "beta": 3.3929, "gamma": 0.99742},
        SPREAD_25M,
        "CurveLaw fit of the nine 25M curves of Luo et al. 2025 (loss_curve_repo, MIT); "
        "fitted numbers only",
        "mpl",
        WIDEN_25M,
    ),
}


def resolve(prior) -> CurvePrior | None:
    """A `CurvePrior` from None, a bundled name, a dict (`CurvePrior.to_dict`) or a prior."""
    if prior is None or isinstance(prior, CurvePrior):
        return prior
    if isinstance(prior, str):
        if prior not in BUNDLED:
            raise InputError(
                f"CurveLaw: prior {prior!r} is not one of {', '.join(BUNDLED)} (or a CurvePrior)"
            )
        return BUNDLED[prior]
    if isinstance(prior, dict):
        extra = set(prior) - {"law", "values", "spread", "source", "widen"}
        if extra or "values" not in prior:
            raise InputError(
                "CurveLaw: a prior dict needs 'values' and may give 'spread', "
                "'source', 'law', 'widen' "
                f"(got {', '.join(map(str, prior))})"
            )
        return CurvePrior(
            dict(prior["values"]),
            dict(prior.get("spread", {})),
            str(prior.get("source", "")),
            str(prior.get("law", "mpl")),
            prior.get("widen", 1.0),
        )
    raise InputError(
        f"CurveLaw: prior must be None, a name, a dict or a CurvePrior, got {type(prior).__name__}"
    )


def held_index(law: str) -> tuple[np.ndarray, np.ndarray]:
    """(free, held) column indices of the law's parameters."""
    names = LAWS[law]
    held = np.array([names.index(k) for k in HELD])
    free = np.array([i for i in range(len(names)) if i not in set(held)])
    return free, held


def fit_with_prior(law, d, y, loss, prior: CurvePrior, alphas=(0.2, 0.35, 0.5, 0.8)):
    """Fit-space parameters with the held ones at the prior and L0, A, alpha fitted (Huber on
    log residuals, trust-region least squares from a few alpha starts, L0 and A there by least
    squares); returns (z, Huber objective)."""
    from scipy.optimize import least_squares  # imported when fitting only

    free, held = held_index(law)
    bounds = bounds_for(law, y)
    lo = np.array([bounds[i][0] if bounds[i][0] is not None else -np.inf for i in free])
    hi = np.array([bounds[i][1] if bounds[i][1] is not None else np.inf for i in free])
    lo[0], hi[0] = 0.0, float(np.min(y)) * (1 - 1e-9)
    ly = np.log(y)
    z = np.zeros(len(LAWS[law]))
    z[held] = prior.fit_values()

    def full(zf):
        out = z.copy()
        out[free] = zf
        return out

    def resid(zf):
        return np.log(np.maximum(value(law, full(zf), d), 1e-300)) - ly

    def jac(zf):
        p, J = value(law, full(zf), d, jac=True)
        return J[:, free] / np.maximum(p, 1e-300)[:, None]

    kw = {"loss": "huber", "f_scale": loss.delta} if loss.name == "huber" else {}
    best = None
    with single_blas_thread():
        for a in alphas:
            u = np.maximum(d.s1w, 1e-300) ** (-a)
            bld = u - value(law, full(np.array([0.0, 0.0, a])), d)  # B LD (L0 = 0, A = 1)
            X = np.column_stack([np.ones_like(u), u])
            c, *_ = np.linalg.lstsq(X, y + bld, rcond=None)
            L0 = float(np.clip(c[0], 0.0, hi[0] * (1 - 1e-6)))
            A = float(max(c[1], 1e-6))
            z0 = np.clip(np.array([L0, np.log(A), a]), lo + 1e-9, hi - 1e-9)
            r = least_squares(
                resid, z0, jac=jac, bounds=(lo, hi), method="trf", x_scale="jac", max_nfev=400, **kw
            )
            if best is None or r.cost < best.cost:
                best = r
    zf = full(best.x)
    res = np.log(value(law, zf, d)) - ly
    return zf, float(np.sum(loss.value(res)))


def prior_steps(Jl, free_steps, prior: CurvePrior, law: str, rng) -> np.ndarray:
    """(R, P) replicate steps: the fitted parameters' resampled steps, plus for each replicate a
    draw of the held parameters from the prior and the fitted parameters' least-squares answer
    to it (the change a refit of the points would make)."""
    free, held = held_index(law)
    R = free_steps.shape[0]
    out = np.zeros((R, Jl.shape[1]))
    out[:, free] = free_steps
    sd = prior.fit_spread()
    if R == 0 or not np.any(sd > 0):
        return out
    dh = rng.standard_normal((R, held.size)) * sd
    back = np.linalg.lstsq(Jl[:, free], Jl[:, held] @ dh.T, rcond=None)[0].T
    out[:, held] = dh
    out[:, free] -= back
    return out


__all__ = [
    "BUNDLED",
    "HELD",
    "CurvePrior",
    "fit_with_prior",
    "held_index",
    "prior_steps",
    "resolve",
]
