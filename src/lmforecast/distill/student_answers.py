"""What `distill predict`, `distill plan` and `distill choose-teacher` print, built by the
library (Busbridge et al. 2025): the student forecast of Eq. 8 with its interval and the
distill-or-train verdict, the compute-optimal plan of Eq. 10 with its intervals and the search
bounds it reaches (App. D.4), and a ranking of candidate teachers; each warns (DomainWarning)
where its inputs leave the runs behind the coefficients or look like a units mistake
(`distill.checks`). `labels` name the inputs as the caller gave them (flags on the command
line, argument names in Python)."""

from __future__ import annotations

import warnings

import numpy as np

from ..data.validate import check_teachers
from ..errors import DomainWarning, InputError
from ..forecast import Answer
from .checks import fmt_loss, pinned_note, range_notes, units_notes, verdict_text
from .plan_intervals import plan_interval
from .planning import (
    VAR_MAX,
    VAR_MIN,
    choose_teacher,
    choose_teacher_notes,
    plan_distillation,
    plan_notes,
)
from .teacher_uncertainty import plan_teacher_log_sd, teacher_basis, teacher_log_sd
from .verdicts import NO_DRAWS, student_forecast

#: how the inputs are named in notes by default (the Python arguments)
LABELS = {
    "N_S": "student_params",
    "D_S": "student_tokens",
    "N_T": "teacher_params",
    "D_T": "teacher_tokens",
    "L_T": "teacher_loss",
    "top": "top",
}


def warn_notes(notes) -> None:
    """Each note as one warning (DomainWarning: the command line prints one line each)."""
    for n in notes:
        warnings.warn(n, DomainWarning, stacklevel=3)


# ---- predict -------------------------------------------------------------------------------
def _helps(v: str, sup: float, level: float) -> str:
    return {"distill": "distillation helps", "train supervised": "distillation does not help"}.get(
        v, f"distillation vs supervised: {verdict_text(v, sup, level)}"
    )


def predict_text(out: dict, level: float) -> str:
    """The student forecast (`student_forecast(...).to_dict()`) in one line."""
    iv = out["interval"]
    if iv is not None:
        band = f" [{100 * level:g}% interval {fmt_loss(iv[0])} to {fmt_loss(iv[1])}]"
    else:
        note = out["interval_note"]
        band = f" [{note if note.startswith('no interval') else 'no interval: ' + note}]"
    sup = out["supervised_loss"]
    return (
        f"student L_S = {fmt_loss(out['student_loss'])}{band}  (teacher L_T = "
        f"{fmt_loss(out['teacher_loss'])}; supervised student L~_S = {fmt_loss(sup)}; "
        f"{_helps(out['verdict'], sup, level)})"
        + (f"\n  interval: {out['interval_basis']}" if iv is not None else "")
    )


def predict_answer(
    m, N_S, D_S, *, level, teacher_loss=None, teacher_params=None, teacher_tokens=None, labels=None
) -> Answer:
    """The student's loss L_S (Eq. 8) for a teacher given by its loss or by its size and tokens,
    its interval, the supervised student and the verdict; warns where the inputs leave the
    coefficients' runs or look like a units mistake."""
    lab = LABELS | (labels or {})
    if teacher_params is not None and teacher_tokens is None:
        raise InputError(f"{lab['N_T']} needs {lab['D_T']}")
    if teacher_loss is not None and teacher_tokens is not None:
        raise InputError(f"{lab['D_T']} goes with {lab['N_T']}, not {lab['L_T']}")
    if teacher_loss is not None and teacher_loss <= m.E_:
        raise InputError(
            f"{lab['L_T']} {teacher_loss:g} is at or below the irreducible loss E = {m.E_:.4g} "
            "of the supervised law: no teacher reaches it (Eq. 8 needs L_T > E)"
        )
    by_size = teacher_params is not None
    LT = float(m.teacher_loss(teacher_params, teacher_tokens)) if by_size else float(teacher_loss)
    where = {"N_S": lab["N_S"], "D_S": lab["D_S"], "N": lab["N_T"]}
    where["L_T"] = f"teacher L_T (from {lab['N_T']}/{lab['D_T']})" if by_size else lab["L_T"]
    notes = units_notes(N_S, D_S, lab["N_S"], lab["D_S"])
    if by_size:
        notes += units_notes(teacher_params, teacher_tokens, lab["N_T"], lab["D_T"])
    warn_notes(notes + range_notes(m, where, N_S=N_S, D_S=D_S, L_T=LT, N=teacher_params))
    teacher = (
        {"teacher_params": teacher_params, "teacher_tokens": teacher_tokens}
        if by_size
        else {"teacher_loss": LT}
    )
    out = student_forecast(m, N_S, D_S, level=level, **teacher).to_dict()
    return Answer(out, predict_text(out, level))


