"""`lmforecast distill predict|fit|plan|choose-teacher|crossover|ratios`: distillation scaling laws
(Busbridge et al. 2025) from the command line."""

from __future__ import annotations

import argparse
import math
import warnings

from ..data.io import read_table
from ..data.validate import check_teachers
from ..errors import InputError
from .common import (
    add_level_flag,
    add_output_flags,
    add_runs_flag,
    atomic_write_text,
    check_writable,
    open_unit_interval,
    positive_float,
    print_json,
    require_runs,
)
from .flags import parse_fixed
from .ledger import record_forecast

_COEF_HELP = "busbridge2025 (Table 6, default) or a fit saved by `distill fit --out`"


def _level_flag(p: argparse.ArgumentParser) -> None:
    """--level of predict, plan and choose-teacher, whose JSON interval can be null."""
    p.add_argument(
        "--level",
        type=open_unit_interval,
        default=0.9,
        help="prediction-interval level, strictly between 0 and 1 (default 0.9); the JSON "
        'output carries the interval as "interval": [lo, hi], or as "interval": null with '
        '"interval_note" saying why (a fit saved with --bootstrap 0 has no draws; a teacher '
        "weaker than the student's supervised loss pins L_S at its loss, a zero-width "
        "interval)",
    )


def register(sub) -> None:
    p = sub.add_parser("distill", help="distillation scaling laws and compute-optimal distillation")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    pr = verbs.add_parser("predict", help="student loss from student size, tokens and teacher")
    _student_flags(pr)
    pr.add_argument("--student-tokens", type=positive_float("--student-tokens"), required=True)
    t = pr.add_mutually_exclusive_group(required=True)
    t.add_argument("--teacher-loss", type=positive_float("--teacher-loss"))
    t.add_argument("--teacher-params", type=positive_float("--teacher-params"))
    pr.add_argument("--teacher-tokens", type=positive_float("--teacher-tokens"))
    pr.add_argument("--coefficients", default="busbridge2025", help=_COEF_HELP)
    _level_flag(pr)
    add_output_flags(pr)
    pr.set_defaults(handler=_predict)

    f = verbs.add_parser("fit", help="fit Eq. 8 to distillation runs (N_S, D_S, L_T, L_S)")
    add_runs_flag(f, "CSV/Parquet/JSONL with student params, tokens, teacher and student losses")
    f.add_argument(
        "--supervised",
        default=None,
        metavar="LAW",
        help="supervised law for L~_S (Eq. 8): a `supervised fit --out` JSON, or `paper` "
        "(= busbridge2025, Table 6, English C4 only). Default: fit Eq. 1 to the table's "
        "supervised rows (empty L_T; N_S, D_S, L_S read as N, D, L); an error if there are none",
    )
    f.add_argument(
        "--bootstrap",
        type=int,
        default=32,
        metavar="B",
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
    f.add_argument("--ci-level", type=float, default=0.9)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--jobs", type=int, default=-1, help="worker processes for the bootstrap")
    f.add_argument("--huber-delta", type=positive_float("--huber-delta"), default=1e-4)
    f.add_argument(
        "--fix",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help='hold a coefficient fixed, e.g. --fix "gamma\'=0.764" (repeatable)',
    )
    f.add_argument("--ns-col", default="N_S")
    f.add_argument("--ds-col", default="D_S")
    f.add_argument("--lt-col", default="L_T")
    f.add_argument("--ls-col", default="L_S")
    f.add_argument("--out", help="save the fit as JSON")
    add_output_flags(f)
    f.set_defaults(handler=_fit)

    pl = verbs.add_parser("plan", help="compute-optimal distillation (Eq. 10) for a budget")
    _student_flags(pl)
    pl.add_argument("--flops", type=positive_float("--flops"), required=True)
    pl.add_argument(
        "--scenario",
        default="best-case",
        help="best-case | teacher-inference | teacher-pretraining | teacher-pretraining-inference",
    )
    pl.add_argument("--coefficients", default="busbridge2025", help=_COEF_HELP)
    _level_flag(pl)
    add_output_flags(pl)
    pl.set_defaults(handler=_plan)

    ct = verbs.add_parser("choose-teacher", help="rank existing teachers for a student")
    _student_flags(ct)
    budget = ct.add_mutually_exclusive_group(required=True)
    budget.add_argument("--student-tokens", type=positive_float("--student-tokens"))
    budget.add_argument("--flops", type=positive_float("--flops"))
    ct.add_argument("--teachers", required=True, help="table with N_T and D_T (or L_T) columns")
    ct.add_argument("--scenario", default="teacher-inference")
    ct.add_argument("--coefficients", default="busbridge2025", help=_COEF_HELP)
    ct.add_argument(
        "--top",
        type=int,
        default=1000,
        metavar="K",
        help="show the best K teachers (default 1000); every teacher is ranked, intervals are "
        "computed for the K shown, so memory stays bounded on any table",
    )
    _level_flag(ct)
    add_output_flags(ct)
    ct.set_defaults(handler=_choose)

    ra = verbs.add_parser(
        "ratios",
        help="compute and token ratios distillation/supervised at equal student loss (App. D.5)",
    )
    _student_flags(ra)
    ra.add_argument(
        "--target-loss",
        type=positive_float("--target-loss"),
        nargs="+",
        required=True,
        metavar="L",
        help="student cross-entropies to reach (one or more)",
    )
    ra.add_argument(
        "--scenario",
        default="all",
        help="all (default) | best-case | teacher-inference | teacher-pretraining | "
        "teacher-pretraining-inference",
    )
    ra.add_argument("--coefficients", default="busbridge2025", help=_COEF_HELP)
    _draws_flag(
        ra,
        0,
        "also give confidence intervals of the ratios over the first K parameter "
        "draws (each re-runs the search: ~1 s per draw and scenario; default 0 = point "
        "values)",
    )
    add_level_flag(ra)
    add_output_flags(ra)
    ra.set_defaults(handler=_ratios)

    co = verbs.add_parser("crossover", help="compute beyond which supervised beats distillation")
    _student_flags(co)
    co.add_argument("--scenario", default="best-case")
    co.add_argument("--coefficients", default="busbridge2025", help=_COEF_HELP)
    _draws_flag(
        co,
        20,
        "confidence interval of the crossover over the first K parameter draws "
        "(each re-runs the search; 0 = point value only; default 20)",
    )
    add_level_flag(co)
    add_output_flags(co)
    co.set_defaults(handler=_crossover)


def _draws_flag(p: argparse.ArgumentParser, default: int, help: str) -> None:
    p.add_argument("--draws", type=int, default=default, metavar="K", help=help)


def _check_draws(args) -> None:
    if args.draws < 0 or args.draws == 1:
        raise InputError(f"--draws must be 0 or >= 2, got {args.draws}")


def _student_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--student-params",
        type=positive_float("--student-params"),
        required=True,
        metavar="N",
        help="student non-embedding parameters",
    )


