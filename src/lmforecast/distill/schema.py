"""Schema of a saved distillation fit (`distill fit --out`): a `FitResult` of the distillation
law carrying the teacher's supervised coefficients (Eq. 1) in ``meta.supervised``, the
supervised law's own saved fit in ``meta.supervised_fit`` (whose uncertainty the intervals
propagate, `teacher_uncertainty.py`) and, unless it is a preset, the fitted runs' ranges in
``meta.ranges``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..fitting.schema import check_fit_result
from ..store import Checker
from ..supervised.schema import check_supervised_meta, check_trust_meta

#: The registered name of the distillation law (Eq. 8) every saved distillation fit holds.
LAW_NAME = "busbridge-distillation"


def check_supervised_coefficients(c: Checker, s: Any, path: str) -> None:
    s = c.obj(s, path)
    for k in ("A", "B", "E", "alpha", "beta"):
        c.num(c.get(s, k, path), f"{path}.{k}", lo=0.0, lo_open=True)
    c.num(s.get("gamma", 1.0), f"{path}.gamma", lo=0.0, lo_open=True)
    extra = [k for k in s if k not in ("A", "B", "E", "alpha", "beta", "gamma")]
    if extra:
        c.fail(f"{path}.{extra[0]}", "is not a coefficient of Eq. 1")


def check_distill_fit(d: Any, where: str) -> Mapping:
    """Validate a saved distillation fit (``kind`` "DistillationScalingLaw"): a `FitResult` of
    the distillation law carrying the
    supervised (teacher) coefficients in ``meta.supervised``, the supervised law's saved fit in
    ``meta.supervised_fit`` and (every fit but a preset) the runs' ranges in ``meta.ranges``."""
    check_fit_result(d, where, kind="DistillationScalingLaw")
    c = Checker(where)
    if d["law"] != LAW_NAME:
        c.fail(
            "law", f"is not the distillation law {LAW_NAME!r} (is this a supervised fit?)", d["law"]
        )
    meta = d.get("meta", {})
    if "supervised" not in meta:
        c.fail("meta.supervised", "is missing (the teacher's supervised coefficients)")
    check_supervised_coefficients(c, meta["supervised"], "meta.supervised")
    check_supervised_fit(c.get(meta, "supervised_fit", "meta"), where)  # the supervised law
    fitted = meta["supervised_fit"].get("params", {})
    for k, v in meta["supervised"].items():
        if fitted.get(k, 1.0 if k == "gamma" else None) != v:
            c.fail(f"meta.supervised.{k}", "differs from meta.supervised_fit.params", v)
    if "ranges" in meta or meta.get("preset") is None:  # a preset has the paper's ranges
        r = c.obj(c.get(meta, "ranges", "meta"), "meta.ranges")
        for k, v in r.items():
            lo, hi = c.nums(v, f"meta.ranges.{k}", 2)
            if not 0 < lo <= hi:
                c.fail(f"meta.ranges.{k}", "must be [lo, hi] with 0 < lo <= hi", v)
    return d


def check_supervised_fit(d: Any, where: str) -> Mapping:
    """``meta.supervised_fit``: a saved supervised fit (its `FitResult`, interval calibration
    and model average, as `SupervisedScalingLaw.from_json` checks them)."""
    check_fit_result(d, where, "meta.supervised_fit")
    inner = f"{where} (meta.supervised_fit)"
    check_supervised_meta(d, inner)
    check_trust_meta(d, inner)
    return d
