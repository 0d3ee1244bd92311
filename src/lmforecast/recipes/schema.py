"""Validation of a saved recipe comparison (`compare-recipes --out`), field by field."""

from __future__ import annotations

from ..store import Checker

KIND = "RecipeComparison"
FIELDS = (
    "flops",
    "multiplier",
    "interval",
    "level",
    "base_params",
    "new_params",
    "overlap",
    "extrapolated",
    "n_boot",
    "n_infinite",
    "curve",
)
LAW_PARAMS = ("A", "E", "a")


def check_comparison(d, where: str) -> None:
    c = Checker(where)
    d = c.obj(d)
    c.keys(d, (*FIELDS, "kind", "format_version"))
    if d.get("kind") != KIND:
        c.fail("kind", f"must be {KIND!r}", d.get("kind"))
    if d.get("format_version") != 1:
        c.fail("format_version", "must be 1", d.get("format_version"))
    for k in FIELDS:
        c.get(d, k)
    c.num(d["flops"], "flops", lo=0, lo_open=True)
    c.num(d["multiplier"], "multiplier", finite=False, lo=0)
    if d["interval"] is not None:
        c.nums(d["interval"], "interval", 2, lo=0)
    c.num(d["level"], "level", lo=0, hi=1, lo_open=True, hi_open=True)
    for k in ("base_params", "new_params"):
        p = c.obj(d[k], k)
        c.keys(p, LAW_PARAMS, k)
        for q in LAW_PARAMS:
            c.num(c.get(p, q, k), f"{k}.{q}")
    c.nums(d["overlap"], "overlap", 2, lo=0, lo_open=True)
    c.bool_(d["extrapolated"], "extrapolated")
    c.int_(d["n_boot"], "n_boot")
    c.int_(d["n_infinite"], "n_infinite")
    cur = c.obj(d["curve"], "curve")
    c.keys(cur, ("C", "multiplier"), "curve")
    c.nums(c.get(cur, "C", "curve"), "curve.C", lo=0, lo_open=True)
    c.nums(c.get(cur, "multiplier", "curve"), "curve.multiplier", finite=False)