def _model(spec: str):
    from ..distill import DistillationScalingLaw

    return DistillationScalingLaw.from_spec(spec)


def _predict(args) -> int:
    from .distill_out import predict, predict_text

    if args.teacher_params is not None and args.teacher_tokens is None:
        raise InputError("--teacher-params needs --teacher-tokens")
    if args.teacher_loss is not None and args.teacher_tokens is not None:
        raise InputError("--teacher-tokens goes with --teacher-params, not --teacher-loss")
    m = _model(args.coefficients)
    if args.teacher_loss is not None and args.teacher_loss <= m.E_:
        raise InputError(
            f"--teacher-loss {args.teacher_loss:g} is at or below the irreducible loss E = "
            f"{m.E_:.4g} of the supervised law: no teacher reaches it (Eq. 8 needs L_T > E)"
        )
    out = predict(m, args)
    record_forecast(args, out)
    if args.json:
        print_json(out)
    else:
        print(predict_text(out, args.level))
    return 0


def _fit(args) -> int:
    from ..distill import DistillationScalingLaw
    from .distill_out import fit_table_text

    out = check_writable(args.out)
    if args.boot_polish < 0:
        raise InputError(f"--boot-polish must be >= 0, got {args.boot_polish}")
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
    if args.json:
        tab = model.coefficient_table()
        widths = tab["relative_width"].to_dict() if res.ci else {}
        print_json(
            {
                "params": res.params,
                "objective": res.objective,
                "n_obs": res.n_obs,
                "n_starts": res.n_starts,
                "converged": res.converged,
                "supervised": {
                    "source": res.meta.get("supervised_source"),
                    "params": res.meta.get("supervised"),
                },
                "ci": res.ci,
                "ci_relative_width": widths,
                "identifiability": tab["status"].to_dict(),
                "outside_interval": list(tab.index[tab["outside_interval"]]),
                "bootstrap": res.meta.get("bootstrap", {}),
                "uncertainty": model.uncertainty_report(),
            }
        )
    else:
        print(model.summary())
        print("\nCoefficients and identified combinations (docs/distill.md):")
        print(fit_table_text(model.coefficient_table()))
    return 0


