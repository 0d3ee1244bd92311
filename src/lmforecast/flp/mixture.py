"""FLP-M: FLOPs per data source -> domain losses -> performance (Chen et al., Sec. 4-6).

Stage 1 fits one M1-M4 law (Table 3; M4 = Eq. 5, generalised to K sources) per validation
domain on the final sampling models. Stage 2 maps the K domain losses of the retained
checkpoints (Sec. 3.3 filter) to the task score with the two-layer network of Sec. 4.2
("neural"), or with the Sec. 6.2 alternatives: linear regression on the domain losses
("domain-linear") or on their average ("average"). A forecast feeds the *predicted* domain losses
into stage 2 (Sec. 4); `optimize_mixture` scans mixing ratios for a total compute (Sec. 6.1).

Intervals (`predict_interval`, on by default: bootstrap=50): bootstrap refits of both stages,
plus Student-t residual noise per stage with dof n - p (p of the network: hidden (K + 2) + 1),
clipped to the score range [0, 100] points like every forecast.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..data.validate import check_no_duplicates, numeric_column
from ..errors import DomainWarning, InputError, not_fitted
from ..estimator import Estimator, point
from ..laws import get_law
from ..laws.flp import MIXTURE_FORMS
from ..params import UNIT_OPEN, check
from ..scores import check_unit
from ..uncertainty.bootstrap import bootstrap_fit
from ..uncertainty.percentile import percentile_interval
from ..uncertainty.resample import resample_rows
from . import mixture_scan
from .contracts import flpm_contract
from .fitting import fit_stage1
from .forecast import best_mixture, flpm_forecast
from .intervals import BOUNDS, null_at_bounds
from .mixture_saved import flpm_dict, restore_flpm
from .mixture_scan import MixtureCurve
from .model import clip_scores, shared_t, stage_noise
from .network import TwoLayerNetwork
from .schema import MAPPERS, check_flpm, init_args
from .tables import (
    Columns,
    check_models_have_runs,
    emerged_checkpoints,
    mixture_domains,
    source_flops,
)
from .tasks import EMERGENCE_THRESHOLD, task_settings

ZERO_SHARES = ("floor", "drop")
SENSITIVITY_FLOORS = (1e-2, 1e-3, 1e-6)
SENSITIVITY_SHARE = 0.01  # the small share whose forecast `summary()` reports per floor


class FLPM(Estimator):
    """FLP-M forecaster for one task (sklearn-style; learned attributes end in _).

    Scores are points (0-100) in and out, as Chen et al. report them (Sec. 5-6); a score
    column in fractions is converted at the door (`score_unit`, as in `FLP`).

    `bootstrap` (default 50) resamples both stages for `predict_interval`; 0 turns intervals off.

    Runs with a source share of 0 (the paper's ratio-0 models, Sec. 5.1) have log C_i = -inf in
    M1/M2/M4. `zero_share="floor"` (default) floors each source's compute at `zero_floor` x the
    total (1e-3); `"drop"` leaves the runs with a zero share out of stage 1 (their checkpoints
    still train stage 2; forecasts at a share below the floor still use it).
    `zero_share_sensitivity_` holds the forecast at share 0.01 of
    the last source under floors 1e-2/1e-3/1e-6 and "drop" (docs/flp.md: the choice of default).
    """

    def __init__(
        self,
        task: str,
        *,
        form: str = "M4",
        mapper: str = "neural",
        chance: float | None = None,
        threshold: float = EMERGENCE_THRESHOLD,
        train_loss_decimals: int = 2,
        hidden: int = 3,
        lr: float = 0.05,
        steps: int = 2000,
        weight_decay: float = 0.01,
        n_init: int = 5,
        bootstrap: int = 50,
        seed: int = 0,
        zero_share: str = "floor",
        zero_floor: float = 1e-3,
        score_unit: str = "auto",
    ) -> None:
        if form not in MIXTURE_FORMS:
            raise InputError(f"unknown form {form!r}; use one of {', '.join(MIXTURE_FORMS)}")
        if mapper not in MAPPERS:
            raise InputError(f"unknown mapper {mapper!r}; use one of {', '.join(MAPPERS)}")
        check("bootstrap", bootstrap)
        if zero_share not in ZERO_SHARES:
            raise InputError(f"zero_share must be 'floor' or 'drop', got {zero_share!r}")
        check("zero_floor", zero_floor, UNIT_OPEN)
        self.zero_share, self.zero_floor = zero_share, zero_floor
        self.task, self.form, self.mapper = task, form, mapper
        self.chance, self.threshold = chance, threshold
        self.train_loss_decimals = train_loss_decimals
        self.hidden, self.lr, self.steps = hidden, lr, steps
        self.weight_decay, self.n_init, self.seed = weight_decay, n_init, seed
        self.bootstrap, self.score_unit = bootstrap, check_unit(score_unit)

    # ---- fitting ---------------------------------------------------------------------------
    def fit(
        self,
        runs: pd.DataFrame,
        checkpoints: pd.DataFrame | None = None,
        *,
        columns: Columns | None = None,
    ) -> FLPM:
        """Stage 1 on RUNS (final models), stage 2 on CKPTS (RUNS if None)."""
        columns = columns or Columns()
        self.settings_ = task_settings(self.task, self.chance)
        rp = self.settings_.chance
        runs = pd.DataFrame(runs).reset_index(drop=True)
        ck = runs if checkpoints is None else pd.DataFrame(checkpoints).reset_index(drop=True)
        if checkpoints is not None:
            check_models_have_runs(ck, runs, columns.model)
        if checkpoints is not None and columns.model in runs.columns:  # else RUNS are both
            check_no_duplicates(runs, [columns.model], "runs")  # a final model would weigh double
        sources, F = source_flops(runs, columns, what="runs")
        runs_all, F_all = runs, F
        if len(sources) < 2:
            raise InputError(f"runs: FLP-M needs at least two sources, found {sources}")
        self.sources_ = sources
        dcols = mixture_domains(runs, ck)
        self.domains_ = tuple(c[5:] for c in dcols)
        zero = (F <= 0).any(axis=1)
        if self.zero_share == "drop" and zero.any():
            if (~zero).sum() < 3:
                raise InputError(
                    f"runs: zero_share='drop' leaves {int((~zero).sum())} run(s) with every "
                    "source share > 0; stage 1 needs at least 3"
                )
            runs, F = runs.loc[~zero].reset_index(drop=True), F[~zero]
        self.n_zero_share_ = int(zero.sum())
        law = get_law(MIXTURE_FORMS[self.form], sources=sources, ratio_floor=float(self.zero_floor))
        X = {f"C_{s}": F[:, i] for i, s in enumerate(sources)}
        self.stage1_ = {}
        Ls = {}
        for d, c in zip(self.domains_, dcols):
            L = numeric_column(runs, c, positive=True, what="runs")
            Ls[d] = L
            res = fit_stage1(law, X, L)
            res.meta["law_options"] = {
                "sources": list(sources),
                "ratio_floor": float(self.zero_floor),
            }
            res.meta["max_flops"] = float(F.sum(1).max())
            res.meta["min_flops"] = float(F.sum(1).min())
            share = F / F.sum(1, keepdims=True)
            res.meta["share_range"] = {
                s: [float(share[:, i].min()), float(share[:, i].max())]
                for i, s in enumerate(sources)
            }
            self.stage1_[d] = res
        # stage 2
        ck, P, rep = emerged_checkpoints(
            ck,
            self.task,
            rp,
            self.threshold,
            columns,
            self.train_loss_decimals,
            need=len(self.domains_) + 1,
            score_unit=self.score_unit,
        )
        self.filter_ = rep
        keep = rep.kept
        Lck = np.column_stack(
            [numeric_column(ck, c, positive=True, what="checkpoints") for c in dcols]
        )
        self._fit_mapper(Lck[keep], P[keep])
        if self.bootstrap:
            self._bootstrap(law, X, runs, dcols, Lck[keep], P[keep])
        self.n_runs_, self.n_points_ = len(runs), int(keep.sum())
        self.zero_share_sensitivity_ = self._zero_share_sensitivity(runs_all, F_all, dcols)
        return self

    def _zero_share_sensitivity(self, runs, F, dcols) -> dict | None:
        """Forecast at share `SENSITIVITY_SHARE` of the last source, at the largest sampling
        model's total compute, with stage 1 refitted under floors 1e-2/1e-3/1e-6 and with the
        zero-share runs dropped (stage 2 kept). None without zero-share runs (no effect)."""
        zero = (F <= 0).any(axis=1)
        if not zero.any():
            return None
        K = F.shape[1]
        tot = float(F.sum(1).max())
        r = SENSITIVITY_SHARE
        q = np.array([[1.0 - r] + [r / (K - 1)] * (K - 1)]) * tot
        out = {"share": r, "flops": tot, "forecast": {}}
        settings = [(f"floor {f:g}", f, np.ones(len(F), bool)) for f in SENSITIVITY_FLOORS]
        if (~zero).sum() >= 3:
            settings.append(("drop", self.zero_floor, ~zero))
        for name, floor, rows in settings:
            law = get_law(MIXTURE_FORMS[self.form], sources=self.sources_, ratio_floor=floor)
            X = {f"C_{s}": F[rows, i] for i, s in enumerate(self.sources_)}
            Xq = {f"C_{s}": q[:, i] for i, s in enumerate(self.sources_)}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                L = [
                    np.exp(
                        law.predict_target(
                            np.asarray(
                                fit_stage1(law, X, runs[c].to_numpy(float)[rows]).theta, float
                            )[None, :],
                            Xq,
                        )[0]
                    )
                    for c in dcols
                ]
            out["forecast"][name] = float(self.performance_from_losses(np.column_stack(L))[0])
        return out

    def _bootstrap(self, law, X, runs, dcols, Lk, P) -> None:
        """Resample the final models (all domains together) and the retained checkpoints
        independently, `bootstrap` times each, and refit both stages (stage-1 interval inputs
        for `predict_interval`)."""
        B = self.bootstrap
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 1]))
        n = len(runs)
        idx = resample_rows(rng, B, n)
        for d, c in zip(self.domains_, dcols):
            L = runs[c].to_numpy(float)
            res = self.stage1_[d]
            if law.uses_weights:
                bootstrap_fit(law, X, L, res, n_boot=B, seed=self.seed, n_jobs=1)
            else:
                res.bootstrap = [
                    law.linear_start({k: v[i] for k, v in X.items()}, L[i]).tolist() for i in idx
                ]
                res.bootstrap_seed = self.seed
        if self.network_ is not None:
            self.network_.fit_bootstrap(Lk, P, B, self.seed)
            resid = self.network_.predict(Lk) - P
        else:
            m = len(P)
            x = self._mapper_features(Lk)
            A = np.column_stack([np.ones(m), x])
            rows = resample_rows(rng, B, m)
            self.coef_boot_ = np.array([np.linalg.lstsq(A[r], P[r], rcond=None)[0] for r in rows])
            resid = A @ self.coef_ - P
        self.residual_scale_ = float(np.sqrt(np.mean(resid**2)))

    def _mapper_features(self, Lk: np.ndarray) -> np.ndarray:
        return Lk if self.mapper == "domain-linear" else Lk.mean(1, keepdims=True)

    def _mapper_dof(self) -> int:
        """Residual degrees of freedom of stage 2: retained checkpoints minus parameters."""
        K = len(self.domains_)
        if self.network_ is not None:
            p = self.hidden * (K + 2) + 1
        else:
            p = (K if self.mapper == "domain-linear" else 1) + 1
        return int(self.n_points_) - p

    def score_draws(self, flops_per_source, kind: str = "prediction") -> np.ndarray | None:
        """Bootstrap draws (B, m) of the score behind `predict_interval` (unclipped); None for
        a prediction when stage 2 has no residual degrees of freedom (with a DomainWarning)."""
        self._check()
        if not self.bootstrap:
            raise InputError("no bootstrap samples: fit with bootstrap > 0")
        if kind not in ("prediction", "confidence"):
            raise InputError(f"kind must be 'prediction' or 'confidence', got {kind!r}")
        F = self._as_flops(flops_per_source)
        X = {f"C_{s}": F[:, i] for i, s in enumerate(self.sources_)}
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 2]))
        T = []
        for r in self.stage1_.values():
            t = r.law_.predict_target(np.asarray(r.bootstrap, float), X)  # (B, m)
            if kind == "prediction":
                e = stage_noise(r, t.shape, rng)
                t = t if e is None else t + e
            T.append(np.exp(t))
        Ls = np.stack(T, axis=-1)  # (B, m, domains)
        if self.network_ is not None:
            nb = self.network_.boot_params_[0].shape[0]
            Ls = Ls[:nb]
            W1, c1, W2, c2 = self.network_.boot_params_
            Z = (Ls - self.network_.x_mean_) / self.network_.x_std_
            out = np.maximum(Z @ W1 + c1, 0.0) @ W2 + c2
            P = out[:, :, 0] * self.network_.y_std_ + self.network_.y_mean_
            # one seeded start each (the main net: best of n_init), the ensemble drifted off the
            # forecast (30 of 99 outside their own interval): keep its spread, centre it
            P = P + (self.predict(F, clip=False) - np.median(P, axis=0))
        else:
            x = Ls if self.mapper == "domain-linear" else Ls.mean(-1, keepdims=True)
            P = self.coef_boot_[:, :1] + np.einsum("bmk,bk->bm", x, self.coef_boot_[:, 1:])
        if kind == "prediction":
            dof = self._mapper_dof()
            if dof < 1:
                warnings.warn(
                    f"stage 2 has {self.n_points_} checkpoint(s) for its parameters: its noise "
                    "cannot be estimated, so the prediction interval is the whole score range",
                    DomainWarning,
                    stacklevel=3,
                )
                return None
            s = self.residual_scale_ * np.sqrt(self.n_points_ / dof)
            P = P + s * shared_t(dof, P.shape, rng)
        return P

    def _fit_mapper(self, Lk: np.ndarray, P: np.ndarray) -> None:
        if self.mapper == "neural":
            self.network_ = TwoLayerNetwork(
                self.hidden, self.lr, self.steps, self.weight_decay, self.n_init, self.seed
            ).fit(Lk, P)
            self.coef_ = None
        else:
            x = Lk if self.mapper == "domain-linear" else Lk.mean(1, keepdims=True)
            A = np.column_stack([np.ones(len(x)), x])
            self.coef_ = np.linalg.lstsq(A, P, rcond=None)[0]
            self.network_ = None

    # ---- forecasting -----------------------------------------------------------------------
    def _check(self):
        if not hasattr(self, "stage1_"):
            raise not_fitted(self)

    def _as_flops(self, flops_per_source) -> np.ndarray:
        F = np.atleast_2d(np.asarray(flops_per_source, float))
        if F.shape[-1] != len(self.sources_):
            raise InputError(
                f"--flops-per-source: need FLOPs for {len(self.sources_)} sources "
                f"({', '.join(self.sources_)}), got {F.shape[-1]}"
            )
        if (F < 0).any() or (F.sum(1) <= 0).any():
            raise InputError("FLOPs per source must be >= 0 with a positive total")
        return F

    def predict_losses(self, flops_per_source) -> pd.DataFrame:
        """Stage 1: predicted loss per domain (columns) for rows of FLOPs per source."""
        self._check()
        F = self._as_flops(flops_per_source)
        X = {f"C_{s}": F[:, i] for i, s in enumerate(self.sources_)}
        return pd.DataFrame({d: r.predict(**X) for d, r in self.stage1_.items()})

    def performance_from_losses(self, losses) -> np.ndarray:
        """Stage 2: score from domain losses (n, K) in the order of `domains_`."""
        self._check()
        Lk = np.atleast_2d(np.asarray(losses, float))
        if self.network_ is not None:
            return self.network_.predict(Lk)
        x = Lk if self.mapper == "domain-linear" else Lk.mean(1, keepdims=True)
        return self.coef_[0] + x @ self.coef_[1:]

    def predict(self, flops_per_source, clip: bool = True) -> np.ndarray:
        """Forecast score from FLOPs per source: predicted domain losses -> stage 2 (Sec. 4),
        clipped to [0, 100] points with a DomainWarning when outside (`clip=False`: raw). One
        model's FLOPs per source (a 1-D input) give a float, rows of them an ndarray."""
        P = self.performance_from_losses(self.predict_losses(flops_per_source).to_numpy())
        P = np.asarray(clip_scores(P) if clip else P, float)
        return point(P[0]) if np.ndim(flops_per_source) <= 1 else P

    def forecast_one(self, flops_per_source, *, level: float = 0.9):
        """One forecast for FLOPs per source with its interval and notes (`flp.forecast`)."""
        self._check()
        return flpm_forecast(self, flops_per_source, check("level", level))

    def best_mixture(self, C: float, start, stop, step, *, level: float = 0.9):
        """The best ratio of the scan start:stop:step at C FLOPs (`flp.forecast`)."""
        self._check()
        return best_mixture(self, C, start, stop, step, check("level", level))

    def predict_interval(self, flops_per_source, *, level: float = 0.9, kind: str = "prediction"):
        """Bootstrap percentile interval of the forecast: stage-1 resample b's domain losses
        feed stage-2 resample b; kind="prediction" (default) adds each stage's Student-t
        residual noise (dof-corrected SD). Clipped to [0, 100] points and never zero width: one
        collapsed onto a bound is NaN (undefined; flp.intervals)."""
        level, kind = self._interval_args(level, kind)
        P = self.score_draws(flops_per_source, kind)
        if P is None:  # no stage-2 noise estimate: the whole range
            n = len(self._as_flops(flops_per_source))
            return np.full(n, BOUNDS[0]), np.full(n, BOUNDS[1])
        lo, hi = (np.clip(v, *BOUNDS) for v in percentile_interval(P, level))
        return null_at_bounds(lo, hi)

    # ---- the mixture scan (Sec. 6.1; `flp.mixture_scan`) -----------------------------------
    def optimize_mixture(
        self, flops: float, start: float = 0.0, stop: float = 0.5, step: float = 0.01
    ) -> MixtureCurve:
        """Sec. 6.1: predicted score over mixing ratios at total compute `flops`; best ratio
        (`mixture_scan.optimize_mixture`)."""
        self._check()
        return mixture_scan.optimize_mixture(self, flops, start, stop, step)

    def mixture_intervals(self, curve: MixtureCurve, level: float = 0.9) -> dict:
        """How sure the Sec. 6.1 scan is: the prediction interval of the score at the best
        ratio, and the percentile interval of the best ratio over the bootstrap draws
        (`mixture_scan.mixture_intervals`)."""
        level = check("level", level)
        F = curve.ratios * curve.flops
        draws = self.score_draws(F, "confidence")
        best = self.predict_interval(F[curve.best_index : curve.best_index + 1], level=level)
        return mixture_scan.mixture_intervals(curve, draws, best, len(self.sources_), level)

    def warn_if_extrapolating(self, flops_per_source) -> None:
        """DomainWarning when a forecast leaves the sampling models' compute or shares
        (`mixture_scan.warn_if_extrapolating`)."""
        mixture_scan.warn_if_extrapolating(self, flops_per_source)

    @property
    def share_range_(self) -> dict:
        """{source: [min, max] share} of the sampling models."""
        return next(iter(self.stage1_.values())).meta["share_range"]

    @property
    def min_flops_(self) -> float:
        """Smallest sampling model's total compute."""
        return float(min(r.meta["min_flops"] for r in self.stage1_.values()))

    @property
    def max_flops_(self) -> float:
        """Largest sampling model's total compute."""
        return float(max(r.meta["max_flops"] for r in self.stage1_.values()))

    # ---- reporting / persistence -----------------------------------------------------------
    def contract(self) -> dict:
        """The fit as plain data (what `flpm fit --json` prints; `flp.contracts`)."""
        self._check()
        return flpm_contract(self)

    def summary(self) -> str:
        self._check()
        s = self.settings_
        c = self.filter_.counts()
        lines = [
            f"FLP-M ({self.form}, {self.mapper}) for task {s.name}: random "
            f"{s.chance:g} points, threshold +{self.threshold:g}",
            f"sources: {', '.join(self.sources_)}    domains: {', '.join(self.domains_)}",
            f"final models (stage 1): {self.n_runs_}    checkpoints: {c['checkpoints']} "
            f"(kept {c['kept']}; "
            f"dropped {c['dropped_not_improved']} not improved, {c['dropped_not_emerged']} "
            "not emerged)",
            f"{'domain':<14}"
            + "".join(f"{k:>14}" for k in self._ident_names())
            + f"{'rmse(log)':>12}",
        ]
        law = self.stage1_[self.domains_[0]].law_
        for d, r in self.stage1_.items():
            ident = law.identified(r.theta)
            lines.append(
                f"{d:<14}"
                + "".join(f"{ident[k]:>14.5g}" for k in self._ident_names())
                + f"{r.rmse_target:>12.2e}"
            )
        zs = getattr(self, "zero_share_sensitivity_", None)
        if zs:
            how = (
                f"floored at {self.zero_floor:g} x total"
                if self.zero_share == "floor"
                else "dropped from stage 1"
            )
            lines.append(
                f"zero-share runs: {self.n_zero_share_} ({how}); forecast at share "
                f"{zs['share']:g}, C = {zs['flops']:.3g}: "
                + ", ".join(f"{k} {v:.2f}" for k, v in zs["forecast"].items())
            )
        if self.network_ is not None:
            lines.append(f"stage 2: network, training MSE {self.network_.train_mse_:.4g} points^2")
        else:
            lines.append(f"stage 2: {self.mapper} coefficients {np.round(self.coef_, 5).tolist()}")
        lines.append(
            f"forecast intervals: {self.bootstrap} bootstrap refits of both stages plus Student-t "
            "residual noise (prediction intervals, clipped to [0, 100])"
            if self.bootstrap
            else "forecast intervals: none (fitted with bootstrap=0)"
        )
        return "\n".join(lines)

    def _ident_names(self) -> list[str]:
        law = self.stage1_[self.domains_[0]].law_
        return list(law.identified(self.stage1_[self.domains_[0]].theta))

    def to_dict(self) -> dict:
        """The fit as a saved file's dict (`mixture_saved.flpm_dict`)."""
        self._check()
        return flpm_dict(self)

    saved_label = "saved FLP-M fit"

    @classmethod
    def from_dict(cls, d: dict, where: str = "saved FLP-M fit") -> FLPM:
        """A fit from `to_dict` (a saved file's dict), checked field by field (`flp.schema`)."""
        check_flpm(d, where, init_args(cls))
        try:
            return restore_flpm(cls(**d["config"]), d)
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{where}: not a saved FLP-M fit ({exc})") from exc
