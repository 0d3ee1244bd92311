"""What `distill crossover` and `distill ratios` print, built by the library (Busbridge et al.
2025, Sec. 5 and App. D): the compute beyond which supervised training beats distillation
for a student size, and the compute / token cost of distillation relative to supervised
training at equal student size and loss, each with its interval over the law's parameter
draws (the teacher's own forecast uncertainty added where the scenario forecasts it)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import InputError
from ..forecast import Answer
from .planning import SCENARIOS, get_scenario
from .teacher_uncertainty import teacher_basis
from .versus_supervised import (
    crossover_compute,
    crossover_interval,
    crossover_teacher_sd,
    distillation_vs_supervised_ratios,
    ratio_interval,
    ratio_teacher_sd,
)

CROSS_BASIS = (
    "confidence interval over the first {k} parameter draws of the distillation law; supervised "
    "comparison at its point estimate; no model-form error"
)
RATIO_BASIS = (
    "confidence intervals over the first {k} parameter draws of the distillation law (supervised "
    "tokens at their point estimate; no model-form error)"
)
RATIO_NOTE = (
    "ratio = distillation / supervised at equal N_S and L_S (< 1: distillation cheaper); tokens "
    "per Eq. 34: D_S + D_T when teacher pretraining is paid; nan: target at or below the "
    "supervised limit, or reached supervised in under 1e6 tokens (below the planner's smallest "
    "budget: no ratio); inf: not reached within 1000x the supervised compute"
)
NO_DRAWS = "no interval: the coefficients carry no parameter draws (fit saved with --bootstrap 0)"


def _check_draws(draws: int) -> None:
    if draws < 0 or draws == 1:
        raise InputError(f"--draws must be 0 or >= 2, got {draws}")


def crossover_answer(model, N_S: float, scenario: str, level: float, draws: int) -> Answer:
    """The crossover compute of `scenario` for a student of N_S parameters (NaN: distillation
    wins over the whole range 1e18-1e28 FLOPs) with its interval over `draws` parameter draws."""
    _check_draws(draws)
    sc = get_scenario(scenario)
    c = float(crossover_compute(model, N_S, sc)[0])
    iv, basis = None, CROSS_BASIS.format(k=draws)
    if draws and model.has_intervals():
        sd = crossover_teacher_sd(model, N_S, sc, crossover=c)
        lo, hi = crossover_interval(model, N_S, sc, level, draws, teacher_sd=sd)
        iv = [float(lo[0]), float(hi[0])]
        if sc.delta_lgt or sc.delta_pre:  # the teacher's loss is a forecast here
            basis += "; " + teacher_basis(0.0 if sd is None else sd)
    fields: dict = {"crossover_flops": c, "scenario": sc.name}
    if c != c:
        lines = [f"{sc.name}: distillation beats supervised over the whole range 1e18-1e28"]
    else:
        lines = [f"{sc.name}: supervised beats distillation beyond C = {c:.3g} FLOPs"]
    notes = ()
    if iv is not None:
        fields.update(
            interval=[v if math.isfinite(v) else "inf" for v in iv],
            level=level,
            interval_basis=basis,
        )
        hi = f"{iv[1]:.3g}" if math.isfinite(iv[1]) else "beyond 1e28"
        lo = f"{iv[0]:.3g}" if math.isfinite(iv[0]) else "beyond 1e28"
        lines.append(f"{100 * level:g}% interval: {lo} .. {hi} FLOPs ({basis})")
    elif draws:
        lines.append(NO_DRAWS)
        notes = (NO_DRAWS,)
    return Answer(fields, "\n".join(lines), notes)


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else "inf"
    return v


RATIO_COLUMNS = (
    "scenario",
    "target_loss",
    "compute_ratio",
    "token_ratio",
    "supervised_tokens",
    "student_tokens",
    "teacher_tokens",
    "teacher_loss",
)


def ratios_answer(model, N_S: float, target_loss, scenario: str, level: float, draws: int):
    """Distillation / supervised compute and token ratios for a student of N_S parameters at
    each target loss, for one scenario or "all", with intervals over `draws` parameter draws."""
    _check_draws(draws)
    if draws and not model.has_intervals():
        raise InputError(f"--draws: {NO_DRAWS[len('no interval: ') :]}")
    names = list(SCENARIOS) if scenario == "all" else [get_scenario(scenario).name]
    frames, sds = [], []
    for s in names:
        f = distillation_vs_supervised_ratios(model, N_S, target_loss, s)
        if draws:
            sd = ratio_teacher_sd(model, N_S, target_loss, s, point=f)
            iv = ratio_interval(model, N_S, target_loss, s, level, draws, teacher_sd=sd)
            for k, (lo, hi) in iv.items():
                f[f"{k}_lo"], f[f"{k}_hi"] = lo, hi
            if get_scenario(s).delta_lgt or get_scenario(s).delta_pre:  # a forecast teacher
                sds.append(np.zeros(1) if sd is None else sd)
        frames.append(f)
    basis = RATIO_BASIS.format(k=draws)
    if sds:
        basis = basis[:-1] + "; " + teacher_basis(np.concatenate(sds)) + ")"
    df = pd.concat(frames, ignore_index=True)
    rows = [{k: _clean(v) for k, v in r.items()} for r in df.to_dict(orient="records")]
    fields: dict = {"rows": rows, "note": RATIO_NOTE}
    cols = list(RATIO_COLUMNS)
    if draws:
        fields.update(level=level, interval_basis=basis)
        cols[4:4] = ["compute_ratio_lo", "compute_ratio_hi", "token_ratio_lo", "token_ratio_hi"]
    text = (
        f"N_S = {N_S:.4g}; supervised limit L(N_S, inf) = "
        f"{float(df['supervised_limit'].iloc[0]):.4f}\n"
        + df[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}")
        + f"\n{RATIO_NOTE}"
        + (f"\n{100 * level:g}% intervals: " + basis if draws else "")
    )
    return Answer(fields, text, (RATIO_NOTE,))
