"""The distillation scaling law (Busbridge et al. 2025, Eq. 8) as a scikit-learn-style estimator.

`DistillationScalingLaw` pairs a supervised law L(N, D) (Eq. 1; gives the teacher loss
L_T = L(N_T, D_T) and the student's supervised loss L~_S = L(N_S, D_S)) with the student law.
Fitting follows App. F.2: Huber (delta = 1e-4) on log L_S (Eq. 50, read as log-minus-log),
L-BFGS-B from the best of the 216,000-start grid, and bootstrap percentile intervals (Table 6).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.validate import check_no_duplicates, numeric_column
from ..errors import DomainWarning, InputError
from ..fitting import FitResult, bootstrap_fit, fit_law, huber
from ..laws import get_law
from ..laws.distillation import DistillationLaw
from ..supervised import SupervisedScalingLaw
from .fitting import score_product_grid
from .presets import DISTILL_PRESETS

LAW_NAME = "busbridge-distillation"


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
    if s.endswith(".json"):
        if not Path(s).exists():
            raise InputError(f"{s}: no such file")
        return SupervisedScalingLaw.load(s)
    return SupervisedScalingLaw.from_preset(s)


def distill_runs_from_frame(
    df: pd.DataFrame,
    ns_col: str = "N_S",
    ds_col: str = "D_S",
    lt_col: str = "L_T",
    ls_col: str = "L_S",
    what: str = "runs",
) -> pd.DataFrame:
    """Validate a distillation runs table; returns columns N_S, D_S, L_T, L_S."""
    need = [ns_col, ds_col, lt_col, ls_col]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise InputError(
            f"{what}: missing column(s) {', '.join(map(repr, missing))}; found "
            f"{', '.join(map(repr, df.columns))} (name them with --ns-col/--ds-col/--lt-col/"
            "--ls-col)"
        )
    out = pd.DataFrame(
        {
            k: numeric_column(df, c, positive=True, what=what)
            for k, c in zip(("N_S", "D_S", "L_T", "L_S"), need)
        }
    )
    check_no_duplicates(
        out,
        ["N_S", "D_S", "L_T"],
        what,
        values=["L_S"],
        hint="a distillation run is one (student size, student tokens, teacher loss); "
        "remove the repeated row",
    )
    return out


class DistillationScalingLaw:
    """Student cross-entropy from student size, distillation tokens and teacher loss (Eq. 8).

    Parameters
    ----------
    supervised: the supervised law giving L_T = L(N_T, D_T) and L~_S = L(N_S, D_S): a preset
        name ("busbridge2025"), a saved supervised fit (.json), a `SupervisedScalingLaw`, or a
        dict of Eq. 1 coefficients.
    huber_delta: Huber delta on log-loss residuals (1e-4 in App. F.2).
    grid: fit-space initialisation grid (dict of axes); None = the full App. F.2 grid.
    n_polish: number of best grid starts polished with L-BFGS-B.
    fixed: natural coefficients to hold fixed, e.g. {"gamma'": 0.764} (a profile along the
        identifiability ridge, see docs/distill.md).
    bootstrap: resamples for percentile intervals (0 = none; the paper used 4,096).

    Learned attributes: `result_` (FitResult), `params_`, `data_`.
    """

    def __init__(
        self,
        supervised="busbridge2025",
        *,
        huber_delta: float = 1e-4,
        grid: Mapping[str, np.ndarray] | None = None,
        n_polish: int = 16,
        fixed: Mapping[str, float] | None = None,
        bootstrap: int = 0,
        ci_level: float = 0.9,
        seed: int = 0,
        n_jobs: int = -1,
        progress: bool = False,
    ) -> None:
        if not huber_delta > 0:
            raise InputError(f"huber_delta must be > 0, got {huber_delta}")
        if bootstrap < 0:
            raise InputError(f"bootstrap must be >= 0, got {bootstrap}")
        if not 0 < ci_level < 1:
            raise InputError(f"ci_level must be in (0, 1), got {ci_level}")
        self.supervised = supervised
        self.huber_delta, self.grid, self.n_polish, self.fixed = huber_delta, grid, n_polish, fixed
        self.bootstrap, self.ci_level, self.seed = bootstrap, ci_level, seed
        self.n_jobs, self.progress = n_jobs, progress
        self.supervised_ = _supervised_from(supervised)

    # ---- fitting ---------------------------------------------------------------------------
    def fit(self, runs=None, *, N_S=None, D_S=None, L_T=None, L_S=None, **cols):
        """Fit Eq. 8 to runs with columns N_S, D_S, L_T, L_S (rename with ns_col=... etc.)."""
        if runs is None:
            runs = pd.DataFrame({"N_S": N_S, "D_S": D_S, "L_T": L_T, "L_S": L_S})
        elif not isinstance(runs, pd.DataFrame):
            runs = pd.DataFrame(dict(runs))
        data = distill_runs_from_frame(runs, **cols)
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
                bounds=bounds,
                progress=self.progress,
            )
        res.meta.update(
            supervised=self.supervised_.params_,
            fixed=dict(self.fixed or {}),
        )
        self.result_, self.params_, self.data_ = res, dict(res.params), data
        return self

    def _grid_and_bounds(self, law: DistillationLaw):
        grid = dict(self.grid if self.grid is not None else law.default_grid())
        bounds = list(law.bounds)
        names = [p.natural_name for p in law.parameters]
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
        return grid, bounds

    def _inputs(self, N_S, D_S, L_T) -> dict[str, np.ndarray]:
        N_S, D_S, L_T = (np.asarray(v, float) for v in (N_S, D_S, L_T))
        return {"N_S": N_S, "D_S": D_S, "L_T": L_T, "L_sup": self.supervised_.predict(N_S, D_S)}

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
            meta={"preset": name, "source": p["source"], "supervised": sup.params_},
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

    def predict_interval(self, N_S, D_S, teacher_loss, level: float = 0.9):
        """Percentile interval of L_S over the bootstrap refits (supervised law held fixed)."""
        self._check()
        X = self._inputs(*np.broadcast_arrays(N_S, D_S, teacher_loss))
        shape = X["N_S"].shape
        Xf = {k: v.ravel() for k, v in X.items()}
        lo, hi = self.result_.predict_interval(level=level, **Xf)
        return lo.reshape(shape), hi.reshape(shape)

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

        def combos(th):
            th = np.atleast_2d(th)
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
                and out.get(c) == "identified"
                and hi - lo <= 1e-6 * abs(self.params_[c])
            ):
                out[c] = "flat (resamples do not move it)"
        out["break L_T/L~_S"] = "identified"
        if out.get("c1", "").startswith("flat") and out.get("d1") == "identified":
            out["c1"] = out["d1"] = "only via the break location (c1 flat)"
        for c in fixed:
            out[c] = "fixed"
        return out

    def summary(self) -> str:
        self._check()
        s = self.result_.summary()
        src = self.result_.meta.get("source")
        sup = ", ".join(f"{k}={v:.4g}" for k, v in self.supervised_.params_.items())
        return s + (f"\nSource: {src}" if src else "") + f"\nSupervised law: {sup}"


def _golden(f, a, b, iters: int = 60):
    """Vectorised golden-section minimisation of f on [a, b] (arrays)."""
    r = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = a.copy(), b.copy()
    for _ in range(iters):
        c, d = b - r * (b - a), a + r * (b - a)
        left = f(c) < f(d)
        a, b = np.where(left, a, c), np.where(left, d, b)
    return 0.5 * (a + b)
