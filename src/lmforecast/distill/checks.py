"""Honesty checks of distillation forecasts (Busbridge et al. 2025, Eq. 8; docs/distill.md,
"What the distillation verbs warn about"): forecasts outside the runs the coefficients were
fitted on, inputs in the wrong units, intervals the law pins to zero width, verdicts the
interval cannot settle, and suspicious rows of a runs table. Every check returns one line per
problem (never one per point); the CLI prints them as warnings."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..errors import fmt_value

#: The paper's distillation runs (Sec. 1 and 4.1, Table 13): models of 103M-12.6B non-embedding
#: parameters trained on "a few billion to 512B tokens" (1e9 to 5.12e11 taken here). The paper
#: states no range for its teachers' losses or tokens per parameter, so a preset checks only
#: these (and teacher sizes against the same models).
PAPER_RANGES: dict[str, tuple[float, float]] = {
    "N_S": (1.03e8, 1.26e10),
    "D_S": (1e9, 5.12e11),
    "N": (1.03e8, 1.26e10),
}
PAPER_SOURCE = "the paper's runs behind the published coefficients (Table 13, Sec. 4.1)"
FITTED_SOURCE = "the fitted runs"

#: A size below this many parameters is read as a units mistake (millions or billions written
#: as plain numbers); the smallest real models the package knows (the bundled zoo) have 12,480.
MIN_PARAMS = 1e4
#: Fewer tokens than this per parameter is read as a units mistake (tokens in billions).
MIN_TOKENS_PER_PARAM = 1e-3
#: A run whose student loss is this many nats below its teacher's is flagged: Eq. 8 gives
#: L_S >= L_T, and the paper's students beat weaker teachers only by a few hundredths (Sec. E.7,
#: Fig. 41) plus run noise (~0.5%, about 0.01 nats): 0.1 nats below is a swapped column or a typo.
STUDENT_BELOW_TEACHER = 0.1
#: An interval narrower than this (relative to L_S) is reported as no interval (`pinned`).
PINNED_REL_WIDTH = 1e-4

RANGE_UNITS = {
    "N_S": "parameters",
    "D_S": "tokens",
    "D_S/N_S": "",
    "L_T": "nats",
    "N": "parameters",
}
RANGE_WHAT = {
    "N_S": "student sizes N_S",
    "D_S": "student tokens D_S",
    "D_S/N_S": "tokens per parameter D_S/N_S",
    "L_T": "teacher losses L_T",
    "N": "model sizes",
}


def _arr(v) -> np.ndarray:
    return np.atleast_1d(np.asarray(v, float)).ravel()


def fitted_ranges(data: pd.DataFrame, sizes=()) -> dict[str, list[float]]:
    """[min, max] of N_S, D_S, D_S/N_S and L_T over the distillation runs `data`, and of the
    model sizes N (the students, plus `sizes`: supervised rows' N and a teacher-size column):
    saved in a fit's ``meta["ranges"]`` so later forecasts can say when they leave them."""
    N, D, L = (data[c].to_numpy(float) for c in ("N_S", "D_S", "L_T"))
    allN = np.concatenate([N, _arr(sizes)]) if np.size(sizes) else N
    out = {}
    for k, v in (("N_S", N), ("D_S", D), ("D_S/N_S", D / N), ("L_T", L), ("N", allN)):
        v = v[np.isfinite(v)]
        out[k] = [float(v.min()), float(v.max())]
    return out


def coefficient_ranges(model) -> tuple[Mapping[str, tuple[float, float]] | None, str]:
    """(ranges, source): the paper's for a preset, the fitted runs' for a fit
    (``meta["ranges"]``), (None, "") for a study's held-out refit (`studies.refit_on_subset`),
    which keeps none (no warning)."""
    meta = model.result_.meta or {}
    if meta.get("preset") is not None:
        return PAPER_RANGES, PAPER_SOURCE
    r = meta.get("ranges")
    if r:
        return {k: (float(v[0]), float(v[1])) for k, v in r.items()}, FITTED_SOURCE
    return None, ""


def _outside(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    tol = 1e-9
    return np.isfinite(v) & ((v < lo * (1 - tol)) | (v > hi * (1 + tol)))


def range_notes(model, labels: Mapping[str, str], **values) -> list[str]:
    """One line per quantity (N_S, D_S, D_S/N_S, L_T, N) whose `values` leave the range of the
    runs behind `model`'s coefficients (`coefficient_ranges`): Eq. 8 extrapolated there, and
    the interval carries no extrapolation error. `labels` name each quantity as the user gave
    it (a flag such as "--student-tokens", or "D_S*"). D_S/N_S is derived from N_S and D_S."""
    ranges, source = coefficient_ranges(model)
    if not ranges:
        return []
    vals = {k: _arr(v) for k, v in values.items() if v is not None}
    if "N_S" in vals and "D_S" in vals and "D_S/N_S" not in vals:
        n, d = np.broadcast_arrays(vals["N_S"], vals["D_S"])
        vals["D_S/N_S"] = d / n
    out = []
    for k in ("N_S", "D_S", "D_S/N_S", "L_T", "N"):
        if k not in vals or k not in ranges:
            continue
        lo, hi = ranges[k]
        v = vals[k]
        bad = _outside(v, lo, hi)
        if not bad.any():
            continue
        far = v[bad][np.argmax(np.abs(np.log(v[bad] / np.sqrt(lo * hi))))]
        label = labels.get(k, k)
        more = f" ({int(bad.sum())} of {v.size} values)" if v.size > 1 else ""
        unit = f" {RANGE_UNITS[k]}" if RANGE_UNITS[k] else ""
        out.append(
            f"{label} = {fmt_value(far)}{more} is outside the {RANGE_WHAT[k]} of {source}, "
            f"{fmt_value(lo)} to {fmt_value(hi)}{unit}: this extrapolates Eq. 8, and no "
            "interval here includes extrapolation error"
        )
    return out


def units_notes(N=None, D=None, n_label: str = "--student-params", d_label: str = "") -> list[str]:
    """A line for sizes below MIN_PARAMS parameters and for fewer than MIN_TOKENS_PER_PARAM
    tokens per parameter: numbers that look like millions or billions written plainly."""
    out = []
    if N is not None:
        n = _arr(N)
        if np.any(n < MIN_PARAMS):
            out.append(
                f"{n_label} {fmt_value(n[n < MIN_PARAMS][0])} is below {MIN_PARAMS:g} "
                "parameters: sizes count parameters (1e9 for a 1B model), not millions or "
                "billions; is it in the right units?"
            )
    if N is not None and D is not None and d_label:
        n, d = np.broadcast_arrays(_arr(N), _arr(D))
        few = d < MIN_TOKENS_PER_PARAM * n
        if few.any():
            i = int(np.argmax(few))
            out.append(
                f"{d_label} {fmt_value(d[i])} is fewer than {MIN_TOKENS_PER_PARAM:g} tokens per "
                f"parameter of a {fmt_value(n[i])}-parameter model: tokens count tokens (2e10 for "
                "20B), not millions or billions; is it in the right units?"
            )
    return out


def verdict(student_loss, supervised_loss, lo=None, hi=None):
    """'distill' (L_S below the supervised student's L~_S), 'train supervised', or 'too close
    to call' when L~_S lies inside the interval [lo, hi] of L_S (Sec. 5: the comparison of
    Figs. 6, 8); None where L_S is nan. Vectorised (object array); a str for scalars."""
    ls, sup = (np.asarray(v, float) for v in (student_loss, supervised_loss))
    ls, sup = np.broadcast_arrays(ls, sup)
    out = np.where(ls < sup, "distill", "train supervised").astype(object)
    if lo is not None and hi is not None:
        lo_, hi_ = (np.broadcast_to(np.asarray(v, float), ls.shape) for v in (lo, hi))
        out = np.where((lo_ <= sup) & (sup <= hi_), "too close to call", out)
    out = np.where(np.isnan(ls) | np.isnan(sup), None, out)
    return out.item() if np.ndim(out) == 0 else out


def verdict_text(v: str, supervised: float, level: float) -> str:
    """How the CLI prints a verdict ("too close to call" names the supervised loss)."""
    if v == "too close to call":
        return (
            f"too close to call at the {100 * level:g}% level (supervised {supervised:.4f} "
            "inside the interval)"
        )
    return v


def pinned(student_loss, lo, hi) -> np.ndarray:
    """Where an interval is (numerically) zero width: every parameter draw gives the same L_S."""
    ls, lo, hi = (np.asarray(v, float) for v in (student_loss, lo, hi))
    return (hi - lo) <= PINNED_REL_WIDTH * np.abs(ls)


def pinned_note(student_loss: float, teacher_loss: float) -> str:
    """Why an interval is pinned, said instead of printing a zero-width interval."""
    if student_loss - teacher_loss <= 1e-3 * teacher_loss:
        return (
            "Eq. 8 puts L_S at the teacher's loss here for every parameter draw (a teacher "
            "weaker than the student's supervised loss, past the capacity-gap break L_T/L~_S "
            "= d1: the student term vanishes), so the draws give no spread; the real "
            "uncertainty is the law's form (students can beat weaker teachers, Sec. E.7) and "
            "the teacher loss itself"
        )
    return "every parameter draw gives the same L_S here, so the draws give no spread"


def run_notes(data: pd.DataFrame, E: float, cols: Mapping[str, str], what: str = "runs"):
    """Warnings on a distillation runs table (N_S, D_S, L_T, L_S; index = row number - 1):
    student losses at or below the supervised law's E, students more than
    STUDENT_BELOW_TEACHER nats below their teacher, sizes and tokens in the wrong units."""
    out = []
    N, D, LT, LS = (data[c].to_numpy(float) for c in ("N_S", "D_S", "L_T", "L_S"))
    rows = np.asarray(data.index) + 1
    ls, lt = cols.get("ls_col", "L_S"), cols.get("lt_col", "L_T")

    def first(mask):
        return int(np.argmax(mask)), f" ({int(mask.sum())} rows)" if mask.sum() > 1 else ""

    if (bad := LS <= E).any():
        i, n = first(bad)
        out.append(
            f"{what}: column {ls!r} row {rows[i]}: student loss {fmt_value(LS[i])} is "
            f"at or below the supervised law's irreducible loss E = {E:.4g}{n}: no model "
            "reaches it; check the row (and that L~_S's law fits these data)"
        )
    if (bad := LS < LT - STUDENT_BELOW_TEACHER).any():
        i, n = first(bad)
        out.append(
            f"{what}: row {rows[i]}: student loss {ls!r} = {fmt_value(LS[i])} is "
            f"{LT[i] - LS[i]:.3g} nats below its teacher's {lt!r} = {fmt_value(LT[i])}{n}; "
            f"Eq. 8 has L_S >= L_T and students beat weaker teachers by a few hundredths "
            f"at most (Sec. E.7): are the columns swapped?"
        )
    if (bad := N < MIN_PARAMS).any():
        i, n = first(bad)
        out.append(
            f"{what}: column {cols.get('ns_col', 'N_S')!r} row {rows[i]}: "
            f"{fmt_value(N[i])} is below {MIN_PARAMS:g} parameters{n}: is the column in "
            "millions or billions? N_S counts non-embedding parameters"
        )
    if (bad := D < MIN_TOKENS_PER_PARAM * N).any():
        i, n = first(bad)
        out.append(
            f"{what}: column {cols.get('ds_col', 'D_S')!r} row {rows[i]}: "
            f"{fmt_value(D[i])} tokens is fewer than {MIN_TOKENS_PER_PARAM:g} per "
            f"parameter{n}: is the column in millions or billions of tokens?"
        )
    return out


def fmt_loss(v: float) -> str:
    """A loss as the CLI prints it: 4 decimals in the usual range, 6 significant digits else."""
    v = float(v)
    return f"{v:.4f}" if np.isfinite(v) and 1e-3 <= abs(v) < 1e4 else f"{v:.6g}"