# ---- plan ----------------------------------------------------------------------------------
def _interval_fields(m, level, compute) -> dict:
    """The JSON interval fields: "interval": [lo, hi] and "level", or null with a note when the
    coefficients carry no draws (a fit saved with bootstrap 0)."""
    if not m.has_intervals():
        return {"interval": None, "level": level, "interval_note": NO_DRAWS}
    lo, hi = compute()
    return {
        "interval": [float(lo), float(hi)],
        "level": level,
        "interval_basis": m.interval_basis(),
    }


def _at_bound(v: float) -> bool:
    return any(abs(v / b - 1.0) < 1e-6 for b in (VAR_MIN, VAR_MAX))


def plan_answer(m, N_S: float, C: float, scenario, level: float) -> Answer:
    """The compute-optimal distillation plan (Eq. 10) for a student of N_S parameters at C
    FLOPs in `scenario` (a `planning.Scenario`), its intervals (the teacher's forecast
    uncertainty added where the scenario trains the teacher) and the verdict."""
    p = plan_distillation(m, N_S, C, scenario)
    warn_notes(plan_notes(m, p))
    d = p.to_dict()
    ivs = {}

    def compute():
        ivs.update(plan_interval(m, N_S, C, scenario, level))
        return ivs["student_loss"]

    d.update(_interval_fields(m, level, compute))
    if ivs:
        d["intervals"] = {k: [float(lo), float(hi)] for k, (lo, hi) in ivs.items()}
        p.student_loss_lo, p.student_loss_hi = ivs["student_loss"]
        if scenario.delta_lgt or scenario.delta_pre:  # L_T* = L(N_T*, D_T*), a forecast
            sd = plan_teacher_log_sd(m, p, scenario)
            d["interval_basis"] += "; " + teacher_basis(0.0 if sd is None else sd)
    d["verdict"] = p.verdict
    d["at_search_bound"] = [
        k for k in ("student_tokens", "teacher_params", "teacher_tokens") if _at_bound(d[k])
    ]
    return Answer(d, _plan_text(d, N_S, C, scenario, level))


def _plan_text(d: dict, N_S: float, C: float, scenario, level: float) -> str:
    fl = d["flops"]
    tot = sum(fl.values())
    ivs = d.get("intervals", {})

    def val(k):
        band = f" [{ivs[k][0]:.4g}, {ivs[k][1]:.4g}]" if k in ivs else ""
        bound = " (at the search bound, App. D.4)" if k in d["at_search_bound"] else ""
        return f"{d[k]:.4g}{band}{bound}"

    def loss(k):
        band = f" [{fmt_loss(ivs[k][0])}, {fmt_loss(ivs[k][1])}]" if k in ivs else ""
        return f"{fmt_loss(d[k])}{band}"

    sup = d["supervised_loss"]
    return (
        f"{scenario.name}: N_S = {N_S:.4g}, C = {C:.4g} FLOPs"
        + (f"  ({100 * level:g}% intervals in brackets)" if ivs else "")
        + f"\n  student tokens D_S* = {val('student_tokens')}\n"
        f"  teacher N_T* = {val('teacher_params')}, D_T* = {val('teacher_tokens')}, "
        f"L_T* = {loss('teacher_loss')}\n"
        f"  student L_S* = {loss('student_loss')}   supervised at same compute = "
        f"{fmt_loss(sup)}   -> {verdict_text(d['verdict'], sup, level)}\n"
        f"  compute split: student {fl['student_training'] / tot:.1%}, teacher inference "
        f"{fl['teacher_inference'] / tot:.1%}, teacher pretraining "
        f"{fl['teacher_pretraining'] / tot:.1%}"
        + (
            f"\n  intervals: {d['interval_basis']}"
            if ivs
            else f"\n  no interval: {d['interval_note']}"
        )
        + (
            "\n  D_T* at the bound: a teacher that exists is trained as long as the search "
            "allows (Sec. 5.3, finding 5); the bound is App. D.4's, not a recommendation"
            if "teacher_tokens" in d["at_search_bound"]
            else ""
        )
    )


