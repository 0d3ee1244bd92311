"""`CurveLaw`: a schedule-aware loss-curve law fitted to whole training curves.

The runs of one model (one value of ``N``, or every run when the table has no ``N``) share the
law's parameters (Luo et al. 2025: one parameter set per model size fits every schedule);
each fitted run keeps its own offset (the mean log residual of its last quarter), which
continues it when a schedule names it again. Intervals come from `curves.resample`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError, not_fitted
from ..estimator import Estimator
from ..fitting.losses import huber
from ..uncertainty.resample import stationary_indices
from .evaluate import RESOLUTION
from .fit import RunPoints, design, fit_model, run_schedule
from .forecast import forecast_rows, make_forecast
from .laws import LAWS, to_natural, unit_jacobian, value
from .prior import CurvePrior, fit_with_prior, held_index, prior_steps, resolve
from .resample import null_basis, replicate_steps
from .schema import check_curve_fit
from .table import read_curves, read_schedule

#: factor on the resampled interval's half-widths, and the log half-width added per unit of
#: ln(step / last fitted step) (extrapolation error grows with the distance): both chosen by the
#: mid-run backtests on the 25M curves of the multi-power-law authors and reported on 100M and
#: 400M (benchmarks/curves_midrun_backtest.py, docs/curves.md)
CALIBRATION = 1.0
HORIZON = 0.003
OFFSET_FRACTION = 0.25  # a run's offset: mean log residual over the last quarter of its points
MIN_POINTS = 4


def model_key(n) -> str:
    return "all" if n is None or not np.isfinite(n) else repr(float(n))


class CurveLaw(Estimator):
    """Fit a curve law (``"mpl"``: the multi-power law of Luo et al. 2025; ``"annealing"``: the
    annealing law of Tissue et al. 2024; ``"power"``: L0 + A t^-alpha) to loss curves with
    their schedules, and forecast curves under schedules never run."""

    saved_label = "saved curve fit"

    def __init__(
        self,
        law: str = "mpl",
        *,
        huber_delta: float = 1e-3,
        n_starts: int = 3,
        n_boot: int = 200,
        seed: int = 0,
        decay: float = 0.999,
        resolution: float = RESOLUTION,
        calibration: float = CALIBRATION,
        horizon: float = HORIZON,
        block: float | None = None,
        prior="auto",
    ):
        self.law = law
        self.huber_delta = huber_delta
        self.n_starts = n_starts
        self.n_boot = n_boot
        self.seed = seed
        self.decay = decay
        self.resolution = resolution
        self.calibration = calibration
        self.horizon = horizon
        self.block = block  # mean resampled block length in points; None: a quarter of a run
        # the decay response (B, C, beta, gamma) held at a prior: None (never), a bundled name,
        # a dict or a CurvePrior (always), "auto" (the bundled "mpl-25m" for a model fitted from
        # one run, whose prefix alone cannot identify it)
        self.prior = prior
        self._check()

    # ---- fitting ---------------------------------------------------------------------------
    def _check(self) -> None:
        if self.law not in LAWS:
            raise InputError(f"CurveLaw: law {self.law!r} is not one of {', '.join(LAWS)}")
        for name in ("huber_delta", "resolution", "calibration"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and np.isfinite(v) and v > 0):
                raise InputError(f"CurveLaw: {name} must be a positive number, got {v!r}")
        if not (isinstance(self.horizon, int | float) and 0 <= self.horizon < np.inf):
            raise InputError(f"CurveLaw: horizon must be a number >= 0, got {self.horizon!r}")
        if self.block is not None and not (isinstance(self.block, int | float) and self.block >= 1):
            raise InputError(f"CurveLaw: block must be None or a number >= 1, got {self.block!r}")
        if not (self.prior == "auto" or resolve(self.prior) is None or self.law == "mpl"):
            raise InputError(f"CurveLaw: a prior applies to law 'mpl' only, not {self.law!r}")
        if not 0 < self.decay < 1:
            raise InputError(f"CurveLaw: decay must be in (0, 1), got {self.decay!r}")
        for name, low in (("n_starts", 1), ("n_boot", 0), ("seed", None)):
            v = getattr(self, name)
            if (
                isinstance(v, bool)
                or not isinstance(v, int | np.integer)
                or (low is not None and v < low)
            ):
                raise InputError(
                    f"CurveLaw: {name} must be a whole number >= {low or 0}, got {v!r}"
                )

    def _design(self, parts):
        return design(self.law, parts, decay=self.decay, resolution=self.resolution)

    def fit(self, table) -> CurveLaw:
        """Fit the law to every logged loss after each run's warmup; returns self."""
        self._check()
        table = read_curves(table)
        has_n = "N" in table.columns
        models, runs = {}, {}
        groups = table.groupby(table["N"] if has_n else np.zeros(len(table)), sort=True)
        for nval, sub in groups:
            key = model_key(nval if has_n else None)
            parts, ys, names = [], [], []
            for run, rows in sub.groupby("run", sort=False):
                sch = run_schedule(rows, run)
                loss = rows["loss"].to_numpy(float)
                steps = rows["step"].to_numpy(float)
                ok = np.isfinite(loss) & (np.rint(steps) > sch.peak_step)
                runs[run] = {
                    "model": key,
                    "knots": [sch.knots_step.tolist(), sch.knots_lr.tolist()],
                }
                if ok.sum() == 0:
                    continue
                parts.append(RunPoints(run, sch, steps[ok]))
                ys.append(loss[ok])
                names.append(run)
            n_pts = sum(len(y) for y in ys)
            if n_pts < MIN_POINTS:
                raise InputError(
                    f"curves: model {key}: {n_pts} logged loss(es) after the warmup; at least "
                    f"{MIN_POINTS} are needed to fit the {self.law!r} law"
                )
            models[key] = self._fit_one(key, nval if has_n else None, parts, ys, names, runs)
        self.models_ = models
        self.runs_ = runs
        self.params_ = {
            k: dict(zip(LAWS[self.law], m["theta"], strict=True)) for k, m in models.items()
        }
        return self

    def _prior_for(self, n_runs: int) -> CurvePrior | None:
        if self.prior == "auto":
            return resolve("mpl-25m") if self.law == "mpl" and n_runs == 1 else None
        return resolve(self.prior)

    def _fit_one(self, key, nval, parts, ys, names, runs) -> dict:
        d = self._design(parts)
        y = np.concatenate(ys)
        prior = self._prior_for(len(parts))
        if prior is None:
            z, obj = fit_model(self.law, d, y, huber(self.huber_delta), n_starts=int(self.n_starts))
        else:
            z, obj = fit_with_prior(self.law, d, y, huber(self.huber_delta), prior)
        pred, J = value(self.law, z, d, jac=True)
        Jl = J / pred[:, None]
        resid = np.log(y) - np.log(pred)
        run_of = np.concatenate([np.full(len(v), i) for i, v in enumerate(ys)])
        Ju = unit_jacobian(self.law, z, J) / pred[:, None]
        if prior is None:
            steps = replicate_steps(
                Jl, resid, run_of, int(self.n_boot), int(self.seed), block=self.block
            )
            null = null_basis(Ju).T
        else:
            free, held = held_index(self.law)
            steps = prior_steps(
                Jl,
                replicate_steps(
                    Jl[:, free], resid, run_of, int(self.n_boot), int(self.seed), block=self.block
                ),
                prior,
                self.law,
                np.random.default_rng(int(self.seed) + 3),
            )
            nf = null_basis(Ju[:, free])
            null = np.zeros((nf.shape[1], J.shape[1]))
            null[:, free] = nf.T
        rng = np.random.default_rng(int(self.seed) + 1)
        for i, name in enumerate(names):
            m = np.flatnonzero(run_of == i)
            w = m[-max(1, int(np.ceil(OFFSET_FRACTION * m.size))) :]
            reps = [
                np.mean(resid[w][stationary_indices(w.size, max(1.0, w.size / 4), rng)])
                - np.mean(Jl[w] @ s)
                for s in steps
            ]
            runs[name].update(
                offset=float(np.mean(resid[w])),
                offset_reps=reps,
                last_step=float(parts[i].steps[-1]),
            )
        lrs = np.concatenate([p.schedule.eta for p in parts])
        return {
            "N": None if nval is None else float(nval),
            "z": z.tolist(),
            "theta": to_natural(self.law, z).tolist(),
            "objective": obj,
            "n_points": int(y.size),
            "max_step": float(max(p.steps[-1] for p in parts)),
            "lr_range": [float(lrs.min()), float(lrs.max())],
            "replicates": steps.tolist(),
            "null": null.tolist(),
            "noise": resid.tolist(),
            "runs": list(names),
            "prior": None if prior is None else prior.to_dict(),
        }

    # ---- prediction ------------------------------------------------------------------------
    def _fitted(self) -> None:
        if "models_" not in self.__dict__:
            raise not_fitted(self)

    def predict(self, schedule) -> np.ndarray:
        """The forecast loss at every row of `schedule` (a path or a DataFrame with
        ``run, step, lr``)."""
        self._fitted()
        return forecast_rows(self, read_schedule(schedule), level=None)["loss"].to_numpy()

    def forecast(
        self, schedule, level: float = 0.9, final: bool = False, *, kind: str = "prediction"
    ):
        """A `CurveForecast`: the loss at each schedule row with its interval and notes."""
        self._fitted()
        level, kind = self._interval_args(level, kind)
        return make_forecast(self, read_schedule(schedule), level, final, kind)

    def predict_interval(self, schedule, *, level: float = 0.9, kind: str = "prediction"):
        """(lo, hi): two arrays, one bound per schedule row (NaN where the interval is not
        identified), the estimators' contract (docs/architecture.md)."""
        fc = self.forecast(schedule, level=level, kind=kind)
        return fc.table["lo"].to_numpy(float), fc.table["hi"].to_numpy(float)

    # ---- reporting and persistence ---------------------------------------------------------
    def contract(self) -> dict:
        """The fit as plain data (what `curves fit --json` prints): the law, each model's
        parameters, points, runs, step and learning-rate range, the directions the curves did
        not identify and the prior used, and each run's offset and last step (the saved fit
        holds the rest)."""
        self._check()
        keys = ("N", "n_points", "runs", "max_step", "lr_range")
        models = {
            key: {k: m[k] for k in keys[:1]}
            | {"params": self.params_[key]}
            | {k: m[k] for k in keys[1:]}
            | {"directions_not_identified": len(m["null"]), "prior": m.get("prior")}
            for key, m in self.models_.items()
        }
        runs = {
            r: {k: v for k, v in info.items() if k in ("model", "offset", "last_step")}
            for r, info in self.runs_.items()
        }
        return {"law": self.law, "models": models, "runs": runs}

    def summary(self) -> str:
        self._fitted()
        lines = [
            f"CurveLaw (law={self.law!r}): {len(self.models_)} model(s), {len(self.runs_)} run(s)"
        ]
        for key, m in self.models_.items():
            ps = ", ".join(f"{n}={v:.4g}" for n, v in zip(LAWS[self.law], m["theta"], strict=True))
            rms = float(np.sqrt(np.mean(np.square(m["noise"]))))
            lines.append(f"  model {key}: {ps}")
            lines.append(
                f"    {m['n_points']} points from {len(m['runs'])} run(s) up to step "
                f"{m['max_step']:.0f}; rms log residual {rms:.2e}"
            )
            if m["null"]:
                lines.append(f"    {len(m['null'])} parameter direction(s) not identified")
            if m.get("prior"):
                lines.append(f"    B, C, beta, gamma held at the prior ({m['prior']['source']})")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        self._fitted()
        params = self.get_params()
        if isinstance(params["prior"], CurvePrior):
            params["prior"] = params["prior"].to_dict()
        return {
            "kind": "CurveLaw",
            "format_version": 1,
            "params": params,
            "models": self.models_,
            "runs": self.runs_,
        }

    @classmethod
    def from_dict(cls, d: dict, where: str = "saved curve fit") -> CurveLaw:
        check_curve_fit(d, where)
        est = cls(**{"prior": None, **d["params"]})
        est.models_ = d["models"]
        est.runs_ = d["runs"]
        est.params_ = {
            k: dict(zip(LAWS[est.law], m["theta"], strict=True)) for k, m in est.models_.items()
        }
        return est

    def fitted_table(self, table) -> pd.DataFrame:  # pragma: no cover - convenience
        return self.forecast(read_curves(table), final=False).table


__all__ = ["CALIBRATION", "HORIZON", "CurveLaw", "model_key"]
