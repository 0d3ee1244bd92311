"""`lmforecast data-constrained epochs` and the `supervised fit --form data-constrained` path:
the data-constrained law of Muennighoff et al. (2023) from the command line."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..data.io import read_table
from ..dataconstrained import DataConstrainedLaw
from ..errors import InputError
from .common import (
    atomic_write_text,
    check_writable,
    emit,
    positive_float,
    refuse_flags,
    require_runs,
)
from .flags import check_max_rows
from .options import add

DEFAULT_BOOTSTRAP = 40


def register(sub) -> None:
    p = sub.add_parser(
        "data-constrained", help="data-constrained law (repeated epochs, Muennighoff et al.)"
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    e = verbs.add_parser("epochs", help="how many epochs of U unique tokens are worth training")
    add(e, "--fit", help="a fit saved by `supervised fit --form data-constrained --out`")
    add(e, "--params", required=True)
    e.add_argument(
        "--unique-tokens",
        type=positive_float("--unique-tokens"),
        required=True,
        metavar="U",
        help="unique training tokens U",
    )
    add(e, "--level", "--json", "--quiet")
    e.set_defaults(handler=_epochs)


def fit_from_args(args: argparse.Namespace) -> int:
    """`supervised fit --form data-constrained`: fit, save (--out), print (--json)."""
    out = check_writable(args.out)
    # flags of the N, D forms that this law's own estimator does not take (never ignored)
    refuse_flags(
        {
            "--replicates": args.replicates is not None,
            "--fix": bool(args.fix),
            "--calibration": args.calibration is not None,
            "--loss": args.loss != "huber",
            "--no-stack": args.no_stack,
            "--n-cutoffs": args.n_cutoffs is not None,
        },
        "does not apply to --form data-constrained (it fits every row, seed replicates "
        "included, by Huber on log loss: docs/datablations.md)",
    )
    df = read_table(require_runs(args))
    check_max_rows(df, args)
    n_boot = (
        0
        if args.no_intervals
        else (DEFAULT_BOOTSTRAP if args.bootstrap is None else args.bootstrap)
    )
    model = DataConstrainedLaw(
        fit=args.dc_fit or "joint",
        huber_delta=args.huber_delta,
        bootstrap=n_boot,
        ci_level=args.ci_level,
        seed=args.seed,
        n_jobs=args.jobs,
    )
    model.fit(
        df,
        n_col=args.n_col,
        d_col=args.d_col,
        u_col=args.u_col or "U",
        c_col=args.c_col,
        loss_col=args.loss_col,
    )
    res = model.result_
    res.meta["source"] = f"fitted to {args.runs}"
    if out is not None:
        atomic_write_text(out, model.to_json())
    return emit(args, model.contract(), model.summary())


def _epochs(args) -> int:
    if not Path(args.fit).exists():
        raise InputError(f"{args.fit}: no such file")
    model = DataConstrainedLaw.load(args.fit)
    ans = model.epochs_answer(args.params, args.unique_tokens, level=args.level)
    return emit(args, ans.contract(), ans.summary())
