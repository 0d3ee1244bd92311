"""Does model shape matter beyond N? A residual test against the fitted L(N, D).

Fit L = E + A/N^alpha + B/D^beta (Hoffmann et al. 2022, Eq. 2; shared engine) to every row
(checkpoints of models that differ in width and depth), average the log residuals per model
(checkpoints of one model are not independent), and regress the per-model residual on the
aspect ratio x = ln(width/depth), centred at its mean: r = c0 + c1 x + c2 x^2 (Kaplan et al.
2020, Sec. 3.1 / Fig. 5, found loss depends on shape only weakly, worst at extreme aspect
ratios, hence the quadratic). Evidence: a permutation p-value of the shape terms' R^2
(shapes shuffled across models) and leave-one-model-out cross-validated RMS of the per-model
residual with and without the shape term. The shape term, when it helps, multiplies the law's
forecast by exp(c1 x + c2 x^2 - mean).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..data.validate import check_min_rows, numeric_column
from ..display import SummaryDisplay
from ..errors import InputError
from ..fitting import fit_law, huber
from ..laws import get_law
from ..store import FORMAT_VERSION, dump_json, load_json, source_label
from .schema import KIND, check_shape_test


@dataclass
class ShapeTest(SummaryDisplay):
    r2: float
    p_value: float
    n_models: int
    n_rows: int
    coef: list[float]  # c0, c1, c2 of r = c0 + c1 x + c2 x^2
    x_center: float
    best_aspect: float | None
    cv_rms_without: float
    cv_rms_with: float
    shape_matters: bool
    worst: dict
    models: list[dict]
    law_params: dict
    alpha_level: float

    def contract(self) -> dict:
        return asdict(self)

    def to_json(self, path=None) -> str:
        """JSON text (written atomically to `path` if given); loads back bit-for-bit."""
        return dump_json({"kind": KIND, "format_version": FORMAT_VERSION, **asdict(self)}, path)

    @classmethod
    def from_json(cls, text_or_path) -> ShapeTest:
        """A test saved by `to_json` (`shape test --out`), validated field by field."""
        d = load_json(text_or_path, "saved shape test")
        check_shape_test(d, source_label(text_or_path))
        return cls(**{k: v for k, v in d.items() if k not in ("kind", "format_version")})

    def summary(self) -> str:
        verdict = "shape matters beyond N" if self.shape_matters else "no evidence shape matters"
        lines = [
            f"Shape residual test: {self.n_models} models, {self.n_rows} rows: {verdict} "
            f"(permutation p = {self.p_value:.3g}, R^2 = {self.r2:.3f}; leave-one-model-out RMS "
            f"{self.cv_rms_without:.4f} -> {self.cv_rms_with:.4f} with the shape term)",
            f"worst miss: {self.worst['model']} (width {self.worst['width']:g}, depth "
            f"{self.worst['depth']:g}): mean log residual {self.worst['residual']:+.4f}",
        ]
        if self.best_aspect:
            lines.append(f"shape term minimum at width/depth = {self.best_aspect:.3g}")
        return "\n".join(lines)


def shape_test(
    df: pd.DataFrame,
    *,
    loss_col: str = "loss",
    width_col: str = "width",
    depth_col: str = "depth",
    model_col: str | None = None,
    n_perm: int = 2000,
    alpha_level: float = 0.05,
    seed: int = 0,
) -> ShapeTest:
    """Residual test of shape (width, depth) against L(N, D) fitted to all rows."""
    what = "runs"
    N = numeric_column(df, "N", positive=True, what=what)
    D = numeric_column(df, "D", positive=True, what=what)
    L = numeric_column(df, loss_col, positive=True, what=what)
    W = numeric_column(df, width_col, positive=True, what=what)
    H = numeric_column(df, depth_col, positive=True, what=what)
    if model_col is not None and model_col not in df.columns:
        raise InputError(f"{what}: missing model column {model_col!r}")
    key = (
        df[model_col].astype(str).to_numpy()
        if model_col
        else np.array([f"{w:g}x{h:g}" for w, h in zip(W, H)])
    )
    law = get_law("chinchilla")
    res = fit_law(law, {"N": N, "D": D}, L, loss=huber(1e-3), n_polish=16)
    r = np.log(L) - np.log(res.predict(N=N, D=D))
    t = pd.DataFrame({"model": key, "width": W, "depth": H, "r": r})
    m = t.groupby("model", sort=True).agg(
        width=("width", "first"),
        depth=("depth", "first"),
        residual=("r", "mean"),
        rows=("r", "size"),
    )
    if (t.groupby("model")[["width", "depth"]].nunique() > 1).any().any():
        raise InputError(
            f"{what}: a model has more than one width or depth; name the model "
            "column with --model-col (model_col=)"
        )
    check_min_rows(len(m), 6, "models", "the residual test fits 3 shape coefficients")
    x_raw = np.log(m["width"].to_numpy() / m["depth"].to_numpy())
    n_shapes = len(np.unique(np.round(x_raw, 9)))
    if n_shapes < 3:  # a constant regressor gives r2 = 0 and "p = 1" for a test never run
        raise InputError(
            f"{what}: the {len(m)} models have {n_shapes} distinct width/depth ratio(s); the "
            "test fits a quadratic in log(width/depth) and needs at least 3"
        )
    xc = float(x_raw.mean())
    x, y = x_raw - xc, m["residual"].to_numpy()
    X = np.column_stack([np.ones_like(x), x, x * x])
    r2 = _r2(X, y)
    rng = np.random.default_rng(seed)
    perm = np.array([_r2(X[rng.permutation(len(x))], y) for _ in range(n_perm)])
    p = float((1 + np.sum(perm >= r2)) / (1 + n_perm))
    coef = np.linalg.lstsq(X, y, rcond=None)[0]
    cv0, cv1 = _loo(np.ones((len(x), 1)), y), _loo(X, y)
    best = float(np.exp(xc - coef[1] / (2 * coef[2]))) if coef[2] > 0 else None
    i = int(np.argmax(np.abs(y)))
    worst = {
        "model": str(m.index[i]),
        "width": float(m["width"].iloc[i]),
        "depth": float(m["depth"].iloc[i]),
        "residual": float(y[i]),
    }
    models = [
        {
            "model": str(k),
            "width": float(v.width),
            "depth": float(v.depth),
            "residual": float(v.residual),
            "rows": int(v.rows),
        }
        for k, v in m.iterrows()
    ]
    return ShapeTest(
        r2=float(r2),
        p_value=p,
        n_models=len(m),
        n_rows=len(t),
        coef=coef.tolist(),
        x_center=xc,
        best_aspect=best,
        cv_rms_without=cv0,
        cv_rms_with=cv1,
        shape_matters=bool(p < alpha_level and cv1 < cv0),
        worst=worst,
        models=models,
        law_params=res.params,
        alpha_level=alpha_level,
    )


def _r2(X, y) -> float:
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    ss = np.sum((y - y.mean()) ** 2)
    return float(1 - np.sum((y - X @ beta) ** 2) / ss) if ss > 0 else 0.0


def _loo(X, y) -> float:
    """Leave-one-model-out RMS prediction error of least squares y ~ X."""
    err = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        beta = np.linalg.lstsq(X[keep], y[keep], rcond=None)[0]
        err.append(y[i] - X[i] @ beta)
    return float(np.sqrt(np.mean(np.square(err))))
