"""The distillation scaling law (Busbridge et al. 2025, Eq. 8) as a scikit-learn-style estimator.

`DistillationScalingLaw` pairs a supervised law L(N, D) (Eq. 1; gives the teacher loss
L_T = L(N_T, D_T) and the student's supervised loss L~_S = L(N_S, D_S)) with the student law.
Fitting follows App. F.2: Huber (delta = 1e-4) on log L_S (Eq. 50, read as log-minus-log),
L-BFGS-B from the best of the 216,000-start grid, and bootstrap percentile intervals (Table 6)
with every resample multi-started (`uncertainty.py`), so intervals and the identifiability report
reflect every basin the data allow; forecasts carry prediction intervals by default.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DomainWarning, InputError, not_fitted
from ..estimator import Estimator, point, scalar_like
from ..fitting import FitResult, fit_law, huber
from ..laws import get_law
from ..laws.distillation import DistillationLaw
from ..params import check
from ..uncertainty.bootstrap import bootstrap_fit
from . import capacity_gap, diagnostics, uncertainty
from .checks import fitted_ranges, run_notes
from .fitting import fixed_grid, score_product_grid
from .inputs import (
    _supervised_from,
    _supervised_source,
    distill_runs_from_frame,
    resolve_supervised,
)
from .presets import DISTILL_PRESETS, preset_fit
from .schema import LAW_NAME, check_distill_fit
from .teacher_uncertainty import apply_shift, saved_supervised
from .uncertainty import (
    LOO_MAX_RUNS,
    bootstrap_grid,
    loo_noise,
    multistart_bootstrap,
    tiny_bootstrap_note,
)


class DistillationScalingLaw(Estimator):
    """Student cross-entropy from student size, distillation tokens and teacher loss (Eq. 8).

    Parameters
    ----------
    supervised: the supervised law giving L_T = L(N_T, D_T) and L~_S = L(N_S, D_S) (Eq. 1).
        None (default): fitted in `fit()` to the supervised runs of the same table, the rows
        with an empty L_T (N_S, D_S, L_S read as N, D, L; App. F.1 procedure: Huber 1e-4 on
        log L, the 9,600-start grid); `fit()` raises InputError when there are none. Otherwise
        an explicit choice: "busbridge2025" (alias "paper": Table 6, English C4 only), another
        supervised preset, a saved supervised fit (.json), a `SupervisedScalingLaw`, or a
        dict of Eq. 1 coefficients. `supervised_source_` says which law was used.
    huber_delta: Huber delta on log-loss residuals (1e-4 in App. F.2).
    grid: fit-space initialisation grid (dict of axes); None = the full App. F.2 grid.
    n_polish: number of best grid starts polished with L-BFGS-B.
    fixed: natural coefficients to hold fixed, e.g. {"gamma'": 0.764} (a profile along the
        identifiability ridge, see docs/distill.md).
    bootstrap: resamples for percentile intervals and prediction intervals (default 32; 0 =
        none, then forecasts have no interval; the paper used 4,096).
    boot_polish: grid starts polished per resample besides the full-data optimum (default 4;
        0 = warm-start-only resamples, which cannot leave the full-data basin: too narrow).
    boot_grid: the grid each resample re-scores: "thin" (default, `uncertainty.BOOTSTRAP_GRID`,
        8,748 starts), "full" (App. F.2, 216,000 starts) or a dict of axes.

    Learned attributes: `result_` (FitResult), `params_`, `data_`. Intervals and the
    uncertainty report are computed in `distill.uncertainty`, the coefficient table,
    identifiability, summary and contract in `distill.diagnostics`.
    """

    def __init__(
        self,
        supervised=None,
        *,
        huber_delta: float = 1e-4,
        grid: Mapping[str, np.ndarray] | None = None,
        n_polish: int = 16,
        fixed: Mapping[str, float] | None = None,
        bootstrap: int = 32,
        boot_polish: int = 4,
        boot_grid="thin",
        ci_level: float = 0.9,
        seed: int = 0,
        n_jobs: int = -1,
        progress: bool = False,
    ) -> None:
        if not huber_delta > 0:
            raise InputError(f"huber_delta must be > 0, got {huber_delta}")
        check("bootstrap", bootstrap)
        if boot_polish < 0:
            raise InputError(f"boot_polish must be >= 0, got {boot_polish}")
        check("ci_level", ci_level)
        self.supervised = supervised
        self.huber_delta, self.grid, self.n_polish, self.fixed = huber_delta, grid, n_polish, fixed
        self.bootstrap, self.ci_level, self.seed = bootstrap, ci_level, seed
        self.boot_polish, self.boot_grid = boot_polish, boot_grid
        self.n_jobs, self.progress = n_jobs, progress
        if supervised is not None:  # explicit: resolve now so a bad name fails early
            self.supervised_ = _supervised_from(supervised)
            self.supervised_source_ = _supervised_source(supervised)

    # ---- fitting ---------------------------------------------------------------------------
    def fit(self, runs=None, *, N_S=None, D_S=None, L_T=None, L_S=None, **cols):
        """Fit Eq. 8 to runs with columns N_S, D_S, L_T, L_S (rename with ns_col=... etc.).

        Order of App. F: the supervised law first (from the rows with an empty L_T unless one
        was given to the constructor), then Eq. 8 with L~_S from it and each run's measured L_T.
        Warns (DomainWarning, naming the row) on runs with L_S at or below the supervised law's
        E, L_S more than 0.1 nats below L_T, or sizes/tokens that look like the wrong units
        (`checks.run_notes`); keeps the runs' ranges of N_S, D_S, D_S/N_S, L_T and model sizes
        in ``result_.meta["ranges"]`` (saved), which forecasts check (`checks.range_notes`).
        """
        if runs is None:
            runs = pd.DataFrame({"N_S": N_S, "D_S": D_S, "L_T": L_T, "L_S": L_S})
        elif not isinstance(runs, pd.DataFrame):
            runs = pd.DataFrame(dict(runs))
        runs = runs.reset_index(drop=True)  # index + 1 = the row number warnings name
        data, sup_runs = distill_runs_from_frame(runs, supervised_rows=True, **cols)
        fitted = resolve_supervised(
            self.supervised, sup_runs, cols.get("lt_col", "L_T"), self.huber_delta
        )
        if fitted is not None:
            self.supervised_, self.supervised_source_ = fitted
        for note in run_notes(data, self.E_, cols):
            warnings.warn(note, DomainWarning, stacklevel=2)
        sizes = [sup_runs["N"].to_numpy(float)]
        if "N_T" in runs.columns and cols.get("ns_col", "N_S") != "N_T":
            sizes.append(pd.to_numeric(runs["N_T"], errors="coerce").to_numpy(float))
        ranges = fitted_ranges(data, np.concatenate(sizes))
        data = data.reset_index(drop=True)
        law: DistillationLaw = get_law(LAW_NAME)
        n_free = len(law.parameters) - len(self.fixed or {})
        if len(data) < n_free:
            raise InputError(
                f"runs: {len(data)} rows but Eq. 8 has {n_free} free coefficients"
                + (f" ({len(self.fixed)} fixed)" if self.fixed else "")
            )
        self._warn_domain(data["L_T"].to_numpy())
        X = self._inputs(data["N_S"], data["D_S"], data["L_T"])
        y = data["L_S"].to_numpy()
        loss = huber(self.huber_delta)
        grid, bounds = self._grid_and_bounds(law)
        starts, scores = score_product_grid(law, X, law.target_of(y), loss, grid)
        res = fit_law(
            law,
            X,
            y,
            loss=loss,
            grid=starts,
            scores=scores,
            bounds=bounds,
            n_polish=self.n_polish,
            progress=self.progress,
        )
        if self.bootstrap and self.boot_polish:
            fixed_axes = {k: v for k, v in grid.items() if k in self._fixed_axes}
            multistart_bootstrap(
                law,
                X,
                y,
                res,
                n_boot=self.bootstrap,
                grid=bootstrap_grid(law, self.boot_grid, fixed_axes),
                n_polish=self.boot_polish,
                level=self.ci_level,
                seed=self.seed,
                n_jobs=self.n_jobs,
                bounds=bounds,
                progress=self.progress,
            )
        elif self.bootstrap:  # warm-start only: kept for comparison (too narrow, see docs)
            bootstrap_fit(
                law,
                X,
                y,
                res,
                n_boot=self.bootstrap,
                level=self.ci_level,
                seed=self.seed,
                n_jobs=self.n_jobs,
                bounds=bounds,
                progress=self.progress,
            )
            res.meta["bootstrap"] = {"mode": "warm-start", "n_polish": 0}
        note = tiny_bootstrap_note(self.bootstrap, res.params, res.ci, self.ci_level)
        if note:
            warnings.warn(note, stacklevel=2)
        res.meta.update(
            supervised=self.supervised_.params_,
            supervised_fit=self.supervised_.result_.to_dict(),  # the teacher's s_T after loading
            supervised_source=self.supervised_source_,
            fixed=dict(self.fixed or {}),
            ranges=ranges,
        )
        if self.bootstrap and len(data) <= LOO_MAX_RUNS:  # only intervals use the noise
            res.meta["noise"] = loo_noise(law, X, y, res, loss, bounds)
        self.result_, self.params_, self.data_ = res, dict(res.params), data
        return self

    def _grid_and_bounds(self, law: DistillationLaw):
        """The fit's grid and bounds with the fixed coefficients pinned (`fitting.fixed_grid`)."""
        grid, bounds, self._fixed_axes = fixed_grid(law, self.grid, self.fixed)
        return grid, bounds

    def _inputs(self, N_S, D_S, L_T) -> dict[str, np.ndarray]:
        N_S, D_S, L_T = (np.asarray(v, float) for v in (N_S, D_S, L_T))
        L_sup = np.asarray(self.supervised_.predict(N_S, D_S), float)  # a float for 0-d inputs
        return {"N_S": N_S, "D_S": D_S, "L_T": L_T, "L_sup": L_sup}

    # ---- construction ----------------------------------------------------------------------
    @classmethod
    def from_preset(cls, name: str = "busbridge2025") -> DistillationScalingLaw:
        """Published coefficients: `busbridge2025` = Table 6 (both columns)."""
        res, sup = preset_fit(name)
        return cls.from_result(res, supervised=sup)

    @classmethod
    def from_result(cls, res: FitResult, supervised=None) -> DistillationScalingLaw:
        if res.law != LAW_NAME:
            raise InputError(f"fit is a {res.law!r} law, not the distillation law {LAW_NAME!r}")
        if supervised is not None:  # the law given here is the one a save keeps
            sup = cls(supervised=supervised).supervised_
            res = copy.copy(res)  # never edit the caller's (a preset's) result
            res.meta = {
                **res.meta,
                "supervised": dict(sup.params_),
                "supervised_fit": sup.result_.to_dict(),
            }
            supervised = sup
        elif res.meta.get("supervised_fit") is not None:
            supervised = saved_supervised(res.meta["supervised_fit"])
        else:
            raise InputError(
                "distillation fit lacks its supervised law (meta.supervised_fit): pass supervised="
            )
        est = cls(supervised=supervised, huber_delta=res.loss.get("delta") or 1e-4)
        est.result_, est.params_ = res, dict(res.params)
        if res.meta.get("supervised_source"):
            est.supervised_source_ = res.meta["supervised_source"]
        return est

    saved_label = "saved distillation fit"

    @classmethod
    def from_dict(cls, d: dict, where: str = "distillation fit") -> DistillationScalingLaw:
        """A fit from `to_dict` (a saved file's dict), checked field by field."""
        d = check_distill_fit(d, where)
        return cls.from_result(FitResult.from_dict(d, where, kind="DistillationScalingLaw"))

    def to_dict(self) -> dict:
        """The fit (a `FitResult` dict, the supervised law in ``meta``, ``kind``
        "DistillationScalingLaw"); loads back bit-for-bit."""
        self._check()
        return {**self.result_.to_dict(), "kind": "DistillationScalingLaw"}

    @classmethod
    def from_spec(cls, spec: str) -> DistillationScalingLaw:
        """A preset name or the path of a saved fit (CLI `--coefficients`)."""
        if spec in DISTILL_PRESETS:
            return cls.from_preset(spec)
        if spec.endswith(".json") or Path(spec).exists():
            if not Path(spec).exists():
                raise InputError(f"{spec}: no such file")
            return cls.load(spec)
        raise InputError(
            f"unknown coefficients {spec!r}: use a preset ({', '.join(sorted(DISTILL_PRESETS))}) "
            "or a fit saved by `lmforecast distill fit --out FIT.json`"
        )

    # ---- predictions -----------------------------------------------------------------------
    def _check(self):
        if not hasattr(self, "result_"):
            raise not_fitted(self)

    @property
    def E_(self) -> float:
        """The supervised law's irreducible loss E: teacher losses must exceed it."""
        return float(self.supervised_.params_["E"])

    def _warn_domain(self, L_T) -> None:
        L_T = np.asarray(L_T, float)
        if np.any(L_T <= self.E_):
            warnings.warn(
                f"teacher loss {float(np.min(L_T)):.4g} is at or below the supervised law's "
                f"irreducible loss E = {self.E_:.4g}: outside the law's domain",
                DomainWarning,
                stacklevel=3,
            )

    _teacher_shift = None  # a plan interval's draw: exp(u_b s_T) on L_T - E per plan point

    def teacher_loss(self, N_T, D_T) -> np.ndarray:
        """L_T = L(N_T, D_T) from the supervised law (Eq. 1); on the per-draw copies of
        `plan_intervals.plan_interval`, times that draw's teacher shift (teacher_uncertainty)."""
        L = self._supervised_at(N_T, D_T)
        return L if self._teacher_shift is None else apply_shift(L, self._teacher_shift, self.E_)

    def supervised_loss(self, N_S, D_S) -> np.ndarray:
        """L~_S = L(N_S, D_S): the same student trained without a teacher (Eq. 1)."""
        return self._supervised_at(N_S, D_S)

    def _supervised_at(self, N, D):
        """`supervised_.predict(N, D)`. The planners call it thousands of times on their own
        float arrays: there, for a single-form fit, the law's arithmetic is run directly (the
        same operations, bit for bit) without the per-call input handling; anything else (a
        scalar, a list, a value not > 0, an averaged or stacked fit) goes through `predict`
        and its checks."""
        sup = self.supervised_
        res = sup.result_
        fast = (
            isinstance(N, np.ndarray)
            and isinstance(D, np.ndarray)
            and N.dtype == np.float64
            and D.dtype == np.float64
            and (N.ndim or D.ndim)
            and not (res.meta.get("average") or res.meta.get("stack"))
            and (N > 0).all()
            and (D > 0).all()
        )
        if not fast:
            return sup.predict(N, D)
        cached = self.__dict__.get("_sup_law")
        if cached is None or cached[0] is not res:
            cached = (res, res.law_)
            self._sup_law = cached
        law = cached[1]
        if tuple(law.inputs) != ("N", "D"):
            return sup.predict(N, D)
        shape = np.broadcast_shapes(N.shape, D.shape)
        X = {"N": np.broadcast_to(N, shape).ravel(), "D": np.broadcast_to(D, shape).ravel()}
        t = law.predict_target(np.asarray(res.theta)[None, :], X)[0]
        return np.asarray(law.from_target(t), float).reshape(shape)

    def predict(self, N_S, D_S, teacher_loss=None, *, N_T=None, D_T=None) -> np.ndarray:
        """Student loss L_S (Eq. 8), vectorised (a float for scalar inputs); teacher given by its
        loss or by (N_T, D_T)."""
        self._check()
        scalar = scalar_like(N_S, D_S, teacher_loss, N_T, D_T)
        if teacher_loss is None:
            if N_T is None or D_T is None:
                raise InputError("give the teacher's loss, or its parameters and tokens")
            teacher_loss = self.teacher_loss(N_T, D_T)
        N_S, D_S, L_T = np.broadcast_arrays(
            *(np.asarray(v, float) for v in (N_S, D_S, teacher_loss))
        )
        for name, v in (
            ("student parameters", N_S),
            ("student tokens", D_S),
            ("teacher loss", L_T),
        ):
            if not np.all(np.isfinite(v)) or np.any(v <= 0):
                raise InputError(f"{name} must be positive and finite")
        self._warn_domain(L_T)
        out = self._loss(N_S, D_S, L_T)
        return point(out) if scalar else np.asarray(out, float)

    def _loss(self, N_S, D_S, L_T, L_sup=None):
        """Eq. 8 in natural space, no validation (hot path of the planners)."""
        if L_sup is None:
            L_sup = self.supervised_loss(N_S, D_S)
        with np.errstate(over="ignore", under="ignore"):
            return DistillationLaw.loss(self.params_, N_S, D_S, L_T, L_sup)

    # ---- intervals (`distill.uncertainty`) -----------------------------------------------
    def has_intervals(self) -> bool:
        """Whether forecasts carry intervals: bootstrap draws, or published intervals (preset)."""
        self._check()
        return bool(self.result_.bootstrap) or bool(self.result_.ci)

    def parameter_draws(self) -> np.ndarray:
        """Fit-space parameter draws (B, 9) behind every interval: a fit's bootstrap refits, a
        preset's draws from its published intervals (`uncertainty.parameter_draws`)."""
        self._check()
        draws = uncertainty.parameter_draws(self.result_, getattr(self, "_pub_draws", None))
        if not self.result_.bootstrap:
            self._pub_draws = draws  # the published draws, drawn once
        return draws

    def interval_basis(self) -> str:
        """One line saying what the intervals contain (`uncertainty.interval_basis`)."""
        self._check()
        return uncertainty.interval_basis(self.result_)

    @property
    def noise_scale_(self) -> float:
        """Run-to-run noise sd on log L_S added to prediction intervals
        (`uncertainty.noise_scale`)."""
        self._check()
        return uncertainty.noise_scale(self.result_)

    def predict_interval(
        self,
        N_S,
        D_S,
        teacher_loss=None,
        *,
        level: float = 0.9,
        N_T=None,
        D_T=None,
        kind: str = "prediction",
    ) -> tuple[np.ndarray, np.ndarray]:
        """Interval (lo, hi) for the student loss L_S at `level` (default 90%), vectorised:
        kind="prediction" (default) where a new run's L_S should fall, "confidence" the
        parameter spread only (`uncertainty.predict_interval` says what each holds)."""
        self._check()
        level, kind = self._interval_args(level, kind)
        return uncertainty.predict_interval(self, N_S, D_S, teacher_loss, N_T, D_T, level, kind)

    def reference_forecast(self) -> dict[str, float]:
        """The forecast the fit report decomposes (`uncertainty.reference_forecast`)."""
        self._check()
        return uncertainty.reference_forecast(getattr(self, "data_", None))

    def uncertainty_report(self, N_S=None, D_S=None, L_T=None) -> dict:
        """Each coefficient's bootstrap spread, identifiability and share of the variance of
        log L_S at one forecast (`uncertainty.uncertainty_report`)."""
        self._check()
        return uncertainty.uncertainty_report(self, N_S, D_S, L_T)

    # ---- reporting (`distill.diagnostics`) -----------------------------------------------
    def coefficient_table(self) -> pd.DataFrame:
        """Estimates, intervals and status per coefficient (`diagnostics.coefficient_table`)."""
        self._check()
        return diagnostics.coefficient_table(self)

    def identifiability(self, negligible: float = 0.01) -> dict[str, str]:
        """Which coefficients the fitted runs determine (`diagnostics.identifiability`)."""
        self._check()
        return diagnostics.identifiability(self, negligible)

    def summary(self) -> str:
        """The fit as text (`diagnostics.summary`)."""
        self._check()
        return diagnostics.summary(self)

    def contract(self) -> dict:
        """The fit as plain JSON-able data, `distill fit --json` (`diagnostics.contract`)."""
        self._check()
        return diagnostics.contract(self)

    def coefficient_text(self) -> str:
        """`coefficient_table` as text (`diagnostics.coefficient_text`)."""
        return diagnostics.coefficient_text(self.coefficient_table())

    # ---- the capacity gap (Sec. 5.2, Fig. 7) ---------------------------------------------
    def optimal_teacher_loss(self, N_S, D_S, n_grid: int = 256):
        """(L_T*, L_S*) = argmin / min over L_T of L_S(N_S, D_S, L_T) (Sec. 5.2, Fig. 7;
        `capacity_gap.optimal_teacher_loss`)."""
        self._check()
        return capacity_gap.optimal_teacher_loss(self, N_S, D_S, n_grid)
