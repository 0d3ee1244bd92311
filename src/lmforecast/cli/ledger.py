"""`lmforecast ledger add|resolve|correct|score|show|export`, and the recorder behind the global
`--ledger PATH --label NAME` of every verb that forecasts (docs/ledger.md)."""

from __future__ import annotations

import argparse
import sys

from ..errors import InputError
from ..ledger import Ledger, over_time, score_records, score_table
from ..ledger.forecasts import add_forecast, forecast_records, register_forecasts
from ..ledger.schema import ledger_target
from ..ledger.views import (
    digest_warning,
    export_text,
    json_records,
    observations,
    resolve_records,
    select_records,
    show_frame,
)
from ..store.figures import figure_format, write_figure
from .common import atomic_write_text, check_writable, emit, print_json
from .global_flags import FORECAST_VERBS, OWN_LEDGER_COMMANDS
from .options import add


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


#: The flags naming a verb's input table, in the order the recorded one is looked for.
TABLE_FLAGS = ("benchmarks", "runs", "evals", "losses", "schedule")


def record_forecast(args: argparse.Namespace, out: dict) -> None:
    """Register what a forecasting verb prints (`out`, its JSON), when the line has `--ledger
    PATH` (`ledger.forecasts`); one note line names the records."""
    path = getattr(args, "ledger", None)
    if path is None:
        return
    recs = forecast_records(
        args.command,
        getattr(args, "verb", None),
        out,
        fit=getattr(args, "fit", None) or getattr(args, "coefficients", None),
        tables=[getattr(args, k, None) for k in TABLE_FLAGS],
        label=args.label or "",
        N=getattr(args, "params", None) or getattr(args, "student_params", None),
        D=getattr(args, "tokens", None) or getattr(args, "student_tokens", None),
        budget=getattr(args, "flops", None),
        level=getattr(args, "level", None),
        preset=getattr(args, "preset", None),
        flops_per_source=getattr(args, "flops_per_source", None),
    )
    ids = register_forecasts(path, recs)
    shown = (f"{ids[0]}-{ids[-1]}" if len(ids) > 2 else ", ".join(map(str, ids))) or "none"
    sys.stderr.write(f"lmforecast: note: registered record(s) {shown} in {path}\n")


# -- the `ledger` command -------------------------------------------------------------------
def _selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", help="only records of this method")
    p.add_argument("--label", help="only records with this label")
    p.add_argument("--since", metavar="DATE", help="only records made on/after (ISO date)")
    p.add_argument("--until", metavar="DATE", help="only records made on/before (ISO date)")


def _ledger_flag(p: argparse.ArgumentParser) -> None:
    add(p, "--ledger", required=True, help="the ledger file (SQLite)")


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
    add(a, "--json", "--quiet")
    a.set_defaults(handler=_add)
    r = verbs.add_parser("resolve", help="attach the observed value to a record (once)")
    _ledger_flag(r)
    r.add_argument("id", type=int, nargs="?", help="record id")
    r.add_argument("--observed", type=float, help="the observed value")
    r.add_argument(
        "--table", metavar="FILE", help="resolve many: a table with columns id, observed, source"
    )
    r.add_argument("--source", default="", help="where the observed value comes from")
    add(r, "--json", "--quiet")
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
    add(c, "--json", "--quiet")
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
    add(s, "--json", "--quiet")
    s.set_defaults(handler=_score)
    sh = verbs.add_parser("show", help="list records")
    _ledger_flag(sh)
    _selection(sh)
    add(sh, "--json", "--quiet")
    sh.set_defaults(handler=_show)
    e = verbs.add_parser("export", help="write records to CSV or JSONL")
    _ledger_flag(e)
    _selection(e)
    add(e, "--out", required=True, help="output file (.csv or .jsonl)")
    add(e, "--json", "--quiet")
    e.set_defaults(handler=_export)


def _records(args):
    """The selected records; a warning names records that fail their digest."""
    df, bad = select_records(
        args.ledger, method=args.method, label=args.label, since=args.since, until=args.until
    )
    msg = digest_warning(args.ledger, bad)
    if msg:
        sys.stderr.write(f"lmforecast: warning: {msg}\n")
    return df


def _add(args) -> int:
    rid = add_forecast(
        args.ledger,
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
    text = f"record {rid} added to {args.ledger}"
    return emit(args, {"id": rid, "ledger": args.ledger}, text)


def _resolve(args) -> int:
    if (args.table is None) == (args.id is None or args.observed is None):
        raise InputError("give a record ID with --observed VALUE, or --table FILE")
    if args.table is not None:
        items = observations(args.table, args.source)
    else:
        items = [(args.id, args.observed, args.source)]
    resolve_records(args.ledger, items)
    obj = {"resolved": [{"id": int(i), "observed": float(o)} for i, o, _ in items]}
    text = f"resolved {len(items)} record(s): " + ", ".join(f"{i} = {o:g}" for i, o, _ in items)
    return emit(args, obj, text)


def _correct(args) -> int:
    changes = {
        k: getattr(args, k) for k in ("point", "lo", "hi", "level", "label", "form", "run", "task")
    }
    with Ledger(args.ledger) as L:
        rid = L.correct(args.id, observed=args.observed, source=args.source, **changes)
    text = f"record {rid} added to {args.ledger}, correcting record {args.id}"
    return emit(args, {"id": rid, "corrects": args.id, "ledger": args.ledger}, text)


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


def _show(args) -> int:
    df = _records(args)
    if args.json:
        print_json(json_records(df))
    elif df.empty:
        print("no records")
    else:
        d = show_frame(df)
        print(d.to_string(index=False, na_rep="", float_format=lambda v: f"{v:.4g}"))
    return 0


def _export(args) -> int:
    check_writable(args.out, [args.ledger])  # before any work; never the ledger itself
    df = _records(args)
    atomic_write_text(args.out, export_text(df, args.out))
    text = f"wrote {len(df)} records to {args.out}"
    return emit(args, {"records": len(df), "out": args.out}, text)
