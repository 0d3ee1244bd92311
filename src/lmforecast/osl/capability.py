"""The low-dimensional capability space (Ruan et al. 2024, Sec. 3.2-3.3, Eq. 5, App. B.3).

`pca_impute` fills missing benchmark scores as App. B.3 (and the authors' code): standardise the
metrics with the training rows, fill with the column mean, then repeatedly replace the missing
entries by their rank-`n_components` PCA reconstruction until convergence or 1,000 iterations;
undo the scaling and clip to [0, 1]. `CapabilitySpace` then runs PCA with K components on the
mean-centred, *unscaled* scores: S_m = gamma (B_m - mu) (Eq. 5). Both are fitted on the training
models only and applied unchanged to test models (Sec. 4, leakage rule). Scores are fractions
here (the clip and the paper's PCs assume them): the estimators convert a table in points at
the door (`data.to_fractions`) before building the space.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InputError
from .data import FAMILY, FLOPS, FLOPS_UNIT, MODEL


def _svd_components(Xc: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k principal axes (rows) of centred data and all singular values."""
    _, s, vt = np.linalg.svd(Xc, full_matrices=False)
    return vt[:k], s


def _fix_signs(components: np.ndarray) -> np.ndarray:
    """Sign convention: each component's largest-magnitude loading is positive.

    PCA signs are arbitrary (METHODS 4.7 item 4); this makes PC-1 (all loadings of one sign)
    increase with general capability. Predictions never depend on it.
    """
    idx = np.argmax(np.abs(components), axis=1)
    signs = np.sign(components[np.arange(components.shape[0]), idx])
    signs[signs == 0] = 1.0
    return components * signs[:, None]


@dataclass
class Imputer:
    """The App. B.3 imputation state fitted on the training scores: standardisation (mean, SD),
    the starting fill (column means of the scaled data) and the rank-r PCA (mean, axes) whose
    reconstruction replaces missing entries. Saved in an `OSLResult` (`imputation`) so that a
    saved fit imputes new models exactly as the fit did."""

    scale_mean: np.ndarray
    scale_sd: np.ndarray
    fill: np.ndarray  # column means of the scaled training data
    pca_mean: np.ndarray
    pca_axes: np.ndarray  # (r, T)

    def reconstruct(self, Z: np.ndarray) -> np.ndarray:
        C = Z - self.pca_mean
        return self.pca_mean + (C @ self.pca_axes.T) @ self.pca_axes

    def apply(
        self,
        test: np.ndarray,
        *,
        max_iter: int = 1000,
        tol: float = 1e-4,
        clip: tuple[float, float] | None = (0.0, 1.0),
    ) -> np.ndarray:
        """Scores `test` (n, T) with missing entries imputed (observed ones unchanged)."""
        test = np.array(test, float)
        tmiss = np.isnan(test)
        Zt = (test - self.scale_mean) / self.scale_sd
        Zt[tmiss] = np.broadcast_to(self.fill, Zt.shape)[tmiss]
        Zt = _iterate(Zt, tmiss, self.reconstruct, max_iter, tol)
        out = Zt * self.scale_sd + self.scale_mean
        if clip is not None:
            out = np.clip(out, *clip)
        out[~tmiss] = test[~tmiss]
        return out

    def to_dict(self) -> dict[str, list]:
        return {k: np.asarray(getattr(self, k), float).tolist() for k in IMPUTER_FIELDS}

    @classmethod
    def from_dict(cls, d, n_metrics: int, checker) -> Imputer:
        """Validated state for `n_metrics` benchmarks (`checker`: a `store.Checker`)."""
        c = checker
        c.obj(d, "imputation")
        c.keys(d, IMPUTER_FIELDS, "imputation")
        vec = {
            k: np.asarray(c.nums(c.get(d, k, "imputation"), f"imputation.{k}", n_metrics), float)
            for k in IMPUTER_FIELDS[:4]
        }
        if not (vec["scale_sd"] > 0).all():
            c.fail("imputation.scale_sd", "must be > 0", d["scale_sd"])
        axes = c.matrix(c.get(d, "pca_axes", "imputation"), "imputation.pca_axes", n_metrics)
        if not 1 <= len(axes) <= n_metrics:
            c.fail("imputation.pca_axes", f"must have 1 to {n_metrics} rows, has {len(axes)}")
        return cls(**vec, pca_axes=np.asarray(axes, float))


