"""Validation of a saved `OSLResult` (`osl fit --out`): every field `osl predict` and
`summary()` read, with its type and shape, so a hand-edited file is refused naming the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..store import Checker

_HOLDOUT = {"cutoff": ("cutoff_flops",), "top": ("fraction",), "list": ("models",), "none": ()}


def check_osl_result(d: Any, c: Checker, x_kinds) -> Mapping:
    """Check the fields of a saved OSL fit (envelope already read; `x_kinds`: the predictor
    kinds); returns it."""
    d = c.obj(d)
    c.str_(c.get(d, "target"), "target")
    x = c.str_(c.get(d, "x"), "x", x_kinds)
    pcs = x == "pcs"
    metrics = c.list_(c.get(d, "metrics"), "metrics", min_len=1 if pcs else 0)
    for i, m in enumerate(metrics):
        c.str_(m, f"metrics[{i}]")
    k = c.int_(c.get(d, "n_components"), "n_components", lo=1)
    kx = k if pcs else 1
    _holdout(c, c.get(d, "holdout"))
    c.num(c.get(d, "train_mse"), "train_mse", lo=0.0, finite=False)
    c.num(d.get("test_mse"), "test_mse", lo=0.0, finite=False, none=True)
    c.int_(c.get(d, "n_train"), "n_train", lo=0)
    c.int_(c.get(d, "n_test"), "n_test", lo=0)
    for i, m in enumerate(c.list_(c.get(d, "heldout"), "heldout")):
        c.str_(m, f"heldout[{i}]")
    c.nums(d.get("explained_variance", []), "explained_variance")
    comps = c.matrix(d.get("components", []), "components", len(metrics))
    if pcs and len(comps) != k:
        c.fail("components", f"must have n_components = {k} rows, has {len(comps)}")
    mean = c.nums(d.get("mean", []), "mean")
    if pcs and len(mean) != len(metrics):
        c.fail("mean", f"must have one entry per metric ({len(metrics)}), has {len(mean)}")
    c.str_(d.get("reference_family"), "reference_family", none=True)
    ref = d.get("reference")
    if ref is not None:
        ref = c.obj(ref, "reference")
        for key in ("w", "b"):
            c.num(c.get(ref, key, "reference"), f"reference.{key}")
    preds = c.list_(d.get("predictions", []), "predictions")
    for i, p in enumerate(preds):
        p = c.obj(p, f"predictions[{i}]")
        c.str_(c.get(p, "split", f"predictions[{i}]"), f"predictions[{i}].split")
        for j in range(kx):
            c.num(
                c.get(p, f"x{j + 1}", f"predictions[{i}]"),
                f"predictions[{i}].x{j + 1}",
                finite=False,
                none=True,
            )
    for i, m in enumerate(c.list_(d.get("dropped", []), "dropped")):
        c.str_(m, f"dropped[{i}]")
    cov = c.matrix(d.get("covariance", []), "covariance", finite=False)
    if cov and any(len(row) != len(cov) for row in cov):
        c.fail("covariance", "must be a square matrix")
    c.num(d.get("sigma"), "sigma", lo=0.0, none=True)
    c.int_(d.get("dof"), "dof", lo=1, none=True)
    c.num(d.get("extrapolation_sigma"), "extrapolation_sigma", lo=0.0, none=True)
    c.num(d.get("level", 0.9), "level", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    rng = d.get("metric_range")
    if rng is not None:
        lo, hi = c.nums(rng, "metric_range", 2)
        if not lo < hi:
            c.fail("metric_range", "must be [low, high] with low < high", rng)
    return d


def _holdout(c: Checker, h: Any) -> None:
    h = c.obj(h, "holdout")
    kind = c.str_(c.get(h, "kind", "holdout"), "holdout.kind", tuple(_HOLDOUT))
    for key in _HOLDOUT[kind]:
        v = c.get(h, key, "holdout")
        if key == "models":
            for i, m in enumerate(c.list_(v, "holdout.models")):
                c.str_(m, f"holdout.models[{i}]")
        else:
            c.num(v, f"holdout.{key}", lo=0.0)
