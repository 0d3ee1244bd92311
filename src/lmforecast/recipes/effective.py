"""Effective compute between two training recipes.

Each recipe's loss frontier is fitted as L(C) = E + A C^-a (the registered `compute-power` law,
shared engine) to the best run of every compute budget; "recipe B at budget C reaches the loss
recipe A reaches at k x C" gives the multiplier k(C) = L_A^{-1}(L_B(C)) / C. The interval is
the percentile interval of k over paired bootstrap refits of both frontiers (resampled
frontier points, warm-started); a draw in which B beats A's floor E_A has k = inf, and an
interval with an infinite end is reported as failed (None), never as covering.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from ..data.validate import check_min_rows, numeric_column
from ..display import SummaryDisplay
from ..errors import DomainWarning, InputError
from ..fitting import fit_law, huber
from ..laws import get_law
from ..store import dump_json, load_json, source_label
from ..uncertainty.bootstrap import bootstrap_fit
from ..uncertainty.percentile import percentile_interval
from .schema import KIND, check_comparison


def frontier(df: pd.DataFrame, what: str, n_col="N", d_col="D", c_col="C", loss_col="loss"):
    """(C, loss) of the best run at every compute budget (C rounded to 3 significant digits;
    C = 6ND when the table has no C column)."""
    cols = list(df.columns)
    if c_col in cols:
        C = numeric_column(df, c_col, positive=True, what=what)
        if n_col in cols and d_col in cols:  # both given: say when they disagree
            nd = (
                6.0
                * numeric_column(df, n_col, positive=True, what=what)
                * numeric_column(df, d_col, positive=True, what=what)
            )
            r = float(np.median(C / nd))
            if not 0.5 < r < 2.0:
                warnings.warn(
                    f"{what}: column {c_col!r} is {r:.3g}x 6 N D (median over rows); the "
                    f"budgets and the multiplier use {c_col!r}: check its units (6 N D counts "
                    "the usual training FLOPs; attention adds well under 2x)",
                    DomainWarning,
                    stacklevel=3,
                )
    elif n_col in cols and d_col in cols:
        C = (
            6.0
            * numeric_column(df, n_col, positive=True, what=what)
            * numeric_column(df, d_col, positive=True, what=what)
        )
    else:
        raise InputError(
            f"{what}: needs a compute column {c_col!r} or both {n_col!r} and "
            f"{d_col!r}; found {', '.join(map(repr, cols))}"
        )
    L = numeric_column(df, loss_col, positive=True, what=what)
    key = np.array([float(f"{v:.3g}") for v in C])
    f = pd.DataFrame({"C": key, "loss": L}).groupby("C", sort=True)["loss"].min()
    check_min_rows(
        len(f), 4, what, "compute budgets; the frontier L(C) = E + A C^-a has 3 parameters"
    )
    return f.index.to_numpy(float), f.to_numpy(float)


@dataclass
class RecipeComparison(SummaryDisplay):
    """k(C): recipe `new` at C matches recipe `base` at k C. `interval` is None when a
    bootstrap draw put `new` below `base`'s floor (k unbounded)."""

    flops: float
    multiplier: float
    interval: list[float] | None
    level: float
    base_params: dict
    new_params: dict
    overlap: list[float]
    extrapolated: bool
    n_boot: int
    n_infinite: int
    curve: dict = field(default_factory=dict)

    def contract(self) -> dict:
        return asdict(self)

    def to_json(self, path=None) -> str:
        return dump_json({"kind": KIND, "format_version": 1, **asdict(self)}, path)

    @classmethod
    def from_json(cls, text_or_path) -> RecipeComparison:
        d = load_json(text_or_path, "saved recipe comparison")
        check_comparison(d, source_label(text_or_path))
        return cls(**{k: v for k, v in d.items() if k not in ("kind", "format_version")})

    def summary(self) -> str:
        if self.interval:
            iv = f"[{self.interval[0]:.3g}, {self.interval[1]:.3g}]"
        elif not self.n_boot:
            iv = "not computed (--bootstrap 0)"
        else:
            iv = "unbounded (a resample put the new recipe below the base's floor)"
        ex = " (outside both recipes' shared budgets: extrapolated)" if self.extrapolated else ""
        return (
            f"At C = {self.flops:.4g} FLOPs{ex}, the new recipe reaches the loss the base "
            f"recipe reaches at k x C: k = {self.multiplier:.3g}, "
            f"{100 * self.level:g}% interval {iv}"
        )


