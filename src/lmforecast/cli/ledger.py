"""`lmforecast ledger add|resolve|correct|score|show|export`, and the recorder behind the global
`--ledger PATH --label NAME` of every verb that forecasts (docs/ledger.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from .. import __version__
from ..data.io import read_table
from ..data.validate import check_columns, numeric_column
from ..errors import InputError
from ..ledger import Ledger, over_time, score_records, score_table
from ..ledger.records import check_forecast, sha256_file
from ..ledger.schema import ledger_target
from ..store.figures import figure_format, write_figure
from .common import add_output_flags, atomic_write_text, check_writable, print_json, to_jsonable
from .global_flags import FORECAST_VERBS, OWN_LEDGER_COMMANDS


def check_ledger_flags(args: argparse.Namespace) -> None:
    """At the door: --ledger only on forecasting verbs, and an existing file is a ledger, so a
    wrong file fails before any work (a new ledger is created when the forecast lands)."""
    cmd, verb = getattr(args, "command", None), getattr(args, "verb", None)
    if cmd in OWN_LEDGER_COMMANDS:
        return
    path = getattr(args, "ledger", None)
    if path is None:
        if getattr(args, "label", None) is not None:
            raise InputError("--label goes with --ledger PATH")
        return
    if (cmd, verb) not in FORECAST_VERBS:
        shown = " ".join(x for x in (cmd, verb) if x)
        raise InputError(f"--ledger: `{shown}` makes no forecast to register")
    target, exists = ledger_target(path, create=True)  # links, devices, read-only files
    if exists and target.stat().st_size > 0:
        Ledger(path).close()  # refuses a non-ledger; migrates an older one (after a backup)
    else:
        check_writable(path)  # created only when the verb registers its forecast


def _fit_info(path: str | None) -> dict:
    """`form` and `task` of a saved fit (JSON), where it names them."""
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


def forecast_records(args: argparse.Namespace, out: dict) -> list[dict]:
    """The ledger records of what a forecasting verb is about to print (`out`, its JSON)."""
    cmd = args.command
    fit = getattr(args, "fit", None) or getattr(args, "coefficients", None)
    fit = fit if fit and Path(fit).is_file() else None
    info = _fit_info(fit)
    form = getattr(args, "preset", None) or out.get("method") or info.get("form")
    table = next(
        (
            getattr(args, k)
            for k in ("benchmarks", "runs", "evals", "losses", "schedule")
            if isinstance(getattr(args, k, None), str) and Path(getattr(args, k)).is_file()
        ),
        None,
    )
    base = {
        "label": args.label or "",
        "method": cmd,
        "form": form,
        "task": out.get("task") or info.get("task"),
        "N": getattr(args, "params", None) or getattr(args, "student_params", None),
        "D": getattr(args, "tokens", None) or getattr(args, "student_tokens", None),
        "budget": getattr(args, "flops", None),
        "fit_sha256": sha256_file(fit),
        "input_sha256": sha256_file(table),
        "corrects": None,
    }
    if cmd == "supervised" and args.verb == "allocate":
        base.update(N=out["N"], D=out["D"])
    if cmd == "flpm":
        base["inputs"] = {"flops_per_source": args.flops_per_source}
        base["budget"] = sum(float(v) for v in str(args.flops_per_source).split(","))
    if cmd in ("supervised", "distill") and base["task"] is None:
        base["task"] = "loss"
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
        point = next(
            (
                it[k]
                for k in ("student_loss", "performance", "y_pred", "loss", "predicted")
                if it.get(k) is not None
            ),
            None,
        )
        if point is None:
            continue
        iv = it.get("interval") or out.get("interval")
        iv = iv if it is out or it.get("interval") else None
        level = it.get("level", out.get("level", getattr(args, "level", None)))
        rec = dict(base, run=it.get("model"))
        rec.update(
            check_forecast(
                method=cmd,
                point=point,
                lo=iv[0] if iv else None,
                hi=iv[1] if iv else None,
                level=level if iv else None,
                N=rec["N"],
                D=rec["D"],
                budget=rec["budget"],
            )
        )
        rec["inputs"] = json.dumps(to_jsonable(base.get("inputs", {})), sort_keys=True)
        recs.append(rec)
    return recs


def record_forecast(args: argparse.Namespace, out: dict) -> None:
    """Register what a forecasting verb prints, when the line has `--ledger PATH`."""
    path = getattr(args, "ledger", None)
    if path is None:
        return
    from ..ledger.store import now_iso

    recs = forecast_records(args, out)
    for r in recs:
        r.update(created=now_iso(), lmforecast_version=__version__)
    with Ledger(path, create=True) as L:
        ids = L.add_many(recs)
    shown = (f"{ids[0]}-{ids[-1]}" if len(ids) > 2 else ", ".join(map(str, ids))) or "none"
    sys.stderr.write(f"lmforecast: note: registered record(s) {shown} in {path}\n")


# -- the `ledger` command -------------------------------------------------------------------
def _selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", help="only records of this method")
    p.add_argument("--label", help="only records with this label")
    p.add_argument("--since", metavar="DATE", help="only records made on/after (ISO date)")
    p.add_argument("--until", metavar="DATE", help="only records made on/before (ISO date)")


def _ledger_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ledger", required=True, metavar="PATH", help="the ledger file (SQLite)")


def register(sub) -> None:
    p = sub.add_parser("ledger", help="a forecast ledger: register, resolve, score (SQLite)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    a = verbs.add_parser("add", help="register a forecast (creates the ledger if new)")
    _ledger_flag(a)
    a.add_argument("--method", required=True, help="forecasting method, e.g. supervised")
    a.add_argument("--point", type=float, required=True, help="the forecast value")
    a.add_argument("--lo", type=float, help="interval lower end")
    a.add_argument("--hi", type=float, help="interval upper end")
    a.add_argument("--level", type=float, help="interval level, strictly between 0 and 1")
    a.add_argument("--label", default="", help="a label to select records by")
    a.add_argument("--form", help="the law's form or the method's variant")
    a.add_argument("--run", help="name of the run being forecast")
    a.add_argument("--task", help="what is forecast (loss, or a task name)")
    a.add_argument("--params", type=float, metavar="N", help="parameters N of the run")
    a.add_argument("--tokens", type=float, metavar="D", help="tokens D of the run")
    a.add_argument("--flops", type=float, metavar="C", help="compute budget of the run")
    a.add_argument("--fit", help="the saved fit behind the forecast (its SHA-256 is recorded)")
    a.add_argument("--inputs", metavar="TABLE", help="the input table (its SHA-256 is recorded)")
    a.add_argument("--corrects", type=int, metavar="ID", help="this record corrects record ID")
    add_output_flags(a)
    a.set_defaults(handler=_add)
    r = verbs.add_parser("resolve", help="attach the observed value to a record (once)")
    _ledger_flag(r)
    r.add_argument("id", type=int, nargs="?", help="record id")
    r.add_argument("--observed", type=float, help="the observed value")
    r.add_argument(
        "--table", metavar="FILE", help="resolve many: a table with columns id, observed, source"
    )
    r.add_argument("--source", default="", help="where the observed value comes from")
    add_output_flags(r)
    r.set_defaults(handler=_resolve)
    c = verbs.add_parser(
        "correct",
        help="correct a record: a new record keeping its other fields (resolved or not)",
        description="Adds a record that copies record ID's fields, changes the ones given, "
        "names ID as the record it corrects and is resolved with --observed (or with ID's "
        "observed value). Scores then use the correction instead of ID.",
    )
    _ledger_flag(c)
    c.add_argument("id", type=int, help="the record to correct")
    c.add_argument("--observed", type=float, help="the corrected observed value")
    c.add_argument("--source", help="where the corrected value comes from")
    for flag in ("point", "lo", "hi", "level"):
        c.add_argument(f"--{flag}", type=float, help=f"a corrected {flag}")
    for flag in ("label", "form", "run", "task"):
        c.add_argument(f"--{flag}", help=f"a corrected {flag}")
    add_output_flags(c)
    c.set_defaults(handler=_correct)
    s = verbs.add_parser("score", help="coverage, absolute errors and Winkler score")
    _ledger_flag(s)
    _selection(s)
    s.add_argument(
        "--by",
        choices=["method", "label", "form", "task", "none"],
        default="method",
        help="one row per value of this field",
    )
    s.add_argument("--plot", metavar="PNG", help="also draw coverage and error over time")
    add_output_flags(s)
    s.set_defaults(handler=_score)
    sh = verbs.add_parser("show", help="list records")
    _ledger_flag(sh)
    _selection(sh)
    add_output_flags(sh)
    sh.set_defaults(handler=_show)
    e = verbs.add_parser("export", help="write records to CSV or JSONL")
    _ledger_flag(e)
    _selection(e)
    e.add_argument("--out", required=True, help="output file (.csv or .jsonl)")
    add_output_flags(e)
    e.set_defaults(handler=_export)


def _records(args):
    """The selected records, read without writing anything; records whose digest does not match
    their content (edited outside lmforecast, behind the append-only triggers) are named in a
    warning."""
    with Ledger(args.ledger, readonly=True) as L:
        df = L.records(method=args.method, label=args.label, since=args.since, until=args.until)
        bad = L.verify_digests()
    if bad:
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        shown = ", ".join(map(str, bad[:10])) + more
        sys.stderr.write(
            f"lmforecast: warning: {args.ledger}: record(s) {shown} do not match their digest: "
            "edited outside lmforecast, behind the ledger's append-only rules\n"
        )
    return df


def _add(args) -> int:
    check_forecast(
        method=args.method,
        point=args.point,
        lo=args.lo,
        hi=args.hi,
        level=args.level,
        N=args.params,
        D=args.tokens,
        budget=args.flops,
        point_inside=True,
    )
    with Ledger(args.ledger, create=True) as L:
        rid = L.add(
            method=args.method,
            point=args.point,
            lo=args.lo,
            hi=args.hi,
            level=args.level,
            label=args.label,
            form=args.form,
            run=args.run,
            task=args.task,
            N=args.params,
            D=args.tokens,
            budget=args.flops,
            fit=args.fit,
            inputs_table=args.inputs,
            corrects=args.corrects,
        )
    if args.json:
        print_json({"id": rid, "ledger": args.ledger})
    else:
        print(f"record {rid} added to {args.ledger}")
    return 0


def _resolve(args) -> int:
    if (args.table is None) == (args.id is None or args.observed is None):
        raise InputError("give a record ID with --observed VALUE, or --table FILE")
    if args.table is not None:
        t = read_table(args.table)
        check_columns(t, ["id", "observed"], args.table)
        src = t["source"].fillna("").astype(str) if "source" in t else [args.source] * len(t)
        ids = numeric_column(t, "id", lower=1, what=args.table)
        frac = ids != np.round(ids)
        if frac.any():  # a resolve is permanent: never truncate 4.5 to record 4
            i = int(np.argmax(frac))
            raise InputError(
                f"{args.table}: column 'id' row {i + 1}: {ids[i]:g} is not a record id "
                "(a whole number)"
            )
        items = list(zip(ids.astype(int), numeric_column(t, "observed", what=args.table), src))
    else:
        items = [(args.id, args.observed, args.source)]
    with Ledger(args.ledger) as L:
        L.resolve_many(items)
    if args.json:
        print_json({"resolved": [{"id": int(i), "observed": float(o)} for i, o, _ in items]})
    else:
        print(f"resolved {len(items)} record(s): " + ", ".join(f"{i} = {o:g}" for i, o, _ in items))
    return 0


def _correct(args) -> int:
    changes = {
        k: getattr(args, k) for k in ("point", "lo", "hi", "level", "label", "form", "run", "task")
    }
    with Ledger(args.ledger) as L:
        rid = L.correct(args.id, observed=args.observed, source=args.source, **changes)
    if args.json:
        print_json({"id": rid, "corrects": args.id, "ledger": args.ledger})
    else:
        print(f"record {rid} added to {args.ledger}, correcting record {args.id}")
    return 0


def _score(args) -> int:
    png = check_writable(args.plot, [args.ledger], flag="--plot")
    if png is not None:
        figure_format(png, flag="--plot")  # before any work: `--plot s.txt`
    df = _records(args)
    res = score_records(df, by=None if args.by == "none" else args.by)
    if png is not None:
        from ..plots.ledger import plot_over_time

        write_figure(plot_over_time(over_time(df)), png, flag="--plot")
    if args.json:
        print_json(res)
    else:
        print(score_table(res).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0


SHOW_COLUMNS = [
    "id",
    "created",
    "label",
    "method",
    "form",
    "run",
    "task",
    "N",
    "D",
    "budget",
    "point",
    "lo",
    "hi",
    "level",
    "observed",
    "superseded_by",
]


ID_COLUMNS = ("id", "superseded_by", "corrects")


def _json_records(df) -> list[dict]:
    """Records at full float precision (pandas' to_json rounds to 10 digits), ids as integers,
    missing values as null."""
    recs = to_jsonable(df.astype(object).where(df.notna(), None).to_dict(orient="records"))
    for r in recs:
        for k in ID_COLUMNS:
            if isinstance(r.get(k), float):
                r[k] = int(r[k])
    return recs


def _show(args) -> int:
    df = _records(args)
    if args.json:
        print_json(_json_records(df))
    elif df.empty:
        print("no records")
    else:
        d = df[SHOW_COLUMNS].astype(object).where(df[SHOW_COLUMNS].notna(), "")
        d["created"] = d["created"].str.slice(0, 19)
        print(d.to_string(index=False, na_rep="", float_format=lambda v: f"{v:.4g}"))
    return 0


def _export(args) -> int:
    check_writable(args.out, [args.ledger])  # before any work; never the ledger itself
    df = _records(args)
    if args.out.endswith(".jsonl"):
        text = "".join(json.dumps(r, allow_nan=False) + "\n" for r in _json_records(df))
    elif args.out.endswith(".csv"):
        text = df.to_csv(index=False)
    else:
        raise InputError(f"--out {args.out}: use a .csv or .jsonl file name")
    atomic_write_text(args.out, text)
    if args.json:
        print_json({"records": len(df), "out": args.out})
    else:
        print(f"wrote {len(df)} records to {args.out}")
    return 0
