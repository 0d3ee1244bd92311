"""Distill or train supervised? One student forecast with its interval and verdict (Sec. 5:
the comparison of Figs. 6 and 8): L_S of Eq. 8, the supervised student's L~_S, and the
interval of L_S, said as a note where the draws give none (no bootstrap samples, or every draw
gives the same L_S). `lmforecast distill predict` prints this result."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..params import check
from .checks import pinned, pinned_note, verdict
from .teacher_uncertainty import teacher_basis, teacher_log_sd

NO_DRAWS = "the fit has no bootstrap samples (refit with --bootstrap B > 0)"


@dataclass
class StudentForecast:
    """A distilled student's forecast: `interval` is [lo, hi] or None with `interval_note`
    saying why; `verdict` is "distill", "train supervised" or "too close to call"."""

    student_loss: float
    teacher_loss: float
    supervised_loss: float
    level: float
    interval: list | None
    interval_basis: str | None
    interval_note: str | None
    verdict: str | None

    @property
    def notes(self) -> list[str]:
        return [self.interval_note] if self.interval_note else []

    def to_dict(self) -> dict:
        d = {
            "student_loss": self.student_loss,
            "teacher_loss": self.teacher_loss,
            "supervised_loss": self.supervised_loss,
            "interval": self.interval,
            "level": self.level,
        }
        if self.interval is not None:
            d["interval_basis"] = self.interval_basis
        else:
            d["interval_note"] = self.interval_note
        d["verdict"] = self.verdict
        return d


def student_forecast(
    m,
    student_params,
    student_tokens,
    *,
    teacher_loss=None,
    teacher_params=None,
    teacher_tokens=None,
    level=0.9,
) -> StudentForecast:
    """L_S (Eq. 8) of a student of `student_params` x `student_tokens` from the fitted law `m`,
    with a measured `teacher_loss` or a teacher given by `teacher_params` x `teacher_tokens`
    (its L_T a forecast of the supervised law, drawn from that law's interval); the `level`
    interval of L_S and the verdict against the supervised student."""
    level = check("level", level)
    by_size = teacher_params is not None
    if by_size == (teacher_loss is not None):
        raise InputError("give teacher_loss, or teacher_params with teacher_tokens")
    NS, DS = student_params, student_tokens
    LT = float(m.teacher_loss(teacher_params, teacher_tokens)) if by_size else float(teacher_loss)
    LS = float(m.predict(NS, DS, LT))
    sup = float(m.supervised_loss(NS, DS))
    iv = basis = note = None
    if not m.has_intervals():
        note = NO_DRAWS
    else:
        teacher = {"N_T": teacher_params, "D_T": teacher_tokens} if by_size else {}
        lo, hi = m.predict_interval(NS, DS, None if by_size else LT, level=level, **teacher)
        iv, basis = [float(lo), float(hi)], m.interval_basis()
        if bool(pinned(LS, *iv)):  # a zero-width interval is no interval: say why
            iv, basis, note = None, None, "no interval: " + pinned_note(LS, LT)
        elif by_size:
            basis += "; " + teacher_basis(teacher_log_sd(m, teacher_params, teacher_tokens))
    return StudentForecast(
        LS, LT, sup, level, iv, basis, note, verdict(LS, sup, *(iv or (None, None)))
    )


__all__ = ["NO_DRAWS", "StudentForecast", "student_forecast"]
