"""`lmforecast compare-recipes`: effective compute of a new recipe over a base recipe."""

from __future__ import annotations

from ..data.io import read_table
from ..recipes import compare_recipes
from .common import (
    atomic_write_text,
    check_writable,
    emit,
)
from .options import add


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
    add(p, "--flops")
    add(p, "--bootstrap", help="paired bootstrap refits of both frontiers for the interval")
    add(p, "--seed", "--n-col", "--d-col", "--c-col", "--loss-col")
    add(p, "--out", help="save the comparison as JSON")
    add(p, "--level", "--json", "--quiet")
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
