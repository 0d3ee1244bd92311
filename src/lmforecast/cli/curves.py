"""`lmforecast curves fit|predict|plan`: whole training curves under learning-rate schedules
(the multi-power law of Luo et al. 2025, the annealing law of Tissue et al. 2024; docs/curves.md).

Argument wiring only: the fit, the forecasts, their intervals and every note printed come from
`lmforecast.curves` (`CurveLaw`, `CurveForecast`, `plan_schedules`). The library is imported
when a verb runs, so ``lmforecast curves --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import InputError
from .common import check_out_format, emit, print_json
from .flags import _named, add_max_rows_flag, expand_si, float_range
from .options import add

LAWS = ("mpl", "annealing", "power")


def _plan_steps(text: str) -> int:
    """--steps of `curves plan` (`curves.inputs.plan_steps`; SI suffixes: 50K)."""
    from ..curves.inputs import plan_steps

    try:
        return plan_steps(expand_si(text))
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_plan_steps.si_suffixes = True  # read by `cli.flags.apply_flag_policy`: do not wrap it again
_NONNEG = float_range(0.0)


def register(sub) -> None:
    p = sub.add_parser("curves", help="loss curves under learning-rate schedules (MPL)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    f = verbs.add_parser(
        "fit",
        help="fit a curve law to whole training curves (run, step, lr, loss)",
        description="Fit a schedule-aware law to every logged point of every run; rows with a "
        "learning rate and no loss plan the rest of a run's schedule (docs/curves.md).",
    )
    add(f, "--runs", required=True, help="curves table: run, step, lr, loss, optional tokens and N")
    f.add_argument(
        "--law",
        choices=LAWS,
        default="mpl",
        help="mpl: multi-power law (Luo et al. 2025); annealing: Tissue et al. 2024; "
        "power: a power law in steps that ignores the schedule (baseline)",
    )
    add(
        f,
        "--bootstrap",
        help="resampled replicates (whole runs, blocks within a run) behind the "
        "intervals; 0: no interval",
    )
    add(f, "--seed")
    f.add_argument(
        "--prior",
        default="auto",
        metavar="PRIOR",
        help="hold the decay response (B, C, beta, gamma) at a prior: 'auto' (the "
        "bundled 'mpl-25m' for a model fitted from one run), 'none', 'mpl-25m', or a "
        "fit saved by `curves fit --out` from other runs (docs/curves.md)",
    )
    add(f, "--out", help="save the fit as JSON")
    add_max_rows_flag(f, default=2_000_000)
    add(f, "--json", "--quiet")
    f.set_defaults(handler=_fit)

    pr = verbs.add_parser(
        "predict",
        help="forecast the loss at every row of a schedule (mid-run, or a schedule never run)",
        description="A run of the schedule that has logged losses in the fit is continued from "
        "them; any other run is forecast from the parameters its model shares (docs/curves.md).",
    )
    add(pr, "--fit", help="a fit saved by `curves fit --out`")
    pr.add_argument(
        "--schedule",
        metavar="TABLE",
        required=True,
        help="schedule table: run, step, lr, optional tokens and N",
    )
    pr.add_argument("--final", action="store_true", help="only the last step of each run")
    add(pr, "--level")
    add(pr, "--out", help="write the forecasts: .csv (a table) or .json")
    add(pr, "--json", "--quiet")
    pr.set_defaults(handler=_predict)

    pl = verbs.add_parser(
        "plan",
        help="compare schedules for a step budget; best WSD cooldown and monotone schedule",
        description="Constant, cosine, linear decay and WSD over --steps under the fitted law, "
        "the best WSD cooldown fraction and the best monotone schedule, each with its forecast "
        "final loss and interval (docs/curves.md, Schedule planning).",
    )
    add(pl, "--fit", help="a fit saved by `curves fit --out`")
    pl.add_argument(
        "--steps",
        type=_plan_steps,
        required=True,
        metavar="T",
        help="training steps of the planned run (SI suffixes: 50K)",
    )
    pl.add_argument(
        "--run", help="plan for the model of this fitted run (default: the only model of the fit)"
    )
    pl.add_argument(
        "--peak-lr",
        type=_named(_NONNEG, "--peak-lr"),
        metavar="LR",
        help="peak learning rate (default: the fitted runs')",
    )
    pl.add_argument(
        "--floor-lr",
        type=_named(_NONNEG, "--floor-lr"),
        metavar="LR",
        help="final learning rate of the decaying schedules (default: the fitted runs' lowest)",
    )
    pl.add_argument(
        "--warmup",
        type=_named(_NONNEG, "--warmup"),
        metavar="STEPS",
        help="linear warmup steps (default: the fitted runs')",
    )
    pl.add_argument(
        "--decay",
        choices=("linear", "exp"),
        default="linear",
        help="the WSD cooldown: linear, or exponential to the floor",
    )
    add(pl, "--level")
    add(pl, "--out", help="save the plan as JSON")
    add(pl, "--json", "--quiet")
    pl.set_defaults(handler=_plan)


def _notes(notes) -> None:
    for n in notes:
        sys.stderr.write(f"lmforecast: note: {' '.join(str(n).split())}\n")


def _fit(args: argparse.Namespace) -> int:
    from ..curves import CurveLaw
    from ..curves.inputs import read_prior, read_runs
    from ..store import dump_json
    from .common import atomic_write_text, check_writable
    from .flags import check_max_rows

    out = check_writable(args.out, [args.runs])
    check_out_format(out, (".json",))
    table = read_runs(args.runs)
    check_max_rows(table, args)
    prior = read_prior(args.prior)
    est = CurveLaw(law=args.law, n_boot=args.bootstrap, seed=args.seed, prior=prior).fit(table)
    if out is not None:
        atomic_write_text(out, dump_json(est.to_dict()))
    source = {"source": f"fitted to {args.runs}"}
    return emit(args, est.contract() | source, est.summary())


def _predict(args: argparse.Namespace) -> int:
    from ..curves.inputs import load_fit, read_schedule_file
    from .common import atomic_write_text, check_writable

    out = check_writable(args.out, [args.fit, args.schedule])
    check_out_format(out, (".csv", ".json"))
    est = load_fit(args.fit)
    sched = read_schedule_file(args.schedule)
    fc = est.forecast(sched, level=args.level, final=args.final)
    if args.ledger is not None:  # the ledger (SQLite) is imported only when it is used
        from .ledger import record_forecast

        record_forecast(args, fc.ledger_record(sched, est.law))
    if out is not None:
        atomic_write_text(out, fc.file_text(out.suffix))
    if args.json:
        print_json(fc.contract())
    else:
        print(fc.table_text() if out is None else f"wrote {len(fc.table)} forecast(s) to {out}")
        _notes(fc.notes)
    return 0


def _plan(args: argparse.Namespace) -> int:
    from ..curves import plan_schedules
    from ..curves.inputs import load_fit
    from ..store import dump_json
    from .common import atomic_write_text, check_writable

    out = check_writable(args.out, [args.fit])
    check_out_format(out, (".json",))
    plan = plan_schedules(
        load_fit(args.fit),
        args.steps,
        run=args.run,
        peak_lr=args.peak_lr,
        floor_lr=args.floor_lr,
        warmup_steps=args.warmup,
        level=args.level,
        decay=args.decay,
    )
    d = plan.to_dict()
    if out is not None:
        atomic_write_text(out, dump_json(d))
    if args.json:
        print_json(d)
    else:
        print(plan.summary())
        _notes(d.get("notes", []))
    return 0
