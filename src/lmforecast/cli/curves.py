"""`lmforecast curves fit|predict|plan`: whole training curves under learning-rate schedules
(the multi-power law of Luo et al. 2025, the annealing law of Tissue et al. 2024; docs/curves.md).

Argument wiring only: the fit, the forecasts, their intervals and every note printed come from
`lmforecast.curves` (`CurveLaw`, `CurveForecast`, `plan_schedules`). The library is imported
when a verb runs, so ``lmforecast curves --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InputError
from .common import add_level_flag, add_output_flags, check_out_format, emit, print_json
from .flags import add_max_rows_flag, expand_si

LAWS = ("mpl", "annealing", "power")
MAX_PLAN_STEPS = 100_000_000


def _plan_steps(text: str) -> int:
    """--steps of `curves plan`: a whole number of training steps (SI suffixes: 50K)."""
    try:
        v = float(expand_si(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--steps must be a whole number, got {text!r}") from None
    if not (v == v and v == int(v) and 1 <= v <= MAX_PLAN_STEPS):
        raise argparse.ArgumentTypeError(
            f"--steps must be a whole number in [1, {MAX_PLAN_STEPS:,}], got {text}"
        )
    return int(v)


_plan_steps.si_suffixes = True  # read by `cli.flags.apply_flag_policy`: do not wrap it again


def _nonneg_float(flag: str):
    def conv(text: str) -> float:
        try:
            v = float(expand_si(text))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a number, got {text!r}") from None
        if not (v == v and abs(v) != float("inf") and v >= 0):
            raise argparse.ArgumentTypeError(f"{flag} must be a finite number >= 0, got {text}")
        return v

    conv.__name__ = flag
    conv.si_suffixes = True
    return conv


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
    f.add_argument(
        "--runs",
        metavar="TABLE",
        required=True,
        help="curves table: run, step, lr, loss, optional tokens and N",
    )
    f.add_argument(
        "--law",
        choices=LAWS,
        default="mpl",
        help="mpl: multi-power law (Luo et al. 2025); annealing: Tissue et al. 2024; "
        "power: a power law in steps that ignores the schedule (baseline)",
    )
    f.add_argument(
        "--bootstrap",
        type=int,
        default=200,
        metavar="B",
        help="resampled replicates (whole runs, blocks within a run) behind the "
        "intervals; 0: no interval",
    )
    f.add_argument("--seed", type=int, default=0)
    f.add_argument(
        "--prior",
        default="auto",
        metavar="PRIOR",
        help="hold the decay response (B, C, beta, gamma) at a prior: 'auto' (the "
        "bundled 'mpl-25m' for a model fitted from one run), 'none', 'mpl-25m', or a "
        "fit saved by `curves fit --out` from other runs (docs/curves.md)",
    )
    f.add_argument("--out", help="save the fit as JSON")
    add_max_rows_flag(f, default=2_000_000)
    add_output_flags(f)
    f.set_defaults(handler=_fit)

    pr = verbs.add_parser(
        "predict",
        help="forecast the loss at every row of a schedule (mid-run, or a schedule never run)",
        description="A run of the schedule that has logged losses in the fit is continued from "
        "them; any other run is forecast from the parameters its model shares (docs/curves.md).",
    )
    pr.add_argument("--fit", required=True, help="a fit saved by `curves fit --out`")
    pr.add_argument(
        "--schedule",
        metavar="TABLE",
        required=True,
        help="schedule table: run, step, lr, optional tokens and N",
    )
    pr.add_argument("--final", action="store_true", help="only the last step of each run")
    add_level_flag(pr)
    pr.add_argument("--out", help="write the forecasts: .csv (a table) or .json")
    add_output_flags(pr)
    pr.set_defaults(handler=_predict)

    pl = verbs.add_parser(
        "plan",
        help="compare schedules for a step budget; best WSD cooldown and monotone schedule",
        description="Constant, cosine, linear decay and WSD over --steps under the fitted law, "
        "the best WSD cooldown fraction and the best monotone schedule, each with its forecast "
        "final loss and interval (docs/curves.md, Schedule planning).",
    )
    pl.add_argument("--fit", required=True, help="a fit saved by `curves fit --out`")
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
        type=_nonneg_float("--peak-lr"),
        metavar="LR",
        help="peak learning rate (default: the fitted runs')",
    )
    pl.add_argument(
        "--floor-lr",
        type=_nonneg_float("--floor-lr"),
        metavar="LR",
        help="final learning rate of the decaying schedules (default: the fitted runs' lowest)",
    )
    pl.add_argument(
        "--warmup",
        type=_nonneg_float("--warmup"),
        metavar="STEPS",
        help="linear warmup steps (default: the fitted runs')",
    )
    pl.add_argument(
        "--decay",
        choices=("linear", "exp"),
        default="linear",
        help="the WSD cooldown: linear, or exponential to the floor",
    )
    add_level_flag(pl)
    pl.add_argument("--out", help="save the plan as JSON")
    add_output_flags(pl)
    pl.set_defaults(handler=_plan)


def _input_file(path: str, flag: str) -> str:
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{flag} {path}: is a folder, expected a file")
    if not p.exists():
        raise InputError(f"{flag} {path}: no such file")
    return path


def _load(path: str):
    from ..curves import CurveLaw

    return CurveLaw.load(_input_file(path, "--fit"))


def _notes(notes) -> None:
    for n in notes:
        sys.stderr.write(f"lmforecast: note: {' '.join(str(n).split())}\n")


def _fit(args: argparse.Namespace) -> int:
    from ..curves import CurveLaw, read_curves
    from ..store import dump_json
    from .common import atomic_write_text, check_writable
    from .flags import check_max_rows

    out = check_writable(args.out, [args.runs])
    check_out_format(out, (".json",))
    table = read_curves(_input_file(args.runs, "--runs"), what=f"--runs {args.runs}")
    check_max_rows(table, args)
    est = CurveLaw(law=args.law, n_boot=args.bootstrap, seed=args.seed, prior=_prior(args.prior))
    est.fit(table)
    if out is not None:
        atomic_write_text(out, dump_json(est.to_dict()))
    source = {"source": f"fitted to {args.runs}"}
    return emit(args, est.contract() | source, est.summary())


def _prior(text: str):
    """--prior: a name (auto, none, a bundled prior) or a saved fit of other runs, whose decay
    parameters become the prior with the bundled prior's spread and widening."""
    from ..curves.prior import BUNDLED, CurvePrior

    if text in ("auto", *BUNDLED):
        return text
    if text == "none":
        return None
    if not Path(text).exists():
        raise InputError(
            f"--prior {text}: not one of auto, none, {', '.join(BUNDLED)} and no such file"
        )
    base = BUNDLED["mpl-25m"]
    return CurvePrior.from_fit(
        _load(_input_file(text, "--prior")), base.spread, f"the fit {text}", base.widen
    )


