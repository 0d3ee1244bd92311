"""The teacher loss's own uncertainty in distillation intervals (Busbridge et al. 2025, Eq. 8
with L_T = L(N_T, D_T) from the supervised law, Eq. 1; docs/distill.md, "Teacher loss from size
and tokens").

Where the teacher loss is a forecast of the supervised law (a teacher given by its size and
tokens, or a plan's N_T*, D_T*), each parameter draw b of Eq. 8 is paired with a standard normal
score u_b and uses the teacher loss L_T^(b) = E + (L_T - E) exp(s_T u_b), E the supervised law's
irreducible loss (no teacher reaches it; a log-normal on L_T itself put draws below E where the
supervised interval is wide, e.g. a teacher at the planner's 1e17-token bound):

- s_T(N_T, D_T) = ln((hi - E) / (L_T - E)) / z_0.95: the sd on log(L_T - E) that puts the
  supervised law's own 90% interval's upper end hi at the teacher (its forecast interval,
  `SupervisedScalingLaw.predict_interval`; its bootstrap-only "confidence" interval for a
  `kind="confidence"` distillation interval); 0 where that law carries no uncertainty (given
  coefficients, a fit without intervals);
- u_b = ndtri((b + 1/2) / B), the B normal quantiles in an order fixed by TEACHER_SEED: no
  random state, so intervals are reproducible bit for bit (also after save/load).

L~_S (the student's supervised loss) stays at its point: it enters only Eq. 8's capacity-gap
term, and the distillation coefficients were fitted with the point L~_S. A measured teacher loss
gets no teacher term.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np

from ..fitting import FitResult
from ..laws import get_law
from ..supervised import SupervisedScalingLaw
from ..supervised.reach import ReachWarning
from ..uncertainty.normal import normal_nodes, z_of
from .schema import LAW_NAME, check_supervised_fit

SUPERVISED_LEVEL = 0.9  # the supervised interval s_T is read from, whatever the forecast's level
TEACHER_SEED = 8  # fixes the order of the scores u_b (a constant: no state between calls)

#: Basis line where the supervised law has no interval, so s_T = 0.
TEACHER_NO_SPREAD = (
    "teacher loss L_T from its size and tokens held at the supervised law's point estimate "
    "(that law carries no uncertainty: given coefficients or a fit without intervals)"
)
#: Basis line where the teacher loss is drawn (`teacher_basis` fills in the sd).
TEACHER_DRAWN = (
    "teacher loss L_T drawn from the supervised law's 90% prediction interval at the teacher's "
    "size and tokens (log-normal above the law's E, sd {sd} on log(L_T - E))"
)


def supervised_has_interval(sup: SupervisedScalingLaw) -> bool:
    """Whether the supervised law carries an interval (calibrated terms or bootstrap draws)."""
    res = sup.result_
    return res.meta.get("intervals") is not None or bool(res.bootstrap)


def teacher_log_sd(model, N_T, D_T, kind: str = "prediction") -> np.ndarray:
    """s_T = ln((hi - E) / (L_T - E)) / z_0.95 from the supervised law's 90% interval (lo, hi)
    around its forecast L_T at (N_T, D_T) (the forecast interval; the bootstrap-only one for
    `kind="confidence"`), vectorised; zeros where that law has no interval. Its warnings about
    reaching past its own runs are not repeated here (the distillation verbs say where their
    inputs leave the runs)."""
    N_T, D_T = np.broadcast_arrays(np.asarray(N_T, float), np.asarray(D_T, float))
    sup = model.supervised_
    if not supervised_has_interval(sup):
        return np.zeros(N_T.shape)
    Nf, Df = N_T.ravel(), D_T.ravel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReachWarning)
        try:  # an averaged fit has only its forecast interval
            want = "confidence" if kind == "confidence" else "prediction"
            hi = sup.predict_interval(Nf, Df, level=SUPERVISED_LEVEL, kind=want)[1]
        except ValueError:
            hi = sup.predict_interval(Nf, Df, level=SUPERVISED_LEVEL)[1]
    E = float(model.E_)
    L = np.asarray(sup.predict(Nf, Df), float)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.log((np.asarray(hi, float) - E) / (L - E)) / z_of(SUPERVISED_LEVEL)
    return np.reshape(np.where(np.isfinite(s) & (s > 0), s, 0.0), N_T.shape)


def shift_teacher(L, factor, E: float) -> np.ndarray:
    """E + (L - E) factor: a teacher loss with its reducible part scaled (never below E)."""
    return E + (np.asarray(L, float) - E) * factor


def teacher_scores(n: int) -> np.ndarray:
    """u_b, b = 0..n-1: the normal quantiles ndtri((b + 1/2) / n), permuted by TEACHER_SEED
    (so that draw order and score are unrelated, the same on every call)."""
    u = normal_nodes(n)
    return u[np.random.default_rng(TEACHER_SEED).permutation(int(n))]


def shifted_log_draws(model, N_S, D_S, L_T, s_T) -> tuple[np.ndarray, tuple]:
    """log L_S (B, n) over the parameter draws, draw b with teacher E + (L_T - E) exp(s_T u_b),
    and the broadcast shape of the inputs."""
    N_S, D_S, L_T, s_T = np.broadcast_arrays(*(np.asarray(v, float) for v in (N_S, D_S, L_T, s_T)))
    th = model.parameter_draws()
    u = teacher_scores(len(th))
    LTb = shift_teacher(
        L_T.ravel()[None, :], np.exp(u[:, None] * s_T.ravel()[None, :]), float(model.E_)
    )
    X = model._inputs(N_S.ravel(), D_S.ravel(), L_T.ravel())
    # 2-D inputs (B, n): row b of every input pairs with parameter row b (the law's terms
    # broadcast theta (B, 1) against inputs (1, B, n); its output is (1, B, n))
    X2 = {k: np.broadcast_to(v, LTb.shape) for k, v in X.items()} | {"L_T": LTb}
    with np.errstate(all="ignore"):
        T = get_law(LAW_NAME).predict_target(th, X2)[0]
    return np.where(np.isfinite(T), T, np.nan), N_S.shape


def teacher_basis(s_T) -> str:
    """The basis line of an interval whose teacher loss came from a teacher's size and tokens:
    TEACHER_DRAWN with the sd (a range over several teachers), TEACHER_NO_SPREAD where
    s_T = 0."""
    s = np.asarray(s_T, float).ravel()
    s = s[np.isfinite(s)]
    if not np.any(s > 0):
        return TEACHER_NO_SPREAD
    lo, hi = f"{s.min():.2g}", f"{s.max():.2g}"
    return TEACHER_DRAWN.format(sd=lo if lo == hi else f"{lo} to {hi}")


def plan_teacher_log_sd(model, plan, scenario) -> np.ndarray | None:
    """s_T at the point plan's (N_T*, D_T*), flattened, where the scenario trains or runs a
    teacher whose loss the supervised law forecasts (delta_Lgt or delta_Pre: L_T* = L(N_T*,
    D_T*)); None where there is no teacher term (best case, or s_T = 0)."""
    if not (scenario.delta_lgt or scenario.delta_pre):
        return None
    s = teacher_log_sd(model, np.ravel(plan.teacher_params), np.ravel(plan.teacher_tokens))
    return s if np.any(s > 0) else None


def apply_shift(L, shift, E: float) -> np.ndarray:
    """`shift_teacher` with a per-problem factor `shift` (n,) broadcast along L's first axis:
    the planner evaluates teachers as (n,) or (n, candidates) arrays
    (`planning.zoom_minimise`)."""
    L, f = np.asarray(L, float), np.asarray(shift, float)
    if f.ndim and L.ndim:
        f = f.reshape(f.shape + (1,) * (L.ndim - f.ndim))
    return shift_teacher(L, f, E)


def saved_supervised(d, where: str = "saved distillation fit") -> SupervisedScalingLaw:
    """The supervised law a distillation fit keeps in ``meta.supervised_fit`` (its own saved
    fit), validated and rebuilt exactly (bit for bit: the same intervals as in memory)."""
    check_supervised_fit(d, where)
    res = FitResult.from_dict(copy.deepcopy(dict(d)), where, "meta.supervised_fit")
    return SupervisedScalingLaw.from_result(res)