# ---- choose-teacher ------------------------------------------------------------------------
def choose_notes(m, t, teachers, N_S, D_S=None, labels=None) -> list[str]:
    """Units and range notes for a teacher ranking `t` of `teachers`: the student, and the
    teachers forecast (rows with a finite L_S; a teacher over the budget, its row empty, was
    never forecast and is left out of the range notes' values and counts)."""
    lab = LABELS | (labels or {})
    ok = np.isfinite(t["L_S"].to_numpy(float))
    DS = t.loc[ok, "D_S"].to_numpy(float) if ok.any() else None
    notes = units_notes(N_S, D_S, lab["N_S"], lab["D_S"])
    if {"N_T", "D_T"} <= set(teachers.columns):
        notes += units_notes(
            teachers["N_T"].to_numpy(float),
            teachers["D_T"].to_numpy(float),
            "teachers column 'N_T':",
            "teachers column 'D_T':",
        )
    where = {"N_S": lab["N_S"], "N": "teacher N_T", "L_T": "teacher L_T"}
    where["D_S"] = lab["D_S"] if D_S else "D_S (what the budget leaves)"
    LT = t.loc[ok, "L_T"].to_numpy(float) if ok.any() else None
    NT = t.loc[ok, "N_T"].to_numpy(float) if ok.any() and "N_T" in t.columns else None
    return notes + range_notes(m, where, N_S=N_S, D_S=DS, L_T=LT, N=NT)


def _choose_basis(m, t, by_size: bool) -> str:
    """The interval basis of a ranking; with teachers given by size and tokens, the teacher
    line with the sd range over the teachers that got an interval (`teacher_basis`)."""
    if not by_size:
        return m.interval_basis()
    ok = t["L_S"].notna().to_numpy()
    sd = teacher_log_sd(m, t.loc[ok, "N_T"].to_numpy(float), t.loc[ok, "D_T"].to_numpy(float))
    return m.interval_basis() + "; " + teacher_basis(sd)


def choose_teacher_answer(
    m,
    teachers,
    N_S,
    *,
    D_S=None,
    C=None,
    scenario="teacher-inference",
    level=0.9,
    top=None,
    labels=None,
) -> Answer:
    """Rank the candidate `teachers` (`planning.choose_teacher`) for a student of N_S
    parameters (with D_S tokens, or what compute C leaves), warning where the list is cut to
    `top`, where the inputs leave the coefficients' runs or look like a units mistake, and
    with the planner's notes; the ranking as `choose_answer`."""
    lab = LABELS | (labels or {})
    check_teachers(teachers)
    t = choose_teacher(m, teachers, N_S, D_S=D_S, C=C, scenario=scenario, level=level, top=top)
    if len(teachers) > len(t):
        warnings.warn(
            f"showing the best {len(t):,} of {len(teachers):,} teachers ({lab['top']} to change)",
            DomainWarning,
            stacklevel=2,
        )
    warn_notes(choose_notes(m, t, teachers, N_S, D_S, labels))
    for note in choose_teacher_notes(t, C, scenario, D_S=D_S):
        warnings.warn(note, DomainWarning, stacklevel=2)
    return choose_answer(m, t, level, "L_T" not in teachers.columns)


def choose_answer(m, t, level: float, by_size: bool) -> Answer:
    """A teacher ranking `t` (`planning.choose_teacher`) as the best teacher with its interval
    (or the note why there is none) and the whole ranking, in JSON and as a table."""
    best = t.iloc[0].to_dict()
    out = {"best": best, "ranking": t.to_dict(orient="records"), "level": level}
    out["interval"] = [best["L_S_lo"], best["L_S_hi"]] if "L_S_lo" in best else None
    out["interval_basis"] = _choose_basis(m, t, by_size)
    if out["interval"] is None:
        out["interval_note"] = NO_DRAWS
    elif best.get("interval_pinned"):
        out.update(
            interval=None, interval_note="no interval: " + pinned_note(best["L_S"], best["L_T"])
        )
    return Answer(out, _choose_text(m, t, level, by_size))


def _choose_text(m, t, level: float, by_size: bool) -> str:
    show = t.copy()
    pin = show.get("interval_pinned")
    if pin is not None:
        pin = pin.astype(bool)
        show = show.drop(columns="interval_pinned")
        for c in ("L_S_lo", "L_S_hi"):
            show[c] = [
                ("-" if p else f"{v:.4g}") if v == v else "NaN" for v, p in zip(show[c], pin)
            ]
    text = show.to_string(index=False, float_format=lambda v: f"{v:.4g}")
    if "L_S_lo" in t.columns:
        text += f"\nL_S_lo, L_S_hi: {100 * level:g}% prediction interval of L_S; " + _choose_basis(
            m, t, by_size
        )
        if pin is not None and pin.any():
            row = t[pin].iloc[0]
            text += "\n-: no interval: " + pinned_note(row["L_S"], row["L_T"])
    else:
        text += f"\nno interval: {NO_DRAWS}"
    return text
