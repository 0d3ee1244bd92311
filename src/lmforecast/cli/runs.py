"""`lmforecast runs import`: training logs (W&B, TensorBoard, JSONL, CSV) to the runs and
checkpoints tables (docs/logs.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..data.logs import FORMATS, SCHEDULES
from ..data.logs.files import (
    check_import_outputs,
    curves_summary,
    import_counts,
    import_log_files,
    import_schedule,
)
from ..store.safe_write import refuse_same_outputs
from .common import check_out_format, check_writable, emit
from .options import add


def register(sub) -> None:
    p = sub.add_parser("runs", help="import training logs into the runs/checkpoints tables")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    im = verbs.add_parser(
        "import",
        help="W&B CSV exports, TensorBoard event files, JSONL/CSV step logs -> runs table",
        description="One row per run in --out (final loss, or the mean of the last k "
        "evaluations); one row per evaluation in --checkpoints-out, with `valid` marking the "
        "rows a law may use under the learning-rate schedule (docs/logs.md).",
    )
    im.add_argument("files", nargs="+", metavar="FILE", help="log files (or TensorBoard folders)")
    im.add_argument("--format", required=True, choices=FORMATS, help="the logs' format")
    add(
        im,
        "--out",
        help="the runs table to write (CSV; needs tokens and parameter "
        "counts); may be left out when --curves-out is given",
    )
    im.add_argument("--checkpoints-out", help="also write the checkpoints table (CSV)")
    im.add_argument("--step", help="column holding the step (default: step, _step, Step, ...)")
    im.add_argument("--loss", help="column holding the evaluation loss (default: loss, ...)")
    im.add_argument("--tokens", help="column holding tokens seen (default: tokens, ...)")
    im.add_argument(
        "--tokens-per-step",
        type=float,
        metavar="K",
        help="tokens per step, when the log has no tokens column",
    )
    im.add_argument(
        "--params", metavar="N|COL", help="non-embedding parameters: a number or a log column"
    )
    im.add_argument(
        "--params-total",
        metavar="N|COL",
        help="parameters with embeddings: a number or a log column",
    )
    im.add_argument(
        "--models", metavar="TABLE", help="model table with columns model, N and optionally N_total"
    )
    im.add_argument("--run", metavar="COL", help="column naming the run (default: file name)")
    im.add_argument("--train-loss", metavar="COL", help="column holding the training loss")
    im.add_argument(
        "--lr",
        metavar="COL",
        help="column holding the learning rate (default: "
        "lr, learning_rate, optim/learning_rate_group0, ...)",
    )
    im.add_argument(
        "--curves-out",
        metavar="PATH",
        help="also write the curves table run, "
        "step, lr, loss[, tokens, N] that `curves fit` reads (CSV); without --out "
        "it is written alone and tokens and --params are optional",
    )
    im.add_argument("--keep", metavar="COLS", help="comma-separated extra columns to carry")
    im.add_argument("--final", default="last", help="final loss: last, or mean:k of the last k")
    im.add_argument(
        "--schedule", choices=SCHEDULES, default="cosine", help="learning-rate schedule of the runs"
    )
    im.add_argument(
        "--constant-lr",
        action="store_true",
        help="same as --schedule constant: every checkpoint is valid",
    )
    im.add_argument(
        "--cooldown-ends", metavar="STEPS", help="with --schedule wsd: steps ending a cooldown"
    )
    add(im, "--json", "--quiet")
    im.set_defaults(handler=_import)


def _import(args: argparse.Namespace) -> int:
    curves_only = check_import_outputs(args.out, args.checkpoints_out, args.curves_out)
    check_writable(args.out, args.files)
    ck_out = check_writable(args.checkpoints_out, args.files, flag="--checkpoints-out")
    check_out_format(None if curves_only else Path(args.out), (".csv",))
    check_out_format(ck_out, (".csv",), flag="--checkpoints-out")
    cv_out = check_writable(args.curves_out, args.files, flag="--curves-out")
    check_out_format(cv_out, (".csv",), flag="--curves-out")
    refuse_same_outputs(
        [("--out", args.out), ("--checkpoints-out", ck_out), ("--curves-out", cv_out)]
    )
    schedule, ends = import_schedule(args.schedule, args.constant_lr, args.cooldown_ends)
    res = import_log_files(
        args.files,
        args.format,
        out=args.out,
        checkpoints_out=ck_out,
        curves_out=cv_out,
        models=args.models,
        keep=args.keep,
        tokens_per_step=args.tokens_per_step,
        step=args.step,
        loss=args.loss,
        tokens=args.tokens,
        params=args.params,
        params_total=args.params_total,
        run=args.run,
        train_loss=args.train_loss,
        final=args.final,
        schedule=schedule,
        cooldown_ends=ends,
        lr=args.lr,
    )
    if curves_only:
        text = f"wrote {cv_out}: " + curves_summary(res)
    else:
        text = f"wrote {args.out}: " + res.summary()
    return emit(args, import_counts(res), text)
