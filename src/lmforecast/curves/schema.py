"""The saved `CurveLaw` fit: field-by-field checks before objects are built from it."""

from __future__ import annotations

from ..store import Checker
from .laws import LAWS

PARAMS = (
    "law",
    "huber_delta",
    "n_starts",
    "n_boot",
    "seed",
    "decay",
    "resolution",
    "calibration",
    "horizon",
    "block",
)
MODEL = (
    "N",
    "z",
    "theta",
    "objective",
    "n_points",
    "max_step",
    "lr_range",
    "replicates",
    "null",
    "noise",
    "runs",
)
OPTIONAL_PARAMS = ("prior",)  # a saved fit without it reads as None
OPTIONAL_MODEL = ("prior",)


def check_curve_fit(d, where: str = "saved curve fit") -> None:
    c = Checker(where)
    c.record(d, ("params", "models", "runs"), "CurveLaw", label="saved curve fit")
    p = c.obj(d["params"], "params")
    c.keys(p, PARAMS + OPTIONAL_PARAMS, "params")
    for k in PARAMS:
        c.get(p, k, "params")
    law = c.str_(p["law"], "params.law", LAWS)
    n_par = len(LAWS[law])
    for k in ("huber_delta", "resolution", "calibration", "decay"):
        c.num(p[k], f"params.{k}", lo=0, lo_open=True)
    c.int_(p["n_starts"], "params.n_starts", lo=1)
    c.int_(p["n_boot"], "params.n_boot", lo=0)
    c.int_(p["seed"], "params.seed", lo=None)
    c.num(p["block"], "params.block", lo=1, none=True)
    c.num(p["horizon"], "params.horizon", lo=0)
    models = c.obj(d["models"], "models")
    if not models:
        c.fail("models", "has no fitted model")
    for key, m in models.items():
        at = f"models.{key}"
        c.obj(m, at)
        c.keys(m, MODEL + OPTIONAL_MODEL, at)
        for k in MODEL:
            c.get(m, k, at)
        c.num(m["N"], f"{at}.N", lo=0, lo_open=True, none=True)
        c.nums(m["z"], f"{at}.z", n_par)
        c.nums(m["theta"], f"{at}.theta", n_par)
        c.nums(m["lr_range"], f"{at}.lr_range", 2, lo=0)
        c.num(m["max_step"], f"{at}.max_step", lo=0)
        c.matrix(m["replicates"], f"{at}.replicates", n_par)
        c.matrix(m["null"], f"{at}.null", n_par)
        c.nums(m["noise"], f"{at}.noise")
        c.list_(m["runs"], f"{at}.runs")
        if m.get("prior") is not None:
            c.obj(m["prior"], f"{at}.prior")
    runs = c.obj(d["runs"], "runs")
    for name, r in runs.items():
        at = f"runs.{name}"
        c.obj(r, at)
        c.str_(c.get(r, "model", at), f"{at}.model", list(models))
        knots = c.list_(c.get(r, "knots", at), f"{at}.knots", 2)
        c.nums(knots[0], f"{at}.knots[0]", lo=0)
        c.nums(knots[1], f"{at}.knots[1]", len(knots[0]), lo=0)
        if "offset" in r:
            c.num(r["offset"], f"{at}.offset")
            c.nums(c.get(r, "offset_reps", at), f"{at}.offset_reps")
            c.num(c.get(r, "last_step", at), f"{at}.last_step", lo=0)


__all__ = ["check_curve_fit"]
