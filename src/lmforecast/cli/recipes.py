"""`lmforecast compare-recipes`: effective compute of a new recipe over a base recipe."""

from __future__ import annotations

from ..data.io import read_table
from ..recipes import compare_recipes
from .common import (
    add_level_flag,
    add_output_flags,
    atomic_write_text,
    check_writable,
    emit,
    positive_float,
)


def register(sub) -> None:
    p = sub.add_parser("compare-recipes", help="effective-compute multiplier of a new recipe")
    p.add_argument(
        "--base",
        required=True,
        metavar="TABLE",
        help="runs of the baseline recipe: C (or N and D) and loss",
    )
    p.add_argument(
        "--new", required=True, metavar="TABLE", help="runs of the new recipe (same columns)"
    )
    p.add_argument("--flops", type=positive_float("--flops"), required=True)
    p.add_argument(
        "--bootstrap",
        type=int,
        default=200,
        metavar="B",
        help="paired bootstrap refits of both frontiers for the interval",
    )
    p.add_argument("--seed", type=int, default=0)
    for col, default in (
        ("--n-col", "N"),
        ("--d-col", "D"),
        ("--c-col", "C"),
        ("--loss-col", "loss"),
    ):
        p.add_argument(col, default=default)
    p.add_argument("--out", help="save the comparison as JSON")
    add_level_flag(p)
    add_output_flags(p)
    p.set_defaults(handler=_compare)


def _compare(args) -> int:
    out = check_writable(args.out, [args.base, args.new])
    cols = {
        "n_col": args.n_col,
        "d_col": args.d_col,
        "c_col": args.c_col,
        "loss_col": args.loss_col,
    }
    res = compare_recipes(
        read_table(args.base),
        read_table(args.new),
        args.flops,
        n_boot=args.bootstrap,
        level=args.level,
        seed=args.seed,
        **cols,
    )
    if out is not None:
        atomic_write_text(out, res.to_json())
    return emit(args, res.contract(), res.summary())
