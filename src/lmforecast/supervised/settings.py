"""Checks of `SupervisedScalingLaw`'s constructor arguments, at the door."""

from __future__ import annotations

from ..errors import InputError
from ..params import check


def check_settings(
    forms, form, loss, huber_delta, bootstrap, ci_level, calibration, replicates, fixed
) -> None:
    """One-line InputError naming the first bad argument (`forms`: the valid form names)."""
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
