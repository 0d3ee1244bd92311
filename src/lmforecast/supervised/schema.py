"""Validation of what issue 21 adds to a saved supervised fit's ``meta`` (field by field, on load):
the prior-calibrated interval (k, k_prior), the form choice, the identification verdict, the 1-D
compute law shown beside the forecast, pinned parameters and the replicate spread."""

from __future__ import annotations

from collections.abc import Mapping

from ..data.schema import Checker


def check_trust_meta(d: Mapping, where: str) -> None:
    c = Checker(where)
    meta = c.obj(d.get("meta", {}), "meta")
    cal = meta.get("intervals")
    if isinstance(cal, Mapping) and "k" in cal:
        c.num(cal["k"], "meta.intervals.k", lo=0.0)
        if cal.get("k_prior") is not None:
            c.num(cal["k_prior"], "meta.intervals.k_prior", lo=0.0)
        c.str_(c.get(cal, "method", "meta.intervals"), "meta.intervals.method")
    if "identification" in meta:
        ident = c.obj(meta["identification"], "meta.identification")
        c.bool_(c.get(ident, "identified", "meta.identification"), "meta.identification.identified")
        c.str_(c.get(ident, "reason", "meta.identification"), "meta.identification.reason")
    if "form_reason" in meta:
        c.str_(meta["form_reason"], "meta.form_reason")
    if "compute_law" in meta:
        cl = c.obj(meta["compute_law"], "meta.compute_law")
        for k in ("E", "A", "a"):
            c.num(c.get(cl, k, "meta.compute_law"), f"meta.compute_law.{k}")
        c.nums(c.get(cl, "theta", "meta.compute_law"), "meta.compute_law.theta", 3)
    if "fixed" in meta:
        fx = c.obj(meta["fixed"], "meta.fixed")
        for k, v in fx.items():
            c.num(v, f"meta.fixed.{k}")
    if "replicate_sd" in meta:
        c.num(meta["replicate_sd"], "meta.replicate_sd", lo=0.0)
