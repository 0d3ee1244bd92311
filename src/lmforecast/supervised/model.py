"""Supervised scaling law for pretraining loss, as a scikit-learn-style estimator.

Forms: `chinchilla` (Hoffmann et al. 2022, Approach 3), `chinchilla-gamma` (Busbridge et al.
2025, Eq. 1), `overtrain` (Gadre et al. 2024, Eq. 4) and `average` (the three, weighted by their
backtest errors), fitted by Huber on log loss with L-BFGS-B over the paper's initialisation grid
(App. F.1), with compute-optimal allocation (Eq. 2) and, by default, calibrated forecast
intervals: multi-start bootstrap for the parameters plus an extrapolation term calibrated by a
rolling-origin backtest on the user's own runs (`supervised.intervals`, docs/trust.md).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..backtest.engine import rolling_origin
from ..compute.allocation import Allocation, compute_optimal, plain
from ..compute.flops import DISTILLATION_PAPER, Architecture
from ..errors import InputError, not_fitted
from ..estimator import Estimator
from ..fitting.engine import fit_law
from ..fitting.losses import huber, squared
from ..fitting.result import FitResult
from ..laws import get_law
from ..params import check
from ..uncertainty.bootstrap import attach_bootstrap
from ..uncertainty.cluster import BOOT_STARTS, cluster_bootstrap
from ..uncertainty.percentile import bootstrap_sd
from . import calibration as cb
from . import forms as fm
from . import intervals as iv
from . import stack as st
from .allocation import allocation_interval, check_split, numeric_allocation, optima_scatter
from .forecast import allocation_forecast, point_forecast
from .point_adapter import PointFitAdapter
from .presets import PRESET_INTERVALS, PRESETS, preset_param_samples
from .reach import reach_warnings
from .runs import positive_nd, runs_from_frame, runs_table
from .schema import CONFIG_ARGS, check_supervised_meta, check_trust_meta
from .settings import check_settings
from .summary import fit_contract, fit_summary

if TYPE_CHECKING:  # pandas loads where a table is read or built, not at import
    import pandas as pd

BASE_FORMS = ("chinchilla", "chinchilla-gamma", "overtrain")
FORMS = (*BASE_FORMS, "compute", "average", fm.AUTO)
CHINCHILLA_FORMS = ("chinchilla", "chinchilla-gamma")
DEFAULT_BOOTSTRAP = cb.CLUSTER_BOOTSTRAP


class SupervisedScalingLaw(Estimator):
    """Fit L(N, D) to training runs; predict with calibrated intervals, allocate compute, report.

    Parameters mirror the papers' procedures: `huber_delta=1e-3` is Hoffmann et al.'s, 1e-4 the
    distillation paper's. `grid=None` uses the form's published grid (4,500 or 9,600 starts).
    `form="auto"` (default) fits `chinchilla-gamma` where the runs can identify its extra
    exponent and `chinchilla` otherwise (`forms.choose_form`; the choice is stored and warned).
    `fixed={"E": 1.7}` pins natural parameters. `replicates="mean"|"keep"` accepts rows sharing
    (N, D) (refused otherwise); their spread is a floor on the run scatter.

    With `intervals=True` (default) a fit also refits `bootstrap` (default 20) cluster-bootstrap
    resamples of whole model sizes, each from scratch, and stores the interval calibration of
    `supervised.calibration`: bootstrap spread + run scatter + k x distance beyond the fitted
    runs, k the prior chosen on real suites (`calibration="prior"`), optionally updated by a
    size-cut backtest on the runs themselves (`calibration="prior+backtest"`).
    Learned attributes end in `_`: `result_`, `params_`, `data_`.
    """

    def __init__(
        self,
        form: str = fm.AUTO,
        *,
        loss: str = "huber",
        huber_delta: float = 1e-3,
        grid: Mapping[str, np.ndarray] | None = None,
        n_polish: int = 32,
        bootstrap: int | None = None,
        intervals: bool = True,
        calibration: str = "prior",
        fixed: Mapping[str, float] | None = None,
        replicates: str | None = None,
        n_cutoffs: int | None = None,
        ci_level: float = 0.9,
        seed: int = 0,
        n_jobs: int = -1,
        progress: bool = False,
        stack: bool = True,
    ) -> None:
        self.form, self.loss, self.huber_delta = form, loss, huber_delta
        self.grid, self.n_polish, self.bootstrap = grid, n_polish, bootstrap
        self.intervals, self.calibration, self.n_cutoffs = intervals, calibration, n_cutoffs
        self.fixed, self.replicates = fixed, replicates
        self.ci_level, self.seed, self.n_jobs, self.progress = ci_level, seed, n_jobs, progress
        self.stack = stack
        check_settings(self, FORMS)

    # ---- fitting ---------------------------------------------------------------------------
    def fit(
        self,
        runs: pd.DataFrame | Mapping | None = None,
        *,
        N=None,
        D=None,
        loss=None,
        C=None,
        **cols,
    ) -> SupervisedScalingLaw:
        """Fit to a table (columns N, D or C, loss; n_col=... renames) or arrays N, D/C, loss."""
        runs = runs_table(runs, N=N, D=D, C=C, loss=loss, cols=cols)
        data = runs_from_frame(runs, replicates=self.replicates, **cols)
        if np.unique(data["N"].to_numpy(float)).size < 2:
            raise InputError(
                f"runs: all {len(data)} runs have one model size (N={data['N'].iloc[0]:.6g}); "
                "a law in N and D needs at least two sizes"
            )
        fm.check_pins(self.fixed, data)
        if not self.intervals and self.calibration != "prior":  # never dropped in silence
            raise InputError(
                f"calibration={self.calibration!r} needs intervals=True (a point "
                "fit has no interval to calibrate)"
            )
        n_boot = (
            self.bootstrap
            if self.bootstrap is not None
            else (DEFAULT_BOOTSTRAP if self.intervals else 0)
        )
        form, why = fm.choose_form(self.form, data, len(self.fixed or {}))
        if self.form == fm.AUTO and form != "chinchilla-gamma":
            warnings.warn(f"form {why}", stacklevel=2)
        if form == "average":
            res = self._fit_average(data, n_boot)
        else:
            res = self._fit_form(form, data, n_boot)
            if self.intervals:
                res.meta["intervals"] = self._calibrate(form, data, res)
        res.meta["form"] = form
        res.meta["form_reason"] = why
        res.meta["compute_law"] = fm.compute_law(data)
        if self.form == fm.AUTO and self.stack and self.fixed:
            warnings.warn(st.FIX_NO_STACK, stacklevel=2)
        if self.form == fm.AUTO and self.stack and not self.fixed:
            stk = st.fit_stack(self, form, data, noise=cb.run_scatter(res, data))
            if stk is not None:
                res.meta["stack"] = stk
                if self.intervals:
                    res.meta["intervals"]["k_stack"] = cb.prior_k("stack")
                if self.intervals and self.calibration == "prior+backtest":
                    res.meta["intervals"]["method"] += cb.STACK_IGNORES_UPDATE
                    warnings.warn(cb.STACK_IGNORES_UPDATE.lstrip("; "), stacklevel=2)
        if self.fixed:
            res.meta["fixed"] = {k: float(v) for k, v in self.fixed.items()}
        if data.attrs.get("replicate_sd"):
            res.meta["replicate_sd"] = float(data.attrs["replicate_sd"])
        if self.intervals and form in CHINCHILLA_FORMS:  # how far N* sits off the runs' optima
            sc = optima_scatter(
                data,
                lambda c: compute_optimal(res.params, c, "6ND").N,
                lambda N, D: res.predict(N=N, D=D),
            )
            if sc:
                res.meta["allocation"] = sc
        res.meta["config"] = {k: getattr(self, k) for k in CONFIG_ARGS}  # `load` rebuilds it
        res.meta["config"]["fixed"] = dict(self.fixed or {})
        self.result_ = res
        self.params_ = dict(res.params)
        self.data_ = data
        self.form_ = form
        return self

    def _lossf(self):
        return huber(self.huber_delta) if self.loss == "huber" else squared()

    def _fit_form(self, form: str, data: pd.DataFrame, n_boot: int):

        law = get_law(form)
        X = {"N": data["N"].to_numpy(float), "D": data["D"].to_numpy(float)}
        y = data["loss"].to_numpy(float)
        lossf = self._lossf()
        grid = self.grid if form == self.form else None
        bounds = fm.fix_bounds(law, self.fixed)
        res = fit_law(
            law,
            X,
            y,
            loss=lossf,
            grid=grid,
            bounds=bounds,
            n_polish=self.n_polish,
            progress=self.progress,
        )
        boot = None
        if n_boot:
            boot = cluster_bootstrap(
                law,
                X,
                y,
                lossf,
                n_boot=n_boot,
                seed=self.seed,
                bounds=bounds,
                grid=grid,
                n_jobs=self.n_jobs,
                progress=self.progress,
            )
            if len(boot):
                attach_bootstrap(
                    law, res, boot, level=self.ci_level, seed=self.seed, n_polish=BOOT_STARTS
                )
                res.meta["bootstrap_kind"] = "cluster (model sizes), fitted from scratch"
        ident = fm.identification(law, res, boot, bounds, requested=n_boot)
        res.meta["identification"] = ident
        if not ident["identified"]:
            warnings.warn(f"{form} fit is not identified: {ident['reason']}", stacklevel=3)
        res.meta["form"] = form
        return res

    def _calibrate(self, form: str, data: pd.DataFrame, res: FitResult) -> dict:
        """The interval calibration (`supervised.calibration`): prior k, optionally updated."""
        noise = cb.run_scatter(res, data)
        cal = {
            "method": "prior",
            **cb.fitted_range(data),
            "noise": noise,
            "k": cb.prior_k(form),
            "k_prior": cb.prior_k(form),
        }
        if self.calibration == "prior+backtest":
            cal.update(cb.user_update(self, form, data, cal["k_prior"], self.ci_level))
        return cal

    def forecast_terms(self, N, D) -> dict:
        """Log-space terms of the forecast interval: t (log point), s_boot, noise, r, k."""
        self._check()
        t, tb, C, shape = self._targets(N, D)
        cal = self.result_.meta.get("intervals") or {}
        Nf, Df = (np.broadcast_to(np.asarray(v, float), shape).ravel() for v in (N, D))
        r = iv.distance(C, cal, N=Nf, D=Df) if cal else np.zeros_like(t)
        stk = self.result_.meta.get("stack")
        return {
            "t": t,
            "s_boot": bootstrap_sd(tb, t.size),
            "noise": float(cal.get("noise", 0.0)),
            "r": r,
            "k": float(cal.get("k", 0.0)),
            "s_inner": float(stk["s_inner"]) if stk else float("nan"),
            "r_inner": float(stk["r_inner"]) if stk else float("nan"),
            "excess": st.untested_reach(cal, Df, Nf, stk) if stk and cal else None,
        }

    def _fit_average(self, data: pd.DataFrame, n_boot: int) -> FitResult:
        """Fit every base form, weight each by its inverse backtest mean squared log error
        (a rolling-origin backtest of point fits from scratch on the runs themselves)."""
        comps, mse = {}, {}
        min_train = calibration_min_train(len(data))
        for f in BASE_FORMS:
            comps[f] = self._fit_form(f, data, n_boot)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                bt = rolling_origin(
                    data,
                    PointFitAdapter(type(self), f, loss=self.loss),
                    n_cutoffs=4 if self.n_cutoffs is None else self.n_cutoffs,
                    min_train=min_train,
                )
            e = bt.forecasts["log_error"].to_numpy(float)
            mse[f] = float(np.mean(e**2))
        inv = {f: 1.0 / max(v, 1e-300) for f, v in mse.items()}
        tot = sum(inv.values())
        weights = {f: inv[f] / tot for f in BASE_FORMS}
        best = max(weights, key=weights.get)
        res = FitResult.from_dict(comps[best].to_dict())
        res.meta["average"] = {
            "weights": weights,
            "backtest_mse": mse,
            "components": {f: comps[f].to_dict() for f in BASE_FORMS},
        }
        if self.intervals:
            cal = self._calibrate("average", data, res)
            cal["noise"] = sum(w * cb.run_scatter(comps[f], data) for f, w in weights.items())
            res.meta["intervals"] = cal
        return res

    @classmethod
    def from_preset(cls, name: str) -> SupervisedScalingLaw:
        """A law with published coefficients: busbridge2025, hoffmann2022, besiroglu2024.

        Its forecast interval combines parameter samples drawn from the published CIs (independent
        normals in fit space; none for hoffmann2022, which publishes none), an assumed run-to-run
        scatter and the default extrapolation slope beyond the paper's largest run
        (`presets.PRESET_INTERVALS`, docs/trust.md)."""

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
        cal = dict(PRESET_INTERVALS[name])
        cal["param_samples"] = preset_param_samples(name)
        res.meta["intervals"] = cal
        return cls.from_result(res)

    @classmethod
    def from_result(cls, res: FitResult) -> SupervisedScalingLaw:
        form = res.meta.get("form", res.law)
        if res.law not in (*BASE_FORMS, "compute") or form not in FORMS:
            raise InputError(
                f"fit is a {res.law!r} law, not a supervised form ({', '.join(FORMS)})"
            )
        cfg = res.meta.get("config")
        if isinstance(cfg, Mapping) and set(cfg) <= set(CONFIG_ARGS):
            est = cls(**cfg)  # the estimator as it was called (an invalid value: InputError)
        else:  # presets and laws built from given coefficients: no constructor config
            form = fm.AUTO if res.meta.get("stack") else form
            est = cls(form=form, huber_delta=res.loss.get("delta") or 1e-3)
        est.result_ = res
        est.params_ = dict(res.params)
        return est

    @classmethod
    def from_dict(cls, d: dict, where: str = "saved fit") -> SupervisedScalingLaw:
        """A fit from `to_dict` (a saved file's dict), checked field by field."""
        res = FitResult.from_dict(d, where, kind="SupervisedScalingLaw")
        check_supervised_meta(res.to_dict(), where)
        check_trust_meta(res.to_dict(), where)
        try:
            return cls.from_result(res)
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None

    def to_dict(self) -> dict:
        """The fit (a `FitResult` dict with the calibration in ``meta``, ``kind``
        "SupervisedScalingLaw"); loads back bit-for-bit."""
        self._check()
        return {**self.result_.to_dict(), "kind": "SupervisedScalingLaw"}

    # ---- using the law ---------------------------------------------------------------------
    def _check(self):
        if not hasattr(self, "result_"):
            raise not_fitted(self)

    def _fitted_form(self) -> str:
        return self.result_.meta.get("form", self.form)

    def _components(self) -> list[tuple[float, FitResult]]:
        avg = self.result_.meta.get("average")
        if not avg:
            return [(1.0, self.result_)]
        return [(w, FitResult.from_dict(avg["components"][f])) for f, w in avg["weights"].items()]

    def _targets(self, N, D):
        """(point (n,), bootstrap (B, n) or None, compute (n,), shape) in log-loss space."""
        N, D = positive_nd(N, D)
        shape = np.broadcast_shapes(N.shape, D.shape)
        X = {"N": np.broadcast_to(N, shape).ravel(), "D": np.broadcast_to(D, shape).ravel()}
        t_point, t_boot = 0.0, 0.0
        has_boot = True
        for w, res in self._components():
            law = res.law_
            t_point = t_point + w * law.predict_target(np.asarray(res.theta)[None, :], X)[0]
            samples = res.bootstrap or self.result_.meta.get("intervals", {}).get("param_samples")
            if samples:
                t_boot = t_boot + w * law.predict_target(np.asarray(samples, float), X)
            else:
                has_boot = False
        stk = self.result_.meta.get("stack")
        if stk:  # the stack's forecast; the bootstrap spread stays the form's
            t_stack = st.stacked_target(stk, t_point, self.result_.meta["compute_law"], X)
            t_boot, t_point = t_boot + (t_stack - t_point), t_stack
        return t_point, (t_boot if has_boot else None), 6.0 * X["N"] * X["D"], shape

    def predict(self, N, D=None) -> np.ndarray:
        """Loss L(N, D) (Eq. 1); for `average`, the weighted geometric mean of the forms, and
        for a default (`form="auto"`) fit the stack of `supervised.stack`. `N` may be a table
        with columns N and D (as `fit` takes)."""
        self._check()
        N, D = positive_nd(N, D)
        if not (self.result_.meta.get("average") or self.result_.meta.get("stack")):
            return plain(self.result_.predict(N=N, D=D))
        t, _, _, shape = self._targets(N, D)
        return plain(np.exp(t).reshape(shape))

    interval_kinds = ("prediction", "confidence", "bootstrap")

    def predict_interval(self, N, D=None, *, level: float = 0.9, kind: str = "prediction"):
        """(lower, upper) loss at `level`.

        kind="prediction" (default): where a new run's loss should fall, the calibrated interval
        of docs/trust.md (bootstrap spread + run scatter + extrapolation drift and scatter
        calibrated by backtest; a preset's from its published CIs, its only kind);
        "confidence": bootstrap percentiles only; "bootstrap": bootstrap plus the residual scale,
        not calibrated for extrapolation (both the form's spread; for a stacked fit centred on
        the stack's forecast; a fit with intervals=False gives this one for "prediction" too,
        and warns that it is not calibrated).
        """
        self._check()
        N, D = positive_nd(N, D)
        level, kind = self._interval_args(level, kind)
        kind = iv.KINDS[self.interval_kinds.index(kind)]  # the names `supervised.intervals` uses
        cal = self.result_.meta.get("intervals")
        reach_warnings(self, cal if kind == "forecast" else None, N, D)
        if kind != "forecast" or cal is None:  # bootstrap percentiles (+ residual scale)
            lo, hi = iv.bootstrap_interval(self, N, D, level, kind)
            return plain(lo), plain(hi)
        t, tb, C, shape = self._targets(N, D)
        Nf, Df = (np.broadcast_to(np.asarray(v, float), shape).ravel() for v in (N, D))
        if "k" in cal:  # calibrated by the real-suite prior (supervised.calibration)
            r = iv.distance(C, cal, N=Nf, D=Df)
            sb = bootstrap_sd(tb, t.size)
            stk = self.result_.meta.get("stack")
            if stk and "k_stack" in cal:
                ex = st.untested_reach(cal, Df, Nf, stk)
                lo, hi = cb.stack_interval(
                    t, sb, float(cal["noise"]), r, stk, cal["k_stack"], level, ex, float(cal["k"])
                )
            else:
                lo, hi = cb.interval(t, sb, float(cal["noise"]), r, float(cal["k"]), level)
        else:  # presets: from their published CIs, floored at their draws' lowest E
            floor = None
            if cal.get("param_samples") and not self.result_.bootstrap:
                law = self.result_.law_
                E = [law.to_natural(th).get("E", np.nan) for th in cal["param_samples"]]
                floor = float(np.log(np.nanmin(E))) if np.isfinite(E).any() else None
            lo, hi = iv.log_interval(t, tb, C, cal, level, N=Nf, D=Df, lower_bound=floor)
        return plain(np.exp(lo).reshape(shape)), plain(np.exp(hi).reshape(shape))

    def allocate(
        self, C, accounting: str = "6ND", arch: Architecture = DISTILLATION_PAPER
    ) -> Allocation:
        """Compute-optimal N*, D*, L* for budget(s) C under 6ND or 3F(N)D accounting (Eq. 2).

        Closed form for the Chinchilla forms; a vectorised golden-section search along the
        IsoFLOP for `overtrain` and `average`. Runs at one D/N are refused (`check_split`)."""
        self._check()
        if self._fitted_form() == "compute":
            raise InputError(fm.NO_SPLIT)
        check_split(self)
        if self._fitted_form() in CHINCHILLA_FORMS and not self.result_.meta.get("average"):
            a = compute_optimal(self.params_, C, accounting, arch)
            if self.result_.meta.get("stack"):  # L* is the forecast `predict` gives there
                a = dataclasses.replace(a, loss=self.predict(a.N, a.D))
            return a
        return numeric_allocation(self.predict, C, accounting, arch)

    def allocate_interval(self, C, level: float = 0.9, accounting: str = "6ND"):
        """Intervals of N*, D*, L* (Chinchilla forms): bootstrap percentiles, and for N*, D* the
        scatter of the runs' own isoFLOP optima where they show some (`allocation_interval`)."""
        return allocation_interval(self, C, level, accounting, CHINCHILLA_FORMS)

    def forecast_one(self, N: float, D: float, *, level: float = 0.9):
        """The loss at (N, D) with its interval and the 1-D compute law's loss beside it: a
        `Forecast` (`supervised.forecast`)."""
        self._check()
        return point_forecast(self, N, D, check("level", level))

    def allocation(self, C: float, *, level: float = 0.9, accounting: str = "6ND"):
        """N*, D*, L* at C FLOPs with the loss interval, the N*/D* intervals and what they
        hold: a `Forecast` (`supervised.forecast`)."""
        self._check()
        return allocation_forecast(self, C, check("level", level), accounting)

    def summary(self) -> str:
        self._check()
        return fit_summary(self.result_)

    def contract(self) -> dict:
        """The fit as plain JSON-able data (what `supervised fit --json` prints)."""
        self._check()
        return fit_contract(self.result_)

    @property
    def exponents_(self) -> dict[str, float]:
        """a = beta/(alpha+beta) (N* ~ C^a) and b = alpha/(alpha+beta) (D* ~ C^b)."""
        al, be = self.params_["alpha"], self.params_["beta"]
        return {"a": be / (al + be), "b": al / (al + be)}


def calibration_min_train(n_runs: int) -> int:
    """Fewest runs a calibration backtest fits on: half the runs, and at least 8 (6 parameters
    + 2), so that early cutoffs do not extrapolate from hopeless fits."""
    return max(8, math.ceil(n_runs / 2))
