"""The Eq. 2 law of the salience paper (Ge, Xing et al., Sec. 3 and 4.1) on its own: the
sigmoid A = gamma + (1 - gamma) sigmoid(alpha (C - beta)), its Levenberg-Marquardt fit (Eq. 4)
as a `FitResult`, the bootstrap of (alpha, beta) and the interval of a new model's accuracy, and
the Sec. 4.1 baselines (Eq. 2 fitted on the all-token or label-token loss). `CapabilitySalience`
(salience.model) learns the token weights that produce C; everything here takes C as given.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..fitting.result import FitResult
from ..laws.salience import SalienceSigmoid, lm_fit
from ..uncertainty.percentile import percentile_interval
from ..uncertainty.resample import resample_from


def sigmoid_law(C: np.ndarray, alpha: float, beta: float, gamma: float) -> np.ndarray:
    """Eq. 2 evaluated directly."""
    return gamma + (1.0 - gamma) * expit(alpha * (np.asarray(C, float) - beta))


def bootstrap_law(C, A, splits, gamma, B, seed, law) -> list[list[float]]:
    """(alpha, beta) of Eq. 2 refitted by Levenberg-Marquardt (Eq. 4) on B resamples of the
    train models, W held fixed (resamples with one capability value are skipped)."""
    tr = np.flatnonzero(np.asarray(splits) == "train")
    rng = np.random.default_rng(seed)
    out = []
    start = np.asarray(law.theta, float)
    for _ in range(B):
        idx = resample_from(rng, tr)
        if np.ptp(C[idx]) == 0:
            continue
        theta, _, _ = lm_fit(C[idx], A[idx], gamma, [start])
        out.append([float(theta[0]), float(theta[1])])
    return out


def residual_scale(pred, scores, splits) -> tuple[float, int]:
    """(scale, dof) of a new model's accuracy around Eq. 2: the RMSE of the validation models
    (dof: their number) or, without them, the dof-corrected train RMSE (dof: n_train - 2); W is
    fitted on the train models, so their residuals understate a new model's error."""
    splits = np.asarray(splits)
    err = (np.asarray(pred, float) - np.asarray(scores, float)) ** 2
    va, tr = splits == "validation", splits == "train"
    if va.any():
        return float(np.sqrt(float(np.mean(err[va])))), int(va.sum())
    n = int(tr.sum())
    return float(np.sqrt(float(np.mean(err[tr])) * n / max(n - 2, 1))), max(n - 2, 1)


def eq2_interval(
    ab, C, gamma: float, level: float, kind: str, scale: float, dof: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of Eq. 2 at capability scores C over bootstrap (alpha, beta) `ab`
    ("confidence"), plus Student-t noise of `scale`, `dof` ("prediction"); clipped to the
    accuracy range [0, 1]."""
    ab = np.asarray(ab, float)
    P = sigmoid_law(np.asarray(C, float)[None, :], ab[:, :1], ab[:, 1:2], gamma)
    if kind == "prediction":
        P = P + scale * np.random.default_rng(seed).standard_t(dof, P.shape)
    lo, hi = percentile_interval(P, level)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def baseline_fit(C: np.ndarray, scores, splits, gamma: float) -> dict:
    """Fit Eq. 2 on a baseline score (all-token or label-token loss) of the train models and
    report the test (and validation) MSE (Sec. 4.1 baselines)."""
    C = np.asarray(C, float)
    A = np.asarray(scores, float)
    splits = np.asarray(splits).astype(str)
    tr = splits == "train"
    theta, _, _ = lm_fit(C[tr], A[tr], gamma)
    pred = sigmoid_law(C, theta[0], theta[1], gamma)
    out = {"alpha": float(theta[0]), "beta": float(theta[1])}
    for name in ("train", "validation", "test"):
        m = splits == name
        out[f"{name}_mse"] = float(np.mean((pred[m] - A[m]) ** 2)) if m.any() else None
    out["predicted"] = pred
    return out


def fit_salience_sigmoid(C, A, gamma: float, starts=None) -> FitResult:
    """Fit Eq. 2 by Levenberg-Marquardt (Eq. 4) and wrap it in the engine's `FitResult`."""
    law = SalienceSigmoid(gamma)
    theta, sse, ok = lm_fit(C, A, law.gamma, starts)
    resid = law.predict_target(theta[None, :], {"C": np.asarray(C, float)})[0] - np.asarray(A)
    return FitResult(
        law=law.name,
        theta=[float(v) for v in theta],
        params=law.to_natural(theta),
        objective=0.5 * sse,
        loss={"name": "squared", "delta": 0.0},
        n_obs=int(np.size(C)),
        n_starts=1 + len(starts or []),
        n_polished=1 + len(starts or []),
        n_at_best=1,
        converged=ok,
        message="Levenberg-Marquardt (scipy least_squares, method='lm')",
        residual_scale=float(1.4826 * np.median(np.abs(resid - np.median(resid)))),
        rmse_target=float(np.sqrt(np.mean(resid**2))),
        meta={"law_options": {"gamma": law.gamma}},
    )
