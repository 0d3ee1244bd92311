"""`lmforecast shape test`: does width/depth matter beyond N (residual test against L(N, D))."""

from __future__ import annotations

from ..data.io import read_table
from ..errors import InputError
from ..shape import shape_test
from .common import (
    atomic_write_text,
    check_out_format,
    check_writable,
    emit,
    require_runs,
)
from .options import add


def register(sub) -> None:
    p = sub.add_parser("shape", help="width/depth: does model shape matter beyond N")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    t = verbs.add_parser("test", help="residual test of width/depth against the fitted L(N, D)")
    add(
        t,
        "--runs",
        help="CSV/Parquet/JSONL with N, D, loss, width and depth (one row per checkpoint or run) "
        "(required)",
    )
    add(t, "--loss-col")
    t.add_argument("--width-col", default="width", help="column holding the model width")
    t.add_argument("--depth-col", default="depth", help="column holding the number of layers")
    add(t, "--model-col", default=None)
    t.add_argument(
        "--permutations", type=int, default=2000, help="shape shuffles for the permutation p-value"
    )
    add(t, "--seed")
    add(t, "--out", help="save the test as JSON")
    add(t, "--json", "--quiet")
    t.set_defaults(handler=_test)


MIN_PERMUTATIONS = 19  # fewer can never give p < 0.05: (1 + 0) / (1 + n) >= 0.05


def _test(args) -> int:
    runs = require_runs(args)
    out = check_writable(args.out, [runs])
    check_out_format(out, (".json",))
    if args.permutations < MIN_PERMUTATIONS:
        raise InputError(
            f"--permutations must be >= {MIN_PERMUTATIONS} (fewer can never give "
            f"p < 0.05), got {args.permutations}"
        )
    res = shape_test(
        read_table(runs),
        loss_col=args.loss_col,
        width_col=args.width_col,
        depth_col=args.depth_col,
        model_col=args.model_col,
        n_perm=args.permutations,
        seed=args.seed,
    )
    if out is not None:
        atomic_write_text(out, res.to_json())
    return emit(args, res.contract(), res.summary())
