"""`lmforecast supervised fit|allocate|predict`: supervised compute laws from the command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import InputError
from ..supervised import FORMS, PRESETS, SupervisedScalingLaw
from .common import (
    atomic_write_text,
    check_out_format,
    check_writable,
    emit,
    require_runs,
)
from .flags import _named, add_max_rows_flag, bootstrap_converter, check_max_rows, parse_fixed
from .options import add


def register(sub) -> None:
    p = sub.add_parser("supervised", help="supervised pretraining-loss laws L(N, D)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    f = verbs.add_parser("fit", help="fit a law to a table of training runs")
    add(f, "--runs")
    add_max_rows_flag(f)  # bounded work on huge tables
    add(
        f,
        "--form",
        choices=(*FORMS, "data-constrained"),
        help="law form; auto = chinchilla-gamma where the runs identify its extra exponent, "
        "else chinchilla (the 1-D compute law for 4 runs), forecast as a stack with the "
        "over-training and 1-D compute laws weighted by an inner backtest on these runs "
        "(docs/trust.md)",
    )
    f.add_argument(
        "--no-stack",
        action="store_true",
        help="with --form auto (only), forecast with the chosen form alone (no inner-backtest "
        "stack)",
    )
    add(f, "--fix", "--replicates")
    f.add_argument(
        "--calibration",
        choices=["prior", "prior+backtest"],
        default=None,
        help="interval scale: the prior from real suites (default: prior), or updated by a "
        "size-cut backtest on these runs (not with --no-intervals)",
    )
    add(f, "--huber-delta", "--loss")
    add(
        f,
        "--bootstrap",
        type=bootstrap_resamples,
        default=None,
        help="cluster-bootstrap resamples of model sizes, each fitted from scratch (default 20; "
        "0: none, the calibrated interval then has no parameter-spread term); --form "
        "data-constrained: warm-started row resamples (default 40; 0: no interval); not with "
        "--no-intervals",
    )
    f.add_argument(
        "--no-intervals",
        action="store_true",
        help="point fit only: no bootstrap and no interval calibration (faster); refused "
        "beside --bootstrap B > 0 or --calibration",
    )
    add(
        f,
        "--n-cutoffs",
        default=None,
        help="--form average only: compute cutoffs of the inner backtest that weights its forms "
        "(default 4)",
    )
    add(f, "--ci-level", "--seed", "--jobs", "--n-col", "--d-col", "--c-col", "--loss-col")
    add(
        f,
        "--u-col",
        help="column holding unique tokens U (default U): --form data-constrained reads it; "
        "other forms refuse rows sharing N and D whose U differ (repeated-data runs)",
    )
    f.add_argument(
        "--dc-fit",
        choices=("joint", "two-stage"),
        default=None,
        help="data-constrained only: joint (default) fits all 7 parameters at once; two-stage "
        "fits E, A, B, alpha, beta on the single-epoch runs first, then R*_D, R*_N on all "
        "(docs/datablations.md)",
    )
    add(f, "--out", help="save the fit as JSON")
    add(f, "--json", "--quiet")
    f.set_defaults(handler=_fit)

    a = verbs.add_parser("allocate", help="compute-optimal N*, D* for a FLOPs budget")
    src = a.add_mutually_exclusive_group(required=True)
    add(src, "--fit", required=False, help="a fit saved by `supervised fit --out`")
    add(src, "--preset", help=f"published coefficients: {', '.join(sorted(PRESETS))}")
    add(a, "--flops", "--accounting", "--level", "--json", "--quiet")
    a.set_defaults(handler=_allocate)

    pr = verbs.add_parser("predict", help="predicted loss for N parameters and D tokens")
    src = pr.add_mutually_exclusive_group(required=True)
    add(src, "--fit", required=False)
    add(src, "--preset")
    add(pr, "--params", help="parameters (required unless --table)")
    amount = pr.add_mutually_exclusive_group()
    add(amount, "--tokens")
    add(
        amount,
        "--flops",
        required=False,
        metavar="C",
        help="training FLOPs instead of --tokens (D = C / 6N)",
    )
    pr.add_argument(
        "--table",
        metavar="ROWS.csv",
        help="one forecast per row: columns N and D (or N and C), optional loss "
        "(the truth: prints mean relative error and interval coverage) and run "
        "or label",
    )
    add(pr, "--out", help="with --table: the forecasts as .csv or .json")
    add(pr, "--level", "--json", "--quiet")
    pr.set_defaults(handler=_predict)


def record_forecast(args: argparse.Namespace, out: dict) -> None:
    """`cli.ledger.record_forecast` where the line has --ledger (the ledger's modules and sqlite3
    load only then: `supervised predict` answers within a second)."""
    if getattr(args, "ledger", None) is not None:
        from .ledger import record_forecast as record

        record(args, out)


def load_law(args) -> SupervisedScalingLaw:
    if getattr(args, "preset", None):
        return SupervisedScalingLaw.from_preset(args.preset)
    if not Path(args.fit).exists():
        raise InputError(f"{args.fit}: no such file")
    return SupervisedScalingLaw.load(args.fit)


# what 0 means here: no resamples, yet a default fit keeps its calibrated interval
bootstrap_resamples = _named(
    bootstrap_converter(
        "no resamples: a default fit's interval then lacks the parameter-spread term, a "
        "data-constrained fit has none; --no-intervals: no interval"
    ),
    "--bootstrap",
)


def refuse_ignored(args: argparse.Namespace) -> None:
    """Flags that the others given make do nothing, refused with the reason: --no-stack of a
    single form, --bootstrap or --calibration (even its default) beside --no-intervals (the
    command's point fit; Python's intervals=False keeps a bootstrap-only interval), --dc-fit
    of the N, D forms; `SupervisedScalingLaw` refuses the arguments it would ignore itself
    (`supervised.settings.refuse_ignored`), the data-constrained path its own
    (`cli.dataconstrained`)."""
    if args.no_stack and args.form != "auto":
        raise InputError(
            f"--no-stack applies only to --form auto (the default, which stacks); "
            f"--form {args.form} is never stacked"
        )
    if args.no_intervals and args.bootstrap:
        raise InputError(
            f"--bootstrap {args.bootstrap} does nothing with --no-intervals (a point fit has no "
            "interval for resamples to spread); drop one of them"
        )
    if args.form != "data-constrained":
        if args.no_intervals and args.calibration is not None:
            raise InputError(
                "--calibration does nothing with --no-intervals (a point fit has no interval "
                "to calibrate); drop one of them"
            )
        if args.dc_fit is not None:
            raise InputError("--dc-fit applies only to --form data-constrained")


def _fit(args: argparse.Namespace) -> int:
    refuse_ignored(args)
    if args.form == "data-constrained":  # Muennighoff et al. 2023: its own estimator
        from . import dataconstrained  # start-up: loaded for this form only

        return dataconstrained.fit_from_args(args)
    out = check_writable(args.out)
    from ..data.io import read_table  # pandas: loaded by the verbs that read a table

    df = read_table(require_runs(args))
    check_max_rows(df, args)
    if args.u_col is not None and args.u_col not in df.columns:
        raise InputError(
            f"--u-col {args.u_col!r}: the runs have no such column (found "
            f"{', '.join(map(repr, df.columns))}); drop the flag or name the unique-tokens column"
        )
    model = SupervisedScalingLaw(
        form=args.form,
        fixed=parse_fixed(args.fix),
        replicates=args.replicates,
        calibration=args.calibration or "prior",
        loss=args.loss,
        huber_delta=args.huber_delta,
        bootstrap=args.bootstrap,
        intervals=not args.no_intervals,
        n_cutoffs=args.n_cutoffs,
        ci_level=args.ci_level,
        seed=args.seed,
        n_jobs=args.jobs,
        progress=not args.quiet,
        stack=not args.no_stack,
    )
    model.fit(
        df,
        n_col=args.n_col,
        d_col=args.d_col,
        c_col=args.c_col,
        loss_col=args.loss_col,
        u_col=args.u_col or "U",
    )
    res = model.result_
    res.meta["source"] = f"fitted to {args.runs}"
    if out is not None:
        atomic_write_text(out, model.to_json())
    return emit(args, model.contract(), model.summary())


def _allocate(args) -> int:
    fc = load_law(args).allocation(args.flops, level=args.level, accounting=args.accounting)
    f = fc.contract()
    record_forecast(args, {k: f.get(k) for k in ("N", "D", "loss", "interval")})
    return emit(args, f, fc.summary())


def _predict(args) -> int:
    if args.table is not None:
        return _predict_table(args)
    if args.out is not None:
        raise InputError("--out applies to --table (one forecast per row)")
    if args.params is None or (args.tokens is None and args.flops is None):
        raise InputError("give --params with --tokens or --flops, or --table ROWS.csv")
    if args.tokens is None:
        args.tokens = args.flops / (6.0 * args.params)
    fc = load_law(args).forecast_one(args.params, args.tokens, level=args.level)
    record_forecast(args, fc.contract())
    return emit(args, fc.contract(), fc.summary())


def _predict_table(args) -> int:
    """--table ROWS: one forecast per row (`supervised.batch.forecast_table`), the held-out
    check where the rows give the loss, --out the rows as CSV or JSON."""
    from ..supervised.batch import table_answer

    given = [f for f in ("params", "tokens", "flops") if getattr(args, f) is not None]
    if given:
        raise InputError(f"--table gives the forecast points: drop --{given[0]}")
    if getattr(args, "ledger", None):
        raise InputError(
            "--ledger registers one forecast: not with --table (register the "
            "rows one by one, or keep the --out table)"
        )
    out = check_writable(args.out, [args.table, *([args.fit] if args.fit else [])])
    check_out_format(out, (".csv", ".json"))
    from ..data.io import read_table  # pandas: loaded for --table only

    ans, rows = table_answer(load_law(args), read_table(args.table), args.level)
    if out is not None:
        recs = ans.fields["forecasts"]
        is_csv = out.suffix.lower() == ".csv"
        atomic_write_text(
            out, rows.to_csv(index=False) if is_csv else json.dumps(recs, allow_nan=False) + "\n"
        )
    return emit(args, ans.contract(), ans.summary())