def compare_recipes(
    base: pd.DataFrame,
    new: pd.DataFrame,
    flops: float,
    *,
    n_boot: int = 200,
    level: float = 0.9,
    seed: int = 0,
    **cols,
) -> RecipeComparison:
    """Effective-compute multiplier of `new` over `base` at `flops` (see module doc)."""
    if not flops > 0:
        raise InputError(f"--flops (flops=) must be > 0, got {flops}")
    Ca, La = frontier(base, "base", **cols)
    Cb, Lb = frontier(new, "new", **cols)
    lo, hi = max(Ca.min(), Cb.min()), min(Ca.max(), Cb.max())
    if lo > hi:
        raise InputError(
            f"base budgets span [{Ca.min():.3g}, {Ca.max():.3g}] FLOPs and new budgets "
            f"[{Cb.min():.3g}, {Cb.max():.3g}]: no overlapping budgets to compare on"
        )
    law = get_law("compute-power")
    fits = []
    for i, (C, L) in enumerate(((Ca, La), (Cb, Lb))):
        r = fit_law(law, {"C": C}, L, loss=huber(1e-3), n_polish=8)
        if n_boot:
            bootstrap_fit(
                law, {"C": C}, L, r, n_boot=n_boot, level=level, seed=seed + i, n_jobs=1, n_starts=1
            )
        fits.append(r)
    ra, rb = fits
    k = _multiplier(law, np.asarray(ra.theta)[None], np.asarray(rb.theta)[None], flops)[0]
    interval, n_inf = None, 0
    if n_boot:
        ks = _multiplier(law, np.asarray(ra.bootstrap), np.asarray(rb.bootstrap), flops)
        n_inf = int((~np.isfinite(ks)).sum())
        with np.errstate(invalid="ignore"):  # inf draws: the interval is unbounded, said below
            q = np.array(percentile_interval(ks, level))
        interval = q.tolist() if np.isfinite(q).all() else None
    grid = np.geomspace(lo, hi, 9)
    curve = {
        "C": grid.tolist(),
        "multiplier": _multiplier(
            law, np.asarray(ra.theta)[None], np.asarray(rb.theta)[None], grid
        ).tolist(),
    }
    return RecipeComparison(
        flops=float(flops),
        multiplier=float(k),
        interval=interval,
        level=level,
        base_params=ra.params,
        new_params=rb.params,
        overlap=[float(lo), float(hi)],
        extrapolated=not lo <= flops <= hi,
        n_boot=n_boot,
        n_infinite=n_inf,
        curve=curve,
    )


def _multiplier(law, ta, tb, C) -> np.ndarray:
    """k = L_A^{-1}(L_B(C)) / C for paired thetas (S, 3); (S,) for scalar C, else (S, n)->(n,)
    when S = 1."""
    C = np.atleast_1d(np.asarray(C, float))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):  # counted, not printed
        return _multiplier_raw(law, ta, tb, C)


def _multiplier_raw(law, ta, tb, C: np.ndarray) -> np.ndarray:
    Lb = np.exp(law.predict_target(tb, {"C": C}))  # (S, n)
    S = max(len(ta), len(tb))
    ta = np.broadcast_to(ta, (S, ta.shape[1]))
    Ceq = np.stack([law.inverse(ta, Lb[:, j]) for j in range(C.size)], axis=1)
    k = Ceq / C[None, :]
    return k[:, 0] if C.size == 1 else k[0]
