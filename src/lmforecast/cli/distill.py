"""`lmforecast distill predict|fit|plan|choose-teacher|crossover|ratios`: distillation scaling laws
(Busbridge et al. 2025) from the command line."""

from __future__ import annotations

from ..data.io import read_table
from .argtypes import positive_float
from .common import (
    atomic_write_text,
    check_writable,
    emit,
    require_runs,
)
from .flags import parse_fixed
from .ledger import record_forecast
from .options import add

#: --level of predict, plan and choose-teacher, whose JSON interval can be null.
_LEVEL_HELP = (
    "prediction-interval level, strictly between 0 and 1 (default 0.9); the JSON "
    'output carries the interval as "interval": [lo, hi], or as "interval": null with '
    '"interval_note" saying why (a fit saved with --bootstrap 0 has no draws; a teacher '
    "weaker than the student's supervised loss pins L_S at its loss, a zero-width "
    "interval)"
)


def register(sub) -> None:
    p = sub.add_parser("distill", help="distillation scaling laws and compute-optimal distillation")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    pr = verbs.add_parser("predict", help="student loss from student size, tokens and teacher")
    add(pr, "--student-params", "--student-tokens")
    t = pr.add_mutually_exclusive_group(required=True)
    add(t, "--teacher-loss", "--teacher-params")
    add(pr, "--teacher-tokens", "--coefficients")
    add(pr, "--level", help=_LEVEL_HELP)
    add(pr, "--json", "--quiet")
    pr.set_defaults(handler=_predict)

    f = verbs.add_parser("fit", help="fit Eq. 8 to distillation runs (N_S, D_S, L_T, L_S)")
    add(
        f,
        "--runs",
        help="CSV/Parquet/JSONL with student params, tokens, teacher and student losses (required)",
    )
    f.add_argument(
        "--supervised",
        default=None,
        metavar="LAW",
        help="supervised law for L~_S (Eq. 8): a `supervised fit --out` JSON, or `paper` "
        "(= busbridge2025, Table 6, English C4 only). Default: fit Eq. 1 to the table's "
        "supervised rows (empty L_T; N_S, D_S, L_S read as N, D, L); an error if there are none",
    )
    add(
        f,
        "--bootstrap",
        default=32,
        help="multi-started bootstrap resamples behind every interval (default 32; paper: "
        "4096; 0 = no intervals)",
    )
    f.add_argument(
        "--boot-polish",
        type=int,
        default=4,
        metavar="K",
        help="grid starts polished per resample besides the full-data optimum (default 4; 0 = "
        "warm-start only, too narrow where the data do not pin a coefficient)",
    )
    f.add_argument(
        "--boot-grid",
        choices=("thin", "full"),
        default="thin",
        help="grid each resample re-scores: thin (8,748 starts, default) or full (App. F.2)",
    )
    add(f, "--ci-level", "--seed", "--jobs")
    add(f, "--huber-delta", default=1e-4)
    add(f, "--fix", help='hold a coefficient fixed, e.g. --fix "gamma\'=0.764" (repeatable)')
    add(f, "--ns-col", "--ds-col", "--lt-col", "--ls-col")
    add(f, "--out", help="save the fit as JSON")
    add(f, "--json", "--quiet")
    f.set_defaults(handler=_fit)

    pl = verbs.add_parser("plan", help="compute-optimal distillation (Eq. 10) for a budget")
    add(pl, "--student-params", "--flops")
    add(
        pl,
        "--scenario",
        help="best-case | teacher-inference | teacher-pretraining | teacher-pretraining-inference",
    )
    add(pl, "--coefficients")
    add(pl, "--level", help=_LEVEL_HELP)
    add(pl, "--json", "--quiet")
    pl.set_defaults(handler=_plan)

    ct = verbs.add_parser("choose-teacher", help="rank existing teachers for a student")
    add(ct, "--student-params")
    budget = ct.add_mutually_exclusive_group(required=True)
    add(budget, "--student-tokens", required=False)
    add(budget, "--flops", required=False)
    ct.add_argument("--teachers", required=True, help="table with N_T and D_T (or L_T) columns")
    add(ct, "--scenario", default="teacher-inference")
    add(ct, "--coefficients")
    ct.add_argument(
        "--top",
        type=int,
        default=1000,
        metavar="K",
        help="show the best K teachers (default 1000); every teacher is ranked, intervals are "
        "computed for the K shown, so memory stays bounded on any table",
    )
    add(ct, "--level", help=_LEVEL_HELP)
    add(ct, "--json", "--quiet")
    ct.set_defaults(handler=_choose)

    ra = verbs.add_parser(
        "ratios",
        help="compute and token ratios distillation/supervised at equal student loss (App. D.5)",
    )
    add(ra, "--student-params")
    ra.add_argument(
        "--target-loss",
        type=positive_float("--target-loss"),
        nargs="+",
        required=True,
        metavar="L",
        help="student cross-entropies to reach (one or more)",
    )
    add(
        ra,
        "--scenario",
        default="all",
        help="all (default) | best-case | teacher-inference | teacher-pretraining | "
        "teacher-pretraining-inference",
    )
    add(ra, "--coefficients")
    add(
        ra,
        "--draws",
        default=0,
        help="also give confidence intervals of the ratios over the first K parameter "
        "draws (each re-runs the search: ~1 s per draw and scenario; default 0 = point "
        "values)",
    )
    add(ra, "--level", "--json", "--quiet")
    ra.set_defaults(handler=_ratios)

    co = verbs.add_parser("crossover", help="compute beyond which supervised beats distillation")
    add(co, "--student-params", "--scenario", "--coefficients", "--draws", "--level")
    add(co, "--json", "--quiet")
    co.set_defaults(handler=_crossover)


