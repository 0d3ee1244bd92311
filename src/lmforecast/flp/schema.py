"""Schemas of saved FLP and FLP-M fits (`flp fit --out`, `flpm fit --out`), checked field by
field on load (docs/reliability.md). Unknown keys of ``config`` are refused (the estimators'
``__init__`` arguments are the allowed ones); extra top-level keys are ignored by the loaders.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any

from ..fitting.schema import check_fit_result
from ..laws.flp import MIXTURE_FORMS
from ..scores import UNITS
from ..store import Checker, check_array

#: FLP's stage-2 forms: the paper's FLP and the baselines of Sec. 4.
METHODS = ("flp", "fp", "gpt4", "llama3")
#: FLP-M's stage-2 mappers from domain losses to the score.
MAPPERS = ("neural", "domain-linear", "average")


def init_args(cls) -> set[str]:
    """The ``__init__`` arguments of an estimator: the keys its saved ``config`` may hold."""
    return set(inspect.signature(cls.__init__).parameters) - {"self"}


def _filter(c: Checker, f: Any, path: str = "filter") -> int:
    f = c.obj(f, path)
    c.keys(f, ("kept", "not_improved", "not_emerged"), path)
    n = None
    for k in ("kept", "not_improved", "not_emerged"):
        v = c.list_(c.get(f, k, path), f"{path}.{k}", n)
        n = len(v)
        for i, x in enumerate(v):
            c.bool_(x, f"{path}.{k}[{i}]")
    return n or 0


def _settings(c: Checker, s: Any) -> None:
    s = c.obj(s, "settings")
    c.keys(s, ("name", "chance", "metric", "evaluation"), "settings")
    c.str_(c.get(s, "name", "settings"), "settings.name")
    c.num(c.get(s, "chance", "settings"), "settings.chance", lo=0.0, hi=100.0, hi_open=True)
    c.str_(s.get("metric", ""), "settings.metric")
    c.str_(s.get("evaluation", ""), "settings.evaluation")


def _common_config(c: Checker, cfg: Mapping) -> None:
    c.str_(c.get(cfg, "task", "config"), "config.task")
    c.num(cfg.get("chance"), "config.chance", lo=0.0, hi=100.0, hi_open=True, none=True)
    c.num(cfg.get("threshold", 5.0), "config.threshold", lo=0.0)
    c.int_(cfg.get("train_loss_decimals", 2), "config.train_loss_decimals", none=True)
    c.int_(cfg.get("bootstrap", 0), "config.bootstrap")
    c.int_(cfg.get("seed", 0), "config.seed")
    c.str_(cfg.get("score_unit", "auto"), "config.score_unit", UNITS)  # of the fitted tables


def check_flp(d: Any, where: str, config_keys: Iterable[str]) -> Mapping:
    """Validate a saved `FLP` (flp fit --out); `config_keys` are the estimator's ``__init__``
    arguments (`FLP.from_json` passes them), the only keys ``config`` may hold."""
    c = Checker(where)
    d = c.obj(d)
    c.kind(d, "FLP", label="saved FLP fit")
    fields = ("kind", "format_version", "config", "settings", "filter", "n_runs", "n_points")
    for k in fields[2:] + ("stage1", "stage2"):
        c.get(d, k)
    cfg = c.obj(d["config"], "config")
    c.keys(cfg, config_keys, "config")
    _common_config(c, cfg)
    method = c.str_(c.get(cfg, "method", "config"), "config.method", METHODS)
    _settings(c, d["settings"])
    _filter(c, d["filter"])
    c.int_(d["n_runs"], "n_runs", lo=1)
    c.int_(d["n_points"], "n_points", lo=1)
    needs_stage1 = method in ("flp", "llama3")
    if needs_stage1 and d["stage1"] is None:
        c.fail("stage1", f"method {method!r} needs a stage-1 fit", None)
    if d["stage1"] is not None:
        check_fit_result(d["stage1"], where, "stage1")
    check_fit_result(d["stage2"], where, "stage2")
    b1, b2 = d["stage1"], d["stage2"]
    if b1 is not None and len(b1.get("bootstrap", [])) < len(b2.get("bootstrap", [])):
        c.fail("stage1.bootstrap", "has fewer resamples than stage2.bootstrap")
    meta2 = c.obj(b2.get("meta", {}), "stage2.meta")  # the final models' largest compute
    c.num(c.get(meta2, "max_flops", "stage2.meta"), "stage2.meta.max_flops", lo=0.0, lo_open=True)
    if b2.get("meta", {}).get("r2") is not None:  # stage2_r2_, printed by summary()
        c.num(b2["meta"]["r2"], "stage2.meta.r2", hi=1.0)
    return d


def check_network(c: Checker, n: Any, K: int, path: str = "network") -> None:
    n = c.obj(n, path)
    c.keys(
        n,
        (
            "config",
            "x_mean",
            "x_std",
            "y_mean",
            "y_std",
            "params",
            "train_mse",
            "init_mse",
            "boot_params",
            "n_boot_discarded",
        ),
        path,
    )
    cfg = c.obj(c.get(n, "config", path), f"{path}.config")
    h = c.int_(c.get(cfg, "hidden", f"{path}.config"), f"{path}.config.hidden", lo=1)
    for k in ("steps", "n_init"):
        c.int_(cfg.get(k, 1), f"{path}.config.{k}", lo=1)
    c.num(cfg.get("lr", 0.05), f"{path}.config.lr", lo=0.0, lo_open=True)
    c.num(cfg.get("weight_decay", 0.0), f"{path}.config.weight_decay", lo=0.0)
    c.int_(cfg.get("seed", 0), f"{path}.config.seed")
    c.nums(c.get(n, "x_mean", path), f"{path}.x_mean", K)
    std = c.nums(c.get(n, "x_std", path), f"{path}.x_std", K)
    if any(s <= 0 for s in std):
        c.fail(f"{path}.x_std", "must be > 0")
    c.num(c.get(n, "y_mean", path), f"{path}.y_mean")
    c.num(c.get(n, "y_std", path), f"{path}.y_std", lo=0.0, lo_open=True)
    shapes = ((K, h), (1, h), (h, 1), (1, 1))
    ps = c.list_(c.get(n, "params", path), f"{path}.params", 4)
    for i, (p, s) in enumerate(zip(ps, shapes)):
        check_array(c, p, f"{path}.params[{i}]", s)
    for k in ("train_mse", "init_mse"):  # a number, or one per initialisation
        v = n.get(k, 0.0)
        if isinstance(v, list):
            c.nums(v, f"{path}.{k}", finite=False)
        else:
            c.num(v, f"{path}.{k}", finite=False)
    bp = c.list_(n.get("boot_params", []), f"{path}.boot_params")
    if bp:
        c.list_(bp, f"{path}.boot_params", 4)
        B = len(c.list_(bp[0], f"{path}.boot_params[0]"))
        for i, (p, s) in enumerate(zip(bp, shapes)):
            check_array(c, p, f"{path}.boot_params[{i}]", (B, *s))
    c.int_(n.get("n_boot_discarded", 0), f"{path}.n_boot_discarded")


def check_flpm(d: Any, where: str, config_keys: Iterable[str]) -> Mapping:
    """Validate a saved `FLPM` (flpm fit --out); `config_keys` as in `check_flp`."""
    c = Checker(where)
    d = c.obj(d)
    c.kind(d, "FLPM", label="saved FLP-M fit")
    fields = (
        "config",
        "settings",
        "sources",
        "domains",
        "filter",
        "n_runs",
        "n_points",
        "stage1",
        "network",
        "coef",
    )
    for k in fields:
        c.get(d, k)
    cfg = c.obj(d["config"], "config")
    c.keys(cfg, config_keys, "config")
    _common_config(c, cfg)
    c.str_(c.get(cfg, "form", "config"), "config.form", MIXTURE_FORMS)
    mapper = c.str_(c.get(cfg, "mapper", "config"), "config.mapper", MAPPERS)
    c.num(cfg.get("zero_floor", 1e-3), "config.zero_floor", lo=0, hi=1, lo_open=True, hi_open=True)
    _settings(c, d["settings"])
    sources = c.list_(d["sources"], "sources", min_len=1)
    domains = c.list_(d["domains"], "domains", min_len=1)
    for name, v in (("sources", sources), ("domains", domains)):
        for i, x in enumerate(v):
            c.str_(x, f"{name}[{i}]")
        if len(set(v)) != len(v):
            c.fail(name, "lists a name twice", v)
    _filter(c, d["filter"])
    c.int_(d["n_runs"], "n_runs", lo=1)
    c.int_(d["n_points"], "n_points", lo=1)
    st = c.obj(d["stage1"], "stage1")
    if sorted(st) != sorted(domains):
        c.fail("stage1", f"must hold one fit per domain ({', '.join(domains)})", list(st))
    for k, v in st.items():
        check_fit_result(v, where, f"stage1.{k}")
        p = f"stage1.{k}.meta"
        meta = c.obj(v.get("meta", {}), p)
        for key in ("max_flops", "min_flops"):  # sampling models' compute (extrapolation)
            c.num(c.get(meta, key, p), f"{p}.{key}", lo=0.0, lo_open=True)
        # the sampling models' share of each source (mixture scans)
        rng = c.obj(c.get(meta, "share_range", p), f"{p}.share_range")
        for s in sources:
            lohi = c.nums(
                c.get(rng, s, f"{p}.share_range"), f"{p}.share_range.{s}", 2, lo=0.0, hi=1.0
            )
            if lohi[0] > lohi[1]:
                c.fail(f"{p}.share_range.{s}", "must be [min, max]", lohi)
    K = len(domains)
    if mapper == "neural":
        if d["network"] is None:
            c.fail("network", "the neural mapper needs its network", None)
        check_network(c, d["network"], K)
    else:
        coef = c.nums(d["coef"], "coef")
        if not coef:
            c.fail("coef", "is empty")
        cb = c.list_(d.get("coef_boot", []), "coef_boot")
        if cb:
            check_array(c, cb, "coef_boot", (None, len(coef)))
    c.num(d.get("residual_scale"), "residual_scale", lo=0.0, none=True)
    zs = d.get("zero_share_sensitivity")
    if zs is not None:  # FLPM.zero_share_sensitivity_: forecasts under other zero-share floors
        zs = c.obj(zs, "zero_share_sensitivity")
        c.num(
            c.get(zs, "share", "zero_share_sensitivity"),
            "zero_share_sensitivity.share",
            lo=0.0,
            hi=1.0,
        )
        c.num(
            c.get(zs, "flops", "zero_share_sensitivity"),
            "zero_share_sensitivity.flops",
            lo=0.0,
            lo_open=True,
        )
        fc = c.obj(
            c.get(zs, "forecast", "zero_share_sensitivity"), "zero_share_sensitivity.forecast"
        )
        for k, v in fc.items():
            c.num(v, f"zero_share_sensitivity.forecast.{k}", finite=False, none=True)
    return d
