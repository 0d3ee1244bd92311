"""FLP: FLOPs -> loss -> performance (Chen et al., Sec. 2-3), and the paper's baselines.

- method "flp": stage 1 L(C) = (C/C_N)^alpha_N (Eq. 1) on final sampling models; stage 2
  P(L) = w0 + w1 L (Eq. 2) on checkpoints that pass the Sec. 3.3 filter.
- method "fp": P(C) = (C/C_M)^alpha_M (Eq. 3) on the same retained checkpoints (x = FLOPs spent
  so far; METHODS.md 3.7 item 6).
- method "gpt4": -log(P/100) = (C/C_M)^alpha_M (App. C, Eq. 6), same points.
- method "llama3": FLOPs -> NLL of the correct answer, power law on final models, then
  NLL -> P by a sigmoid from the random level to 100 on all checkpoints (App. D).

Forecast intervals come from bootstrap refits of both stages (independent resamples of the
final models and of the checkpoints, paired by index), so stage-1 uncertainty is carried into
stage 2; kind="prediction" (the default) also adds each stage's residual noise: Student-t draws
with dof n - p scaled by the dof-corrected residual SD, so stages fitted on a handful of points
get honestly wide intervals. Scores are points in [0, 100]: forecasts and intervals are clipped
to that range (a DomainWarning says when a forecast was clipped or the compute lies far beyond
the fitted runs). docs/flp.md reports the coverage of these intervals on held-out runs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..data.validate import check_columns, check_min_rows, check_no_duplicates, numeric_column
from ..errors import DomainWarning, InputError, not_fitted
from ..estimator import Estimator, point, scalar_like
from ..fitting import FitResult, fit_law, squared
from ..laws import get_law
from ..params import check
from ..scores import check_unit
from ..uncertainty.bootstrap import bootstrap_fit
from ..uncertainty.percentile import percentile_interval
from .contracts import flp_contract
from .fitting import bootstrap_closed_form, fit_from_closed_form
from .forecast import flp_forecast
from .intervals import not_emerged_interval, null_at_bounds
from .schema import METHODS, check_flp, init_args
from .tables import (
    Columns,
    FilterReport,
    check_models_have_runs,
    emerged_checkpoints,
    final_flops,
)
from .tasks import EMERGENCE_THRESHOLD, TaskSettings, task_settings

FORMAT_VERSION = 1
SCORE_RANGE = (0.0, 100.0)  # scores are points (percent)
EXTRAPOLATION_WARN = 10.0  # warn beyond this multiple of the largest fitted compute


def clip_scores(P, what: str = "forecast", warn: bool = True) -> np.ndarray:
    """Clip scores to SCORE_RANGE; a DomainWarning names how many were outside it."""
    P = np.asarray(P, float)
    lo, hi = SCORE_RANGE
    out = (P < lo) | (P > hi)
    if warn and out.any():
        worst = float(P[out].flat[np.argmax(np.abs(P[out] - 50.0))])
        warnings.warn(
            f"{int(out.sum())} {what}(s) outside the score range [{lo:g}, {hi:g}] points "
            f"(e.g. {worst:.4g}); clipped to the range: the fitted law is extrapolated past "
            "where it can hold",
            DomainWarning,
            stacklevel=3,
        )
    return np.clip(P, lo, hi)


def stage_noise(res: FitResult, shape, rng) -> np.ndarray | None:
    """Residual noise of one stage in its target space: Student-t (dof n - p) draws scaled by
    the dof-corrected residual SD. None when the stage has no residual degrees of freedom."""
    n, p = int(res.n_obs), len(res.theta)
    dof = n - p
    if dof < 1:
        return None
    s = float(res.rmse_target) * np.sqrt(n / dof)
    return s * shared_t(dof, shape, rng)


def shared_t(dof: int, shape, rng) -> np.ndarray:
    """Student-t draws of `shape` (B, m, ...) with one draw per bootstrap row, shared by the m
    points: a point's interval then depends only on the fit and that point, not on which
    other points are asked for in the same call (the draws followed the array shape before)."""
    shape = tuple(shape)
    one = (shape[0],) + (1,) * (len(shape) - 1)
    return np.broadcast_to(rng.standard_t(dof, size=one), shape)


def relative_error(predicted, actual) -> np.ndarray:
    """Eq. 4: |predicted - actual| / actual."""
    actual = np.asarray(actual, float)
    return np.abs(np.asarray(predicted, float) - actual) / actual


def _pair_bootstraps(stage1: FitResult, stage2: FitResult) -> None:
    """Keep as many stage-2 draws as stage 1 has: intervals chain draw b of stage 1 into draw b
    of stage 2, so a stage-2 draw without a partner is never used. Stage 1 can have fewer when
    resamples of very few runs (4 models) draw one run only and are dropped; the saved fit then
    still has one stage-1 draw per stage-2 draw, as its schema requires."""
    n1 = len(stage1.bootstrap)
    if stage1.bootstrap and len(stage2.bootstrap) > n1:
        stage2.bootstrap = stage2.bootstrap[:n1]
        stage2.meta["bootstrap_paired_with_stage1"] = n1


def _fit(law, X, y, start, bootstrap, seed, n_jobs) -> FitResult:
    """Closed-form start polished by the engine, bootstrap resamples solved in closed form
    (`bootstrap_closed_form`); or the law's grid when `start` is None, bootstrap refits
    warm-started at the optimum."""
    if start is None:
        res = fit_law(law, X, y, loss=squared(), n_polish=16)
        if bootstrap:
            bootstrap_fit(law, X, y, res, n_boot=bootstrap, seed=seed, n_jobs=n_jobs)
        return res
    res = fit_from_closed_form(law, X, y, start)
    if bootstrap:
        bootstrap_closed_form(law, X, y, res, n_boot=bootstrap, seed=seed)
    return res


class FLP(Estimator):
    """Two-stage downstream forecaster for one task (sklearn-style; learned attributes end in _).

    Scores are points (0-100) in and out, as Chen et al. report accuracies (Table 2). A score
    column in fractions (0-1, as the lm-evaluation-harness writes accuracies) is converted at
    the door: `score_unit` "auto" (default) reads the task's whole column as fractions when all
    its values lie in [0, 1], "points" / "fraction" declare it (`lmforecast.scores`).

    `chance` defaults to the task's Table 2 value (unknown tasks must give it), in points;
    `threshold` is the emergence margin in points (5, Sec. 3.3); `bootstrap` resamples per stage.
    """

    def __init__(
        self,
        task: str,
        *,
        method: str = "flp",
        chance: float | None = None,
        threshold: float = EMERGENCE_THRESHOLD,
        train_loss_decimals: int = 2,
        bootstrap: int = 200,
        seed: int = 0,
        n_jobs: int = 1,
        score_unit: str = "auto",
    ) -> None:
        if method not in METHODS:
            raise InputError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
        check("bootstrap", bootstrap)
        self.task, self.method = task, method
        self.chance, self.threshold = chance, threshold
        self.train_loss_decimals, self.bootstrap = train_loss_decimals, bootstrap
        self.seed, self.n_jobs = seed, n_jobs
        self.score_unit = check_unit(score_unit)

    # ---- fitting ---------------------------------------------------------------------------
    def fit(
        self,
        runs: pd.DataFrame,
        checkpoints: pd.DataFrame | None = None,
        *,
        columns: Columns | None = None,
    ) -> FLP:
        """Fit on RUNS (final models) and CKPTS (intermediate checkpoints; RUNS if None)."""
        columns = columns or Columns()
        settings = task_settings(self.task, self.chance)
        self.settings_ = settings
        rp = settings.chance
        runs = pd.DataFrame(runs).reset_index(drop=True)
        ck = runs if checkpoints is None else pd.DataFrame(checkpoints).reset_index(drop=True)
        if checkpoints is not None:
            check_models_have_runs(ck, runs, columns.model)
        if checkpoints is not None and columns.model in runs.columns:  # else RUNS are both
            check_no_duplicates(runs, [columns.model], "runs")  # a final model would weigh double
        C_final = final_flops(runs, columns, "runs")
        if self.method in ("flp", "llama3"):  # before any start is computed from them
            check_min_rows(len(C_final), 2, "runs", "stage 1 (Eq. 1) has 2 parameters")
        ck, P, rep = emerged_checkpoints(
            ck,
            self.task,
            rp,
            self.threshold,
            columns,
            self.train_loss_decimals,
            need=None if self.method == "llama3" else 2,
            score_unit=self.score_unit,
        )
        self.filter_ = rep
        self.n_dropped_ = {k: v for k, v in rep.counts().items() if k.startswith("dropped")}
        keep = rep.kept
        s1, s2 = self.seed, self.seed + 1
        if self.method == "flp":
            L = numeric_column(runs, columns.loss, positive=True, what="runs")
            Lck = numeric_column(ck, columns.loss, positive=True, what="checkpoints")
            law1, law2 = get_law("flp-power"), get_law("flp-linear")
            self.stage1_ = _fit(
                law1, {"C": C_final}, L, law1.ols_start(C_final, L), self.bootstrap, s1, self.n_jobs
            )
            x2, y2 = Lck[keep], P[keep]
            self.stage2_ = _fit(
                law2, {"L": x2}, y2, law2.ols_start(x2, y2), self.bootstrap, s2, self.n_jobs
            )
        elif self.method in ("fp", "gpt4"):
            law = get_law("flp-power" if self.method == "fp" else "flp-gpt4")
            x, y = final_flops(ck, columns, "checkpoints")[keep], P[keep]
            if self.method == "gpt4" and (y >= 100).any():
                raise InputError("gpt4 form needs scores below 100 points")
            t = law.target_of(y)
            a, b = np.polyfit(np.log(x), t, 1)
            start = np.array([-b / a if abs(a) > 1e-9 else 50.0, a])
            self.stage1_ = None
            self.stage2_ = _fit(law, {"C": x}, y, start, self.bootstrap, s2, self.n_jobs)
        else:  # llama3
            ncol = f"nll_{self.task}"
            check_columns(runs, [ncol], "runs")
            check_columns(ck, [ncol], "checkpoints")
            nll = numeric_column(runs, ncol, positive=True, what="runs")
            nll_ck = numeric_column(ck, ncol, positive=True, what="checkpoints")
            law1 = get_law("flp-power")
            law2 = get_law("flp-sigmoid", chance=rp)
            self.stage1_ = _fit(
                law1,
                {"C": C_final},
                nll,
                law1.ols_start(C_final, nll),
                self.bootstrap,
                s1,
                self.n_jobs,
            )
            self.stage1_.meta["law_options"] = {}
            self.stage2_ = _fit(law2, {"nll": nll_ck}, P, None, self.bootstrap, s2, self.n_jobs)
            self.stage2_.meta["law_options"] = {"chance": rp}
        if self.stage1_ is not None:
            _pair_bootstraps(self.stage1_, self.stage2_)
        self.n_runs_ = len(runs)
        self.n_points_ = int(keep.sum()) if self.method != "llama3" else len(ck)
        self.stage2_.meta["max_flops"] = float(C_final.max())
        # Sec. 3.2: coefficient of determination of stage 2 on the points it was fitted to
        name = self._stage_input()
        if self.method == "flp":
            xs, ys = x2, y2
        elif self.method == "llama3":
            xs, ys = nll_ck, P
        else:
            xs, ys = x, y
        resid = self.stage2_.predict(**{name: xs}) - ys
        sst = float(np.sum((ys - ys.mean()) ** 2))
        self.stage2_.meta["r2"] = float(1 - resid @ resid / sst) if sst > 0 else None
        return self

    @property
    def stage2_r2_(self) -> float | None:
        """R^2 of stage 2 (Eq. 2's linear loss -> score fit for method "flp") on its retained
        checkpoints; the paper reports 93% on average across benchmarks (Sec. 3.2)."""
        return self.stage2_.meta.get("r2")

    # ---- forecasting -----------------------------------------------------------------------
    def _check(self):
        if not hasattr(self, "stage2_"):
            raise not_fitted(self)

    def _stage_input(self) -> str:
        return {"flp": "L", "llama3": "nll"}.get(self.method, "C")

    def predict_loss(self, C) -> np.ndarray | None:
        """Stage-1 prediction (loss for FLP, answer NLL for llama3; None for FP/GPT-4)."""
        self._check()
        if self.stage1_ is None:
            return None
        return self.stage1_.predict(C=np.asarray(C, float))

    @property
    def max_flops_(self) -> float:
        """Largest training compute among the final models."""
        return float(self.stage2_.meta["max_flops"])

    def warn_if_extrapolating(self, C) -> None:
        """DomainWarning when C is more than EXTRAPOLATION_WARN x the largest fitted compute."""
        C = np.atleast_1d(np.asarray(C, float))
        m = self.max_flops_
        if (C > EXTRAPOLATION_WARN * m).any():
            warnings.warn(
                f"forecast at {float(C.max()):.3g} FLOPs extrapolates {float(C.max()) / m:.3g}x "
                f"beyond the largest fitted run ({m:.3g} FLOPs); the interval covers fit and "
                "noise uncertainty, not a change of regime",
                DomainWarning,
                stacklevel=3,
            )

    def predict(self, C, clip: bool = True) -> np.ndarray:
        """Forecast score (points) at training FLOPs C (stages chained), clipped to [0, 100]
        with a DomainWarning when a forecast falls outside (`clip=False`: the raw law)."""
        self._check()
        scalar, C = scalar_like(C), np.asarray(C, float)
        if not (C > 0).all():  # NaN included (it forecast NaN before)
            raise InputError(f"FLOPs must be > 0, got {C[~(C > 0)].ravel()[0]:g}")
        x = C if self.stage1_ is None else self.predict_loss(C)
        P = self.stage2_.predict(**{self._stage_input(): x})
        P = clip_scores(P) if clip else P
        return point(P) if scalar else np.asarray(P, float)

    def predict_interval(self, C, *, level: float = 0.9, kind: str = "prediction"):
        """Interval of the score at C: bootstrap refits of both stages (stage-1 samples fed into
        stage 2); kind="prediction" (default) adds Student-t residual noise of each stage
        (`stage_noise`), "confidence" leaves it out. Clipped to [0, 100] points; a stage with
        no residual degrees of freedom (n <= p) gives the whole range. Never zero width
        (flp.intervals): a forecast below random + threshold gets [0, max(upper, random +
        threshold)]; one collapsed onto 0 or 100 is NaN (undefined)."""
        self._check()
        if not self.stage2_.bootstrap:
            raise InputError("no bootstrap samples: fit with bootstrap > 0")
        level, kind = self._interval_args(level, kind)
        C = np.atleast_1d(np.asarray(C, float))
        rng = np.random.default_rng(self.seed + 2)
        T2 = np.asarray(self.stage2_.bootstrap)
        law2 = self.stage2_.law_
        B = T2.shape[0]
        if self.stage1_ is None:
            x = np.broadcast_to(C, (B, C.size))
        else:
            law1 = self.stage1_.law_
            T1 = np.asarray(self.stage1_.bootstrap)[:B]
            t1 = law1.predict_target(T1, {"C": C})
            B = t1.shape[0]
            if kind == "prediction":
                e1 = stage_noise(self.stage1_, t1.shape, rng)
                if e1 is None:
                    return self._whole_range(C, "stage 1")
                t1 = t1 + e1
            x = law1.from_target(t1)
        name = self._stage_input()
        t2 = np.stack([law2.predict_target(T2[b : b + 1], {name: x[b]})[0] for b in range(B)])
        if kind == "prediction":
            e2 = stage_noise(self.stage2_, t2.shape, rng)
            if e2 is None:
                return self._whole_range(C, "stage 2")
            t2 = t2 + e2
        q = law2.from_target(np.stack(percentile_interval(t2, level, nan=True)))
        lo, hi = (
            clip_scores(np.minimum(q[0], q[1]), warn=False),
            clip_scores(np.maximum(q[0], q[1]), warn=False),
        )
        lo, hi = null_at_bounds(lo, hi)
        floor = self.settings_.chance + self.threshold
        return not_emerged_interval(self.predict(C, clip=False), lo, hi, floor)

    def _whole_range(self, C, stage: str):
        res = self.stage1_ if stage == "stage 1" else self.stage2_
        warnings.warn(
            f"{stage} has {res.n_obs} point(s) for {len(res.theta)} parameters: its noise cannot "
            "be estimated, so the prediction interval is the whole score range",
            DomainWarning,
            stacklevel=3,
        )
        return np.full(C.shape, SCORE_RANGE[0]), np.full(C.shape, SCORE_RANGE[1])

    def forecast_one(self, C: float, *, level: float = 0.9, actual: float | None = None):
        """One forecast at `C` FLOPs with its interval, notes and (given the true score
        `actual`, points) Eq. 4's relative error: a `Forecast` (`flp.forecast`)."""
        self._check()
        return flp_forecast(self, C, check("level", level), actual)

    def warn_if_not_emerged(self, P, lower=None) -> None:
        """FLP models only the post-emergence phase (Sec. 3.4): a forecast below random +
        threshold is outside the fitted regime, so say so; likewise when only the interval's
        `lower` end reaches below it (stage 2 saw only emerged checkpoints, so its scatter
        understates the spread near the threshold; docs/flp.md, zoo backtest)."""
        P = np.atleast_1d(np.asarray(P, float))
        floor = self.settings_.chance + self.threshold
        low = P < floor
        if low.any():
            warnings.warn(
                f"{int(low.sum())} forecast(s) below random + threshold ({floor:g} points) for "
                f"{self.settings_.name}: the model would not have emerged, and FLP does not model "
                "the non-emergent phase (Sec. 3.4)",
                DomainWarning,
                stacklevel=3,
            )
        elif lower is not None and (np.atleast_1d(np.asarray(lower, float)) < floor).any():
            warnings.warn(
                f"the prediction interval reaches below random + threshold ({floor:g} points) for "
                f"{self.settings_.name}: near emergence FLP's interval is unreliable (stage 2 "
                "only sees emerged checkpoints), expect scores down to the random level",
                DomainWarning,
                stacklevel=3,
            )

    def forecast(self, C, actual=None, level: float = 0.9) -> pd.DataFrame:
        """Table of forecasts at C with interval and, where `actual` is given, Eq. 4 error.
        Warns (DomainWarning) for forecasts below random + threshold."""
        C = np.atleast_1d(np.asarray(C, float))
        self.warn_if_extrapolating(C)
        df = pd.DataFrame({"C": C, "performance": self.predict(C)})
        L = self.predict_loss(C)
        if L is not None:
            df.insert(1, "loss" if self.method == "flp" else "nll", L)
        if self.stage2_.bootstrap:
            df["lower"], df["upper"] = self.predict_interval(C, level=level)
        self.warn_if_not_emerged(df["performance"], df.get("lower"))
        if actual is not None:
            df["actual"] = np.atleast_1d(np.asarray(actual, float))
            df["relative_error"] = relative_error(df["performance"], df["actual"])
        return df

    # ---- reporting / persistence -----------------------------------------------------------
    def contract(self) -> dict:
        """The fit as plain data (what `flp fit --json` prints; `flp.contracts`)."""
        self._check()
        return flp_contract(self)

    def summary(self) -> str:
        self._check()
        s = self.settings_
        c = self.filter_.counts()
        lines = [
            f"FLP ({self.method}) for task {s.name}: random {s.chance:g} points, "
            f"threshold +{self.threshold:g}",
            f"final models: {self.n_runs_}    checkpoints: {c['checkpoints']} "
            f"(kept {c['kept']}; dropped {c['dropped_not_improved']} not improved, "
            f"{c['dropped_not_emerged']} not emerged)",
        ]
        if self.stage1_ is not None:
            lines += ["Stage 1 (FLOPs -> " + ("loss" if self.method == "flp" else "NLL") + ")"]
            lines += [self.stage1_.summary()]
        lines += ["Stage 2", self.stage2_.summary()]
        if self.stage2_r2_ is not None:
            lines.append(
                f"stage 2 R^2 on the {self.n_points_} fitted checkpoints: {self.stage2_r2_:.3f} "
                "(Sec. 3.2: 0.93 on average across the paper's benchmarks; "
                "flp.comparison.stage2_r2 averages over tasks)"
            )
        if self.stage2_.bootstrap:
            lines.append(
                f"forecast intervals: {len(self.stage2_.bootstrap)} bootstrap refits per stage "
                "plus Student-t residual noise (prediction intervals, clipped to [0, 100]); "
                "bootstrap=0 turns them off"
            )
        else:
            lines.append("forecast intervals: none (fitted with bootstrap=0)")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        self._check()
        return {
            "kind": "FLP",
            "format_version": FORMAT_VERSION,
            "config": {
                "task": self.task,
                "method": self.method,
                "chance": self.chance,
                "threshold": float(self.threshold),
                "train_loss_decimals": int(self.train_loss_decimals),
                "bootstrap": int(self.bootstrap),
                "seed": int(self.seed),
                "score_unit": self.score_unit,
            },
            "settings": dict(self.settings_.__dict__),
            "filter": {k: v.tolist() for k, v in self.filter_.__dict__.items()},
            "n_runs": self.n_runs_,
            "n_points": self.n_points_,
            "stage1": None if self.stage1_ is None else self.stage1_.to_dict(),
            "stage2": self.stage2_.to_dict(),
        }

    saved_label = "saved FLP fit"

    @classmethod
    def from_dict(cls, d: dict, where: str = "saved FLP fit") -> FLP:
        """A fit from `to_dict` (a saved file's dict), checked field by field (`flp.schema`)."""
        check_flp(d, where, init_args(cls))
        try:
            return cls._from_checked(d)
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{where}: not a saved FLP fit ({exc})") from exc

    @classmethod
    def _from_checked(cls, d: dict) -> FLP:
        est = cls(**d["config"])
        est.settings_ = TaskSettings(**d["settings"])
        f = d["filter"]
        est.filter_ = FilterReport(
            *(np.array(f[k], bool) for k in ("kept", "not_improved", "not_emerged"))
        )
        est.n_dropped_ = {k: v for k, v in est.filter_.counts().items() if k.startswith("dropped")}
        est.n_runs_, est.n_points_ = d["n_runs"], d["n_points"]
        est.stage1_ = None if d["stage1"] is None else FitResult.from_dict(d["stage1"])
        est.stage2_ = FitResult.from_dict(d["stage2"])
        return est
