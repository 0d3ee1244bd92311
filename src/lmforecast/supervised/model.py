"""Supervised scaling law for pretraining loss, as a scikit-learn-style estimator.

Forms: `chinchilla` (Hoffmann et al. 2022, Approach 3) and `chinchilla-gamma` (Busbridge et al.
2025, Eq. 1), fitted by Huber on log loss with L-BFGS-B over the paper's initialisation grid
(App. F.1), with bootstrap intervals and compute-optimal allocation (Eq. 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..compute.allocation import Allocation, compute_optimal
from ..compute.flops import DISTILLATION_PAPER, Architecture
from ..data.validate import check_no_duplicates, numeric_column
from ..errors import InputError
from ..fitting import FitResult, bootstrap_fit, fit_law, huber, squared
from ..laws import get_law
from .presets import PRESETS

FORMS = ("chinchilla", "chinchilla-gamma")


def runs_from_frame(
    df: pd.DataFrame,
    n_col: str = "N",
    d_col: str = "D",
    c_col: str = "C",
    loss_col: str = "loss",
    what: str = "runs",
) -> pd.DataFrame:
    """Validate a runs table and return columns N, D, loss (D = C/(6N) when only C is given)."""
    cols = list(df.columns)
    if n_col not in cols or loss_col not in cols or (d_col not in cols and c_col not in cols):
        need = [n_col, f"{d_col} (or {c_col})", loss_col]
        missing = [
            c
            for c, ok in zip(
                need, [n_col in cols, d_col in cols or c_col in cols, loss_col in cols]
            )
            if not ok
        ]
        raise InputError(
            f"{what}: missing column(s) {', '.join(map(repr, missing))}; found "
            f"{', '.join(map(repr, cols))} (name them with --n-col/--d-col/--c-col/"
            "--loss-col)"
        )
    N = numeric_column(df, n_col, positive=True, what=what)
    if d_col in cols:
        D = numeric_column(df, d_col, positive=True, what=what)
    else:
        D = numeric_column(df, c_col, positive=True, what=what) / (6.0 * N)
    L = numeric_column(df, loss_col, positive=True, what=what)
    out = pd.DataFrame({"N": N, "D": D, "loss": L})
    check_no_duplicates(out, ["N", "D"], what=what, values=["loss"])
    return out


class SupervisedScalingLaw:
    """Fit L(N, D) to training runs; predict, allocate compute, and report.

    Parameters mirror the papers' procedures: `huber_delta=1e-3` is Hoffmann et al.'s, 1e-4 the
    distillation paper's. `grid=None` uses the form's published grid (4,500 or 9,600 starts).
    Learned attributes end in `_`: `result_`, `params_`.
    """

    def __init__(
        self,
        form: str = "chinchilla-gamma",
        *,
        loss: str = "huber",
        huber_delta: float = 1e-3,
        grid: Mapping[str, np.ndarray] | None = None,
        n_polish: int = 32,
        bootstrap: int = 0,
        ci_level: float = 0.9,
        seed: int = 0,
        n_jobs: int = -1,
        progress: bool = False,
    ) -> None:
        if form not in FORMS:
            raise InputError(f"unknown form {form!r}; use one of {', '.join(FORMS)}")
        if loss not in ("huber", "squared"):
            raise InputError(f"unknown loss {loss!r}; use 'huber' or 'squared'")
        if loss == "huber" and not huber_delta > 0:
            raise InputError(f"--huber-delta must be > 0, got {huber_delta}")
        if bootstrap < 0:
            raise InputError(f"bootstrap must be >= 0, got {bootstrap}")
        self.form, self.loss, self.huber_delta = form, loss, huber_delta
        self.grid, self.n_polish, self.bootstrap = grid, n_polish, bootstrap
        self.ci_level, self.seed, self.n_jobs, self.progress = ci_level, seed, n_jobs, progress

    # ---- fitting ---------------------------------------------------------------------------
    def fit(
        self, runs: pd.DataFrame | Mapping | None = None, *, N=None, D=None, loss=None, **cols
    ) -> SupervisedScalingLaw:
        """Fit to a table (columns N, D or C, loss; rename with n_col=..., etc.) or arrays."""
        if runs is None:
            runs = pd.DataFrame({"N": N, "D": D, "loss": loss})
        elif not isinstance(runs, pd.DataFrame):
            runs = pd.DataFrame(dict(runs))
        data = runs_from_frame(runs, **cols)
        law = get_law(self.form)
        X = {"N": data["N"].to_numpy(), "D": data["D"].to_numpy()}
        y = data["loss"].to_numpy()
        lossf = huber(self.huber_delta) if self.loss == "huber" else squared()
        res = fit_law(
            law, X, y, loss=lossf, grid=self.grid, n_polish=self.n_polish, progress=self.progress
        )
        if self.bootstrap:
            bootstrap_fit(
                law,
                X,
                y,
                res,
                n_boot=self.bootstrap,
                level=self.ci_level,
                seed=self.seed,
                n_jobs=self.n_jobs,
                progress=self.progress,
            )
        res.meta["form"] = self.form
        self.result_ = res
        self.params_ = dict(res.params)
        self.data_ = data
        return self

    @classmethod
    def from_preset(cls, name: str) -> SupervisedScalingLaw:
        """A law with published coefficients: busbridge2025, hoffmann2022, besiroglu2024."""
        if name not in PRESETS:
            raise InputError(f"unknown preset {name!r}; known: {', '.join(sorted(PRESETS))}")
        p = PRESETS[name]
        law = get_law(p["form"])
        theta = law.from_natural(p["params"])
        res = FitResult.from_published(
            p["form"],
            theta.tolist(),
            p["params"],
            ci=p["ci"],
            ci_level=p["ci_level"],
            n_obs=p["n_obs"],
            loss={"name": "huber", "delta": 1e-3},
            meta={"preset": name, "source": p["source"], "form": p["form"]},
        )
        return cls.from_result(res)

    @classmethod
    def from_result(cls, res: FitResult) -> SupervisedScalingLaw:
        if res.law not in FORMS:
            raise InputError(
                f"fit is a {res.law!r} law, not a supervised form ({', '.join(FORMS)})"
            )
        est = cls(form=res.law, huber_delta=res.loss.get("delta") or 1e-3)
        est.result_ = res
        est.params_ = dict(res.params)
        return est

    @classmethod
    def load(cls, path: str | Path) -> SupervisedScalingLaw:
        res = FitResult.from_json(Path(path))
        try:
            return cls.from_result(res)
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None

    def save(self, path: str | Path) -> None:
        self._check()
        self.result_.to_json(path)

    # ---- using the law ---------------------------------------------------------------------
    def _check(self):
        if not hasattr(self, "result_"):
            raise RuntimeError("this SupervisedScalingLaw is not fitted yet; call fit() first")

    def predict(self, N, D) -> np.ndarray:
        """Loss L(N, D) (Eq. 1)."""
        self._check()
        return self.result_.predict(N=N, D=D)

    def predict_interval(self, N, D, level: float = 0.9, kind: str = "confidence"):
        self._check()
        return self.result_.predict_interval(level=level, kind=kind, N=N, D=D)

    def allocate(
        self, C, accounting: str = "6ND", arch: Architecture = DISTILLATION_PAPER
    ) -> Allocation:
        """Compute-optimal N*, D*, L* for budget(s) C under 6ND or 3F(N)D accounting (Eq. 2)."""
        self._check()
        return compute_optimal(self.params_, C, accounting, arch)

    def allocate_interval(self, C, level: float = 0.9, accounting: str = "6ND"):
        """Percentile interval of N*, D*, L* over the bootstrap refits."""
        self._check()
        law = get_law(self.form)
        rows = [compute_optimal(law.to_natural(th), C, accounting) for th in self.result_.bootstrap]
        if not rows:
            raise ValueError("no bootstrap samples: fit with bootstrap > 0")
        a = (1 - level) / 2
        out = {}
        for key in ("N", "D", "loss"):
            vals = np.array([getattr(r, key) for r in rows])
            out[key] = np.quantile(vals, [a, 1 - a], axis=0)
        return out

    def summary(self) -> str:
        self._check()
        s = self.result_.summary()
        src = self.result_.meta.get("source")
        return s + (f"\nSource: {src}" if src else "")

    @property
    def exponents_(self) -> dict[str, float]:
        """a = beta/(alpha+beta) (N* ~ C^a) and b = alpha/(alpha+beta) (D* ~ C^b)."""
        al, be = self.params_["alpha"], self.params_["beta"]
        return {"a": be / (al + be), "b": al / (al + be)}
