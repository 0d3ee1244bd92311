"""Schema of a saved `FitResult` (the law fit inside every saved result), checked field by field
on load (docs/reliability.md lists the checks).

Besides types and ranges: a law's fit-space ``theta`` has one entry per law parameter, within the
law's bounds, and the reported ``params`` are exactly ``theta`` mapped to natural units (so a
hand-edited ``params.alpha`` cannot silently change one verb's answer and not another's);
bootstrap rows have one entry per parameter; intervals are ``[lo, hi]`` pairs; unknown fields are
refused (a typo such as ``"parms"`` is not silently ignored).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import fmt_value
from ..laws import available_laws, get_law
from ..store import Checker

LABEL = "saved lmforecast fit"

#: Relative tolerance of the params <-> theta agreement check (exp/log round trips lose a few
#: ulps; a hand edit changes far more).
PARAMS_RTOL = 1e-9

#: Every field of a saved `FitResult` (the dataclass's fields plus the envelope); a test checks
#: that it equals the dataclass's fields.
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


def check_fit_result(d: Any, where: str, path: str = "", kind: str = "FitResult") -> Mapping:
    """Validate the dict of a saved `FitResult` (the law fit inside every saved result).

    `path` prefixes field names when the fit is nested (``stage2``). `kind` is the ``kind`` the
    dict holds: an estimator saved as its `FitResult` (``SupervisedScalingLaw``,
    ``DistillationScalingLaw``, ``DataConstrainedLaw``) names its own class. Returns `d`
    unchanged.
    """
    d = Checker(where).obj(d, path)
    inner = Checker(where, path)
    inner.kind(d, kind, label=LABEL if kind == "FitResult" else None, required=not path)
    inner.keys(d, FIT_RESULT_FIELDS)
    for key in FIT_RESULT_REQUIRED:
        inner.get(d, key)
    meta = inner.obj(d.get("meta", {}), "meta")
    opts = meta.get("law_options", {})
    inner.obj(opts, "meta.law_options")
    name = inner.str_(d["law"], "law")
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
            v = inner.num(d[key], key, finite=False, lo=0.0)
            if v is not None and math.isinf(v):  # NaN: not computed; inf widens every interval
                inner.fail(key, "must be a finite number >= 0 (or NaN: not computed)", v)
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
        nan = [math.isnan(x) for x in row]
        if any(nan) and not all(nan):  # a failed resample is NaN throughout
            inner.fail(f"bootstrap[{i}]", "mixes NaN and numbers (a failed resample is all NaN)")
        for j, (par, v) in enumerate(zip(law.parameters, row)):
            slack = 1e-9 * max(1.0, abs(par.lower), abs(par.upper))
            if not math.isnan(v) and not (par.lower - slack <= v <= par.upper + slack):
                inner.fail(
                    f"bootstrap[{i}][{j}]",
                    f"{par.name} lies outside its bounds "
                    f"[{fmt_value(par.lower)}, {fmt_value(par.upper)}]",
                    v,
                )
    inner.int_(d.get("bootstrap_seed"), "bootstrap_seed", lo=None, none=True)
    return d
