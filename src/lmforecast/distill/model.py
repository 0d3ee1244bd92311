"""The distillation scaling law (Busbridge et al. 2025, Eq. 8) as a scikit-learn-style estimator.

`DistillationScalingLaw` pairs a supervised law L(N, D) (Eq. 1; gives the teacher loss
L_T = L(N_T, D_T) and the student's supervised loss L~_S = L(N_S, D_S)) with the student law.
Fitting follows App. F.2: Huber (delta = 1e-4) on log L_S (Eq. 50, read as log-minus-log),
L-BFGS-B from the best of the 216,000-start grid, and bootstrap percentile intervals (Table 6)
with every resample multi-started (`uncertainty.py`), so intervals and the identifiability report
reflect every basin the data allow; forecasts carry prediction intervals by default.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.validate import check_no_duplicates, numeric_column
from ..errors import DomainWarning, InputError
from ..fitting import FitResult, bootstrap_fit, fit_law, huber, refit_from
from ..laws import get_law
from ..laws.distillation import DistillationLaw
from ..supervised import SupervisedScalingLaw
from .fitting import score_product_grid
from .presets import DISTILL_PRESETS
from .uncertainty import (
    bootstrap_grid,
    interval_from_draws,
    multistart_bootstrap,
    published_draws,
    spread_status,
    tiny_bootstrap_note,
    variance_shares,
)

LAW_NAME = "busbridge-distillation"
LOO_MAX_RUNS = 40  # fits this small also estimate the run noise by leave-one-out


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


PAPER_SUPERVISED = ("busbridge2025", "paper")  # explicit opt-in names for Table 6's C4 law
MIN_SUPERVISED_RUNS = 6  # Eq. 1 has six coefficients


def _supervised_from(spec) -> SupervisedScalingLaw:
    if isinstance(spec, SupervisedScalingLaw):
        return spec
    if isinstance(spec, Mapping):  # natural parameters of Eq. 1
        law = get_law("chinchilla-gamma")
        p = {"gamma": 1.0, **dict(spec)}
        missing = [k for k in law.natural_names if k not in p]
        if missing:
            raise InputError(f"supervised coefficients: missing {', '.join(missing)}")
        res = FitResult(
            law="chinchilla-gamma",
            theta=law.from_natural(p).tolist(),
            params={k: float(p[k]) for k in law.natural_names},
            objective=float("nan"),
            loss={"name": "huber", "delta": 1e-3},
            n_obs=0,
            n_starts=0,
            n_polished=0,
            n_at_best=0,
            converged=True,
            message="given coefficients",
            meta={"form": "chinchilla-gamma", "source": "given coefficients"},
        )
        return SupervisedScalingLaw.from_result(res)
    s = str(spec)
    if s == "paper":
        s = "busbridge2025"
    if s.endswith(".json"):
        if not Path(s).exists():
            raise InputError(f"{s}: no such file")
        return SupervisedScalingLaw.load(s)
    return SupervisedScalingLaw.from_preset(s)


def _supervised_source(spec) -> str:
    """One line saying which supervised law gives L~_S (reported in summary() and the JSON)."""
    if isinstance(spec, SupervisedScalingLaw):
        src = (getattr(spec, "result_", None) and spec.result_.meta.get("source")) or ""
        n = getattr(spec, "result_", None) and spec.result_.n_obs
        return f"given SupervisedScalingLaw ({src or f'fitted to {n} runs'})"
    if isinstance(spec, Mapping):
        return "given Eq. 1 coefficients"
    s = str(spec)
    if s in PAPER_SUPERVISED:
        return (
            "paper's law: busbridge2025 (Table 6 supervised column, English C4, chosen explicitly)"
        )
    if s.endswith(".json"):
        return f"supervised fit loaded from {s}"
    return f"preset {s} (chosen explicitly)"


def _no_supervised_error() -> InputError:
    return InputError(
        "no supervised law for L~_S (Eq. 8): add supervised runs to the table (rows with an "
        "empty L_T; their N_S, D_S, L_S are N, D, L), or pass --supervised FIT.json (from "
        "`supervised fit --out`), or opt into the paper's C4 law with --supervised paper "
        "(Python: supervised='busbridge2025')"
    )


def distill_runs_from_frame(
    df: pd.DataFrame,
    ns_col: str = "N_S",
    ds_col: str = "D_S",
    lt_col: str = "L_T",
    ls_col: str = "L_S",
    what: str = "runs",
    *,
    supervised_rows: bool = False,
):
    """Validate a distillation runs table; returns columns N_S, D_S, L_T, L_S.

    With `supervised_rows=True`, rows whose L_T cell is empty are supervised runs (no teacher:
    N_S, D_S, L_S read as N, D, L of Eq. 1) and the call returns (distillation runs,
    supervised runs with columns N, D, loss). Row numbers in errors are those of `df`.
    """
    need = [ns_col, ds_col, lt_col, ls_col]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise InputError(
            f"{what}: missing column(s) {', '.join(map(repr, missing))}; found "
            f"{', '.join(map(repr, df.columns))} (name them with --ns-col/--ds-col/--lt-col/"
            "--ls-col)"
        )
    cols = {
        k: numeric_column(df, c, positive=True, what=what)
        for k, c in zip(("N_S", "D_S", "L_S"), (ns_col, ds_col, ls_col))
    }
    lt = numeric_column(df, lt_col, what=what, allow_nan=supervised_rows)
    sup = np.isnan(lt) if supervised_rows else np.zeros(lt.size, bool)
    bad = ~sup & ~((lt > 0) & np.isfinite(lt))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{what}: column {lt_col!r} row {i + 1}: value {lt[i]:g} must be > 0")
    out = pd.DataFrame(
        {"N_S": cols["N_S"], "D_S": cols["D_S"], "L_T": lt, "L_S": cols["L_S"]}, index=df.index
    )
    dist = out[~sup]
    check_no_duplicates(
        dist,
        ["N_S", "D_S", "L_T"],
        what,
        values=["L_S"],
        hint="a distillation run is one (student size, student tokens, teacher loss); "
        "remove the repeated row",
        row_numbers=np.flatnonzero(~sup) + 1,
    )
    if not supervised_rows:
        return out
    s = out[sup]
    sup_runs = pd.DataFrame({"N": s["N_S"], "D": s["D_S"], "loss": s["L_S"]})
    check_no_duplicates(
        sup_runs,
        ["N", "D"],
        what,
        values=["loss"],
        hint="a supervised run (empty L_T) is one (student size, student tokens); "
        "remove the repeated row",
        row_numbers=np.flatnonzero(sup) + 1,
    )
    return dist, sup_runs


class DistillationScalingLaw:
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

    Learned attributes: `result_` (FitResult), `params_`, `data_`.
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
        if bootstrap < 0:
            raise InputError(f"bootstrap must be >= 0, got {bootstrap}")
        if boot_polish < 0:
            raise InputError(f"boot_polish must be >= 0, got {boot_polish}")
        if not 0 < ci_level < 1:
            raise InputError(f"ci_level must be in (0, 1), got {ci_level}")
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
        """
        if runs is None:
            runs = pd.DataFrame({"N_S": N_S, "D_S": D_S, "L_T": L_T, "L_S": L_S})
        elif not isinstance(runs, pd.DataFrame):
            runs = pd.DataFrame(dict(runs))
        data, sup_runs = distill_runs_from_frame(runs, supervised_rows=True, **cols)
        self._resolve_supervised(sup_runs, cols.get("lt_col", "L_T"))
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
            supervised_source=self.supervised_source_,
            fixed=dict(self.fixed or {}),
        )
        if self.bootstrap and len(data) <= LOO_MAX_RUNS:  # only intervals use the noise
            res.meta["noise"] = loo_noise(law, X, y, res, loss, bounds)
        self.result_, self.params_, self.data_ = res, dict(res.params), data
        return self

    def _resolve_supervised(self, sup_runs: pd.DataFrame, lt_col: str) -> None:
        """Set `supervised_`: the explicit law, or Eq. 1 fitted to the supervised rows."""
        n = len(sup_runs)
        if self.supervised is not None:
            if n:
                raise InputError(
                    f"runs: {n} row(s) have an empty {lt_col!r} (supervised runs) but a "
                    "supervised law was also given (--supervised); drop one of the two"
                )
            return
        if n == 0:
            raise _no_supervised_error()
        if n < MIN_SUPERVISED_RUNS:
            raise InputError(
                f"runs: {n} supervised row(s) (empty {lt_col!r}) but Eq. 1 has "
                f"{MIN_SUPERVISED_RUNS} coefficients; add supervised runs or pass --supervised"
            )
        self.supervised_ = SupervisedScalingLaw(
            "chinchilla-gamma", huber_delta=self.huber_delta, n_jobs=1
        ).fit(sup_runs)
        self.supervised_.result_.meta["source"] = f"fitted to {n} supervised rows of the runs"
        self.supervised_source_ = (
            f"fitted to the {n} supervised rows of the runs (empty {lt_col}; Eq. 1, "
            f"Huber {self.huber_delta:g} on log L, App. F.1 grid)"
        )

    def _grid_and_bounds(self, law: DistillationLaw):
        grid = dict(self.grid if self.grid is not None else law.default_grid())
        bounds = list(law.bounds)
        names = [p.natural_name for p in law.parameters]
        self._fixed_axes = set()
        for name, value in (self.fixed or {}).items():
            if name not in names:
                raise InputError(
                    f"fixed (--fix): unknown coefficient {name!r}; known: "
                    f"{', '.join(law.natural_names)}"
                )
            idx = names.index(name)
            p = law.parameters[idx]
            v = float(p.from_natural(float(value)))
            if not p.lower <= v <= p.upper:
                raise InputError(f"fixed: {name} = {value} is outside its bounds")
            grid[p.name] = np.array([v])
            bounds[idx] = (v, v)
            self._fixed_axes.add(p.name)
        return grid, bounds

    def _inputs(self, N_S, D_S, L_T) -> dict[str, np.ndarray]:
        N_S, D_S, L_T = (np.asarray(v, float) for v in (N_S, D_S, L_T))
        L_sup = np.asarray(self.supervised_.predict(N_S, D_S), float)
        return {"N_S": N_S, "D_S": D_S, "L_T": L_T, "L_sup": L_sup}

    # ---- construction ----------------------------------------------------------------------
    @classmethod
    def from_preset(cls, name: str = "busbridge2025") -> DistillationScalingLaw:
        """Published coefficients: `busbridge2025` = Table 6 (both columns)."""
        if name not in DISTILL_PRESETS:
            raise InputError(
                f"unknown preset {name!r}; known: {', '.join(sorted(DISTILL_PRESETS))}"
            )
        p = DISTILL_PRESETS[name]
        law = get_law(LAW_NAME)
        sup = SupervisedScalingLaw.from_preset(p["supervised"])
        res = FitResult.from_published(
            LAW_NAME,
            law.from_natural(p["params"]).tolist(),
            p["params"],
            ci=p["ci"],
            ci_level=p["ci_level"],
            n_obs=p["n_obs"],
            loss={"name": "huber", "delta": 1e-4},
            meta={
                "preset": name,
                "source": p["source"],
                "supervised": sup.params_,
                "supervised_source": f"preset {p['supervised']} (Table 6 supervised column, "
                "English C4)",
            },
        )
        return cls.from_result(res, supervised=sup)

    @classmethod
    def from_result(cls, res: FitResult, supervised=None) -> DistillationScalingLaw:
        if res.law != LAW_NAME:
            raise InputError(f"fit is a {res.law!r} law, not the distillation law {LAW_NAME!r}")
        if supervised is None:
            if "supervised" not in res.meta:
                raise InputError("saved distillation fit lacks its supervised coefficients")
            supervised = res.meta["supervised"]
        est = cls(supervised=supervised, huber_delta=res.loss.get("delta") or 1e-4)
        est.result_, est.params_ = res, dict(res.params)
        if res.meta.get("supervised_source"):
            est.supervised_source_ = res.meta["supervised_source"]
        return est

    @classmethod
    def load(cls, path: str | Path) -> DistillationScalingLaw:
        from ..data.schema import check_distill_fit
        from ..fitting.result import load_json

        d = check_distill_fit(load_json(Path(path), "saved distillation fit"), str(path))
        return cls.from_result(FitResult.from_dict(d, str(path)))

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

    def save(self, path: str | Path) -> None:
        self._check()
        self.result_.to_json(path)

    def to_json(self) -> str:
        self._check()
        return self.result_.to_json()

    @classmethod
    def from_json(cls, text: str) -> DistillationScalingLaw:
        return cls.from_result(FitResult.from_json(text))

    # ---- predictions -----------------------------------------------------------------------
    def _check(self):
        if not hasattr(self, "result_"):
            raise RuntimeError("this DistillationScalingLaw is not fitted; call fit() first")

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

    def teacher_loss(self, N_T, D_T) -> np.ndarray:
        """L_T = L(N_T, D_T) from the supervised law (Eq. 1)."""
        return self.supervised_.predict(N_T, D_T)

    def supervised_loss(self, N_S, D_S) -> np.ndarray:
        """L~_S = L(N_S, D_S): the same student trained without a teacher (Eq. 1)."""
        return self.supervised_.predict(N_S, D_S)

    def predict(self, N_S, D_S, teacher_loss=None, *, N_T=None, D_T=None) -> np.ndarray:
        """Student loss L_S (Eq. 8), vectorised; teacher given by its loss or by (N_T, D_T)."""
        self._check()
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
        return self._loss(N_S, D_S, L_T)

    def _loss(self, N_S, D_S, L_T, L_sup=None):
        """Eq. 8 in natural space, no validation (hot path of the planners)."""
        if L_sup is None:
            L_sup = self.supervised_loss(N_S, D_S)
        with np.errstate(over="ignore", under="ignore"):
            return DistillationLaw.loss(self.params_, N_S, D_S, L_T, L_sup)

    # ---- intervals -------------------------------------------------------------------------
    def has_intervals(self) -> bool:
        """Whether forecasts carry intervals: bootstrap draws, or published intervals (preset)."""
        self._check()
        return bool(self.result_.bootstrap) or bool(self.result_.ci)

    def parameter_draws(self) -> np.ndarray:
        """Fit-space parameter draws (B, 9) behind every interval.

        A fit: its (multi-started) bootstrap refits. A preset: 1,000 draws consistent with the
        published 90% intervals (`uncertainty.published_draws`, seed 0). Raises InputError when
        there are neither (a fit made with bootstrap=0).
        """
        self._check()
        res = self.result_
        if res.bootstrap:
            return np.asarray(res.bootstrap, float)
        if res.ci and res.ci_level:
            if getattr(self, "_pub_draws", None) is None:
                law = get_law(LAW_NAME)
                self._pub_draws = published_draws(law, res.params, res.ci, res.ci_level)
            return self._pub_draws
        raise InputError(
            "this distillation fit has no bootstrap samples, so its forecasts have no interval: "
            "refit with bootstrap > 0 (CLI: distill fit --bootstrap B)"
        )

    def interval_basis(self) -> str:
        """One line saying what the intervals contain (printed by the CLI, in its JSON)."""
        self._check()
        res = self.result_
        if res.bootstrap:
            b = res.meta.get("bootstrap") or {}
            return (
                f"{len(res.bootstrap)} {b.get('mode', 'bootstrap')} bootstrap refits + run noise "
                f"(sd {self.noise_scale_:.3g} on log L_S); excludes model-form error"
            )
        if res.ci:
            return (
                "draws from the published intervals (independent); no run noise, no model-form "
                "or extrapolation error"
            )
        return "none (no bootstrap samples)"

    @property
    def noise_scale_(self) -> float:
        """Run-to-run noise sd on log L_S added to prediction intervals: the fit's robust
        residual scale (1.4826 MAD of the log residuals) times sqrt(n / (n - p)), p the free
        coefficients (in-sample residuals understate new-run noise, badly with few runs); for
        fits of at most LOO_MAX_RUNS runs, at least the leave-one-out RMS error (`loo_noise`,
        a within-data backtest); 0 for a preset (Table 6 reports no residual scale)."""
        self._check()
        res = self.result_
        s = float(res.residual_scale or 0.0)
        p = len(res.params) - len(res.meta.get("fixed") or {})
        if res.n_obs > p:
            s *= float(np.sqrt(res.n_obs / (res.n_obs - p)))
        loo = (res.meta.get("noise") or {}).get("loo_rms")
        return max(s, float(loo)) if loo is not None else s

    def _log_draws(self, N_S, D_S, L_T) -> tuple[np.ndarray, tuple]:
        N_S, D_S, L_T = np.broadcast_arrays(*(np.asarray(v, float) for v in (N_S, D_S, L_T)))
        X = {k: v.ravel() for k, v in self._inputs(N_S, D_S, L_T).items()}
        law = get_law(LAW_NAME)
        with np.errstate(all="ignore"):
            T = law.predict_target(self.parameter_draws(), X)
        return np.where(np.isfinite(T), T, np.nan), N_S.shape

    def predict_interval(
        self,
        N_S,
        D_S,
        teacher_loss=None,
        level: float = 0.9,
        *,
        N_T=None,
        D_T=None,
        kind: str = "prediction",
    ) -> tuple[np.ndarray, np.ndarray]:
        """Interval (lo, hi) for the student loss L_S at `level` (default 90%), vectorised.

        kind="prediction" (default): where a new run's measured L_S should fall: the spread of
        Eq. 8 over the parameter draws (`parameter_draws`) convolved with the run noise
        `noise_scale_` on log L_S. kind="confidence": the parameter spread only. Neither
        includes model-form error: how far the law itself is off beyond the fitted range
        (docs/distill.md, "How far to trust distillation forecasts"). The supervised law giving
        L~_S (and L_T from N_T, D_T) is held at its point estimate.
        """
        self._check()
        if not 0 < level < 1:
            raise InputError(f"level must be strictly between 0 and 1, got {level}")
        if kind not in ("prediction", "confidence"):
            raise InputError(f"kind must be 'prediction' or 'confidence', got {kind!r}")
        if teacher_loss is None:
            if N_T is None or D_T is None:
                raise InputError("give the teacher's loss, or its parameters and tokens")
            teacher_loss = self.teacher_loss(N_T, D_T)
        self.predict(N_S, D_S, teacher_loss)  # validation and the domain warning
        T, shape = self._log_draws(N_S, D_S, teacher_loss)
        sigma = self.noise_scale_ if kind == "prediction" else 0.0
        lo, hi = interval_from_draws(T, sigma, level)
        return np.exp(lo).reshape(shape), np.exp(hi).reshape(shape)

    def reference_forecast(self) -> dict[str, float]:
        """The forecast the fit report decomposes: beyond the data, as a user would ask, at
        4x the largest student, 4x the most distillation tokens and the strongest teacher."""
        self._check()
        if not hasattr(self, "data_"):
            return {"N_S": 1e10, "D_S": 2e11, "L_T": 2.0}
        d = self.data_
        return {
            "N_S": 4.0 * float(d["N_S"].max()),
            "D_S": 4.0 * float(d["D_S"].max()),
            "L_T": float(d["L_T"].min()),
        }

    def uncertainty_report(self, N_S=None, D_S=None, L_T=None) -> dict:
        """Bootstrap spread and identifiability of each coefficient, and its share of the
        variance of log L_S at one forecast (default `reference_forecast()`).

        Rule (`uncertainty.spread_status`): a scale coefficient whose resampled values span
        more than a decade (P95/P5 > 10), or an exponent whose 5-95% range exceeds its median,
        is NOT identified. Share (`uncertainty.variance_shares`): corr(log L_S, theta_j)^2
        over the draws. Empty without bootstrap samples.
        """
        self._check()
        if not self.result_.bootstrap:
            return {}
        ref = self.reference_forecast()
        N_S = ref["N_S"] if N_S is None else float(N_S)
        D_S = ref["D_S"] if D_S is None else float(D_S)
        L_T = ref["L_T"] if L_T is None else float(L_T)
        law = get_law(LAW_NAME)
        th = self.parameter_draws()
        nat = np.array([[p.to_natural(v) for p, v in zip(law.parameters, t)] for t in th])
        spread = spread_status(nat, law.natural_names)
        T, _ = self._log_draws(N_S, D_S, L_T)
        shares = variance_shares(T[:, 0], th, law.natural_names)
        fixed = set((self.result_.meta.get("fixed") or {}).keys())
        for k in spread:
            spread[k]["share"] = shares[k]
            if k in fixed:
                spread[k]["identified"] = True
        lo, hi = interval_from_draws(T, self.noise_scale_, self.result_.ci_level or 0.9)
        return {
            "forecast": {"N_S": N_S, "D_S": D_S, "L_T": L_T},
            "sd_log_forecast": float(np.std(T[:, 0])),
            "interval": [float(np.exp(lo[0])), float(np.exp(hi[0]))],
            "coefficients": spread,
        }

    # ---- the capacity gap (Sec. 5.2, Fig. 7) ---------------------------------------------
    def optimal_teacher_loss(self, N_S, D_S, n_grid: int = 256):
        """(L_T*, L_S*) = argmin / min over L_T of L_S(N_S, D_S, L_T) (Sec. 5.2, Fig. 7).

        L_T ranges over (E, 10 + 3 d1 L~_S]: a log-spaced scan of L_T - E, then golden-section
        refinement in the best bracket, vectorised over configurations.
        """
        self._check()
        N_S, D_S = np.broadcast_arrays(np.asarray(N_S, float), np.asarray(D_S, float))
        for name, v in (("student parameters", N_S), ("student tokens", D_S)):
            if not np.all(np.isfinite(v)) or np.any(v <= 0):
                raise InputError(f"{name} must be positive and finite")
        shape = N_S.shape
        N, D = N_S.ravel(), D_S.ravel()
        Lsup = self.supervised_loss(N, D)
        E = self.E_
        lo = np.full(N.shape, np.log(1e-6))
        hi = np.log(10.0 + 3.0 * self.params_["d1"] * Lsup)
        u = np.linspace(0.0, 1.0, n_grid)
        U = lo[:, None] + u[None, :] * (hi - lo)[:, None]

        def f(uu):
            return self._loss(
                N[:, None] if uu.ndim == 2 else N,
                D[:, None] if uu.ndim == 2 else D,
                E + np.exp(uu),
                Lsup[:, None] if uu.ndim == 2 else Lsup,
            )

        vals = f(U)
        i = np.argmin(vals, axis=1)
        a = U[np.arange(N.size), np.maximum(i - 1, 0)]
        b = U[np.arange(N.size), np.minimum(i + 1, n_grid - 1)]
        x = _golden(f, a, b)
        LT = E + np.exp(x)
        return LT.reshape(shape), f(x).reshape(shape)

    # ---- reporting -------------------------------------------------------------------------
    def coefficient_table(self) -> pd.DataFrame:
        """Estimates, bootstrap intervals, relative widths and an identifiability status.

        Besides the nine coefficients it lists the combinations the data can pin when one term
        of (A'/N^alpha' + B'/D^beta')^gamma' is negligible over the runs: gamma' log A',
        alpha' gamma' (and gamma' log B', beta' gamma'), and the teacher-to-supervised loss
        ratio where the bracket of Eq. 8 halves, d1 (2^(1/(c1 f1)) - 1)^f1, which pins the
        (c1, d1) pair when c1 alone is flat. `status` comes from
        `identifiability()`; a zero-width interval on a coefficient marked "not identified"
        means the objective is flat there (resamples do not move it), not that it is pinned.
        """
        self._check()
        boot = np.asarray(self.result_.bootstrap, float)
        a = (1 - (self.result_.ci_level or 0.9)) / 2

        combos = _combinations
        status = self.identifiability() if hasattr(self, "data_") else {}
        rows = []
        for k, v in self.params_.items():
            lo, hi = self.result_.ci.get(k, [np.nan, np.nan])
            rows.append((k, v, lo, hi, status.get(k, "")))
        theta = np.asarray(self.result_.theta, float)
        for k, v in combos(theta).items():
            lo = hi = np.nan
            if boot.size:
                lo, hi = np.quantile(combos(boot)[k], [a, 1 - a])
            rows.append((k, float(v[0]), lo, hi, status.get(k, "")))
        df = pd.DataFrame(rows, columns=["coefficient", "estimate", "lower", "upper", "status"])
        with np.errstate(all="ignore"):
            df.insert(4, "relative_width", (df["upper"] - df["lower"]) / df["estimate"].abs())
        return df.set_index("coefficient")

    def identifiability(self, negligible: float = 0.01) -> dict[str, str]:
        """Which coefficients the fitted runs can determine (see docs/distill.md).

        With bootstrap samples, a coefficient whose resampled values span more than a decade
        (`uncertainty.spread_status`: P95/P5 > 10; exponents: 5-95% range > median) is "not
        identified (bootstrap ...)" whatever the structural checks below say.
        A' and alpha' (B' and beta') are "not identified" when the A' (B') term is below
        `negligible` of the power sum on every run; then only gamma' log A' and alpha' gamma'
        (resp. the B' pair) are. c1, f1, d1 shape the bracket's break: they are "weakly
        identified" when fewer than 5% of runs sit inside the break, 0.01 < bracket < 0.99.
        """
        self._check()
        d = self.data_
        p = self.params_
        N, D, LT = (d[c].to_numpy(float) for c in ("N_S", "D_S", "L_T"))
        ta = p["A'"] / N ** p["alpha'"]
        tb = p["B'"] / D ** p["beta'"]
        share_a, share_b = ta / (ta + tb), tb / (ta + tb)
        x = LT / (self.supervised_loss(N, D) * p["d1"])
        with np.errstate(all="ignore"):
            br = (1.0 + x ** (1.0 / p["f1"])) ** (-p["c1"] * p["f1"])
        inside = float(np.mean((br > 0.01) & (br < 0.99)))
        fixed = set((self.result_.meta.get("fixed") or {}).keys())
        out = {k: "identified" for k in self.params_}
        pairs = {"A'": ("A'", "alpha'", share_a), "B'": ("B'", "beta'", share_b)}
        for c, e, share in pairs.values():
            if np.max(share) < negligible:
                other, oe = ("B'", "beta'") if c == "A'" else ("A'", "alpha'")
                out[c] = out[e] = "not identified (term negligible over the runs)"
                out[f"gamma' log {c}"] = out[f"{e} gamma'"] = out[c]
                joint = f"only via gamma' log {other} and {oe} gamma'"
                out[other] = out[oe] = out["gamma'"] = joint
                out[f"gamma' log {other}"] = out[f"{oe} gamma'"] = "identified"
        if inside < 0.05:
            for c in ("c1", "f1", "d1"):
                out[c] = "weakly identified (few runs inside the break)"
        for c, (lo, hi) in self.result_.ci.items():
            if (
                self.result_.bootstrap
                and c not in fixed
                and out.get(c) == "identified"
                and hi - lo <= 1e-6 * abs(self.params_[c])
            ):
                out[c] = "flat (resamples do not move it)"
        out["break L_T/L~_S"] = "identified"
        if out.get("c1", "").startswith("flat") and out.get("d1") == "identified":
            out["c1"] = out["d1"] = "only via the break location (c1 flat)"
        # the bootstrap rule is decisive: resamples spanning a decade are never "identified"
        spreads = dict(self.uncertainty_report().get("coefficients") or {})
        if self.result_.bootstrap:  # the combinations too, by the range rule (they can be <= 0)
            cmb = _combinations(self.result_.bootstrap)
            names = list(cmb)
            spreads.update(
                spread_status(np.column_stack([cmb[k] for k in names]), names, exponents=names)
            )
        for c, sp in spreads.items():
            if not sp["identified"] and c not in fixed:
                out[c] = f"not identified (bootstrap P5-P95 {sp['p05']:.3g} to {sp['p95']:.3g})"
        for c in fixed:
            out[c] = "fixed"
        return out

    def summary(self) -> str:
        self._check()
        s = self.result_.summary()
        src = self.result_.meta.get("source")
        sup = ", ".join(f"{k}={v:.4g}" for k, v in self.supervised_.params_.items())
        s += (f"\nSource: {src}" if src else "") + (
            f"\nSupervised law for L~_S (Eq. 1): {self.supervised_source_}\n  {sup}"
        )
        boot = self.result_.meta.get("bootstrap") or {}
        if boot:
            s += f"\nBootstrap: {boot.get('mode')} resamples" + (
                f" ({boot['n_polish']} best of {boot['grid_starts']:,} grid starts + "
                f"{boot['n_warm']} warm starts each; {boot['winner_from_grid']} of "
                f"{len(self.result_.bootstrap)} winners came from the grid)"
                if boot.get("n_polish")
                else " (warm-started only: intervals too narrow where the data do not pin "
                "a coefficient)"
            )
        rep = self.uncertainty_report()
        if rep:
            f = rep["forecast"]
            status = self.identifiability() if hasattr(self, "data_") else {}
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


def _golden(f, a, b, iters: int = 60):
    """Vectorised golden-section minimisation of f on [a, b] (arrays)."""
    r = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = a.copy(), b.copy()
    for _ in range(iters):
        c, d = b - r * (b - a), a + r * (b - a)
        left = f(c) < f(d)
        a, b = np.where(left, a, c), np.where(left, d, b)
    return 0.5 * (a + b)
