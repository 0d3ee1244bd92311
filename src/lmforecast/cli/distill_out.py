"""What `lmforecast distill predict|plan|choose-teacher|fit` say besides their numbers: the
honesty notes of `distill.checks` (range, units), verdicts that the interval may leave open,
intervals pinned to zero width, and the text lines (cli/distill.py wires the flags)."""

from __future__ import annotations

import warnings

import numpy as np

from ..distill.checks import (
    fmt_loss,
    pinned_note,
    range_notes,
    units_notes,
    verdict_text,
)
from ..distill.planning import VAR_MAX, VAR_MIN, plan_notes
from ..distill.teacher_uncertainty import plan_teacher_log_sd, teacher_basis, teacher_log_sd
from ..distill.verdicts import NO_DRAWS, student_forecast
from ..errors import DomainWarning


def warn_notes(notes) -> None:
    """Each note as one warning line (DomainWarning: the CLI prints one line each)."""
    for n in notes:
        warnings.warn(n, DomainWarning, stacklevel=2)


def interval_fields(m, level, compute) -> dict:
    """The JSON interval fields: "interval": [lo, hi] and "level", or null with a note when the
    coefficients carry no draws (a fit saved with --bootstrap 0)."""
    if not m.has_intervals():
        return {"interval": None, "level": level, "interval_note": NO_DRAWS}
    lo, hi = compute()
    return {
        "interval": [float(lo), float(hi)],
        "level": level,
        "interval_basis": m.interval_basis(),
    }


# ---- predict -------------------------------------------------------------------------------
def predict(m, args) -> dict:
    """`distill predict`: L_S (Eq. 8), its interval, the supervised student and the verdict;
    warns where the inputs leave the coefficients' runs or look like a units mistake."""
    by_size = args.teacher_params is not None
    LT = (
        float(m.teacher_loss(args.teacher_params, args.teacher_tokens))
        if by_size
        else float(args.teacher_loss)
    )
    NS, DS = args.student_params, args.student_tokens
    labels = {
        "N_S": "--student-params",
        "D_S": "--student-tokens",
        "N": "--teacher-params",
        "L_T": "teacher L_T (from --teacher-params/--teacher-tokens)"
        if by_size
        else "--teacher-loss",
    }
    notes = units_notes(NS, DS, "--student-params", "--student-tokens")
    if by_size:
        notes += units_notes(
            args.teacher_params, args.teacher_tokens, "--teacher-params", "--teacher-tokens"
        )
    warn_notes(notes + range_notes(m, labels, N_S=NS, D_S=DS, L_T=LT, N=args.teacher_params))
    teacher = (
        {"teacher_params": args.teacher_params, "teacher_tokens": args.teacher_tokens}
        if by_size
        else {"teacher_loss": LT}
    )
    return student_forecast(m, NS, DS, level=args.level, **teacher).to_dict()


def _helps(v: str, sup: float, level: float) -> str:
    return {"distill": "distillation helps", "train supervised": "distillation does not help"}.get(
        v, f"distillation vs supervised: {verdict_text(v, sup, level)}"
    )


def predict_text(out: dict, level: float) -> str:
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


# ---- plan ----------------------------------------------------------------------------------
def plan(m, args, scenario) -> dict:
    """`distill plan`: the compute-optimal plan (Eq. 10), its intervals and the verdict."""
    from ..distill.plan_intervals import plan_interval
    from ..distill.planning import plan_distillation

    p = plan_distillation(m, args.student_params, args.flops, scenario)
    warn_notes(plan_notes(m, p))
    d = p.to_dict()
    ivs = {}

    def compute():
        ivs.update(plan_interval(m, args.student_params, args.flops, scenario, args.level))
        return ivs["student_loss"]

    d.update(interval_fields(m, args.level, compute))
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
    return d


def _at_bound(v: float) -> bool:
    return any(abs(v / b - 1.0) < 1e-6 for b in (VAR_MIN, VAR_MAX))


def plan_text(d: dict, args, scenario) -> str:
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
        f"{scenario.name}: N_S = {args.student_params:.4g}, C = {args.flops:.4g} FLOPs"
        + (f"  ({100 * args.level:g}% intervals in brackets)" if ivs else "")
        + f"\n  student tokens D_S* = {val('student_tokens')}\n"
        f"  teacher N_T* = {val('teacher_params')}, D_T* = {val('teacher_tokens')}, "
        f"L_T* = {loss('teacher_loss')}\n"
        f"  student L_S* = {loss('student_loss')}   supervised at same compute = "
        f"{fmt_loss(sup)}   -> {verdict_text(d['verdict'], sup, args.level)}\n"
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
def choose_notes(m, args, t, teachers) -> list[str]:
    """Units and range notes for `choose-teacher`: the student, and the teachers forecast
    (rows with a finite L_S; a teacher over --flops, its row empty, was never forecast and is
    left out of the range notes' values and counts)."""
    ok = np.isfinite(t["L_S"].to_numpy(float))
    DS = t.loc[ok, "D_S"].to_numpy(float) if ok.any() else None
    notes = units_notes(
        args.student_params, args.student_tokens, "--student-params", "--student-tokens"
    )
    if {"N_T", "D_T"} <= set(teachers.columns):
        notes += units_notes(
            teachers["N_T"].to_numpy(float),
            teachers["D_T"].to_numpy(float),
            "teachers column 'N_T':",
            "teachers column 'D_T':",
        )
    labels = {
        "N_S": "--student-params",
        "N": "teacher N_T",
        "L_T": "teacher L_T",
        "D_S": "--student-tokens" if args.student_tokens else "D_S (what --flops leaves)",
    }
    LT = t.loc[ok, "L_T"].to_numpy(float) if ok.any() else None
    NT = t.loc[ok, "N_T"].to_numpy(float) if ok.any() and "N_T" in t.columns else None
    return notes + range_notes(m, labels, N_S=args.student_params, D_S=DS, L_T=LT, N=NT)


def _choose_basis(m, t, by_size: bool) -> str:
    """The interval basis of a ranking; with teachers given by size and tokens, the teacher
    line with the sd range over the teachers that got an interval (`teacher_basis`)."""
    if not by_size:
        return m.interval_basis()
    ok = t["L_S"].notna().to_numpy()
    sd = teacher_log_sd(m, t.loc[ok, "N_T"].to_numpy(float), t.loc[ok, "D_T"].to_numpy(float))
    return m.interval_basis() + "; " + teacher_basis(sd)


def choose_json(m, t, level: float, by_size: bool) -> dict:
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
    return out


def choose_text(m, t, level: float, by_size: bool) -> str:
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