IMPUTER_FIELDS = ("scale_mean", "scale_sd", "fill", "pca_mean", "pca_axes")


def _iterate(Z: np.ndarray, miss: np.ndarray, step, max_iter: int, tol: float) -> np.ndarray:
    """Replace missing entries by step(Z)'s reconstruction until a fixed point or max_iter.

    Stops when the authors' test holds (whole matrix within `tol` of its reconstruction) or when
    the missing entries move by less than 1e-13 in an iteration (further passes cannot change
    them in any printed digit).
    """
    if not miss.any():
        return Z
    for _ in range(max_iter):
        R = step(Z)
        if np.allclose(Z, R, atol=tol):
            break
        change = np.max(np.abs(Z[miss] - R[miss]))
        Z[miss] = R[miss]
        if change < 1e-13:
            break
    return Z


def fit_imputer(
    train: np.ndarray, *, n_components: int = 1, max_iter: int = 1000, tol: float = 1e-4
) -> tuple[Imputer, np.ndarray, np.ndarray]:
    """Iterative PCA imputation of `train` (App. B.3): the fitted `Imputer`, the imputed scaled
    training matrix Z and its missing mask."""
    train = np.array(train, float)
    miss = np.isnan(train)
    if miss.all(axis=0).any():
        raise InputError(f"column {int(np.argmax(miss.all(axis=0)))} of the scores is all missing")
    mu = np.nanmean(train, axis=0)
    sd = np.sqrt(np.nanmean((train - mu) ** 2, axis=0))
    sd[sd == 0] = 1.0
    Z = (train - mu) / sd
    fill = np.nanmean(Z, axis=0)
    Z[miss] = np.broadcast_to(fill, Z.shape)[miss]
    r = min(n_components, *Z.shape)

    def fit_step(Zc):
        m = Zc.mean(axis=0)
        axes, _ = _svd_components(Zc - m, r)
        return m + ((Zc - m) @ axes.T) @ axes

    Z = _iterate(Z, miss, fit_step, max_iter, tol)
    m = Z.mean(axis=0)
    axes, _ = _svd_components(Z - m, r)
    return Imputer(mu, sd, fill, m, axes), Z, miss


def _unscale(train, imp: Imputer, Z, miss, clip) -> np.ndarray:
    """Imputed training scores on the original scale (observed entries unchanged)."""
    out = Z * imp.scale_sd + imp.scale_mean
    if clip is not None:
        out = np.clip(out, *clip)
    out[~miss] = train[~miss]
    return out


def pca_impute(
    train: np.ndarray,
    test: np.ndarray | None = None,
    *,
    n_components: int = 1,
    max_iter: int = 1000,
    tol: float = 1e-4,
    clip: tuple[float, float] | None = (0.0, 1.0),
) -> tuple[np.ndarray, np.ndarray | None]:
    """Iterative PCA imputation (App. B.3), fitted on `train` and applied to `test`.

    Returns imputed copies (observed entries unchanged, imputed ones clipped to `clip`).
    """
    train = np.array(train, float)
    imp, Z, miss = fit_imputer(train, n_components=n_components, max_iter=max_iter, tol=tol)
    out_train = _unscale(train, imp, Z, miss, clip)
    if test is None:
        return out_train, None
    return out_train, imp.apply(test, max_iter=max_iter, tol=tol, clip=clip)


