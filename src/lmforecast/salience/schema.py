"""Schema of a saved `SalienceFit` (`salience fit --out`), checked field by field on load
(docs/reliability.md): types and ranges, the law fit inside it, and agreement of ``gamma``,
``alpha`` and ``beta`` with that law fit; unknown fields are refused. Scores are points in
[0, 100]; ``gamma`` is Eq. 2's, a fraction in [0, 1) (the chance level / 100)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import fmt_value
from ..fitting.schema import check_fit_result
from ..store import Checker

SALIENCE_FIELDS = (
    "task",
    "gamma",
    "alpha",
    "beta",
    "activation",
    "extractor",
    "theta",
    "bias",
    "law",
    "text_ids",
    "text_lengths",
    "offsets",
    "weights",
    "models",
    "splits",
    "scores",
    "capability",
    "metrics",
    "settings",
)
#: Fields a saved fit may lack, and the envelope; with SALIENCE_FIELDS these are the dataclass's
#: fields (a test checks it), anything else is refused.
SALIENCE_OPTIONAL = ("history", "bootstrap", "kind", "format_version")


def check_salience(d: Any, where: str) -> Mapping:
    """Validate a saved `SalienceFit` (salience fit --out)."""
    c = Checker(where)
    d = c.obj(d)
    c.kind(d, "SalienceFit", label="saved salience fit")
    c.keys(d, SALIENCE_FIELDS + SALIENCE_OPTIONAL)
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
                c.fail(
                    f"offsets[{i}][{j}]", f"must satisfy 0 <= start <= end <= {lengths[i]}", pair
                )
    m = len(c.list_(d["models"], "models"))
    c.list_(d["splits"], "splits", m)
    c.nums(d["scores"], "scores", m, lo=0.0, hi=100.0)  # points
    c.nums(d["capability"], "capability", m, finite=False)
    _metrics(c, c.obj(d["metrics"], "metrics"), "metrics")
    for name, m in c.obj(d["metrics"].get("baselines", {}), "metrics.baselines").items():
        _metrics(c, c.obj(m, f"metrics.baselines.{name}"), f"metrics.baselines.{name}")
    st = c.obj(d["settings"], "settings")
    if "optimizer" in st:  # the trained head's optimiser settings, shown by summary()
        c.str_(st["optimizer"], "settings.optimizer")
        c.num(c.get(st, "lr", "settings"), "settings.lr", lo=0.0, lo_open=True)
        c.int_(c.get(st, "n_steps", "settings"), "settings.n_steps", lo=0)
    c.matrix(d.get("history", []), "history", finite=False)
    c.matrix(d.get("bootstrap", []), "bootstrap", 2)
    return d


def _metrics(c, m, path: str) -> None:
    """Held-out MSEs of a fit or a baseline (summary() formats them as numbers)."""
    for k in ("train_mse", "validation_mse", "test_mse"):
        if k in m:
            c.num(m[k], f"{path}.{k}", lo=0.0, finite=False, none=True)