def _plan(args) -> int:
    from ..distill.planning import get_scenario
    from .distill_out import plan, plan_text

    scenario = get_scenario(args.scenario)
    d = plan(_model(args.coefficients), args, scenario)
    if args.json:
        print_json(d)
    else:
        print(plan_text(d, args, scenario))
    return 0


def _choose(args) -> int:
    from ..distill.planning import choose_teacher, choose_teacher_notes
    from .distill_out import choose_json, choose_notes, choose_text, warn_notes

    m = _model(args.coefficients)
    teachers = read_table(args.teachers)
    check_teachers(teachers)
    t = choose_teacher(
        m,
        teachers,
        args.student_params,
        D_S=args.student_tokens,
        C=args.flops,
        scenario=args.scenario,
        level=args.level,
        top=args.top,
    )
    if len(teachers) > len(t):
        warnings.warn(
            f"showing the best {len(t):,} of {len(teachers):,} teachers (--top to change)",
            stacklevel=1,
        )
    warn_notes(choose_notes(m, args, t, teachers))
    for note in choose_teacher_notes(t, args.flops, args.scenario, D_S=args.student_tokens):
        warnings.warn(note, stacklevel=1)
    by_size = "L_T" not in teachers.columns
    if args.json:
        print_json(choose_json(m, t, args.level, by_size))
    else:
        print(choose_text(m, t, args.level, by_size))
    return 0


def _crossover(args) -> int:
    from ..distill.planning import get_scenario
    from ..distill.teacher_uncertainty import teacher_basis
    from ..distill.versus_supervised import (
        crossover_compute,
        crossover_interval,
        crossover_teacher_sd,
    )

    _check_draws(args)
    scenario = get_scenario(args.scenario)
    m = _model(args.coefficients)
    c = float(crossover_compute(m, args.student_params, scenario)[0])
    iv = None
    basis = _CROSS_BASIS.format(k=args.draws)
    if args.draws and m.has_intervals():
        sd = crossover_teacher_sd(m, args.student_params, scenario, crossover=c)
        lo, hi = crossover_interval(
            m, args.student_params, scenario, args.level, args.draws, teacher_sd=sd
        )
        iv = [float(lo[0]), float(hi[0])]
        if scenario.delta_lgt or scenario.delta_pre:  # the teacher's loss is a forecast here
            basis += "; " + teacher_basis(0.0 if sd is None else sd)
    if args.json:
        out = {"crossover_flops": c, "scenario": scenario.name}
        if iv is not None:
            out.update(
                interval=[v if math.isfinite(v) else "inf" for v in iv],
                level=args.level,
                interval_basis=basis,
            )
        print_json(out)
        return 0
    if c != c:
        print(f"{scenario.name}: distillation beats supervised over the whole range 1e18-1e28")
    else:
        print(f"{scenario.name}: supervised beats distillation beyond C = {c:.3g} FLOPs")
    if iv is not None:
        hi = f"{iv[1]:.3g}" if math.isfinite(iv[1]) else "beyond 1e28"
        lo = f"{iv[0]:.3g}" if math.isfinite(iv[0]) else "beyond 1e28"
        print(f"{100 * args.level:g}% interval: {lo} .. {hi} FLOPs ({basis})")
    elif args.draws:
        print(
            "no interval: the coefficients carry no parameter draws (fit saved with --bootstrap 0)"
        )
    return 0


