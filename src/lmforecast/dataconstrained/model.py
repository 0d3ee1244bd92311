"""Fit the data-constrained law (Muennighoff et al. 2023, Eq. 5-7) to runs that repeat data.

A run is (N params, D tokens seen, U unique tokens, loss); epochs = D/U >= 1. Rows that share
(N, D) but differ in U are distinct runs (repeated-data runs), rows that share (N, D, U) are
seed replicates and are kept (each is an observation of the same configuration).

`fit="joint"` fits all seven parameters at once by the shared engine (Huber on log loss over a
Chinchilla x decay-constant grid); `fit="two-stage"` first fits E, A, B, alpha, beta on the
single-epoch runs, then pins them and fits R*_D, R*_N on all runs (docs/datablations.md
compares both with the paper's R*_D = 15.4, R*_N = 5.3).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..data.validate import check_min_rows, numeric_column
from ..errors import DomainWarning, InputError, first_time, fmt_value, not_fitted
from ..estimator import Estimator, point, scalar_like
from ..fitting import FitResult, fit_law, huber
from ..forecast import Answer
from ..laws import get_law
from ..laws.data_constrained import effective
from ..params import check
from ..store import Checker
from ..supervised.reach import ReachWarning
from ..supervised.stack import R_MEASURED
from ..uncertainty.bootstrap import bootstrap_fit
from ..uncertainty.percentile import percentile_interval

FITS = ("joint", "two-stage")
CHINCHILLA_KEYS = ("log_A", "log_B", "log_E", "alpha", "beta")


def constrained_runs(
    df: pd.DataFrame,
    n_col: str = "N",
    d_col: str = "D",
    u_col: str = "U",
    loss_col: str = "loss",
    c_col: str = "C",
    what: str = "runs",
) -> pd.DataFrame:
    """Validate a runs table with a unique-tokens column; returns columns N, D, U, loss, sorted
    by (N, D, U, loss) so that the fit and its bootstrap do not depend on the row order."""
    cols = list(df.columns)
    if u_col not in cols:
        raise InputError(
            f"{what}: missing unique-tokens column {u_col!r} (name it with --u-col or u_col=); "
            f"found {', '.join(map(repr, cols))}"
        )
    N = numeric_column(df, n_col, positive=True, what=what)
    if d_col in cols:
        D = numeric_column(df, d_col, positive=True, what=what)
    else:
        D = numeric_column(df, c_col, positive=True, what=what) / (6.0 * N)
    U = numeric_column(df, u_col, positive=True, what=what)
    L = numeric_column(df, loss_col, positive=True, what=what)
    bad = U > D * (1 + 1e-9)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(
            f"{what}: column {u_col!r} row {i + 1}: unique tokens U={U[i]:.4g} exceed tokens "
            f"seen D={D[i]:.4g} (epochs = D/U must be >= 1)"
        )
    out = pd.DataFrame({"N": N, "D": D, "U": np.minimum(U, D), "loss": L})
    # one order whatever the file's: the bootstrap resamples rows by position
    return out.sort_values(["N", "D", "U", "loss"], kind="stable").reset_index(drop=True)


class DataConstrainedLaw(Estimator):
    """Estimator for L(N, D, U) of Muennighoff et al. (2023), Eq. 5-7.

    Learned attributes: `result_` (a FitResult of the registered `data-constrained` law, with
    bootstrap resamples when `bootstrap > 0`), `params_` (E, A, B, alpha, beta, RD_star,
    RN_star), `data_`.
    """

    _param_attrs = {"fit": "fit_kind"}  # `fit` is the method

    def __init__(
        self,
        *,
        fit: str = "joint",
        huber_delta: float = 1e-3,
        bootstrap: int = 40,
        ci_level: float = 0.9,
        n_polish: int = 32,
        seed: int = 0,
        n_jobs: int = 1,
    ) -> None:
        if fit not in FITS:
            raise InputError(f"unknown fit {fit!r}; use one of {', '.join(FITS)}")
        if not huber_delta > 0:
            raise InputError(f"huber_delta must be > 0, got {huber_delta}")
        check("bootstrap", bootstrap)
        check("ci_level", ci_level)
        self.fit_kind, self.huber_delta, self.bootstrap = fit, huber_delta, bootstrap
        self.ci_level, self.n_polish, self.seed, self.n_jobs = ci_level, n_polish, seed, n_jobs

    def fit(self, runs: pd.DataFrame, **cols) -> DataConstrainedLaw:
        data = constrained_runs(runs, **cols)
        law = get_law("data-constrained")
        check_min_rows(len(data), 7, "runs", "the data-constrained law has 7 parameters")
        X = {k: data[k].to_numpy(float) for k in ("N", "D", "U")}
        y = data["loss"].to_numpy(float)
        loss = huber(self.huber_delta)
        bounds = None
        grid = law.default_grid()
        if self.fit_kind == "two-stage":
            one = data["D"].to_numpy() <= data["U"].to_numpy() * (1 + 1e-9)
            check_min_rows(int(one.sum()), 5, "single-epoch runs (D = U)", "stage 1 of two")
            chin = get_law("chinchilla")
            X1 = {"N": X["N"][one], "D": X["D"][one]}
            r1 = fit_law(chin, X1, y[one], loss=loss, n_polish=self.n_polish)
            bounds = [(v, v) for v in r1.theta] + law.bounds[5:]
            grid = {
                **{k: np.array([v]) for k, v in zip(CHINCHILLA_KEYS, r1.theta)},
                "log_RD": np.log(np.geomspace(0.5, 200, 12)),
                "log_RN": np.log(np.geomspace(0.5, 200, 12)),
            }
        res = fit_law(law, X, y, loss=loss, grid=grid, bounds=bounds, n_polish=self.n_polish)
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
                n_starts=4,
            )
        epochs = data["D"].to_numpy() / data["U"].to_numpy()
        res.meta.update(
            {"form": "data-constrained", "fit": self.fit_kind, "max_epochs": float(epochs.max())}
        )
        # where the fitted runs lie: `epochs_advice` warns beyond
        res.meta["fitted_range"] = {
            k: [float(data[k].min()), float(data[k].max())] for k in ("N", "D", "U")
        }
        self.result_, self.params_, self.data_ = res, dict(res.params), data
        _warn_unidentified(law, res, data)
        return self

    # ---- predictions -----------------------------------------------------------------------
    def _check(self):
        if not hasattr(self, "result_"):
            raise not_fitted(self)

    def predict(self, N, D, U) -> np.ndarray:
        """Loss L(N, D, U) (Eq. 7 at N', D' of Eq. 5-6). A pool of U > D unique tokens counts as
        U = D (training on D tokens sees at most D unique ones: one partial epoch), so a larger
        pool never lowers the loss. N, D, U must be finite and > 0 (InputError otherwise)."""
        self._check()
        scalar = scalar_like(N, D, U)
        N, D, U = positive_ndu(N, D, U)
        L = self.result_.predict(N=N, D=D, U=np.minimum(U, D))
        return point(L) if scalar else np.asarray(L, float)

    def predict_interval(self, N, D, U, *, level: float = 0.9, kind: str = "prediction"):
        """Bootstrap percentile interval of the loss (Eq. 5-7 over the refits): "confidence"
        the refits alone, "prediction" (default) plus the fit's residual scatter; U > D counts
        as U = D, as in `predict`."""
        self._check()
        N, D, U = positive_ndu(N, D, U)
        level, kind = self._interval_args(level, kind)
        return self.result_.predict_interval(level=level, kind=kind, N=N, D=D, U=np.minimum(U, D))

    def epochs_advice(self, N: float, U: float, epochs=None, level: float = 0.9) -> dict:
        """How many epochs of U unique tokens are worth training a model of N parameters.

        Returns the loss (point and interval) at each epoch count (default: 1, 2, 4, ...,
        64, up to the most epochs the fitted runs reached; a longer `epochs` grid warns), the
        epoch count at which a repeated token is worth half a fresh one
        (dD'/dD = exp(-R_D/R*_D) = 1/2, i.e.
        epochs = 1 + R*_D ln 2) with its bootstrap interval, and the loss floor of infinite
        repetition, E + A/N'^alpha + B/(U (1 + R*_D))^beta.
        """
        self._check()
        N, _, U = positive_ndu(N, 1.0, U)
        if N.size != 1 or U.size != 1:
            raise InputError("epochs_advice takes one N and one U (numbers, not arrays)")
        N, U = float(N.ravel()[0]), float(U.ravel()[0])
        _reach_warning(self, N, U)
        ep = np.asarray(epochs if epochs is not None else [1, 2, 4, 8, 16, 32, 64], float)
        if (ep < 1).any():
            raise InputError(f"epochs must be >= 1, got {ep.min():g}")
        seen = float(self.result_.meta["max_epochs"])  # checked at load (`_check_meta`)
        if epochs is None:  # the default grid stops where the fitted runs stop
            ep = np.unique(np.r_[ep[ep <= seen * 1.01], float(f"{seen:.3g}")])
        elif ep.max() > seen * 1.01:
            warnings.warn(
                f"epochs up to {ep.max():g}, but the fitted runs repeat data at most "
                f"{seen:.3g} times: the losses beyond are extrapolated",
                DomainWarning,
                stacklevel=2,
            )
        p = self.params_
        out = {"N": float(N), "U": float(U), "epochs": ep.tolist()}
        out["loss"] = self.predict(N, U * ep, U).tolist()
        if self.result_.bootstrap:
            lo, hi = self.predict_interval(
                np.full(ep.shape, N), U * ep, np.full(ep.shape, U), level=level
            )
            out["interval"] = [[float(a), float(b)] for a, b in zip(lo, hi)]
            rd = np.exp(np.asarray(self.result_.bootstrap)[:, 5])
            out["half_value_epochs_interval"] = (
                1 + np.log(2) * np.array(percentile_interval(rd, level))
            ).tolist()
        out["half_value_epochs"] = float(1 + np.log(2) * p["RD_star"])
        Dinf = U * (1 + p["RD_star"])
        Np = self.effective_params(N, Dinf, U)
        out["loss_floor"] = float(p["E"] + p["A"] / Np ** p["alpha"] + p["B"] / Dinf ** p["beta"])
        out["level"] = level
        return out

    def epochs_answer(self, N: float, U: float, level: float = 0.9):
        """`epochs_advice` with its text, as `data-constrained epochs` prints it: the epoch
        count at which a repeated token is worth half a fresh one, the loss floor, and the loss
        (with its interval) at each epoch count."""
        a = self.epochs_advice(N, U, level=level)
        rows = [
            f"  {e:6g} epochs: loss {v:.4f}"
            + (f"  [{i[0]:.4f}, {i[1]:.4f}]" if "interval" in a else "")
            for e, v, i in zip(a["epochs"], a["loss"], a.get("interval", a["epochs"]))
        ]
        text = (
            f"N = {a['N']:.4g}, U = {a['U']:.4g}: a repeated token is worth half a fresh one "
            f"after {a['half_value_epochs']:.3g} epochs; loss floor {a['loss_floor']:.4f}\n"
            + "\n".join(rows)
        )
        return Answer(a, text)

    def effective_params(self, N, D, U):
        """N' (Eq. 6) at the fitted parameters (U > D counts as U = D)."""
        law = get_law("data-constrained")
        N, D, U = positive_ndu(N, D, U)
        N, D, U = np.broadcast_arrays(N, D, U)
        X = {k: np.atleast_1d(v) for k, v in (("N", N), ("D", D), ("U", U))}
        Np, _ = law.effective_inputs(np.asarray(self.result_.theta)[None, :], X)
        return Np[0] if np.ndim(N) else float(Np[0, 0])

    def effective_data(self, D, U):
        """D' (Eq. 5) at the fitted R*_D (U > D counts as U = D)."""
        _, D, U = positive_ndu(1.0, D, U)
        U = np.minimum(U, D)
        return effective(U, D / U - 1.0, self.params_["RD_star"])

    def contract(self) -> dict:
        """The fit as plain data (what `supervised fit --form data-constrained --json`
        prints): parameters, the fit's diagnostics and the bootstrap intervals."""
        self._check()
        r = self.result_
        keys = ("params", "objective", "n_starts", "n_at_best", "converged", "ci")
        return {"form": "data-constrained"} | {k: getattr(r, k) for k in keys} | {"intervals": None}

    def summary(self) -> str:
        self._check()
        r = self.result_
        lines = [
            f"Data-constrained law (Muennighoff et al. 2023, Eq. 5-7), {r.meta['fit']} fit, "
            f"{r.n_obs} runs"
        ]
        if r.ci:
            lvl = r.ci_level if r.ci_level is not None else self.ci_level
            lines.append(
                f"  {'':8s} {'estimate':>9s}  {100 * lvl:g}% bootstrap percentile interval "
                f"({len(r.bootstrap)} warm-started refits)"
            )
        outside = []
        for k, v in r.params.items():
            ci = r.ci.get(k)
            extra = f"  [{ci[0]:.4g}, {ci[1]:.4g}]" if ci else ""
            if ci and not ci[0] <= v <= ci[1]:
                extra += "  *"
                outside.append(k)
            lines.append(f"  {k:8s} {v:9.4g}{extra}")
        if outside:
            lines.append(
                f"  * estimate outside its own interval ({', '.join(outside)}): the refits do "
                "not agree with the fit; treat as not identified (more resamples or runs)"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """The fit (a `FitResult` dict, ``kind`` "DataConstrainedLaw"); loads back bit-for-bit."""
        self._check()
        return {**self.result_.to_dict(), "kind": "DataConstrainedLaw"}

    @classmethod
    def from_dict(cls, d: dict, where: str = "saved fit") -> DataConstrainedLaw:
        """A fit from `to_dict` (a saved file's dict), checked field by field."""
        res = FitResult.from_dict(d, where, kind="DataConstrainedLaw")
        if res.law != "data-constrained":
            raise InputError(f"{where}: a {res.law!r} fit, not a data-constrained one")
        _check_meta(res.meta, where)
        est = cls(fit=res.meta.get("fit", "joint"), bootstrap=len(res.bootstrap))
        est.result_, est.params_ = res, dict(res.params)
        return est


def positive_ndu(N, D, U) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """N, D, U as float arrays that broadcast together; a value that is not a finite number > 0
    is an InputError naming the argument and the value (Eq. 5-7 take their logarithms)."""
    out = []
    for name, v in (("N", N), ("D", D), ("U", U)):
        try:
            a = np.asarray(v, float)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be a number, got {v!r}") from None
        bad = ~(np.isfinite(a) & (a > 0))  # NaN, +-inf, 0, negatives
        if bad.any():
            raise InputError(f"{name} must be a finite number > 0, got {fmt_value(a[bad].flat[0])}")
        out.append(a)
    try:
        np.broadcast_shapes(*(a.shape for a in out))
    except ValueError:
        raise InputError(
            f"N, D, U have shapes {', '.join(str(a.shape) for a in out)} that do "
            "not broadcast together"
        ) from None
    return out[0], out[1], out[2]


def _check_meta(meta, path) -> None:
    """What a saved fit's ``meta`` carries beyond the `FitResult`: ``max_epochs`` (a number
    >= 1, the most epochs the fitted runs reached) and ``fitted_range`` ({"N", "D", "U"} each
    [smallest, largest] > 0)."""
    c = Checker(str(path))
    c.num(c.get(meta, "max_epochs", "meta"), "meta.max_epochs", lo=1.0)
    rng = c.obj(c.get(meta, "fitted_range", "meta"), "meta.fitted_range")
    c.keys(rng, ("N", "D", "U"), "meta.fitted_range")
    for k in ("N", "D", "U"):
        lo, hi = c.nums(
            c.get(rng, k, "meta.fitted_range"), f"meta.fitted_range.{k}", 2, lo=0.0, lo_open=True
        )
        if lo > hi:
            c.fail(f"meta.fitted_range.{k}", "must be [smallest, largest]", rng[k])


def _reach_warning(model, N: float, U: float) -> None:
    """Warn (once per fitted model) when N or U lies more than exp(R_MEASURED) (~7.4x, the
    factor of the supervised law's own reach warning) outside the fitted runs' range."""
    rng = model.result_.meta["fitted_range"]
    far = []
    for name, v, (lo, hi) in (("N", N, rng["N"]), ("U", U, rng["U"])):
        r = max(np.log(v / hi), np.log(lo / v))
        if r > R_MEASURED:
            far.append(
                f"{name}={v:.4g} lies {np.exp(r):.3g}x outside the fitted runs' "
                f"{name} of {lo:.3g} to {hi:.3g}"
            )
    if far and first_time(model, "far"):
        warnings.warn(
            f"{' and '.join(far)}: the law is extrapolated past {np.exp(R_MEASURED):.1f}x "
            "(the supervised law's reach warning) beyond the runs it was fitted on: read the "
            "losses and intervals as rough guesses",
            ReachWarning,
            stacklevel=3,
        )


def _warn_unidentified(law, res: FitResult, data: pd.DataFrame) -> None:
    """Say when R*_D, R*_N cannot be read from the runs: no run repeats data (they only enter
    through D > U), or the fit ended on a bound (0.01 or 1e5)."""
    if not (data["D"].to_numpy() > data["U"].to_numpy() * (1 + 1e-9)).any():
        warnings.warn(
            "runs: no run repeats data (every D <= U), so R*_D and R*_N are not identified: "
            "their values are starting points, not estimates; add runs of more than one epoch",
            DomainWarning,
            stacklevel=3,
        )
        return
    at = [
        f"{par.natural_name} = {res.params[par.natural_name]:.4g}"
        for par, v in zip(law.parameters[5:], np.asarray(res.theta)[5:])
        if v <= par.lower + 1e-6 or v >= par.upper - 1e-6
    ]
    if at:
        warnings.warn(
            f"{', '.join(at)} ended on its bound (0.01 or 1e5): the runs do not pin it (the "
            "decay constant trades against the exponent; docs/datablations.md); what depends "
            "on it (epochs advice: R*_D; the excess-parameter decay: R*_N) is unsupported",
            DomainWarning,
            stacklevel=3,
        )
