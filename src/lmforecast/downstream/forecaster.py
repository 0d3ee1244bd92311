"""`DownstreamForecaster`: a task's score at a new training compute, from an evaluation table.

`method` is one member (see `members.py`), `"ensemble"` (default: the median of `sigmoid`,
`local-linear` and `trend`, chosen by the Pythia backtests in docs/downstream.md), or `"auto"`
(per task, the candidate with the lowest error in rolling backtests inside the fitted data:
forecast each of the two largest fitted models' final scores from the smaller models).

Prediction intervals: bootstrap replicates of every stage (stage 1: residual bootstrap over
the final checkpoints; stage 2: resampled checkpoints; trend: residual refits), plus the
evaluation noise of one score (the harness stderr of the largest fitted model's final score),
plus, for the ensemble, the spread between its members (model uncertainty); the replicates are
centred on the point forecast (`noise.py`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import InputError, not_fitted
from ..estimator import Estimator, point, scalar_like
from ..params import CHANCE_POINTS, Interval, check
from ..uncertainty.percentile import percentile_interval
from .chance import chance_level
from .forecast import point_forecast
from .members import (
    DIRECT,
    MEMBERS,
    PAPER,
    TWO_STAGE,
    Stage1,
    _map,
    fit_paper,
    fit_trend,
    fit_two_stage,
    member_predict,
    member_replicates,
    subset,
)
from .noise import (
    CENTRE,
    CHECKPOINT_SD,
    EVAL_WEIGHT,
    NO_STDERR_SD,
    SPREAD_WEIGHT,
    gain_sd_for,
    knob_replicates,
    undertraining,
)
from .persist import load_checked
from .reach import (
    chance_warning,
    fitted_ends,
    reach_warnings,
    score_floor,
)
from .schema import FORMAT_VERSION, validate
from .summary import fit_contract, summary_text
from .tables import (
    TaskData,
    evals_frame,
    fit_models,
    flops_basis,
    largest_label,
    largest_score,
    task_data,
)

DEFAULT_METHOD = "ensemble"
ENSEMBLE = ("sigmoid", "local-linear", "trend")
AUTO_CANDIDATES = ("sigmoid", "local-linear", "trend", "ensemble")
METHODS = ("ensemble", "auto") + MEMBERS
#: replicates of the interval: 0 (no interval) or 2 and more (one has no spread)
REPLICATES = Interval(0, None, integer=True, exclude=(1,), why=" (an interval needs replicates)")
#: fewer replicates than this give an interval whose ends are rough (`fit` warns)
FEW_REPLICATES = 20


class DownstreamForecaster(Estimator):
    """Forecast a downstream score (points) from compute; sklearn-style (learned attrs end in _).

    Parameters: `method` (see module doc), `stage1` ('saturating' default, 'power' = Eq. 1,
    'nd'), `window` (local-linear window in log loss), `trend_points` (finals in the trend),
    `chance` (override the bundled chance level, points), `bootstrap` (replicates), `seed`,
    `combine` ('median' of the ensemble's members, default, or 'mean'), `gain_sd` (the
    interval's sd per point of forecast gain; None: the selected method's protocol value,
    `noise.GAIN_SD`).
    """

    def __init__(
        self,
        method: str = DEFAULT_METHOD,
        *,
        stage1: str = "saturating",
        window: float = 0.3,
        trend_points: int = 3,
        chance: float | None = None,
        bootstrap: int = 200,
        seed: int = 0,
        combine: str = "median",
        gain_sd: float | None = None,
    ) -> None:
        if method not in METHODS:
            raise InputError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
        check("bootstrap", bootstrap, REPLICATES)
        if int(trend_points) < 2:
            raise InputError(f"trend_points must be >= 2, got {trend_points}")
        if not float(window) > 0:
            raise InputError(f"window must be > 0, got {window}")
        if gain_sd is not None and not (math.isfinite(float(gain_sd)) and float(gain_sd) >= 0):
            raise InputError(f"gain_sd must be None or a finite number >= 0, got {gain_sd}")
        if chance is not None and CHANCE_POINTS.failure(float(chance)) is not None:
            raise InputError(f"chance must be {CHANCE_POINTS.bounds()} points, got {chance}")
        if combine not in ("median", "mean"):
            raise InputError(f"combine must be 'median' or 'mean', got {combine!r}")
        self.method, self.stage1, self.combine = method, stage1, combine
        self.window, self.trend_points = float(window), int(trend_points)
        self.chance, self.bootstrap, self.seed = chance, int(bootstrap), int(seed)
        self.gain_sd = None if gain_sd is None else float(gain_sd)

    # ---- fitting --------------------------------------------------------------------------
    def _members_needed(self) -> tuple[str, ...]:
        return ENSEMBLE if self.method in ("ensemble", "auto") else (self.method,)

    def _fit_members(self, td: TaskData, names, B: int, seed: int) -> tuple[dict, dict, dict]:
        rng = np.random.default_rng(seed)
        states, refused = {}, {}
        s1 = None
        if any(n in TWO_STAGE for n in names):
            s1 = Stage1(self.stage1).fit(td, B, rng)
        for n in names:
            try:
                if n in TWO_STAGE:
                    states[n] = fit_two_stage(n, td, self.chance_, self.window, B, rng)
                elif n == "trend":
                    states[n] = fit_trend(td, self.trend_points, B, rng)
                elif n == "persistence":
                    states[n] = {"value": largest_score(td.runs)}
                else:
                    states[n] = fit_paper(n, td, self.chance_, B, seed)
            except InputError as exc:
                refused[n] = str(exc)
        return states, refused, s1

    def fit(
        self,
        evals,
        *,
        task: str,
        loss_task: str = "auto",
        metric: str = "acc",
        loss_metric: str | None = None,
        models=None,
        family: str | None = None,
    ) -> DownstreamForecaster:
        """Fit on a tidy evaluation table (DataFrame or path; `tables.task_data`); without
        `models`, of a family and its deduped twin only `family` ("standard" default, "deduped",
        "all"; `tables.fit_models`), `models_note_` (not saved) saying so."""
        df = evals_frame(evals)
        models, self.models_note_ = fit_models(df, models, family)
        td = task_data(
            df,
            task=task,
            loss_task=loss_task,
            metric=metric,
            loss_metric=loss_metric,
            models=models,
        )
        return self.fit_task_data(td, flops_basis=flops_basis(df))

    def fit_task_data(self, td: TaskData, flops_basis: str | None = None) -> DownstreamForecaster:
        runs = td.runs
        if len(runs) < 2:
            raise InputError(
                f"task {td.task!r}: need final checkpoints of >= 2 models, got {len(runs)}"
            )
        ch = self.chance if self.chance is not None else chance_level(td.task)
        if ch is None:
            raise InputError(
                f"task {td.task!r} has no bundled chance level; give it with --chance P "
                "(points; Python: chance=)"
            )
        self.chance_ = float(ch)
        chance_warning(td.task, self.chance, runs)  # a given level above every model's score
        self.task_, self.metric_, self.loss_task_ = td.task, td.metric, td.loss_task
        self.flops_basis_ = flops_basis
        self.n_models_, self.n_checkpoints_ = len(runs), len(td.checkpoints)
        self.largest_ = {
            "model": largest_label(runs),
            "C": float(runs["C"].iloc[-1]),
            "score": largest_score(runs),
        }
        self.smallest_, self.lowest_ = fitted_ends(runs)  # for predict's reach warnings
        # where a checkpoint counts as mid-training (noise.py): the largest fitted model's tokens
        top = runs["C"] >= runs["C"].max() * (1 - 1e-9)
        D = runs.loc[top, "D"].to_numpy(float)
        self.final_tokens_ = float(D.min()) if len(D) and np.all(np.isfinite(D) & (D > 0)) else None
        se = float(runs["stderr"].iloc[-1])
        self.eval_sd_ = se if np.isfinite(se) and se > 0 else NO_STDERR_SD
        if not (np.isfinite(se) and se > 0):
            warnings.warn(
                f"task {td.task!r}: no 'stderr' for the largest fitted model "
                f"({self.largest_['model']}); its evaluation noise is taken as "
                f"{NO_STDERR_SD:g} point (the harness writes `<metric>_stderr`; a 100-question "
                "task's is about 5)",
                stacklevel=2,
            )
        names = self._members_needed()
        self.members_, self.refused_, self.stage1_ = self._fit_members(
            td, names, self.bootstrap, self.seed
        )
        if self.method not in ("ensemble", "auto") and self.method in self.refused_:
            raise InputError(f"method {self.method!r} refused: {self.refused_[self.method]}")
        self.selected_ = self.method
        self.selection_errors_ = {}
        if self.method == "auto":
            self.selection_errors_ = self._internal_backtest(td)
            ok = {k: v for k, v in self.selection_errors_.items() if np.isfinite(v)}
            self.selected_ = min(ok, key=ok.get) if ok else "ensemble"
        if 2 <= self.bootstrap < FEW_REPLICATES:
            b = self.bootstrap
            warnings.warn(
                f"bootstrap={b} (CLI: --bootstrap {b}): the interval's ends come from "
                f"{b} replicates and are rough; use {FEW_REPLICATES} or more "
                "(default 200)",
                stacklevel=3,
            )
        return self

    def _internal_backtest(self, td: TaskData) -> dict:
        """Mean absolute error of each candidate forecasting the 1st and 2nd largest fitted
        models' finals from the strictly smaller ones (needs >= 3 smaller models)."""
        runs = td.runs
        errs = {c: [] for c in AUTO_CANDIDATES}
        for j in (len(runs) - 1, len(runs) - 2):
            small = runs[runs["C"] < runs["C"].iloc[j]]
            if len(small) < 3:
                continue
            sub = subset(td, small["model"])
            probe = DownstreamForecaster(
                "ensemble",
                stage1=self.stage1,
                window=self.window,
                trend_points=self.trend_points,
                chance=self.chance_,
                bootstrap=0,
                seed=self.seed,
                combine=self.combine,
            )
            probe.fit_task_data(sub)
            C = runs["C"].iloc[j]
            actual = runs["score"].iloc[j]
            for c in AUTO_CANDIDATES:
                try:
                    errs[c].append(abs(float(probe._point(c, np.array([C]))[0]) - actual))
                except (InputError, KeyError):
                    errs[c].append(np.inf)
        return {c: float(np.mean(v)) if v else float("nan") for c, v in errs.items()}

    # ---- prediction -----------------------------------------------------------------------
    def _check(self):
        if not hasattr(self, "members_"):
            raise not_fitted(self)

    def _compute(self, flops, N, D):
        if flops is not None and (N is not None or D is not None):
            raise InputError("give flops, or N (parameters) and D (tokens), not both")
        if flops is None:
            if N is None or D is None:
                raise InputError("give flops, or both N (parameters) and D (tokens)")
            N, D = np.atleast_1d(np.asarray(N, float)), np.atleast_1d(np.asarray(D, float))
            try:
                N, D = np.broadcast_arrays(N, D)
            except ValueError:
                raise InputError(
                    f"N ({N.size} values) and D ({D.size} values) must have the same length "
                    "(or one of them a single value)"
                ) from None
            flops = 6.0 * N * D
        else:
            flops = np.atleast_1d(np.asarray(flops, float))
        if not np.all(np.isfinite(flops)) or (flops <= 0).any():
            raise InputError("FLOPs must be finite and > 0")
        if self.stage1 == "nd" and (N is None or D is None) and self._uses_stage1():
            raise InputError(
                f"flops: the {self.task_} fit's stage 1 is 'nd' (a law of N and D): give N "
                "and D (--params, --tokens) instead"
            )
        return flops, N, D

    def _uses_stage1(self) -> bool:
        return any(m in TWO_STAGE for m in self.members_)

    def _s1(self):
        return Stage1(self.stage1) if self.stage1_ is not None else None

    def _member_point(self, name, C, N=None, D=None):
        if name in self.refused_:
            raise InputError(f"method {name!r} refused: {self.refused_[name]}")
        return member_predict(
            name, self.members_[name], self._s1(), self.stage1_, C, N, D, self.chance_, self.window
        )

    def _point(self, name, C, N=None, D=None):
        if name == "ensemble":
            names = [m for m in ENSEMBLE if m not in self.refused_]
            f = np.median if self.combine == "median" else np.mean
            return f([self._member_point(m, C, N, D) for m in names], axis=0)
        return self._member_point(name, C, N, D)

    def predict(self, flops=None, *, N=None, D=None) -> np.ndarray:
        """Forecast score (points) at training FLOPs (or N parameters and D tokens); warns
        (`reach.ForecastReachWarning`) outside the fitted compute range or below chance."""
        self._check()
        scalar = scalar_like(flops, N, D)
        C, N, D = self._compute(flops, N, D)
        P = np.clip(self._point(self.selected_, C, N, D), 0.0, 100.0)
        reach_warnings(self, C, P)
        return point(P.reshape(())) if scalar and P.size == 1 else P

    def predict_loss(self, flops=None, *, N=None, D=None) -> np.ndarray | None:
        """Stage-1 forecast of the loss task's loss (None when no two-stage member is used)."""
        self._check()
        C, N, D = self._compute(flops, N, D)
        if self.stage1_ is None:
            return None
        return self._s1().predict(self.stage1_["params"], C, N, D)

    def score_from_loss(self, L, name: str) -> np.ndarray:
        """Stage 2 alone: the loss -> score map of two-stage member `name` at losses L."""
        self._check()
        if name not in TWO_STAGE or name not in self.members_:
            raise InputError(f"{name!r} is not a fitted two-stage member")
        m = _map(name, self.chance_, self.window)
        return m.predict(np.asarray(self.members_[name]["params"]), np.asarray(L, float))

    def interval_parts(self, flops=None, *, N=None, D=None):
        """(R, var, spread, point, gain): (B, n) replicates of the fitted stages (no noise), the
        evaluation-noise variance, the members' variance (ensemble; else 0), the point
        forecast and its gain over the largest fitted model's score (`gain_sd` scales it)."""
        self._check()
        C, N, D = self._compute(flops, N, D)
        name = self.selected_
        names = [m for m in ENSEMBLE if m not in self.refused_] if name == "ensemble" else [name]
        if self.bootstrap < 2 and name != "persistence":
            raise InputError(
                f"this fit has no bootstrap replicates (bootstrap={self.bootstrap}), so no "
                "interval: refit with bootstrap >= 2 (CLI: --bootstrap)"
            )
        reps = [
            member_replicates(
                m, self.members_[m], self._s1(), self.stage1_, C, N, D, self.chance_, self.window
            )
            for m in names
        ]
        B = min(r.shape[0] for r in reps)
        if B < 2:
            raise InputError("no bootstrap replicates: fit with bootstrap > 0")
        R = (np.median if self.combine == "median" else np.mean)([r[:B] for r in reps], axis=0)
        var = np.full(C.size, self.eval_sd_**2)
        spread = np.zeros(C.size)
        if len(names) > 1:
            pts = np.stack([self._member_point(m, C, N, D) for m in names])
            spread = pts.var(axis=0, ddof=1)
        point = np.clip(self._point(name, C, N, D), 0.0, 100.0)
        return R, var, spread, point, np.abs(point - self.largest_["score"])

    def replicates(self, flops=None, *, N=None, D=None, eval_apart=False) -> np.ndarray:
        """(B, n) bootstrap replicates of the forecast centred on the point forecast, evaluation
        noise, (ensemble) member spread and the gain term included, clipped to [0, 100]; the
        interval is their percentile range (`noise.py`). `eval_apart`: the evaluation noise
        drawn apart from the other terms, in this task's own order (`noise.task_noise_draws`)."""
        return self._replicates_and_point(flops, N, D, eval_apart)[0]

    def _replicates_and_point(self, flops, N, D, eval_apart=False):
        R, var, spread, point, gain = self.interval_parts(flops, N=N, D=D)
        # one noise draw per replicate, shared by every point: a point's interval does not
        # depend on which other points are asked for (and a trajectory's band is smooth)
        return knob_replicates(
            R,
            var,
            spread,
            point,
            gain,
            seed=self.seed,
            eval_weight=EVAL_WEIGHT,
            spread_weight=SPREAD_WEIGHT,
            centre=CENTRE,
            gain_sd=gain_sd_for(self.selected_) if self.gain_sd is None else self.gain_sd,
            extra_var=self.checkpoint_var(D, R.shape[1]),
            eval_task=self.task_ if eval_apart else None,
            floor=score_floor(self),
        ), point

    def checkpoint_var(self, D, n: int, sd: float = CHECKPOINT_SD) -> np.ndarray:
        """(sd u)^2 per forecast, u = ln of how many times fewer tokens than the largest fitted
        model's final (`noise.undertraining`); zeros for a forecast by FLOPs, for a method that
        reads N and D through stage 1 `nd` (a two-stage member, or the ensemble, two of whose
        three members do; `trend`, `flp`, `fp` and `persistence` read compute alone and keep
        the term) and for a fit without token counts."""
        ft = getattr(self, "final_tokens_", None)
        reads_nd = self.stage1 == "nd" and self.selected_ in (*TWO_STAGE, "ensemble")
        if D is None or ft is None or reads_nd:
            return np.zeros(n)
        return np.broadcast_to((sd * undertraining(D, ft)) ** 2, (n,)).copy()

    def predict_interval(
        self, flops=None, *, N=None, D=None, level: float = 0.9, kind: str = "prediction"
    ):
        """Interval (lo, hi) in points at `level`: kind="prediction" (default) the replicates
        with evaluation noise, member spread and gain terms (see module doc); "confidence" the
        fitted members' bootstrap replicates alone; either widened to hold the point."""
        level, kind = self._interval_args(level, kind)
        if kind == "confidence":
            R, _, _, centre, _ = self.interval_parts(flops, N=N, D=D)
            return percentile_interval(R, level, point=centre)
        R, centre = self._replicates_and_point(flops, N, D)
        return percentile_interval(R, level, point=centre)

    # ---- reporting / persistence ----------------------------------------------------------
    def forecast_one(self, flops=None, *, N=None, D=None, level: float = 0.9, actual=None):
        """One forecast at training FLOPs (or N and D) with its interval and, given the true
        score `actual` (points), its errors: a `Forecast` (`downstream.forecast`)."""
        kw = {"flops": flops} if flops is not None else {"N": N, "D": D}
        return point_forecast(self, kw, check("level", level), actual)

    def summary(self) -> str:
        self._check()
        return summary_text(self)

    def contract(self) -> dict:
        """The fit as plain data (what `downstream fit --json` prints; `summary.fit_contract`)."""
        self._check()
        return fit_contract(self)

    def to_dict(self) -> dict:
        self._check()
        return {
            "kind": "DownstreamForecaster",
            "format_version": FORMAT_VERSION,
            "config": {
                "method": self.method,
                "stage1": self.stage1,
                "window": self.window,
                "trend_points": self.trend_points,
                "chance": self.chance,
                "bootstrap": self.bootstrap,
                "seed": self.seed,
                "combine": self.combine,
                "gain_sd": self.gain_sd,
            },
            "fitted": {
                "chance": self.chance_,
                "task": self.task_,
                "metric": self.metric_,
                "loss_task": self.loss_task_,
                "flops_basis": self.flops_basis_,
                "n_models": self.n_models_,
                "n_checkpoints": self.n_checkpoints_,
                "largest": self.largest_,
                "smallest": self.smallest_,
                "lowest": self.lowest_,
                "final_tokens": self.final_tokens_,
                "eval_sd": self.eval_sd_,
                "members": self.members_,
                "refused": self.refused_,
                "stage1": self.stage1_,
                "selected": self.selected_,
                "selection_errors": self.selection_errors_,
            },
        }

    @classmethod
    def from_dict(cls, d: dict, where: str = "saved fit") -> DownstreamForecaster:
        validate(d, where)
        est = cls(**d["config"])
        f = d["fitted"]
        est.chance_, est.task_, est.metric_ = f["chance"], f["task"], f["metric"]
        est.loss_task_, est.flops_basis_ = f["loss_task"], f["flops_basis"]
        est.n_models_, est.n_checkpoints_ = f["n_models"], f["n_checkpoints"]
        est.largest_, est.eval_sd_, est.members_ = f["largest"], f["eval_sd"], f["members"]
        est.smallest_, est.lowest_ = f["smallest"], f["lowest"]
        est.final_tokens_ = f["final_tokens"]
        est.refused_, est.stage1_, est.selected_ = f["refused"], f["stage1"], f["selected"]
        est.selection_errors_ = f["selection_errors"]
        return est

    @classmethod
    def from_json(cls, text_or_path) -> DownstreamForecaster:
        """Load a saved fit; a file that is not one, or was edited into something unusable, is
        an `InputError` naming it (the fit is exercised once at its largest fitted compute, so
        a hand-edited member cannot fail later with another exception)."""
        return load_checked(cls, text_or_path)


__all__ = ["DownstreamForecaster", "DEFAULT_METHOD", "ENSEMBLE", "METHODS", "DIRECT", "PAPER"]
