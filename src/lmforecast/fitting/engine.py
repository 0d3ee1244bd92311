"""The shared fitting engine: vectorised grid search, then L-BFGS-B polish of the best starts.

This is the procedure of Hoffmann et al. (2022, Approach 3) and Busbridge et al. (2025, App. F):
minimise sum_i rho(prediction_i - target_i) (Huber on log-space residuals by default) with
L-BFGS-B started from every point of a grid. Instead of running L-BFGS-B from every start, we
score the whole grid in vectorised numpy passes and polish only the most promising starts, which
reaches the same best objective at a fraction of the cost (see benchmarks/).

Laws with linear coefficients (`Law.linear_blocks`) are started by variable projection instead
(`fitting.varpro`, docs/fitting.md): the linear coefficients are solved on a small exponent grid
and only the best local minima of that profile are polished, on the same objective.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np

from ..errors import ConvergenceWarning, InputError
from ..laws.base import Law, freeze_inputs
from .losses import Loss, huber
from .result import FitResult
from .threads import single_blas_thread
from .varpro import projected_starts, representatives

_CHUNK_ELEMENTS = 4_000_000  # starts x observations per vectorised grid pass
PRECONDITION = True  # whitened pre-stage in polishes: laws with linear_blocks or law.precondition
PRECONDITION_ITER = 150  # at most this many whitened iterations before the bounded polish
VARPRO_POLISH = 6  # profile local minima polished by a variable-projection fit
METHODS = ("auto", "grid", "varpro")


def use_varpro(law: Law, X, method: str, grid=None, scores=None) -> bool:
    """Whether a fit takes the variable-projection path: "varpro" forces it (for laws with
    `linear_blocks`), "grid" never, "auto" when the law has linear blocks and no explicit grid
    or precomputed scores were given (an explicit grid is honoured as before)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    if method == "grid":
        return False
    has = bool(law.linear_blocks(X))
    if method == "varpro":
        if not has:
            raise ValueError(f"{law.name} declares no linear coefficients (linear_blocks)")
        return True
    return has and grid is None and scores is None


def grid_to_array(law: Law, grid: Mapping[str, np.ndarray] | np.ndarray) -> np.ndarray:
    """Cartesian product of a dict-of-arrays grid, as an (S, P) array in the law's order."""
    if not isinstance(grid, Mapping):
        arr = np.atleast_2d(np.asarray(grid, float))
        if arr.shape[1] != len(law.parameters):
            raise ValueError(
                f"grid has {arr.shape[1]} columns, {law.name} has {len(law.parameters)}"
            )
        return arr
    unknown = set(grid) - set(law.param_names)
    if unknown:
        raise ValueError(f"grid names unknown parameters {sorted(unknown)} of {law.name}")
    axes = []
    for p in law.parameters:
        if p.name not in grid:
            raise ValueError(f"grid is missing parameter {p.name!r} of {law.name}")
        axes.append(np.atleast_1d(np.asarray(grid[p.name], float)))
    mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
    return mesh.reshape(-1, len(axes))


def clip_to_bounds(law: Law, theta: np.ndarray, bounds=None) -> np.ndarray:
    b = np.array(bounds if bounds is not None else law.bounds, float)
    return np.clip(theta, b[:, 0], b[:, 1])