_CROSS_BASIS = (
    "confidence interval over the first {k} parameter draws of the distillation law; supervised "
    "comparison at its point estimate; no model-form error"
)


def _ratios(args) -> int:
    import numpy as np
    import pandas as pd

    from ..distill.planning import SCENARIOS, get_scenario
    from ..distill.teacher_uncertainty import teacher_basis
    from ..distill.versus_supervised import (
        distillation_vs_supervised_ratios,
        ratio_interval,
        ratio_teacher_sd,
    )

    _check_draws(args)
    names = list(SCENARIOS) if args.scenario == "all" else [get_scenario(args.scenario).name]
    m = _model(args.coefficients)
    if args.draws and not m.has_intervals():
        raise InputError(
            "--draws: the coefficients carry no parameter draws (fit saved with --bootstrap 0)"
        )
    frames, sds = [], []
    for s in names:
        f = distillation_vs_supervised_ratios(m, args.student_params, args.target_loss, s)
        if args.draws:
            sd = ratio_teacher_sd(m, args.student_params, args.target_loss, s, point=f)
            iv = ratio_interval(
                m, args.student_params, args.target_loss, s, args.level, args.draws, teacher_sd=sd
            )
            for k, (lo, hi) in iv.items():
                f[f"{k}_lo"], f[f"{k}_hi"] = lo, hi
            if get_scenario(s).delta_lgt or get_scenario(s).delta_pre:  # a forecast teacher
                sds.append(np.zeros(1) if sd is None else sd)
        frames.append(f)
    basis = _RATIO_BASIS.format(k=args.draws)
    if sds:
        basis = basis[:-1] + "; " + teacher_basis(np.concatenate(sds)) + ")"
    df = pd.concat(frames, ignore_index=True)
    if args.json:

        def clean(v):
            if isinstance(v, float) and not math.isfinite(v):
                return None if math.isnan(v) else "inf"
            return v

        rows = [{k: clean(v) for k, v in r.items()} for r in df.to_dict(orient="records")]
        out = {"rows": rows, "note": _RATIO_NOTE}
        if args.draws:
            out.update(level=args.level, interval_basis=basis)
        print_json(out)
    else:
        cols = [
            "scenario",
            "target_loss",
            "compute_ratio",
            "token_ratio",
            "supervised_tokens",
            "student_tokens",
            "teacher_tokens",
            "teacher_loss",
        ]
        if args.draws:
            cols[4:4] = ["compute_ratio_lo", "compute_ratio_hi", "token_ratio_lo", "token_ratio_hi"]
        print(
            f"N_S = {args.student_params:.4g}; supervised limit L(N_S, inf) = "
            f"{float(df['supervised_limit'].iloc[0]):.4f}\n"
            + df[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}")
            + f"\n{_RATIO_NOTE}"
            + (f"\n{100 * args.level:g}% intervals: " + basis if args.draws else "")
        )
    return 0


_RATIO_BASIS = (
    "confidence intervals over the first {k} parameter draws of the distillation law (supervised "
    "tokens at their point estimate; no model-form error)"
)

_RATIO_NOTE = (
    "ratio = distillation / supervised at equal N_S and L_S (< 1: distillation cheaper); tokens "
    "per Eq. 34: D_S + D_T when teacher pretraining is paid; nan: target at or below the "
    "supervised limit, or reached supervised in under 1e6 tokens (below the planner's smallest "
    "budget: no ratio); inf: not reached within 1000x the supervised compute"
)
