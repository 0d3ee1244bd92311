"""`lmforecast runs import`: training logs (W&B, TensorBoard, JSONL, CSV) to the runs and
checkpoints tables (docs/logs.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..data.io import read_table
from ..data.logs import FORMATS, SCHEDULES, import_logs, warn_if_misused
from ..data.logs.curves import LR_CANDIDATES
from ..errors import InputError
from ..store.safe_write import refuse_same_outputs, write_many
from .common import add_output_flags, check_out_format, check_writable, print_json


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
    im.add_argument(
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
    add_output_flags(im)
    im.set_defaults(handler=_import)


def _import(args: argparse.Namespace) -> int:
    if args.out is None and args.curves_out is None:
        raise InputError("give --out (the runs table) or --curves-out (the curves table)")
    if args.out is None and args.checkpoints_out is not None:
        raise InputError("--checkpoints-out goes with --out (both need tokens and --params)")
    curves_only = args.out is None
    check_writable(args.out, args.files)
    ck_out = check_writable(args.checkpoints_out, args.files, flag="--checkpoints-out")
    check_out_format(None if curves_only else Path(args.out), (".csv",))
    check_out_format(ck_out, (".csv",), flag="--checkpoints-out")
    cv_out = check_writable(args.curves_out, args.files, flag="--curves-out")
    check_out_format(cv_out, (".csv",), flag="--curves-out")
    refuse_same_outputs(
        [("--out", args.out), ("--checkpoints-out", ck_out), ("--curves-out", cv_out)]
    )
    schedule = "constant" if args.constant_lr else args.schedule
    if args.constant_lr and args.schedule not in ("cosine", "constant"):
        raise InputError(f"--constant-lr contradicts --schedule {args.schedule}")
    ends = []
    if args.cooldown_ends:
        if schedule != "wsd":
            raise InputError("--cooldown-ends goes with --schedule wsd")
        try:
            ends = [float(s) for s in args.cooldown_ends.split(",") if s.strip()]
        except ValueError:
            raise InputError(
                f"--cooldown-ends: not a list of steps: {args.cooldown_ends!r}"
            ) from None
    if args.tokens_per_step is not None and args.tokens_per_step <= 0:
        raise InputError(f"--tokens-per-step must be positive, got {args.tokens_per_step:g}")
    res = import_logs(
        args.files,
        args.format,
        step=args.step,
        loss=args.loss,
        tokens=args.tokens,
        tokens_per_step=args.tokens_per_step,
        params=args.params,
        params_total=args.params_total,
        models=None if args.models is None else read_table(args.models),
        models_label=f"--models {args.models}",
        run=args.run,
        train_loss=args.train_loss,
        keep=[c.strip() for c in (args.keep or "").split(",") if c.strip()],
        final=args.final,
        schedule=schedule,
        cooldown_ends=ends,
        lr=args.lr,
        curves_only=curves_only,
    )
    if curves_only:
        write_many([(cv_out, res.curves.to_csv(index=False).encode(), "--curves-out")])
        n_runs = res.curves["run"].nunique()
        if args.json:
            print_json(
                {
                    "runs": None,
                    "checkpoints": None,
                    "invalid_checkpoints": 0,
                    "curves": len(res.curves),
                    "columns": res.columns,
                    "schedule": res.schedule,
                }
            )
        else:
            print(
                f"wrote {cv_out}: {len(res.curves)} rows of {n_runs} run(s); columns: "
                f"{', '.join(res.curves.columns)}"
            )
        return 0
    if ck_out is not None and res.checkpoints is None:
        raise InputError("--checkpoints-out: a W&B summary export has no steps, only final runs")
    if cv_out is not None and res.curves is None:
        why = (
            "a W&B summary export has no steps"
            if res.checkpoints is None
            else f"the logs have no learning-rate column (looked for {', '.join(LR_CANDIDATES)}); "
            "name it with --lr COL"
        )
        raise InputError(f"--curves-out: {why}")
    if ck_out is not None:
        warn_if_misused(res)
    outs = [(args.out, res.runs.to_csv(index=False).encode(), "--out")]
    if ck_out is not None:
        outs.append((ck_out, res.checkpoints.to_csv(index=False).encode(), "--checkpoints-out"))
    if cv_out is not None:
        outs.append((cv_out, res.curves.to_csv(index=False).encode(), "--curves-out"))
    write_many(outs)  # both land, or (a full disk, a device) neither changes
    if args.json:
        print_json(
            {
                "runs": len(res.runs),
                "checkpoints": None if res.checkpoints is None else len(res.checkpoints),
                "invalid_checkpoints": res.n_invalid_checkpoints,
                "curves": None if res.curves is None else len(res.curves),
                "columns": res.columns,
                "schedule": res.schedule,
            }
        )
    else:
        print(f"wrote {args.out}: " + res.summary())
    return 0
