"""Intervals of a distillation plan: the plan re-solved under each bootstrap draw of the law
(`plan_interval`; where the scenario trains or runs a teacher, with that draw's teacher shift,
`teacher_uncertainty`), with the shared draw helpers used by the crossover and ratio intervals."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..laws import get_law
from ..params import check
from ..uncertainty.percentile import interval_from_draws
from .model import DistillationScalingLaw
from .planning import VAR_MAX, VAR_MIN, Scenario, get_scenario, plan_distillation
from .teacher_uncertainty import plan_teacher_log_sd, teacher_scores

PLAN_INTERVAL_KEYS = (
    "student_loss",
    "student_tokens",
    "teacher_params",
    "teacher_tokens",
    "teacher_loss",
)

BOUNDED_KEYS = ("student_tokens", "teacher_params", "teacher_tokens")  # App. D.4 bounds


def _snap(v: np.ndarray) -> np.ndarray:
    """Values within rounding (1e-9) of the search bounds VAR_MIN, VAR_MAX set onto them."""
    for b in (VAR_MIN, VAR_MAX):
        v = np.where(np.abs(v / b - 1.0) < 1e-9, b, v)
    return v


def _draw_models(model: DistillationScalingLaw, max_draws: int, teacher_sd=None):
    """A shallow copy of `model` per parameter draw (`model.parameter_draws()`, the first
    `max_draws`), its coefficients set to that draw: what every interval here re-solves. With
    `teacher_sd` (s_T per plan point), draw b's teacher losses L also become
    E + (L - E) exp(u_b s_T) (`teacher_uncertainty.teacher_scores` over the draws used)."""
    import copy

    law = get_law("busbridge-distillation")
    draws = model.parameter_draws()[: int(max_draws)]
    u = teacher_scores(len(draws)) if teacher_sd is not None else None
    for b, th in enumerate(draws):
        m = copy.copy(model)
        m.params_ = law.to_natural(th)
        if u is not None:
            m._teacher_shift = np.exp(u[b] * np.asarray(teacher_sd, float))
        yield m


def _check_draw_args(level: float, max_draws: int | None = None) -> None:
    check("level", level)
    if max_draws is not None and int(max_draws) < 2:
        raise InputError(f"max_draws must be >= 2, got {max_draws}")


def plan_interval(
    model: DistillationScalingLaw,
    N_S,
    C,
    scenario: str | Scenario = "best-case",
    level: float = 0.9,
    max_draws: int = 100,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Intervals of the compute-optimal plan (Eq. 10) over the parameter draws.

    Every draw of `model.parameter_draws()` (bootstrap refits, or draws from the published
    intervals of a preset; at most `max_draws`, the first ones) is re-planned; the percentile
    interval of each output is reported. The student loss is a prediction interval (run noise
    `model.noise_scale_` added on log L_S, as in `predict_interval`); the allocations (D_S*,
    N_T*, D_T*, L_T*) are confidence intervals of the optimiser's choice. Allocations pinned by
    the scenario (D_S* in the best case, D_T* at its bound with teacher inference) come out
    degenerate. Each interval is widened to hold the plan itself where the draws' percentiles
    miss it (few draws, or an optimum at a bound). Where the scenario trains or runs the teacher
    (L_T* = L(N_T*, D_T*), a forecast), each draw's teacher losses L become
    E + (L - E) exp(u_b s_T), s_T from the supervised law's 90% interval at the point plan's
    (N_T*, D_T*) (`teacher_uncertainty.teacher_log_sd`), so L_T* and
    L_S* carry the teacher's uncertainty. Returns {key: (lo, hi)} for PLAN_INTERVAL_KEYS,
    arrays of the broadcast shape.
    """
    _check_draw_args(level)
    outs: dict[str, list] = {k: [] for k in PLAN_INTERVAL_KEYS}
    scenario = get_scenario(scenario)
    p = plan_distillation(model, N_S, C, scenario)  # validates; its shape for the output
    sd = plan_teacher_log_sd(model, p, scenario)
    for m in _draw_models(model, max_draws, sd):
        try:
            q = plan_distillation(m, N_S, C, scenario)
        except InputError:  # this draw has no feasible plan: left out of the percentiles
            for k in PLAN_INTERVAL_KEYS:
                outs[k].append(np.full(np.shape(getattr(p, k)), np.nan))
            continue
        for k in PLAN_INTERVAL_KEYS:
            outs[k].append(np.log(np.asarray(getattr(q, k), float)))
    res = {}
    for k, v in outs.items():
        T = np.stack(v).reshape(len(v), -1)
        sigma = model.noise_scale_ if k == "student_loss" else 0.0
        lo, hi = interval_from_draws(T, sigma, level)
        point = np.asarray(getattr(p, k), float).ravel()
        lo, hi = np.exp(lo), np.exp(hi)
        if k in BOUNDED_KEYS:  # exp(log(1e17)) is 1.0000000000000001e17: snap to the bound
            lo, hi = _snap(lo), _snap(hi)
        lo, hi = np.fmin(lo, point), np.fmax(hi, point)  # holds the plan itself
        shape = np.shape(getattr(p, k))
        res[k] = (lo.reshape(shape), hi.reshape(shape))
    return res