class CapabilitySpace:
    """PCA capability measures S_m = gamma (B_m - mu) on K components (Eq. 5, Sec. 3.2).

    Learned attributes: `metrics_`, `mean_` (T,), `components_` (K, T) orthonormal rows (gamma),
    `explained_variance_ratio_` (K,) of the *total* variance, `singular_values_`, `imputer_`
    (the App. B.3 imputation state that fills missing scores of any model).
    """

    def __init__(self, n_components: int = 3, impute_components: int = 1) -> None:
        self.n_components = n_components
        self.impute_components = impute_components

    def fit(self, scores: pd.DataFrame, metrics: list[str] | None = None) -> CapabilitySpace:
        """Impute (App. B.3) and fit PCA on the training scores (rows: models)."""
        metrics = list(metrics if metrics is not None else scores.columns)
        B = scores[metrics].to_numpy(float)
        n, T = B.shape
        K = int(self.n_components)
        if K < 1 or K > min(n, T):
            raise InputError(
                f"--pcs (n_components=) {K}: must be between 1 and min(models, "
                f"metrics) = {min(n, T)}"
            )
        imp, Z, miss = fit_imputer(B, n_components=self.impute_components)
        self.imputer_ = imp
        B = _unscale(B, imp, Z, miss, (0.0, 1.0))
        self.metrics_ = metrics
        self.mean_ = B.mean(axis=0)
        axes, s = _svd_components(B - self.mean_, K)
        self.components_ = _fix_signs(axes)
        self.singular_values_ = s[:K]
        self.explained_variance_ratio_ = (s[:K] ** 2) / np.sum(s**2)
        self.imputed_ = B
        return self

    def impute(self, scores: pd.DataFrame) -> np.ndarray:
        """Scores of new models with missing entries imputed by the training fit."""
        B = scores[self.metrics_].to_numpy(float)
        if not np.isnan(B).any():
            return B
        return self.imputer_.apply(B)

    def transform(self, scores: pd.DataFrame) -> np.ndarray:
        """S (n, K) for any models, after imputing with the training fit."""
        return (self.impute(scores) - self.mean_) @ self.components_.T

    def loadings(self) -> pd.DataFrame:
        """gamma as a table: one row per PC, one column per benchmark (Fig. 2b)."""
        idx = [f"PC-{i + 1}" for i in range(self.components_.shape[0])]
        return pd.DataFrame(self.components_, index=idx, columns=self.metrics_)


def family_fits(table: pd.DataFrame, S: np.ndarray, min_models: int = 3) -> pd.DataFrame:
    """Per-family linear fits PC_k ~ theta_f log10(C) + nu_f with R^2 (Eq. 4, Fig. 3/C.2).

    Families with fewer than `min_models` models with known FLOPs are skipped.
    """
    logc = np.log10(table[FLOPS].to_numpy(float) * FLOPS_UNIT)
    rows = []
    for fam, idx in table.groupby(FAMILY, sort=False).indices.items():
        idx = idx[np.isfinite(logc[idx])]
        if len(idx) < min_models:
            continue
        x = logc[idx]
        for k in range(S.shape[1]):
            y = S[idx, k]
            slope, icpt = np.polyfit(x, y, 1)
            ss_res = np.sum((y - (slope * x + icpt)) ** 2)
            ss_tot = np.sum((y - y.mean()) ** 2)
            r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else np.nan
            rows.append(
                {
                    FAMILY: fam,
                    "pc": f"PC-{k + 1}",
                    "n_models": len(idx),
                    "slope": slope,
                    "intercept": icpt,
                    "r2": r2,
                }
            )
    return pd.DataFrame(rows)


def capability_table(table: pd.DataFrame, space: CapabilitySpace) -> pd.DataFrame:
    """Model, family, FLOPs and PC scores in one frame."""
    S = space.transform(table)
    out = table[[MODEL, FAMILY, FLOPS]].copy()
    for k in range(S.shape[1]):
        out[f"PC-{k + 1}"] = S[:, k]
    return out
