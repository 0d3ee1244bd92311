"""`lmforecast next-run`: which run to train next for a tighter forecast of a target."""

from __future__ import annotations

from ..data.io import read_table
from ..nextrun import advise
from .common import (
    atomic_write_text,
    check_writable,
    emit,
    positive_float,
    require_runs,
)
from .flags import add_max_rows_flag, check_max_rows
from .options import add


def register(sub) -> None:
    p = sub.add_parser("next-run", help="rank candidate runs by interval shrinkage per FLOP")
    add(p, "--runs", help="CSV/Parquet/JSONL of the runs so far: N, D (or C) and loss (required)")
    add_max_rows_flag(p, default=10_000)  # memory grows with rows x refits x candidates
    p.add_argument(
        "--target-params",
        type=positive_float("--target-params"),
        required=True,
        metavar="N",
        help="parameters of the model to forecast",
    )
    p.add_argument(
        "--target-tokens",
        type=positive_float("--target-tokens"),
        required=True,
        metavar="D",
        help="training tokens of the model to forecast",
    )
    p.add_argument(
        "--budget",
        type=positive_float("--budget"),
        default=None,
        metavar="F",
        help="FLOPs (6ND) the next run may cost at most",
    )
    add(
        p, "--bootstrap", default=60, help="bootstrap refits that estimate the forecast covariances"
    )
    p.add_argument(
        "--min-gain",
        type=float,
        default=0.02,
        help="relative shrinkage below which more runs are said to stop helping",
    )
    p.add_argument(
        "--goal-width",
        type=float,
        default=None,
        help="interval width (log loss) to reach: rank by FLOPs needed to reach it",
    )
    p.add_argument(
        "--noise",
        type=float,
        default=None,
        help="run-to-run scatter of log loss (e.g. from seed replicates); default "
        "the fit's residual scale",
    )
    add(p, "--seed")
    add(p, "--out", help="save the advice as JSON")
    add(p, "--json", "--quiet")
    p.set_defaults(handler=_advise)


def _advise(args) -> int:
    runs = require_runs(args)
    out = check_writable(args.out, [runs])
    df = read_table(runs)
    check_max_rows(df, args)
    a = advise(
        df,
        args.target_params,
        args.target_tokens,
        budget=args.budget,
        n_boot=args.bootstrap,
        min_gain=args.min_gain,
        goal_width=args.goal_width,
        noise=args.noise,
        seed=args.seed,
    )
    if out is not None:
        atomic_write_text(out, a.to_json())
    return emit(args, a.contract(), a.summary())
