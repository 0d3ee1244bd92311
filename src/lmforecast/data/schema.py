"""Schemas of saved results: every JSON file a verb reads back is checked field by field on load.

A saved fit is a user-editable file, so it is input like any table: each loader calls the
checker of its result type before building objects from it, and any problem is an `InputError`
naming the file and the field (``params.alpha``, ``stage2.theta[3]``) with the value found.

What is checked (docs/reliability.md has the list per result type):

- ``kind`` and ``format_version``: a file of another kind, or of a version this release does not
  know, is refused (never guessed at).
- types and ranges of every field a verb uses (finite numbers, counts >= 0, levels in (0, 1));
- internal agreement: a law's fit-space ``theta`` has one entry per law parameter, within the
  law's bounds, and the reported ``params`` are exactly ``theta`` mapped to natural units (so a
  hand-edited ``params.alpha`` cannot silently change one verb's answer and not another's);
  bootstrap rows have one entry per parameter; intervals are ``[lo, hi]`` pairs;
- unknown fields are refused (a typo such as ``"parms"`` is not silently ignored) where the
  loader would otherwise drop them: `FitResult` and `SalienceFit` (fields read from their
  dataclasses) and the ``config`` of FLP / FLP-M (read from the estimators' signatures). Extra
  top-level keys of FLP / FLP-M files are ignored by their loaders.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InputError, fmt_value

#: The format version of every result type this release writes and reads.
SUPPORTED_VERSIONS = {
    "FitResult": {1},
    "FLP": {1},
    "FLPM": {1},
    "SalienceFit": {1},
    "OSLResult": {1},
    "RobustnessResult": {1},
    "HeldOutErrors": {1},
    "SingleDistributionCheck": {1},
    "LossToPerformanceComparison": {1},
}

KIND_LABELS = {
    "FitResult": "saved lmforecast fit",
    "FLP": "saved FLP fit",
    "FLPM": "saved FLP-M fit",
    "SalienceFit": "saved salience fit",
    "OSLResult": "saved OSL fit",
    "RobustnessResult": "RobustnessResult (saved robustness sweep)",
}

#: Relative tolerance of the params <-> theta agreement check (exp/log round trips lose a few
#: ulps; a hand edit changes far more).
PARAMS_RTOL = 1e-9


class Checker:
    """Field-by-field checks with messages ``<where>: field <path>: <problem> (got <value>)``."""

    def __init__(self, where: str, prefix: str = ""):
        self.where = str(where)[:120]
        self.prefix = f"{prefix}." if prefix else ""

    def fail(self, path: str, problem: str, value: Any = ...) -> None:
        got = "" if value is ... else f" (got {fmt_value(value)})"
        raise InputError(f"{self.where}: field {self.prefix + path!r}: {problem}{got}")

    # ---- containers ------------------------------------------------------------------------
    def obj(self, d: Any, path: str = "") -> Mapping:
        if not isinstance(d, Mapping):
            if path:
                self.fail(path, "must be a JSON object", d)
            raise InputError(f"{self.where}: expected a JSON object, got {type(d).__name__}")
        return d

    def get(self, d: Mapping, key: str, path: str = "") -> Any:
        full = f"{path}.{key}" if path else key
        if key not in d:
            self.fail(full, "is missing")
        return d[key]

    def keys(self, d: Mapping, allowed: Iterable[str], path: str = "") -> None:
        extra = [k for k in d if k not in set(allowed)]
        if extra:
            full = f"{path}.{extra[0]}" if path else str(extra[0])
            self.fail(full, "is not a known field of this result type")

    def list_(self, v: Any, path: str, length: int | None = None, min_len: int = 0) -> list:
        if not isinstance(v, list):
            self.fail(path, "must be a JSON list", v)
        if length is not None and len(v) != length:
            self.fail(path, f"must have {length} entries, has {len(v)}")
        if len(v) < min_len:
            self.fail(path, f"must have at least {min_len} entries, has {len(v)}")
        return v

    # ---- scalars ---------------------------------------------------------------------------
    def num(
        self,
        v: Any,
        path: str,
        *,
        finite: bool = True,
        lo: float | None = None,
        hi: float | None = None,
        lo_open: bool = False,
        hi_open: bool = False,
        none: bool = False,
    ) -> float | None:
        if v is None and none:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float):
            self.fail(path, "must be a number", v)
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            if finite:
                self.fail(path, "must be a finite number", v)
            return f
        if lo is not None and (f < lo or (lo_open and f == lo)):
            self.fail(path, f"must be {'>' if lo_open else '>='} {fmt_value(lo)}", v)
        if hi is not None and (f > hi or (hi_open and f == hi)):
            self.fail(path, f"must be {'<' if hi_open else '<='} {fmt_value(hi)}", v)
        return f

    def int_(self, v: Any, path: str, *, lo: int | None = 0, none: bool = False) -> int | None:
        if v is None and none:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(path, "must be an integer", v)
        if lo is not None and v < lo:
            self.fail(path, f"must be >= {lo}", v)
        return v

    def bool_(self, v: Any, path: str) -> bool:
        if not isinstance(v, bool):
            self.fail(path, "must be true or false", v)
        return v

    def str_(self, v: Any, path: str, choices: Iterable[str] | None = None, none: bool = False):
        if v is None and none:
            return None
        if not isinstance(v, str):
            self.fail(path, "must be a string", v)
        if choices is not None and v not in set(choices):
            self.fail(path, f"must be one of {', '.join(sorted(choices))}", v)
        return v

    def nums(self, v: Any, path: str, length: int | None = None, **kw) -> list[float]:
        v = self.list_(v, path, length)
        return [self.num(x, f"{path}[{i}]", **kw) for i, x in enumerate(v)]

    def matrix(self, v: Any, path: str, ncols: int | None = None, **kw) -> list[list[float]]:
        v = self.list_(v, path)
        for i, row in enumerate(v):
            self.nums(row, f"{path}[{i}]", ncols, **kw)
        return v

    # ---- envelope --------------------------------------------------------------------------
    def kind(self, d: Mapping, kind: str, *, required: bool = True) -> None:
        """``kind`` names this result type and ``format_version`` is one this release reads."""
        k = d.get("kind")
        if k is None and not required:
            pass
        elif k != kind:
            found = f"a saved {k!r} result" if isinstance(k, str) else "no lmforecast result"
            raise InputError(
                f"{self.where}: not a {KIND_LABELS.get(kind, 'saved ' + kind)}: it is {found} "
                f"(field 'kind' is {fmt_value(k)})"
            )
        v = d.get("format_version")
        if v is None and not required:
            return
        if isinstance(v, bool) or not isinstance(v, int) or v not in SUPPORTED_VERSIONS[kind]:
            known = ", ".join(str(x) for x in sorted(SUPPORTED_VERSIONS[kind]))
            self.fail(
                "format_version",
                f"unknown version of a saved {kind}; this release reads version {known} "
                "(re-create the file with this release)",
                v,
            )


# ---- FitResult -----------------------------------------------------------------------------
FIT_RESULT_FIELDS = (
    "law",
    "theta",
    "params",
    "objective",
    "loss",
    "n_obs",
    "n_starts",
    "n_polished",
    "n_at_best",
    "converged",
    "message",
    "residual_scale",
    "rmse_target",
    "warm_starts",
    "ci",
    "ci_level",
    "bootstrap",
    "bootstrap_seed",
    "meta",
    "format_version",
    "kind",
)

FIT_RESULT_REQUIRED = FIT_RESULT_FIELDS[:10]


def _dataclass_fields(kind: str) -> set[str]:
    """The fields a result type's dataclass has today (plus the envelope): unknown keys are
    refused, and a field added to the dataclass is accepted without touching this module."""
    import dataclasses

    if kind == "FitResult":
        from ..fitting.result import FitResult as cls
    else:
        from ..salience.result import SalienceFit as cls
    return {f.name for f in dataclasses.fields(cls)} | {"kind", "format_version"}


def _init_args(cls) -> set[str]:
    import inspect

    return set(inspect.signature(cls.__init__).parameters) - {"self"}


def check_fit_result(d: Any, where: str, path: str = "") -> Mapping:
    """Validate the dict of a saved `FitResult` (the law fit inside every saved result).

    `path` prefixes field names when the fit is nested (``stage2``). Returns `d` unchanged.
    """
    d = Checker(where).obj(d, path)
    inner = Checker(where, path)
    inner.kind(d, "FitResult", required=not path)
    inner.keys(d, _dataclass_fields("FitResult"))
    for key in FIT_RESULT_REQUIRED:
        inner.get(d, key)
    meta = inner.obj(d.get("meta", {}), "meta")
    opts = meta.get("law_options", {})
    inner.obj(opts, "meta.law_options")
    name = inner.str_(d["law"], "law")
    from ..laws import available_laws, get_law

    if name not in available_laws():
        inner.fail("law", f"is not a registered law ({', '.join(available_laws())})", name)
    try:
        law = get_law(name, **opts)
    except Exception as exc:  # law options of the wrong shape
        inner.fail("meta.law_options", f"not valid for law {name!r}: {exc}")
    P = len(law.parameters)
    theta = inner.nums(d["theta"], "theta", P)
    for i, (par, v) in enumerate(zip(law.parameters, theta)):
        if not (par.lower - 1e-9 * max(1.0, abs(par.lower)) <= v):
            inner.fail(f"theta[{i}]", f"{par.name} must be >= {fmt_value(par.lower)}", v)
        if not (v <= par.upper + 1e-9 * max(1.0, abs(par.upper))):
            inner.fail(f"theta[{i}]", f"{par.name} must be <= {fmt_value(par.upper)}", v)
    params = inner.obj(d["params"], "params")
    natural = law.to_natural(theta)
    for k in params:
        if k not in natural:
            inner.fail(f"params.{k}", f"is not a parameter of law {name!r} ({', '.join(natural)})")
    for k, want in natural.items():
        # a finite theta can map to an infinite natural value (exp overflow of a flat fit's
        # scale, e.g. FP's C_M on a task with no trend); only then is inf the right value
        got = inner.num(inner.get(params, k, "params"), f"params.{k}", finite=not math.isinf(want))
        if not math.isclose(got, want, rel_tol=PARAMS_RTOL, abs_tol=1e-300):
            inner.fail(
                f"params.{k}",
                f"disagrees with theta ({fmt_value(want)} from theta); the file was edited by "
                "hand or is corrupt, re-create it",
                got,
            )
    inner.num(d["objective"], "objective", finite=False)
    loss = inner.obj(d["loss"], "loss")
    lname = inner.str_(inner.get(loss, "name", "loss"), "loss.name", ("huber", "squared"))
    if lname == "huber":
        inner.num(inner.get(loss, "delta", "loss"), "loss.delta", lo=0.0, lo_open=True)
    for key in ("n_obs", "n_starts", "n_polished", "n_at_best"):
        inner.int_(d[key], key)
    inner.bool_(d["converged"], "converged")
    inner.str_(d.get("message", ""), "message")
    for key in ("residual_scale", "rmse_target"):
        if key in d:
            inner.num(d[key], key, finite=False, lo=0.0)
    if "warm_starts" in d:
        inner.matrix(d["warm_starts"], "warm_starts", P, finite=False)
    ci = inner.obj(d.get("ci", {}), "ci")
    for k, v in ci.items():
        if k not in natural:
            inner.fail(f"ci.{k}", f"is not a parameter of law {name!r}")
        lo, hi = inner.nums(v, f"ci.{k}", 2, finite=False)
        if lo > hi:
            inner.fail(f"ci.{k}", "lower bound exceeds upper bound", v)
    inner.num(d.get("ci_level"), "ci_level", lo=0.0, hi=1.0, lo_open=True, hi_open=True, none=True)
    inner.matrix(d.get("bootstrap", []), "bootstrap", P, finite=False)
    for i, row in enumerate(d.get("bootstrap", [])):
        if any(math.isinf(x) for x in row):
            inner.fail(f"bootstrap[{i}]", "must hold finite numbers or NaN (a failed resample)")
    inner.int_(d.get("bootstrap_seed"), "bootstrap_seed", lo=None, none=True)
    return d


# ---- numeric arrays ------------------------------------------------------------------------
def _array(c: Checker, v: Any, path: str, shape: tuple, *, finite: bool = True):
    """A nested list of numbers of the given shape (None in `shape`: any length)."""
    import numpy as np

    def walk(x, depth, p):
        if depth == len(shape):
            c.num(x, p, finite=finite)
            return
        c.list_(x, p, shape[depth])
        for i, y in enumerate(x):
            walk(y, depth + 1, f"{p}[{i}]")

    walk(v, 0, path)
    return np.asarray(v, float)


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
    c.keys(s, ("name", "random_performance", "metric", "evaluation"), "settings")
    c.str_(c.get(s, "name", "settings"), "settings.name")
    c.num(c.get(s, "random_performance", "settings"), "settings.random_performance", lo=0.0)
    c.str_(s.get("metric", ""), "settings.metric")
    c.str_(s.get("evaluation", ""), "settings.evaluation")


def _common_config(c: Checker, cfg: Mapping) -> None:
    c.str_(c.get(cfg, "task", "config"), "config.task")
    c.num(cfg.get("random_performance"), "config.random_performance", lo=0.0, none=True)
    c.num(cfg.get("threshold", 5.0), "config.threshold", lo=0.0)
    c.int_(cfg.get("train_loss_decimals", 2), "config.train_loss_decimals", none=True)
    c.int_(cfg.get("bootstrap", 0), "config.bootstrap")
    c.int_(cfg.get("seed", 0), "config.seed")


# ---- FLP -----------------------------------------------------------------------------------
def check_flp(d: Any, where: str) -> Mapping:
    """Validate a saved `FLP` (flp fit --out)."""
    from ..flp.model import METHODS

    c = Checker(where)
    d = c.obj(d)
    c.kind(d, "FLP")
    fields = ("kind", "format_version", "config", "settings", "filter", "n_runs", "n_points")
    for k in fields[2:] + ("stage1", "stage2"):
        c.get(d, k)
    cfg = c.obj(d["config"], "config")
    from ..flp.model import FLP

    c.keys(cfg, _init_args(FLP), "config")
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
    if b2.get("meta", {}).get("r2") is not None:  # stage2_r2_, printed by summary()
        c.num(b2["meta"]["r2"], "stage2.meta.r2", hi=1.0)
    return d


# ---- FLP-M ---------------------------------------------------------------------------------
def check_network(c: Checker, n: Any, K: int, path: str = "network") -> None:
    n = c.obj(n, path)
    c.keys(n, ("config", "x_mean", "x_std", "y_mean", "y_std", "params", "train_mse",
               "init_mse", "boot_params", "n_boot_discarded"), path)  # fmt: skip
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
        _array(c, p, f"{path}.params[{i}]", s)
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
            _array(c, p, f"{path}.boot_params[{i}]", (B, *s))
    c.int_(n.get("n_boot_discarded", 0), f"{path}.n_boot_discarded")


def check_flpm(d: Any, where: str) -> Mapping:
    """Validate a saved `FLPM` (flpm fit --out)."""
    from ..flp.mixture import MAPPERS
    from ..laws.flp import MIXTURE_FORMS

    c = Checker(where)
    d = c.obj(d)
    c.kind(d, "FLPM")
    fields = ("config", "settings", "sources", "domains", "filter", "n_runs", "n_points",
              "stage1", "network", "coef")  # fmt: skip
    for k in fields:
        c.get(d, k)
    cfg = c.obj(d["config"], "config")
    from ..flp.mixture import FLPM

    c.keys(cfg, _init_args(FLPM), "config")
    _common_config(c, cfg)
    c.str_(c.get(cfg, "form", "config"), "config.form", MIXTURE_FORMS)
    mapper = c.str_(c.get(cfg, "mapper", "config"), "config.mapper", MAPPERS)
    c.num(cfg.get("ratio_floor", 1e-3), "config.ratio_floor", lo=0, hi=1, lo_open=True,
          hi_open=True)  # fmt: skip
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
        rng = v.get("meta", {}).get("share_range")
        if rng is not None:  # the sampling models' share of each source (mixture scans)
            rng = c.obj(rng, f"stage1.{k}.meta.share_range")
            for s in sources:
                lohi = c.nums(c.get(rng, s, f"stage1.{k}.meta.share_range"),
                              f"stage1.{k}.meta.share_range.{s}", 2, lo=0.0, hi=1.0)  # fmt: skip
                if lohi[0] > lohi[1]:
                    c.fail(f"stage1.{k}.meta.share_range.{s}", "must be [min, max]", lohi)
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
            _array(c, cb, "coef_boot", (None, len(coef)))
    c.num(d.get("residual_scale"), "residual_scale", lo=0.0, none=True)
    return d


# ---- salience ------------------------------------------------------------------------------
SALIENCE_FIELDS = ("task", "gamma", "alpha", "beta", "activation", "extractor", "theta", "bias",
                   "law", "text_ids", "text_lengths", "offsets", "weights", "models", "splits",
                   "scores", "capability", "metrics", "settings")  # fmt: skip


def check_salience(d: Any, where: str) -> Mapping:
    """Validate a saved `SalienceFit` (salience fit --out)."""
    c = Checker(where)
    d = c.obj(d)
    c.kind(d, "SalienceFit")
    c.keys(d, _dataclass_fields("SalienceFit"))
    for k in SALIENCE_FIELDS:
        c.get(d, k)
    c.str_(d["task"], "task")
    gamma = c.num(d["gamma"], "gamma", lo=0.0, hi=1.0, hi_open=True)
    alpha = c.num(d["alpha"], "alpha")
    beta = c.num(d["beta"], "beta")
    c.str_(d["activation"], "activation")
    c.obj(d["extractor"], "extractor")
    c.nums(d["theta"], "theta")
    c.num(d["bias"], "bias")
    law = check_fit_result(d["law"], where, "law")
    lg = law.get("meta", {}).get("law_options", {}).get("gamma")
    if lg is None or lg != gamma:
        c.fail("gamma", f"disagrees with law.meta.law_options.gamma ({fmt_value(lg)})", gamma)
    for k, v in (("alpha", alpha), ("beta", beta)):
        if law["params"].get(k) != v:
            c.fail(k, f"disagrees with law.params.{k} ({fmt_value(law['params'].get(k))})", v)
    n = len(c.list_(d["text_ids"], "text_ids", min_len=1))
    for i, t in enumerate(d["text_ids"]):
        c.str_(t, f"text_ids[{i}]")
    lengths = c.list_(d["text_lengths"], "text_lengths", n)
    for i, x in enumerate(lengths):
        c.int_(x, f"text_lengths[{i}]", lo=1)
    offs = c.list_(d["offsets"], "offsets", n)
    wts = c.list_(d["weights"], "weights", n)
    for i in range(n):
        w = c.nums(wts[i], f"weights[{i}]")
        o = c.list_(offs[i], f"offsets[{i}]", len(w))
        for j, pair in enumerate(o):
            a, b = c.list_(pair, f"offsets[{i}][{j}]", 2)
            c.int_(a, f"offsets[{i}][{j}][0]")
            c.int_(b, f"offsets[{i}][{j}][1]")
            if not a <= b <= lengths[i]:
                c.fail(f"offsets[{i}][{j}]", f"must satisfy 0 <= start <= end <= {lengths[i]}",
                       pair)  # fmt: skip
    m = len(c.list_(d["models"], "models"))
    c.list_(d["splits"], "splits", m)
    c.nums(d["scores"], "scores", m, lo=0.0, hi=1.0)
    c.nums(d["capability"], "capability", m, finite=False)
    c.obj(d["metrics"], "metrics")
    c.obj(d["settings"], "settings")
    c.matrix(d.get("history", []), "history", finite=False)
    c.matrix(d.get("bootstrap", []), "bootstrap", 2)
    return d


# ---- supervised coefficients inside a distillation fit -------------------------------------
def check_supervised_coefficients(c: Checker, s: Any, path: str) -> None:
    s = c.obj(s, path)
    for k in ("A", "B", "E", "alpha", "beta"):
        c.num(c.get(s, k, path), f"{path}.{k}", lo=0.0, lo_open=True)
    c.num(s.get("gamma", 1.0), f"{path}.gamma", lo=0.0, lo_open=True)
    extra = [k for k in s if k not in ("A", "B", "E", "alpha", "beta", "gamma")]
    if extra:
        c.fail(f"{path}.{extra[0]}", "is not a coefficient of Eq. 1")


def check_distill_fit(d: Any, where: str) -> Mapping:
    """Validate a saved distillation fit: a `FitResult` of the distillation law carrying the
    supervised (teacher) coefficients in ``meta.supervised``."""
    check_fit_result(d, where)
    c = Checker(where)
    from ..distill.model import LAW_NAME

    if d["law"] != LAW_NAME:
        c.fail("law", f"is not the distillation law {LAW_NAME!r} (is this a supervised fit?)",
               d["law"])  # fmt: skip
    meta = d.get("meta", {})
    if "supervised" not in meta:
        c.fail("meta.supervised", "is missing (the teacher's supervised coefficients)")
    check_supervised_coefficients(c, meta["supervised"], "meta.supervised")
    return d


# ---- supervised forecast intervals (meta["intervals"], meta["average"]) ---------------------
PAIR_KEYS = ("log_error", "log_ratio", "noise", "weight", "cutoff")


def check_supervised_meta(d: Mapping, where: str) -> None:
    """The interval calibration and model average a supervised fit carries in ``meta``
    (docs/trust.md): numbers where numbers are read, equal-length backtest pairs, positive
    compute; components of an average are full `FitResult`s."""
    c = Checker(where)
    meta = c.obj(d.get("meta", {}), "meta")
    cal = meta.get("intervals")
    if cal is not None:
        cal = c.obj(cal, "meta.intervals")
        c.num(c.get(cal, "max_compute", "meta.intervals"), "meta.intervals.max_compute",
              lo=0.0, lo_open=True)  # fmt: skip
        for k in ("max_N", "max_D"):
            if cal.get(k) is not None:
                c.num(cal[k], f"meta.intervals.{k}", lo=0.0, lo_open=True)
        c.num(cal.get("noise", 0.0), "meta.intervals.noise", lo=0.0)
        c.num(cal.get("bias_slope", 0.0), "meta.intervals.bias_slope")
        c.num(cal.get("k_fixed", 0.0), "meta.intervals.k_fixed", lo=0.0)
        if cal.get("pairs") is not None:
            pairs = c.obj(cal["pairs"], "meta.intervals.pairs")
            n = None
            for k in PAIR_KEYS[:4]:
                v = c.nums(c.get(pairs, k, "meta.intervals.pairs"), f"meta.intervals.pairs.{k}", n)
                n = len(v)
            for k in ("noise", "weight"):
                if any(x < 0 for x in pairs[k]):
                    c.fail(f"meta.intervals.pairs.{k}", "must hold numbers >= 0")
            if "cutoffs" in cal:
                c.nums(cal["cutoffs"], "meta.intervals.cutoffs")
        if cal.get("param_samples") is not None:
            c.matrix(cal["param_samples"], "meta.intervals.param_samples", len(d["theta"]))
    avg = meta.get("average")
    if avg is not None:
        avg = c.obj(avg, "meta.average")
        weights = c.obj(c.get(avg, "weights", "meta.average"), "meta.average.weights")
        comps = c.obj(c.get(avg, "components", "meta.average"), "meta.average.components")
        for f, w in weights.items():
            c.num(w, f"meta.average.weights.{f}", lo=0.0)
            if f not in comps:
                c.fail(f"meta.average.components.{f}", "is missing (every weighted form needs one)")
            check_fit_result(comps[f], where, f"meta.average.components.{f}")
