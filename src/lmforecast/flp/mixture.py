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
from ..fitting import FitResult, fit_law, squared
from ..laws import get_law
from ..laws.flp import MIXTURE_FORMS
from ..params import UNIT_OPEN, check
from ..uncertainty.bootstrap import bootstrap_fit
from ..uncertainty.resample import resample_rows
from .contracts import flpm_contract
from .fitting import fit_from_closed_form
from .forecast import best_mixture, flpm_forecast
from .mixture_scan import MixtureScan
from .model import clip_scores, shared_t, stage_noise
from .network import TwoLayerNetwork
from .schema import MAPPERS, check_flpm, init_args
from .tables import (
    Columns,
    FilterReport,
    check_models_have_runs,
    emerged_checkpoints,
    mixture_domains,
    source_flops,
)
from .tasks import EMERGENCE_THRESHOLD, TaskSettings, task_settings

ZERO_SHARES = ("floor", "drop")
SENSITIVITY_FLOORS = (1e-2, 1e-3, 1e-6)
SENSITIVITY_SHARE = 0.01  # the small share whose forecast `summary()` reports per floor
FORMAT_VERSION = 1


def fit_stage1(law, X, L) -> FitResult:
    """Fit one domain's FLOPs -> loss law (Table 3 form) with the shared engine: M1, M2, M4 from
    their closed-form log-space least-squares solution, M3 (nonlinear) from its grid plus the
    M1 solution."""
    start = law.linear_start(X, L)
    if law.uses_weights:
        return fit_law(law, X, L, loss=squared(), extra_starts=start, n_polish=8)
    return fit_from_closed_form(law, X, L, start)


class FLPM(Estimator, MixtureScan):
    """FLP-M forecaster for one task (sklearn-style; learned attributes end in _).

    Scores are points (0-100) in and out, as Chen et al. report them (Sec. 5-6).

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
        self.bootstrap = bootstrap

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
        self._check()
        return {
            "kind": "FLPM",
            "format_version": FORMAT_VERSION,
            "config": {
                "task": self.task,
                "form": self.form,
                "mapper": self.mapper,
                "chance": self.chance,
                "threshold": float(self.threshold),
                "train_loss_decimals": int(self.train_loss_decimals),
                "zero_share": self.zero_share,
                "zero_floor": float(self.zero_floor),
                "hidden": self.hidden,
                "lr": self.lr,
                "steps": self.steps,
                "weight_decay": self.weight_decay,
                "n_init": self.n_init,
                "bootstrap": int(self.bootstrap),
                "seed": self.seed,
            },
            "settings": dict(self.settings_.__dict__),
            "sources": list(self.sources_),
            "domains": list(self.domains_),
            "filter": {k: v.tolist() for k, v in self.filter_.__dict__.items()},
            "n_runs": self.n_runs_,
            "n_points": self.n_points_,
            "stage1": {d: r.to_dict() for d, r in self.stage1_.items()},
            "network": None if self.network_ is None else self.network_.to_dict(),
            "coef": None if self.coef_ is None else self.coef_.tolist(),
            "coef_boot": getattr(self, "coef_boot_", np.zeros((0,))).tolist(),
            "residual_scale": getattr(self, "residual_scale_", None),
            "n_zero_share": getattr(self, "n_zero_share_", 0),
            "zero_share_sensitivity": getattr(self, "zero_share_sensitivity_", None),
        }

    saved_label = "saved FLP-M fit"

    @classmethod
    def from_dict(cls, d: dict, where: str = "saved FLP-M fit") -> FLPM:
        """A fit from `to_dict` (a saved file's dict), checked field by field (`flp.schema`)."""
        check_flpm(d, where, init_args(cls))
        try:
            return cls._from_checked(d)
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{where}: not a saved FLP-M fit ({exc})") from exc

    @classmethod
    def _from_checked(cls, d: dict) -> FLPM:
        est = cls(**d["config"])
        est.settings_ = TaskSettings(**d["settings"])
        est.sources_, est.domains_ = tuple(d["sources"]), tuple(d["domains"])
        f = d["filter"]
        est.filter_ = FilterReport(
            *(np.array(f[k], bool) for k in ("kept", "not_improved", "not_emerged"))
        )
        est.n_runs_, est.n_points_ = d["n_runs"], d["n_points"]
        est.stage1_ = {k: FitResult.from_dict(v) for k, v in d["stage1"].items()}
        est.network_ = None if d["network"] is None else TwoLayerNetwork.from_dict(d["network"])
        est.coef_ = None if d["coef"] is None else np.array(d["coef"], float)
        if d.get("coef_boot"):
            est.coef_boot_ = np.array(d["coef_boot"], float)
        if d.get("residual_scale") is not None:
            est.residual_scale_ = d["residual_scale"]
        est.n_zero_share_ = d.get("n_zero_share", 0)
        est.zero_share_sensitivity_ = d.get("zero_share_sensitivity")
        return est