def _predict(args: argparse.Namespace) -> int:
    from ..curves import read_schedule
    from .common import check_writable

    out = check_writable(args.out, [args.fit, args.schedule])
    check_out_format(out, (".csv", ".json"))
    est = _load(args.fit)
    sched = read_schedule(
        _input_file(args.schedule, "--schedule"), what=f"--schedule {args.schedule}"
    )
    fc = est.forecast(sched, level=args.level, final=args.final)
    result = fc.to_dict()
    result["level"] = args.level
    if args.ledger is not None:  # the ledger (SQLite) is imported only when it is used
        from .ledger import record_forecast

        items = fc.final_forecasts(sched)
        record_forecast(args, {"forecasts": items, "level": args.level, "method": est.law})
    if out is not None:
        _write_forecasts(out, fc, result)
    if args.json:
        print_json(result)
    elif out is None:
        print(_text_table(fc.table, args.level))
    else:
        print(f"wrote {len(fc.table)} forecast(s) to {out}")
    if not args.json:
        _notes(result.get("notes", []))
    return 0


def _write_forecasts(out: Path, fc, result: dict) -> None:
    from ..store import dump_json
    from .common import atomic_write_text

    if out.suffix.lower() == ".json":
        atomic_write_text(out, dump_json(result))
    else:
        atomic_write_text(out, fc.table.to_csv(index=False))


def _text_table(table, level: float) -> str:
    def num(v, fmt):
        return "-" if v != v else format(float(v), fmt)

    lines = [f"{'run':<24} {'step':>10} {'loss':>9}  {100 * level:g}% interval"]
    for r in table.itertuples(index=False):
        iv = "not identified" if r.lo != r.lo else f"[{num(r.lo, '.4f')}, {num(r.hi, '.4f')}]"
        lines.append(f"{str(r.run):<24} {num(r.step, '.0f'):>10} {num(r.loss, '.4f'):>9}  {iv}")
    return "\n".join(lines)


def _plan(args: argparse.Namespace) -> int:
    from ..curves import plan_schedules
    from ..store import dump_json
    from .common import atomic_write_text, check_writable

    out = check_writable(args.out, [args.fit])
    check_out_format(out, (".json",))
    est = _load(args.fit)
    warm = None if args.warmup is None else args.warmup
    if warm is not None and warm != int(warm):
        raise InputError(f"--warmup must be a whole number of steps, got {warm:g}")
    plan = plan_schedules(
        est,
        args.steps,
        run=args.run,
        peak_lr=args.peak_lr,
        floor_lr=args.floor_lr,
        warmup_steps=None if warm is None else int(warm),
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
