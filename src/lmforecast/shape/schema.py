"""Validation of a saved shape residual test (`shape test --out`), field by field."""

from __future__ import annotations

from ..store import Checker

KIND = "ShapeTest"
FIELDS = (
    "r2",
    "p_value",
    "n_models",
    "n_rows",
    "coef",
    "x_center",
    "best_aspect",
    "cv_rms_without",
    "cv_rms_with",
    "shape_matters",
    "worst",
    "models",
    "law_params",
    "alpha_level",
)
LAW_PARAMS = ("A", "B", "E", "alpha", "beta")


def check_shape_test(d, where: str) -> None:
    c = Checker(where)
    d = c.record(d, FIELDS, KIND, label="saved shape test")
    c.num(d["r2"], "r2", hi=1)
    c.num(d["p_value"], "p_value", lo=0, hi=1, lo_open=True)
    c.int_(d["n_models"], "n_models", lo=1)
    c.int_(d["n_rows"], "n_rows", lo=1)
    c.nums(d["coef"], "coef", 3)
    c.num(d["x_center"], "x_center")
    c.num(d["best_aspect"], "best_aspect", lo=0, lo_open=True, none=True)
    c.num(d["cv_rms_without"], "cv_rms_without", lo=0)
    c.num(d["cv_rms_with"], "cv_rms_with", lo=0)
    c.bool_(d["shape_matters"], "shape_matters")
    w = c.obj(d["worst"], "worst")
    c.keys(w, ("model", "width", "depth", "residual"), "worst")
    _model(c, w, "worst", rows=False)
    models = c.list_(d["models"], "models", min_len=1)
    if len(models) != d["n_models"]:
        c.fail("models", f"must have n_models = {d['n_models']} entries, has {len(models)}")
    for i, m in enumerate(models):
        p = f"models[{i}]"
        m = c.obj(m, p)
        c.keys(m, ("model", "width", "depth", "residual", "rows"), p)
        _model(c, m, p, rows=True)
    lp = c.obj(d["law_params"], "law_params")
    c.keys(lp, LAW_PARAMS, "law_params")
    for k in LAW_PARAMS:
        c.num(c.get(lp, k, "law_params"), f"law_params.{k}")
    c.num(d["alpha_level"], "alpha_level", lo=0, hi=1, lo_open=True, hi_open=True)


def _model(c: Checker, m, p: str, rows: bool) -> None:
    c.str_(c.get(m, "model", p), f"{p}.model")
    c.num(c.get(m, "width", p), f"{p}.width", lo=0, lo_open=True)
    c.num(c.get(m, "depth", p), f"{p}.depth", lo=0, lo_open=True)
    c.num(c.get(m, "residual", p), f"{p}.residual")
    if rows:
        c.int_(c.get(m, "rows", p), f"{p}.rows", lo=1)
