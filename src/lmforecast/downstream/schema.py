"""Field-by-field validation of a saved `DownstreamForecaster` (JSON), on load.

Every key is known (unknown keys are refused), every number has its range: chance in [0, 100),
eval_sd > 0, scores in [0, 100], parameter and bootstrap arrays of the member's length. The
messages name the field (`store.Checker`). One format, version 1: `fitted.smallest` (the
smallest fitted model, where the fitted compute range starts: predict's range warning),
`fitted.lowest` ({model, score} of the lowest final score among the fitted models: the floor of
predict's below-chance warning) and `fitted.final_tokens` (the largest fitted model's final
token count, null without token counts: where the interval's checkpoint term starts,
`noise.py`) are always present; `config.gain_sd` is null where the selected method's value
applies.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..store import Checker
from ..store.kinds import wrong_kind
from .members import MEMBERS
from .stage1 import STAGE1

KIND = "DownstreamForecaster"
FORMAT_VERSION = 1
CONFIG_KEYS = (
    "method",
    "stage1",
    "window",
    "trend_points",
    "chance",
    "bootstrap",
    "seed",
    "combine",
    "gain_sd",
)
FITTED_KEYS = (
    "chance",
    "task",
    "metric",
    "loss_task",
    "flops_basis",
    "n_models",
    "n_checkpoints",
    "largest",
    "smallest",
    "lowest",
    "final_tokens",
    "eval_sd",
    "members",
    "refused",
    "stage1",
    "selected",
    "selection_errors",
)
N_PARAMS = {"sigmoid": 3, "sigmoid-chance": 2, "local-linear": 2, "trend": 2}
MAX_COUNT = 10**9
METHODS = ("ensemble", "auto") + MEMBERS  # as forecaster.METHODS
STAGE1_PARAMS = {"power": 2, "saturating": 3, "nd": 5}


def _params_boot(c: Checker, st: Mapping, path: str, k: int) -> None:
    c.keys(st, ("params", "boot", "resid_sd"), path)
    c.nums(c.get(st, "params", path), f"{path}.params", k)
    c.matrix(c.get(st, "boot", path), f"{path}.boot", k)


def validate(d, where: str) -> dict:
    """`d` if it is a saved DownstreamForecaster this release reads, else InputError."""
    c = Checker(where)
    c.obj(d)
    k = d.get("kind")
    if k != KIND:
        raise wrong_kind(c.where, k, KIND)
    v = d.get("format_version")
    if isinstance(v, bool) or not isinstance(v, int) or v != FORMAT_VERSION:
        c.fail(
            "format_version",
            f"unknown version of a saved {KIND}; this release reads "
            f"{FORMAT_VERSION} (re-create it with `downstream fit --out`)",
            v,
        )
    c.keys(d, ("kind", "format_version", "config", "fitted"))
    cfg = c.obj(c.get(d, "config"), "config")
    c.keys(cfg, CONFIG_KEYS, "config")
    for key in CONFIG_KEYS:
        c.get(cfg, key, "config")
    c.str_(cfg["method"], "config.method", METHODS)
    c.str_(cfg["stage1"], "config.stage1", STAGE1)
    c.num(cfg["window"], "config.window", lo=0, lo_open=True)
    c.int_(cfg["trend_points"], "config.trend_points", lo=2)
    c.num(cfg["chance"], "config.chance", lo=0, hi=100, hi_open=True, none=True)
    c.int_(cfg["bootstrap"], "config.bootstrap", lo=0)
    c.int_(cfg["seed"], "config.seed", lo=None)
    c.str_(cfg["combine"], "config.combine", ("median", "mean"))
    # null: the selected method's protocol value (noise.GAIN_SD)
    c.num(cfg["gain_sd"], "config.gain_sd", lo=0, none=True)
    f = c.obj(c.get(d, "fitted"), "fitted")
    c.keys(f, FITTED_KEYS, "fitted")
    for key in FITTED_KEYS:
        c.get(f, key, "fitted")
    c.num(f["chance"], "fitted.chance", lo=0, hi=100, hi_open=True)
    for key in ("task", "metric", "loss_task"):
        c.str_(f[key], f"fitted.{key}")
    c.str_(f["flops_basis"], "fitted.flops_basis", ("params", "params_nonembedding"), none=True)
    n = c.int_(f["n_models"], "fitted.n_models", lo=2)
    for key in ("n_models", "n_checkpoints"):
        if c.int_(f[key], f"fitted.{key}", lo=n if key == "n_checkpoints" else 2) > MAX_COUNT:
            c.fail(f"fitted.{key}", f"must be <= {MAX_COUNT}")
    big = c.obj(f["largest"], "fitted.largest")
    c.keys(big, ("model", "C", "score"), "fitted.largest")
    c.str_(c.get(big, "model", "fitted.largest"), "fitted.largest.model")
    c.num(c.get(big, "C", "fitted.largest"), "fitted.largest.C", lo=0, lo_open=True)
    c.num(c.get(big, "score", "fitted.largest"), "fitted.largest.score", lo=0, hi=100)
    small = c.obj(f["smallest"], "fitted.smallest")
    c.keys(small, ("model", "C", "score"), "fitted.smallest")
    c.str_(c.get(small, "model", "fitted.smallest"), "fitted.smallest.model")
    Cs = c.num(c.get(small, "C", "fitted.smallest"), "fitted.smallest.C", lo=0, lo_open=True)
    c.num(c.get(small, "score", "fitted.smallest"), "fitted.smallest.score", lo=0, hi=100)
    if Cs > big["C"]:
        c.fail("fitted.smallest.C", "is above fitted.largest.C", Cs)
    low = c.obj(f["lowest"], "fitted.lowest")
    c.keys(low, ("model", "score"), "fitted.lowest")
    c.str_(c.get(low, "model", "fitted.lowest"), "fitted.lowest.model")
    s = c.num(c.get(low, "score", "fitted.lowest"), "fitted.lowest.score", lo=0, hi=100)
    if any(s > x["score"] + 1e-9 for x in (big, small)):
        c.fail("fitted.lowest.score", "is above a fitted model's score (largest, smallest)", s)
    c.num(f["final_tokens"], "fitted.final_tokens", lo=0, lo_open=True, none=True)
    c.num(f["eval_sd"], "fitted.eval_sd", lo=0, lo_open=True)
    members = c.obj(f["members"], "fitted.members")
    for name, st in members.items():
        path = f"fitted.members.{name}"
        c.str_(name, path, MEMBERS)
        c.obj(st, path)
        if name in N_PARAMS:
            _params_boot(c, st, path, N_PARAMS[name])
        elif name == "persistence":
            c.keys(st, ("value",), path)
            c.num(c.get(st, "value", path), f"{path}.value", lo=0, hi=100)
        else:
            c.keys(st, ("flp", "fallback"), path)
            c.obj(c.get(st, "flp", path), f"{path}.flp")
            c.bool_(c.get(st, "fallback", path), f"{path}.fallback")
    refused = c.obj(f["refused"], "fitted.refused")
    for name, why in refused.items():
        c.str_(name, f"fitted.refused.{name}", MEMBERS)
        c.str_(why, f"fitted.refused.{name}")
    if not members:
        c.fail("fitted.members", "has no fitted member")
    if f["stage1"] is not None:
        s1 = c.obj(f["stage1"], "fitted.stage1")
        _params_boot(c, s1, "fitted.stage1", STAGE1_PARAMS[cfg["stage1"]])
        c.num(c.get(s1, "resid_sd", "fitted.stage1"), "fitted.stage1.resid_sd", lo=0)
    c.str_(f["selected"], "fitted.selected", METHODS)
    errs = c.obj(f["selection_errors"], "fitted.selection_errors")
    for name, e in errs.items():
        c.num(e, f"fitted.selection_errors.{name}", finite=False, lo=0)
    return d
