"""`lmforecast backtest`: rolling-origin backtest of a forecasting method on a runs table."""

from __future__ import annotations

import io

from ..errors import InputError
from ..store.safe_write import write_many
from .common import (
    OneValue,
    atomic_write_text,
    check_out_format,
    check_writable,
    emit,
    figure_format,
    refuse_flags,
    require_runs,
)
from .flags import add_max_rows_flag, check_max_rows
from .options import add

METHODS = ("supervised",)
SUPERVISED_FORMS = ("auto", "chinchilla", "chinchilla-gamma", "overtrain", "average")


def register(sub) -> None:
    p = sub.add_parser(
        "backtest",
        help="rolling-origin backtest in compute: fit below a cutoff, forecast above",
        description="Fit on the runs at or below each compute cutoff, forecast every run above "
        "it, and report relative error, interval coverage and width against the extrapolation "
        "ratio (forecast compute / largest fitted compute), beside naive baselines.",
    )
    add(p, "--runs", help="CSV/Parquet/JSONL of runs (N, D or C, loss) (required)")
    add_max_rows_flag(p)  # bounded work on huge tables
    add(p, "--method", choices=METHODS, default="supervised")
    add(p, "--form", choices=SUPERVISED_FORMS)
    p.add_argument(
        "--suite",
        action="store_true",
        help="trust table instead of rolling origin: honest splits of the runs (largest size "
        "out, two largest sizes out, top 20%% compute out) with the default fit and simple laws "
        "beside (1-D compute law, chinchilla, overtrain); docs/trust.md",
    )
    add(
        p,
        "--replicates",
        help="rows sharing (N, D) are seed replicates: average or keep them (default: refuse)",
    )
    p.add_argument("--cutoffs", help="comma-separated compute cutoffs, e.g. 1e19,1e20")
    add(p, "--n-cutoffs")
    p.add_argument("--min-train", type=int, default=8, help="fewest runs a chosen cutoff fits on")
    add(p, "--level")
    p.add_argument(
        "--compute-col",
        "--c-col",
        action=OneValue,
        dest="compute_col",
        default="C",
        help="compute column (default C; else 6ND)",
    )
    add(p, "--n-col", "--d-col", "--loss-col")
    p.add_argument("--no-baselines", action="store_true", help="skip the naive baselines")
    add(p, "--bootstrap", default=None, metavar=None, help="bootstrap resamples per fit")
    add(p, "--seed")
    add(p, "--out", metavar="TABLE", help="write every forecast as a CSV table")
    p.add_argument("--plot", metavar="PNG", help="write the calibration figure")
    add(p, "--json", "--quiet")
    p.set_defaults(handler=_backtest)


def _parse_cutoffs(text: str | None) -> list[float] | None:
    if text is None:
        return None
    out = []
    for part in text.split(","):
        try:
            out.append(float(part))
        except ValueError:
            raise InputError(f"--cutoffs: {part.strip()!r} is not a number") from None
    if not out:
        raise InputError("--cutoffs: give at least one number")
    return out


def load_runs(args):
    """The runs table with N, D, loss (validated) plus the compute column when given."""
    import pandas as pd

    from ..data.io import read_table
    from ..supervised import runs_from_frame

    df = read_table(require_runs(args))
    check_max_rows(df, args)
    if args.compute_col != "C" and args.compute_col not in df.columns:
        raise InputError(
            f"--compute-col: no column {args.compute_col!r} in {args.runs} "
            f"(columns: {', '.join(map(str, df.columns))})"
        )
    data = runs_from_frame(
        df,
        n_col=args.n_col,
        d_col=args.d_col,
        c_col=args.compute_col,
        loss_col=args.loss_col,
        replicates=getattr(args, "replicates", None),
    )
    if args.compute_col in df.columns and len(data) == len(df):
        data["C"] = pd.to_numeric(df[args.compute_col], errors="coerce").to_numpy(float)
    return data


def _backtest(args) -> int:
    from ..backtest import rolling_origin
    from ..supervised.adapter import supervised_adapters

    out = check_writable(args.out)
    plot = check_writable(args.plot)
    fmt = "png" if plot is None else figure_format(plot, flag="--plot")
    cutoffs = _parse_cutoffs(args.cutoffs)
    if args.suite:  # flags of the rolling-origin backtest that a suite table does not use
        refuse_flags(
            {
                "--plot": args.plot is not None,
                "--cutoffs": args.cutoffs is not None,
                "--n-cutoffs": args.n_cutoffs != 4,
                "--min-train": args.min_train != 8,
                "--no-baselines": args.no_baselines,
            },
            "does not apply to --suite (its splits and simple laws are fixed: docs/trust.md)",
        )
    data = load_runs(args)
    if args.suite:
        return _suite(args, data, out)
    kw = {"seed": args.seed, "n_jobs": 1}
    if args.bootstrap is not None:
        kw["bootstrap"] = args.bootstrap
    adapters = supervised_adapters(args.form, baselines=not args.no_baselines, **kw)
    # validate the cutoffs before any fitting
    from ..backtest.engine import resolve_cutoffs

    _, cuts = resolve_cutoffs(data, "C", cutoffs, args.n_cutoffs, args.min_train)
    check_out_format(out, (".csv",))  # after the table's own errors, before any fit
    bt = rolling_origin(
        data, adapters, cutoffs=cuts, level=args.level, compute_col="C", progress=not args.quiet
    )
    bt.meta.update(runs=str(args.runs), form=args.form, method=args.method)
    png = None
    if plot is not None:
        from ..plots import backtest as plots

        fig = plots.calibration(bt)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=110, bbox_inches="tight")
        png = buf.getvalue()
    outs = [] if out is None else [(out, bt.forecasts.to_csv(index=False).encode(), "--out")]
    if png is not None:
        outs.append((plot, png, "--plot"))
    write_many(outs)  # both land or neither changes; mode per umask (safe_write)
    head = {"method": args.method, "form": args.form}
    return emit(args, head | bt.contract(), bt.summary())


def _suite(args, data, out) -> int:
    """`backtest --suite`: the trust table of docs/trust.md on the user's own runs
    (`supervised.adapter.trust_table_answer`)."""
    from ..supervised.adapter import check_trust_runs, trust_table_answer

    try:
        check_trust_runs(data)
    except InputError as exc:
        raise InputError(f"{args.runs}: {exc}") from None
    check_out_format(out, (".csv",))  # after the table's own errors, before any fit
    kw = {"seed": args.seed} | ({} if args.bootstrap is None else {"bootstrap": args.bootstrap})
    ans, forecasts = trust_table_answer(data, args.form, level=args.level, **kw)
    if out is not None:
        atomic_write_text(out, forecasts.to_csv(index=False))
    return emit(args, ans.contract(), ans.summary())
