"""Distillation against supervised training at equal compute (Busbridge et al. 2025, Sec. 5):
the crossover compute where distillation stops helping, the token and compute ratios, and
their intervals over the law's bootstrap draws."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from ..compute.flops import forward_flops_per_token as F
from ..errors import InputError
from ..uncertainty.percentile import interval_from_draws, percentile_interval
from .model import DistillationScalingLaw
from .plan_intervals import _check_draw_args, _draw_models
from .planning import VAR_MIN, Scenario, get_scenario, plan_distillation
from .teacher_uncertainty import plan_teacher_log_sd, supervised_has_interval, teacher_log_sd

AUTO = object()  # `teacher_sd` not given: the interval computes it


def crossover_compute(
    model: DistillationScalingLaw,
    N_S,
    scenario: str | Scenario = "best-case",
    c_range: tuple[float, float] = (1e18, 1e28),
    n_grid: int = 41,
    bisections: int = 20,
) -> np.ndarray:
    """The smallest compute beyond which supervised training of N_S beats compute-optimal
    distillation (Sec. 5.3, Fig. 8): the first sign change of L_S* - L~_S along log C.

    Returns C for each N_S: the lower end of the range where supervised already wins there,
    nan where distillation wins over the whole range.
    """
    N_S = np.atleast_1d(np.asarray(N_S, float))
    lo_c = np.maximum(c_range[0], 3.0 * F(N_S) * VAR_MIN * 1.01)
    t = np.linspace(0.0, 1.0, n_grid)
    logC = np.log(lo_c)[:, None] + t[None, :] * (np.log(c_range[1]) - np.log(lo_c))[:, None]
    Ng = np.broadcast_to(N_S[:, None], logC.shape)
    p = plan_distillation(model, Ng, np.exp(logC), scenario)
    gap = p.student_loss - p.supervised_loss  # > 0: supervised better
    out = np.full(N_S.size, np.nan)
    for i in range(N_S.size):
        pos = np.nonzero(gap[i] > 0)[0]
        if pos.size == 0:
            continue
        j = pos[0]
        if j == 0:
            out[i] = np.exp(logC[i, 0])
            continue
        a, b = logC[i, j - 1], logC[i, j]
        for _ in range(bisections):
            mid = 0.5 * (a + b)
            pm = plan_distillation(model, N_S[i], np.exp(mid), scenario)
            if float(pm.student_loss - pm.supervised_loss) > 0:
                b = mid
            else:
                a = mid
        out[i] = np.exp(0.5 * (a + b))
    return out


def crossover_interval(
    model: DistillationScalingLaw,
    N_S,
    scenario: str | Scenario = "best-case",
    level: float = 0.9,
    max_draws: int = 20,
    c_range: tuple[float, float] = (1e18, 1e28),
    teacher_sd=AUTO,
    **kw,
) -> tuple[np.ndarray, np.ndarray]:
    """Confidence interval of `crossover_compute` over the distillation law's parameter draws
    (`model.parameter_draws()`, the first `max_draws`; each draw re-runs the search). Where the
    scenario trains or runs the teacher (its loss a forecast of the supervised law), draw b's
    teacher losses L become E + (L - E) exp(u_b s_T), s_T at the teacher of the point plan at
    the point crossover (at c_range[1] where it never crosses), as plan intervals do
    (docs/distill_validation.md: teacher's uncertainty); the supervised comparison L~_S(N_S, C)
    stays at its point. A draw whose distillation wins over the whole range counts as beyond
    it: an upper end of inf means more than (1 - level)/2 of the draws never cross by
    c_range[1]. `teacher_sd`: s_T from `crossover_teacher_sd` where the caller has it (else it is
    computed here). Returns (lo, hi)."""
    _check_draw_args(level, max_draws)
    scenario = get_scenario(scenario)
    N = np.atleast_1d(np.asarray(N_S, float))
    beyond = np.log(c_range[1]) + 1.0  # stands for "not reached": above every real crossover
    sd = teacher_sd
    if sd is AUTO:
        sd = crossover_teacher_sd(model, N, scenario, c_range, **kw)

    def draws(sizes, s_T):  # (B, len(sizes)) log crossovers over the draws
        out = []
        for m in _draw_models(model, max_draws, s_T):
            c = crossover_compute(m, sizes, scenario, c_range=c_range, **kw)
            out.append(np.where(np.isnan(c), beyond, np.log(c)))
        return np.stack(out)

    # with a teacher term, one shift per student size: each size's search plans its own teachers
    vals = (
        draws(N, None)
        if sd is None
        else np.hstack([draws(N[i : i + 1], sd[i]) for i in range(N.size)])
    )
    lo, hi = percentile_interval(vals, level, method="inverted_cdf")
    lo, hi = (np.where(v >= beyond, np.inf, np.exp(v)) for v in (lo, hi))
    return lo, hi


def crossover_teacher_sd(
    model, N_S, scenario, c_range=(1e18, 1e28), crossover=None, **kw
) -> np.ndarray | None:
    """s_T per student size for `crossover_interval`: at the teacher of the point plan at the
    point crossover (`crossover`, computed when not given; at c_range[1] where it never
    crosses); None where the scenario has no forecast teacher or the supervised law carries no
    uncertainty (`plan_teacher_log_sd`)."""
    scenario = get_scenario(scenario)
    if not (scenario.delta_lgt or scenario.delta_pre):
        return None
    if not supervised_has_interval(model.supervised_):  # s_T = 0 everywhere: no point search
        return None
    N = np.atleast_1d(np.asarray(N_S, float))
    if crossover is None:
        c = crossover_compute(model, N, scenario, c_range=c_range, **kw)
    else:
        c = np.broadcast_to(np.asarray(crossover, float), N.shape)
    point = plan_distillation(model, N, np.where(np.isnan(c), c_range[1], c), scenario)
    return plan_teacher_log_sd(model, point, scenario)


def ratio_teacher_sd(model, N_S, target_loss, scenario, point=None) -> np.ndarray | None:
    """s_T per (N_S, target) pair for `ratio_interval`: at each pair's point-plan teacher (0
    where the pair has no plan; `point`: the point ratios' table where the caller has it);
    None as in `crossover_teacher_sd`."""
    scenario = get_scenario(scenario)
    if not (scenario.delta_lgt or scenario.delta_pre):
        return None
    if not supervised_has_interval(model.supervised_):  # s_T = 0 everywhere: no point ratios
        return None
    pt = point
    if pt is None:
        pt = distillation_vs_supervised_ratios(model, N_S, target_loss, scenario)
    NT, DT = pt["teacher_params"].to_numpy(float), pt["teacher_tokens"].to_numpy(float)
    has = np.isfinite(NT) & np.isfinite(DT)
    sd = np.zeros(len(pt))
    if has.any():
        sd[has] = teacher_log_sd(model, NT[has], DT[has])
    return sd if np.any(sd > 0) else None


def supervised_tokens_for_loss(model: DistillationScalingLaw, N_S, L) -> np.ndarray:
    """Tokens D with L(N_S, D) = L under the supervised law (Eq. 1 inverted): D = (B / ((L -
    E)^(1/gamma) - A/N_S^alpha))^(1/beta); inf where L <= L(N_S, inf) (Eq. 35: unreachable)."""
    p = model.supervised_.params_
    N_S, L = np.broadcast_arrays(np.asarray(N_S, float), np.asarray(L, float))
    g = p.get("gamma", 1.0)
    with np.errstate(all="ignore"):
        bd = np.maximum(L - p["E"], 0.0) ** (1.0 / g) - p["A"] / N_S ** p["alpha"]
        return np.where(bd > 0, (p["B"] / bd) ** (1.0 / p["beta"]), np.inf)


RATIO_COLUMNS = (
    "scenario",
    "student_params",
    "target_loss",
    "supervised_limit",
    "supervised_tokens",
    "supervised_flops",
    "distillation_flops",
    "student_tokens",
    "teacher_params",
    "teacher_tokens",
    "teacher_loss",
    "distillation_tokens",
    "compute_ratio",
    "token_ratio",
)


def distillation_vs_supervised_ratios(
    model: DistillationScalingLaw,
    N_S,
    target_loss,
    scenario: str | Scenario = "best-case",
    max_ratio: float = 1e3,
    bisections: int = 48,
) -> pd.DataFrame:
    """Compute and token ratios of compute-optimal distillation to supervised training at equal
    student size and loss (App. D.5, Figs. 33-34).

    For each (N_S, L_S target), broadcast together: supervised training needs D_sup tokens with
    L(N_S, D_sup) = target (Eq. 1 inverted) and C_sup = 3F(N_S) D_sup FLOPs. Distillation needs
    the smallest budget C_dist whose compute-optimal plan (Eq. 10, `plan_distillation`) reaches
    the target: L_S*(C) is non-increasing in C (a larger budget can always replay a smaller
    budget's plan with more student tokens), so C_dist is found by bisection on log C. Tokens
    follow Eq. 34: D_Dist = D_S + delta_Pre D_T (teacher tokens count only when the teacher's
    pretraining is paid for). compute_ratio = C_dist / C_sup, token_ratio = D_Dist / D_sup;
    < 1 means distillation is cheaper. Targets at or below the supervised limit L(N_S, inf)
    (Eq. 35), and targets supervised training reaches in fewer than VAR_MIN = 1e6 tokens (the
    smallest budget of App. D.4: nothing to compare), give nan ratios; distillation budgets
    beyond `max_ratio` x C_sup give inf.
    Returns a DataFrame with RATIO_COLUMNS, one row per pair.
    """
    s = get_scenario(scenario)
    N_S, L = np.broadcast_arrays(np.asarray(N_S, float), np.asarray(target_loss, float))
    N, L = N_S.ravel(), L.ravel()
    if not np.all(np.isfinite(N)) or np.any(N <= 0):
        raise InputError("student parameters must be positive and finite")
    if not np.all(np.isfinite(L)) or np.any(L <= 0):
        raise InputError("target losses must be positive and finite")
    if not max_ratio > 1:
        raise InputError(f"max_ratio must be > 1, got {max_ratio}")
    shift = getattr(model, "_teacher_shift", None)
    FS = F(N)
    D_sup = supervised_tokens_for_loss(model, N, L)
    C_sup = 3.0 * FS * D_sup
    limit = model.supervised_loss(N, np.full(N.size, np.inf))
    # a target supervised training reaches in under VAR_MIN tokens (e.g. 1e308) is below the
    # planner's smallest budget: no ratio (was inf, "not reached", from C_dist / 0)
    ok = np.isfinite(C_sup) & (D_sup >= VAR_MIN)
    out = {k: np.full(N.size, np.nan) for k in RATIO_COLUMNS[4:]}
    out["supervised_tokens"], out["supervised_flops"] = np.where(ok, D_sup, np.nan), C_sup
    out["supervised_flops"] = np.where(ok, C_sup, np.nan)
    if ok.any():
        Nk, Lk, Ck = N[ok], L[ok], C_sup[ok]
        if np.ndim(shift) == 1 and np.size(shift) == N.size:  # a ratio interval's draw, per pair
            model = copy.copy(model)
            model._teacher_shift = np.asarray(shift)[ok]
        # the smallest budget every scenario can spend: student and teacher at the token bound
        c_min = 3.0 * F(Nk) * VAR_MIN * 1.01 + (3.0 + s.delta_lgt) * F(VAR_MIN) * VAR_MIN * 4.0
        lo = np.log(c_min)
        hi = np.log(np.maximum(Ck * max_ratio, c_min * 10.0))

        def loss_at(logc):
            return plan_distillation(model, Nk, np.exp(logc), s).student_loss

        reach_hi = loss_at(hi) <= Lk
        below_lo = loss_at(lo) <= Lk  # reached at the smallest feasible budget
        a, b = lo.copy(), hi.copy()
        for _ in range(bisections):
            mid = 0.5 * (a + b)
            hit = loss_at(mid) <= Lk
            a, b = np.where(hit, a, mid), np.where(hit, mid, b)
        logc = np.where(below_lo, lo, b)
        p = plan_distillation(model, Nk, np.exp(logc), s)
        C_dist = np.where(reach_hi, p.flops, np.inf)
        D_dist = np.where(reach_hi, p.student_tokens + s.delta_pre * p.teacher_tokens, np.inf)
        for k, v in (
            ("distillation_flops", C_dist),
            ("student_tokens", p.student_tokens),
            ("teacher_params", p.teacher_params),
            ("teacher_tokens", p.teacher_tokens),
            ("teacher_loss", p.teacher_loss),
            ("distillation_tokens", D_dist),
            ("compute_ratio", C_dist / Ck),
            ("token_ratio", D_dist / D_sup[ok]),
        ):
            v = np.asarray(v, float)
            if k not in (
                "distillation_flops",
                "distillation_tokens",
                "compute_ratio",
                "token_ratio",
            ):
                v = np.where(reach_hi, v, np.nan)
            out[k][ok] = v
    df = pd.DataFrame({"student_params": N, "target_loss": L, "supervised_limit": limit, **out})
    df.insert(0, "scenario", s.name)
    return df[list(RATIO_COLUMNS)]


def ratio_interval(
    model: DistillationScalingLaw,
    N_S,
    target_loss,
    scenario: str | Scenario = "best-case",
    level: float = 0.9,
    max_draws: int = 20,
    teacher_sd=AUTO,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Confidence intervals of `distillation_vs_supervised_ratios`' compute and token ratios
    over the distillation law's parameter draws (`model.parameter_draws()`, the first
    `max_draws`; each draw re-runs the bisection). Where the scenario trains or runs the
    teacher, draw b's teacher losses L become E + (L - E) exp(u_b s_T), s_T at each pair's
    point-plan teacher (as plan intervals do: docs/distill_validation.md); the
    supervised side (its tokens for the target) stays at its point. A draw that cannot reach
    the target within the search range contributes inf (so a hi of inf means some draws never
    reach it). `teacher_sd`: s_T from `ratio_teacher_sd` where the caller has it. Returns
    {"compute_ratio": (lo, hi), "token_ratio": (lo, hi)}, arrays over the broadcast pairs."""
    _check_draw_args(level, max_draws)
    scenario = get_scenario(scenario)
    sd = ratio_teacher_sd(model, N_S, target_loss, scenario) if teacher_sd is AUTO else teacher_sd
    keys = ("compute_ratio", "token_ratio")
    outs: dict[str, list] = {k: [] for k in keys}
    for m in _draw_models(model, max_draws, sd):
        df = distillation_vs_supervised_ratios(m, N_S, target_loss, scenario)
        for k in keys:
            with np.errstate(divide="ignore"):
                outs[k].append(np.log(df[k].to_numpy(float)))
    return {k: tuple(np.exp(interval_from_draws(np.stack(v), 0.0, level))) for k, v in outs.items()}