def _model(spec: str):
    from ..distill import DistillationScalingLaw

    return DistillationScalingLaw.from_spec(spec)


#: the inputs' names in the notes of predict and choose-teacher
FLAG_LABELS = {
    "N_S": "--student-params",
    "D_S": "--student-tokens",
    "N_T": "--teacher-params",
    "D_T": "--teacher-tokens",
    "L_T": "--teacher-loss",
    "top": "--top",
}


def _predict(args) -> int:
    from ..distill.student_answers import predict_answer

    m = _model(args.coefficients)
    ans = predict_answer(
        m,
        args.student_params,
        args.student_tokens,
        level=args.level,
        teacher_loss=args.teacher_loss,
        teacher_params=args.teacher_params,
        teacher_tokens=args.teacher_tokens,
        labels=FLAG_LABELS,
    )
    record_forecast(args, ans.contract())
    return emit(args, ans.contract(), ans.summary())


def _fit(args) -> int:
    from ..distill import DistillationScalingLaw

    out = check_writable(args.out)
    df = read_table(require_runs(args))
    model = DistillationScalingLaw(
        supervised=args.supervised,
        huber_delta=args.huber_delta,
        fixed=parse_fixed(args.fix),
        bootstrap=args.bootstrap,
        boot_polish=args.boot_polish,
        boot_grid=args.boot_grid,
        ci_level=args.ci_level,
        seed=args.seed,
        n_jobs=args.jobs,
        progress=not args.quiet and not args.json,
    )
    model.fit(df, ns_col=args.ns_col, ds_col=args.ds_col, lt_col=args.lt_col, ls_col=args.ls_col)
    res = model.result_
    res.meta["source"] = f"fitted to {args.runs}"
    if out is not None:
        atomic_write_text(out, model.to_json())
    text = model.summary() + "\n\nCoefficients and identified combinations (docs/distill.md):\n"
    return emit(args, model.contract(), text + model.coefficient_text())


def _plan(args) -> int:
    from ..distill.planning import get_scenario
    from ..distill.student_answers import plan_answer

    m, scenario = _model(args.coefficients), get_scenario(args.scenario)
    ans = plan_answer(m, args.student_params, args.flops, scenario, args.level)
    return emit(args, ans.contract(), ans.summary())


def _choose(args) -> int:
    from ..distill.student_answers import choose_teacher_answer

    ans = choose_teacher_answer(
        _model(args.coefficients),
        read_table(args.teachers),
        args.student_params,
        D_S=args.student_tokens,
        C=args.flops,
        scenario=args.scenario,
        level=args.level,
        top=args.top,
        labels=FLAG_LABELS,
    )
    return emit(args, ans.contract(), ans.summary())


def _crossover(args) -> int:
    from ..distill.answers import crossover_answer

    m = _model(args.coefficients)
    ans = crossover_answer(m, args.student_params, args.scenario, args.level, args.draws)
    return emit(args, ans.contract(), ans.summary())


def _ratios(args) -> int:
    from ..distill.answers import ratios_answer

    m = _model(args.coefficients)
    N_S, L = args.student_params, args.target_loss
    ans = ratios_answer(m, N_S, L, args.scenario, args.level, args.draws)
    return emit(args, ans.contract(), ans.summary())
