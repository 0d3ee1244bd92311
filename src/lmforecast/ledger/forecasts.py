"""The ledger records of a forecast a verb printed, and their registration: what `--ledger PATH
--label NAME` does on a forecasting verb's line, callable from a notebook with plain values."""

from __future__ import annotations

import json
from pathlib import Path

from .. import __version__
from ..store import to_jsonable
from .records import check_forecast, sha256_file
from .store import Ledger, now_iso

#: The keys of a verb's JSON item holding the point forecast, in the order they are looked for.
POINT_KEYS = ("student_loss", "performance", "y_pred", "loss", "predicted")


def fit_info(path: str | Path | None) -> dict:
    """`form` and `task` of a saved fit (JSON), where it names them: a record names the law
    and the task even when the verb's output does not (FLP/FLP-M fits keep them under
    ``config``, supervised and distillation fits name the ``law``)."""
    if not path or not Path(path).is_file():
        return {}
    try:
        obj = json.loads(Path(path).read_text())
    except (ValueError, UnicodeDecodeError):
        return {}
    found: dict = {}
    subs = [obj.get(k, {}) for k in ("meta", "config")] if isinstance(obj, dict) else []
    for d in (obj, *subs):
        if isinstance(d, dict):
            for k, key in (("form", "form"), ("law", "form"), ("method", "form"), ("task", "task")):
                if isinstance(d.get(k), str) and key not in found:
                    found[key] = d[k]
    return found


def _base(method, verb, out, fit, table, label, N, D, budget, preset, flops_per_source) -> dict:
    """The fields every record of one forecast shares: label, method, form, task, inputs and the
    digests of the saved fit and the input table."""
    info = fit_info(fit)
    base = {
        "label": label or "",
        "method": method,
        "form": preset or out.get("method") or info.get("form"),
        "task": out.get("task") or info.get("task"),
        "N": N,
        "D": D,
        "budget": budget,
        "fit_sha256": sha256_file(fit),
        "input_sha256": sha256_file(table),
        "corrects": None,
    }
    if method == "supervised" and verb == "allocate":
        base.update(N=out["N"], D=out["D"])
    if method == "flpm":
        base["inputs"] = {"flops_per_source": flops_per_source}
        base["budget"] = sum(float(v) for v in str(flops_per_source).split(","))
    if method in ("supervised", "distill") and base["task"] is None:
        base["task"] = "loss"
    return base


def forecast_records(
    method: str,
    verb: str | None,
    out: dict,
    *,
    fit: str | Path | None = None,
    tables=(),
    label: str = "",
    N=None,
    D=None,
    budget=None,
    level=None,
    preset: str | None = None,
    flops_per_source=None,
) -> list[dict]:
    """The ledger records of a forecast: one per predicted item of `out` (a verb's JSON output:
    one forecast, or ``predictions``/``forecasts`` lists), checked as `check_forecast` checks a
    record. `fit` is the saved fit behind it (ignored when it is not a file, e.g. a preset name)
    and the first of `tables` that is a file is the input table; their SHA-256 are recorded so
    the record names exactly what it was made from. `N`, `D`, `budget` and `level` fill what an
    item does not carry; `flops_per_source` is FLP-M's comma-separated budget per source."""
    fit = fit if fit and Path(fit).is_file() else None
    table = next((t for t in tables if isinstance(t, str | Path) and Path(t).is_file()), None)
    base = _base(method, verb, out, fit, table, label, N, D, budget, preset, flops_per_source)
    items = out.get("predictions") or out.get("forecasts") or [out]
    recs = []
    for it in items:
        where = {"N": it.get("N"), "D": it.get("D"), "budget": it.get("flops")}  # per point
        if any(v is not None for v in where.values()) and it is not out:
            base = dict(
                base,
                **where,
                task=it.get("task") or base["task"],
                form=it.get("method") or base["form"],
            )
        point = next((it[k] for k in POINT_KEYS if it.get(k) is not None), None)
        if point is None:
            continue
        iv = it.get("interval") or out.get("interval")
        iv = iv if it is out or it.get("interval") else None
        lv = it.get("level", out.get("level", level))
        rec = dict(base, run=it.get("model"))
        rec.update(
            check_forecast(
                method=method,
                point=point,
                lo=iv[0] if iv else None,
                hi=iv[1] if iv else None,
                level=lv if iv else None,
                N=rec["N"],
                D=rec["D"],
                budget=rec["budget"],
            )
        )
        rec["inputs"] = json.dumps(to_jsonable(base.get("inputs", {})), sort_keys=True)
        recs.append(rec)
    return recs


def register_forecasts(path: str | Path, records: list[dict]) -> list[int]:
    """Add `records` (as `forecast_records` builds them) to the ledger at `path`, creating it
    if new, stamped with the time and the lmforecast version; returns their ids (all land in
    one transaction, or none)."""
    recs = [dict(r, created=now_iso(), lmforecast_version=__version__) for r in records]
    with Ledger(path, create=True) as L:
        return L.add_many(recs)


def add_forecast(path: str | Path, *, method: str, point, fit=None, inputs_table=None, **fields):
    """Register one forecast typed by hand (`ledger add`), creating the ledger if new; returns
    its id. The fields are checked first, and a point outside its interval is refused (a typo
    is likelier than a forecast outside its own interval)."""
    check_forecast(
        method=method,
        point=point,
        lo=fields.get("lo"),
        hi=fields.get("hi"),
        level=fields.get("level"),
        N=fields.get("N"),
        D=fields.get("D"),
        budget=fields.get("budget"),
        point_inside=True,
    )
    with Ledger(path, create=True) as L:
        return L.add(method=method, point=point, fit=fit, inputs_table=inputs_table, **fields)
