"""`lmforecast isoflop fit|plot`: Hoffmann et al. (2022) Approaches 1 and 2 on isoFLOP runs."""

from __future__ import annotations

import io

from ..data.io import read_table
from ..isoflop import fit_isoflop, isoflop_table
from ..plots.isoflop import plot_isoflops
from .common import (
    atomic_write_bytes,
    atomic_write_text,
    check_writable,
    emit,
    figure_format,
    positive_floats,
    require_runs,
)
from .options import add


def register(sub) -> None:
    p = sub.add_parser("isoflop", help="isoFLOP estimators of N*(C), D*(C) (Hoffmann Approach 1/2)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    for name, helptext in (
        ("fit", "fit N*(C) ~ C^a and D*(C) ~ C^b with bootstrap intervals"),
        ("plot", "draw the isoFLOP curves and their minima (PNG/PDF/SVG)"),
    ):
        f = verbs.add_parser(name, help=helptext)
        add(
            f,
            "--runs",
            help="CSV/Parquet/JSONL with N, D (or C) and loss; budgets grouped by C (required)",
        )
        f.add_argument(
            "--approach",
            type=int,
            choices=[1, 2],
            default=2,
            help="1: best run of each budget; 2: parabola in log N per budget",
        )
        add(f, "--bootstrap", help="within-budget resamples for the intervals")
        add(f, "--ci-level", "--seed")
        if name == "fit":
            add(
                f,
                "--flops",
                type=positive_floats("--flops"),
                required=False,
                metavar="C1,C2,...",
                help="budgets at which to read N*(C), D*(C) with their intervals",
            )
        add(f, "--n-col", "--d-col", "--c-col", "--loss-col")
        add(
            f,
            "--out",
            required=name == "plot",
            help="save the fit as JSON" if name == "fit" else "figure file",
        )
        add(f, "--json", "--quiet")
        f.set_defaults(handler=_fit if name == "fit" else _plot)


def _result(args):
    df = read_table(require_runs(args))
    t = isoflop_table(df, args.n_col, args.d_col, args.c_col, args.loss_col)
    res = fit_isoflop(
        t,
        args.approach,
        n_boot=args.bootstrap,
        level=args.ci_level,
        seed=args.seed,
        at_flops=getattr(args, "flops", None) or (),
    )
    res.meta["source"] = f"fitted to {args.runs}"
    return t, res


def _fit(args) -> int:
    out = check_writable(args.out)
    _, res = _result(args)
    if out is not None:
        atomic_write_text(out, res.to_json())
    return emit(args, res.contract(), res.summary())


def _plot(args) -> int:
    out = check_writable(args.out)
    fmt = figure_format(out)  # before any work: `--out o.txt` was an internal error
    t, res = _result(args)
    fig = plot_isoflops(t, res)
    atomic_write_bytes(out, _figure_bytes(fig, fmt))
    return emit(args, {"out": str(out), **res.contract()}, f"wrote {out}")


def _figure_bytes(fig, fmt: str) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=120)
    return buf.getvalue()
