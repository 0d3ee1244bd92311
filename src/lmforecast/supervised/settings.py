"""Checks of `SupervisedScalingLaw`'s constructor arguments, at the door."""

from __future__ import annotations

from ..errors import InputError
from ..params import check


def check_settings(est, forms) -> None:
    """One-line InputError naming the first bad constructor argument of `est` (a
    `SupervisedScalingLaw`; `forms`: the valid form names), then `refuse_ignored`."""
    form, loss, huber_delta, bootstrap = est.form, est.loss, est.huber_delta, est.bootstrap
    ci_level, calibration, replicates, fixed = (
        est.ci_level,
        est.calibration,
        est.replicates,
        est.fixed,
    )
    if form not in forms:
        raise InputError(f"unknown form {form!r}; use one of {', '.join(forms)}")
    if loss not in ("huber", "squared"):
        raise InputError(f"unknown loss {loss!r}; use 'huber' or 'squared'")
    if loss == "huber" and not huber_delta > 0:
        raise InputError(f"--huber-delta (huber_delta=) must be > 0, got {huber_delta}")
    if bootstrap is not None:
        check("bootstrap", bootstrap)
    check("ci_level", ci_level)
    if calibration not in ("prior", "prior+backtest"):
        raise InputError(f"calibration must be 'prior' or 'prior+backtest', got {calibration!r}")
    if replicates not in (None, "mean", "keep"):
        raise InputError(f"--replicates (replicates=) must be 'mean' or 'keep', got {replicates!r}")
    if fixed and form == "average":
        raise InputError("--fix (fixed=) needs one form, not 'average'")
    refuse_ignored(form, est.n_cutoffs)


def refuse_ignored(form, n_cutoffs) -> None:
    """Inner-backtest cutoffs of a form other than 'average' would do nothing: refused, never
    ignored. (A backtest calibration of a point fit is refused by `fit`; a bootstrap beside
    intervals=False gives the documented bootstrap-only interval; stack=False beside a single
    form says what that form does anyway.)"""
    if n_cutoffs is not None and form != "average":
        raise InputError(
            f"--n-cutoffs (n_cutoffs=) applies only to --form average (the cutoffs of the "
            f"inner backtest that weights its forms), not --form {form}"
        )