class Objective:
    """sum_i w_i * rho(f(theta; X_i) - t_i), vectorised over a batch of theta."""

    def __init__(self, law: Law, X: Mapping[str, np.ndarray], t: np.ndarray, loss: Loss, w=None):
        # read-only copies: the law may keep the logs of its inputs across evaluations
        self.law, self.X, self.t, self.loss = law, freeze_inputs(X), np.asarray(t, float), loss
        self.w = None if w is None else np.asarray(w, float)
        self._linear: bool | None = None
        # the last point evaluated, with its value, gradient, prediction and Jacobian: a polish
        # evaluates its start, the whitened pre-stage needs the Jacobian there, and L-BFGS-B
        # evaluates the same start again; one exact-match entry serves all three
        self._last: tuple | None = None

    @property
    def has_linear_part(self) -> bool:
        """Whether the law declares linear coefficients (`Law.linear_blocks`) on these inputs."""
        if self._linear is None:
            self._linear = bool(self.law.linear_blocks(self.X))
        return self._linear

    def batch(self, theta: np.ndarray) -> np.ndarray:
        theta = np.atleast_2d(theta)
        n = self.t.size
        step = max(1, _CHUNK_ELEMENTS // max(n, 1))
        out = np.empty(theta.shape[0])
        with np.errstate(all="ignore"):
            for s in range(0, theta.shape[0], step):
                r = self.law.predict_target(theta[s : s + step], self.X) - self.t
                v = self.loss.value(r)
                if self.w is not None:
                    v = v * self.w
                out[s : s + step] = v.sum(axis=1)
        out[~np.isfinite(out)] = np.inf
        return out

    def value_and_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        with np.errstate(all="ignore"):
            return self._evaluate(theta)[:2]

    def _evaluate(self, theta: np.ndarray) -> tuple:
        """(f, g, pred, J) at theta, remembered for the next call at the same point. Callers
        silence floating-point warnings around it (`_polish` once for a whole polish: entering
        ``np.errstate`` on every one of a polish's hundreds of evaluations costs more than the
        arithmetic of a small law)."""
        theta = np.asarray(theta, float)
        key = theta.tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        pred, J = self.law.predict_and_jacobian(theta[None, :], self.X)
        pred, J = pred[0], J[0]
        v, d = self.loss.value_and_derivative(pred - self.t)
        if self.w is not None:
            d, v = d * self.w, v * self.w
        f = float(v.sum())
        g = d @ J
        if not math.isfinite(f) or not np.isfinite(g).all():
            f, g = np.inf, np.zeros_like(theta)
        out = (f, g, pred, J)
        self._last = (key, out)
        return out


def _precondition(obj: Objective, theta0: np.ndarray, bounds, maxiter: int):
    """Unbounded L-BFGS-B in whitened coordinates z = L^T S (theta - theta0), where L L^T is the
    scaled Gauss-Newton Hessian (IRLS weights of the loss) at theta0 and S its diagonal scale.

    Scaling-law objectives are badly conditioned in fit space (log A and alpha move together:
    log A - alpha log N), which costs plain L-BFGS-B tens of iterations on the last digits; in
    whitened coordinates it converges in a handful. Returns a better interior point or None;
    the caller polishes from it on the original bounded problem, so the objective and the
    bounds are unchanged.
    """
    b = np.array(bounds, float)
    free = b[:, 0] < b[:, 1]
    span = np.where(np.isfinite(b[:, 1] - b[:, 0]), b[:, 1] - b[:, 0], 1.0)
    if np.any(free & (np.minimum(theta0 - b[:, 0], b[:, 1] - theta0) <= 1e-6 * span)):
        return None  # a start on a bound (e.g. E -> 0 on Pythia): the optimum may sit there
    f0, _, pred, J = obj._evaluate(theta0)  # the polish has just evaluated theta0
    with np.errstate(all="ignore"):
        r = pred - obj.t
        a = np.abs(r)
        w = np.ones_like(r) if obj.loss.name == "squared" else np.minimum(1.0, obj.loss.delta / a)
        if obj.w is not None:
            w = w * obj.w
        Jf = J[:, free]
        H = (Jf * w[:, None]).T @ Jf
    if not np.all(np.isfinite(H)):
        return None
    sc = np.sqrt(np.diag(H))
    # directions the start is insensitive to (e.g. an exponent at a zero-amplitude term) stay
    # put here; the bounded polish frees them
    live = sc > 1e-8 * sc.max() if sc.size and sc.max() > 0 else np.zeros(sc.size, bool)
    if not live.any():
        return None
    free = np.flatnonzero(free)[live]
    H, sc = H[np.ix_(live, live)], sc[live]
    try:
        L = np.linalg.cholesky(H / np.outer(sc, sc) + 1e-10 * np.eye(sc.size))
        Linv_t = np.linalg.inv(L.T)  # theta_free = theta0_free + Linv_t @ z / sc
    except np.linalg.LinAlgError:
        return None
    if not np.isfinite(f0) or f0 <= 0:
        return None
    scale = 1.0 / f0

    def theta_of(z):
        th = theta0.copy()
        th[free] += (Linv_t @ z) / sc
        return th

    def fun(z):
        f, g = obj._evaluate(theta_of(z))[:2]
        return f * scale, (Linv_t.T @ (g[free] / sc)) * scale

    from scipy.optimize import minimize  # start-up: loaded by the first fit, not by predict

    res = minimize(
        fun,
        np.zeros(sc.size),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": maxiter, "maxfun": 2 * maxiter, "ftol": 1e-12, "gtol": 1e-10},
    )
    th = theta_of(res.x)
    inside = np.all(th >= b[:, 0]) and np.all(th <= b[:, 1])
    if inside and np.isfinite(res.fun) and res.fun < 1.0:
        return th
    return None


#: Restarts of the L-BFGS-B polish from the best point while each still improves it.
MAX_RESTARTS = 3


def _polish(obj: Objective, theta0: np.ndarray, bounds, maxiter: int):
    """`_polish_quiet` with floating-point warnings silenced once for the whole polish."""
    with np.errstate(all="ignore"):
        return _polish_quiet(obj, theta0, bounds, maxiter)


def _polish_quiet(obj: Objective, theta0: np.ndarray, bounds, maxiter: int):
    """L-BFGS-B from theta0 with the objective rescaled to 1 at the start.

    scipy's ftol test is relative to max(|f|, 1): on raw Huber sums (~1e-4) it is effectively
    absolute and stops far from the optimum. Rescaling makes it a true relative test. With
    PRECONDITION, for laws with linear coefficients (or `law.precondition`), a whitened pre-stage
    (`_precondition`) first moves theta0 to a better interior point; the bounded polish then
    runs from there on the same objective.
    """
    f0 = obj._evaluate(theta0)[0]
    if not np.isfinite(f0):
        return theta0, np.inf, False, "non-finite objective at start"
    if PRECONDITION and (obj.has_linear_part or obj.law.precondition):
        th = _precondition(obj, np.asarray(theta0, float), bounds, min(maxiter, PRECONDITION_ITER))
        if th is not None:
            theta0 = th
            f0 = obj._evaluate(theta0)[0]
    scale = 1.0 / f0 if f0 > 0 else 1.0

    def fun(th):
        f, g = obj._evaluate(th)[:2]
        return f * scale, g * scale

    from scipy.optimize import minimize  # start-up: loaded by the first fit, not by predict

    res = minimize(
        fun,
        theta0,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": maxiter, "maxfun": 2 * maxiter, "ftol": 1e-12, "gtol": 1e-10},
    )
    f = res.fun / scale
    return res.x, f, bool(res.success), str(res.message)


def polish_many(
    obj: Objective,
    starts: np.ndarray,
    bounds,
    maxiter: int = 2000,
    progress: bool = False,
    desc: str = "polish",
):
    """L-BFGS-B from every start, with BLAS limited to one thread (on 2 cores, L-BFGS-B of a
    5-parameter law runs ~14x slower with two BLAS threads: fitting.threads)."""
    thetas, objs, oks = [], [], []
    it = starts
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(starts, desc=desc, unit="start", leave=False)
    with single_blas_thread():
        for th0 in it:
            th, f, ok, _ = _polish(obj, th0, bounds, maxiter)
            thetas.append(th)
            objs.append(f)
            oks.append(ok)
    return np.array(thetas), np.array(objs), np.array(oks)


def fit_law(
    law: Law,
    X: Mapping[str, np.ndarray],
    y: np.ndarray,
    *,
    loss: Loss | None = None,
    grid: Mapping[str, np.ndarray] | np.ndarray | None = None,
    bounds: list[tuple[float, float]] | None = None,
    n_polish: int = 32,
    weights: np.ndarray | None = None,
    maxiter: int = 2000,
    extra_starts: np.ndarray | None = None,
    progress: bool = False,
    scores: np.ndarray | None = None,
    method: str = "auto",
    stratify: bool = True,
) -> FitResult:
    """Fit `law` to observations y at inputs X.

    `method`: "grid" scores the law's initialisation grid (below); "varpro" starts from the
    variable-projection profile of a law with `linear_blocks` (fitting.varpro: linear
    coefficients solved on an exponent grid, its best `min(n_polish, VARPRO_POLISH)` local
    minima polished); "auto" (default) takes varpro when the law supports it and neither `grid`
    nor `scores` is given. Both end in the same L-BFGS-B polish of the same objective.

    Scores every grid start (vectorised), polishes the `n_polish` best with L-BFGS-B, then
    restarts the winner with the objective rescaled at its own value so the relative
    tolerance is meaningful (again while a restart still improves it, at most MAX_RESTARTS).
    `scores` may carry the objective at every start when a law has a
    faster exact scorer for its grid (e.g. a separable product grid); `grid` must then be the
    matching (S, P) array. `stratify=False` polishes only the `n_polish` best grid starts (not
    also the best start at every grid value: for a law with one basin, such as the 1-D compute
    law). Returns a FitResult; a fit that fails to converge warns and sets
    `converged=False` but still returns its best parameters.
    """
    loss = loss or huber(1e-3)
    X = {k: np.asarray(X[k], float) for k in law.inputs}
    y = np.asarray(y, float)
    n = y.size
    bnds = list(bounds) if bounds is not None else law.bounds
    n_free = sum(lo != hi for lo, hi in bnds)  # parameters pinned by equal bounds are fixed
    if n < n_free:
        raise InputError(
            f"{n} observations but {law.name} has {n_free} free parameters; "
            "need at least as many runs as parameters"
        )
    t = law.target_of(y)
    obj = Objective(law, X, t, loss, weights)

    varpro = use_varpro(law, X, method, grid, scores)
    with single_blas_thread():
        if varpro:
            starts, scores, order = _varpro_candidates(obj, extra_starts, bnds, n_polish)
        else:
            starts = grid_to_array(law, grid if grid is not None else law.default_grid())
            if extra_starts is not None:
                starts = np.vstack([np.atleast_2d(extra_starts), starts])
            starts = clip_to_bounds(law, starts, bnds)
            if scores is None:
                scores = obj.batch(starts)
            else:
                scores = np.asarray(scores, float).ravel()
                if extra_starts is not None or scores.size != len(starts):
                    raise ValueError(f"scores has {scores.size} entries for {len(starts)} starts")
                scores = np.where(np.isfinite(scores), scores, np.inf)
            order = None
        n_starts = starts.shape[0]
        if not np.isfinite(scores).any():
            raise InputError(f"{law.name}: the objective is not finite at any initialisation")
        if order is None:
            order = _select_starts(starts, scores, n_polish, stratify)
        thetas, objs, oks = polish_many(
            obj, starts[order], bnds, maxiter, progress, f"fit {law.name}"
        )
        best = int(np.argmin(objs))
        theta_b, f_b = thetas[best], objs[best]
        # restart from the winner: the first run's tolerance was relative to its start value.
        # Converged: a restart at the solution (objective rescaled to 1 there) cannot improve it
        # by more than 1e-6 relative; the absolute floor covers exact (noiseless) data, where
        # the objective is at rounding level (log residuals ~1e-7, i.e. <1e-14 per run). A
        # restart that still improves is followed by another (at most MAX_RESTARTS).
        f_prev, ok_prev = f_b, oks[best]
        for _ in range(MAX_RESTARTS):
            th2, f2, ok2, msg = _polish(obj, theta_b, bnds, maxiter)
            if f2 <= f_b:
                theta_b, f_b = th2, f2
            improvement = f_prev - f_b
            # an "abnormal" line search at the restart means no descent was found from the
            # solution, which is what an exact optimum looks like (e.g. a closed-form start)
            stopped_cleanly = ok_prev or ok2 or "ABNORMAL" in msg
            converged = bool(stopped_cleanly and improvement <= 1e-6 * f_b + 1e-14 * n)
            if converged:
                break
            f_prev, ok_prev = f_b, ok2

    # starts that reached the best polished basin (restarts may lower f_b below all of them)
    f_min = float(np.min(objs))
    n_at_best = int(np.sum(objs - f_min <= 1e-5 * abs(f_min) + 1e-300))
    if not converged:
        why = (
            f"{MAX_RESTARTS} restarts each still lowered the objective (the last by "
            f"{improvement / max(abs(f_b), 1e-300):.1e} relative): it is flat along some "
            "direction, so the parameters are weakly identified"
            if stopped_cleanly
            else f"the optimiser stopped: {msg}"
        )
        warnings.warn(
            f"{law.name} fit did not converge ({why}); returning the best parameters found",
            ConvergenceWarning,
            stacklevel=2,
        )
    # distinct local optima, kept to warm-start bootstrap refits
    uniq = _distinct(thetas[np.argsort(objs)], 4)
    with np.errstate(all="ignore"):
        resid = law.predict_target(theta_b[None, :], X)[0] - t
    return FitResult(
        law=law.name,
        theta=theta_b.tolist(),
        params=law.to_natural(theta_b),
        objective=float(f_b),
        loss=loss.to_dict(),
        n_obs=int(n),
        n_starts=int(n_starts),
        n_polished=int(len(order)),
        n_at_best=n_at_best,
        converged=converged,
        message=msg,
        residual_scale=float(1.4826 * np.median(np.abs(resid - np.median(resid)))),
        rmse_target=float(np.sqrt(np.mean(resid**2))),
        warm_starts=[list(map(float, u)) for u in uniq],
    )


def _varpro_candidates(obj: Objective, extra_starts, bnds, n_polish: int):
    """(starts, scores, indices to polish) of a variable-projection fit: one projected start per
    exponent-grid point, the best `min(n_polish, VARPRO_POLISH)` local minima of that profile,
    plus every extra start (scored and polished as given)."""
    starts, keys = projected_starts(obj.law, obj.X, obj.t, obj.loss, obj.w, bnds)
    scores = obj.batch(starts)
    chosen = representatives(keys, scores, max(1, min(n_polish, VARPRO_POLISH)))
    if extra_starts is not None:
        ex = clip_to_bounds(obj.law, np.atleast_2d(extra_starts), bnds)
        starts = np.vstack([ex, starts])
        scores = np.concatenate([obj.batch(ex), scores])
        chosen = np.concatenate([np.arange(len(ex)), chosen + len(ex)])
    return starts, scores, chosen[np.isfinite(scores[chosen])]


def _select_starts(
    starts: np.ndarray, scores: np.ndarray, n_best: int, stratify: bool = True
) -> np.ndarray:
    """The n_best lowest-objective starts, plus, for every grid value of every parameter, the
    best start having that value (so each exponent basin the grid spans is polished at least
    once, even when its starts score poorly before polishing)."""
    finite = np.isfinite(scores)
    chosen = list(np.argsort(scores)[: min(n_best, int(finite.sum()))])
    if stratify and len(starts) > 4 * n_best:  # stratify only genuine grids
        for j in range(starts.shape[1]):
            vals, inv = np.unique(starts[:, j], return_inverse=True)
            if len(vals) > 12:
                continue
            for k in range(len(vals)):
                members = np.flatnonzero((inv == k) & finite)
                if members.size:
                    chosen.append(members[np.argmin(scores[members])])
    return np.array(list(dict.fromkeys(int(i) for i in chosen)))


def _distinct(thetas: np.ndarray, k: int) -> list[np.ndarray]:
    out: list[np.ndarray] = []
    for th in thetas:
        if all(np.max(np.abs(th - u)) > 1e-3 for u in out):
            out.append(th)
        if len(out) == k:
            break
    return out


def refit_from(
    law: Law,
    X: Mapping[str, np.ndarray],
    y: np.ndarray,
    starts: np.ndarray,
    *,
    loss: Loss,
    bounds=None,
    maxiter: int = 2000,
) -> tuple[np.ndarray, float]:
    """Cheap refit from given starts only (bootstrap resamples); returns (theta, objective)."""
    t = law.target_of(y)
    obj = Objective(law, X, t, loss)
    bnds = list(bounds) if bounds is not None else law.bounds
    thetas, objs, _ = polish_many(obj, np.atleast_2d(starts), bnds, maxiter)
    i = int(np.argmin(objs))
    return thetas[i], float(objs[i])


__all__ = ["fit_law", "refit_from", "grid_to_array", "Objective"]
