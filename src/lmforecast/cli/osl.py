"""`lmforecast osl fit|select|gap|pca|robustness`: observational scaling laws (Ruan et al. 2024).

Scores are read as fractions or points (`--score-unit`, default auto per column) and every
forecast, interval and error is printed in points (0-100)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..data.io import read_table
from ..osl.answers import (
    fit_answer,
    pca_answer,
    predictions_file_text,
    preset_answer,
    saved_fit_answer,
    selection_answer,
)
from ..osl.data import parse_metric_range, read_benchmarks
from ..osl.inputs import with_targets
from ..osl.model import ObservationalScalingLaw
from ..osl.posttraining import post_training_gap
from ..osl.presets import PRESETS, get_preset
from ..osl.result import X_KINDS, OSLResult
from ..osl.robustness import DEFAULT_PREDICTORS, SPLITS, RobustnessSweep, sweep_fractions
from ..osl.selection import SubsetSelector
from ..osl.splits import LLAMA2_7B_FLOPS, holdout_plan
from .common import (
    atomic_write_text,
    check_out_format,
    check_writable,
    emit,
    positive_float,
)
from .ledger import record_forecast
from .options import add
from .osl_out import add_evals_flags, names_list, read_source


def register(sub) -> None:
    p = sub.add_parser("osl", help="observational scaling laws from public benchmark scores")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    f = verbs.add_parser(
        "fit",
        help="fit the sigmoid law on PCs (or FLOPs/size) with a holdout; forecasts of the "
        "held-out models carry prediction intervals, parameters App. C.8 intervals",
    )
    add(f, "--benchmarks", help="table of models x benchmark scores")
    add_evals_flags(f)
    f.add_argument("--targets", help="optional table with the target column, joined on Model")
    f.add_argument("--target", required=True, help="column to forecast (a score)")
    add(f, "--metrics", help="comma-separated benchmark columns spanning the PCs")
    add(f, "--exclude-metric")
    add(f, "--pcs", help="number of principal components K")
    split = f.add_mutually_exclusive_group()
    add(
        split,
        "--cutoff-flops",
        help=f"train on models with FLOPs <= this (default {LLAMA2_7B_FLOPS:g})",
    )
    split.add_argument(
        "--holdout-top", type=float, help="hold out this fraction of the best models"
    )
    split.add_argument(
        "--heldout",
        help="comma-separated models to hold out; a named model without the target is "
        "forecast (its missing benchmark cells imputed as the fit imputes)",
    )
    split.add_argument(
        "--train-models",
        metavar="M1,M2,...",
        help="fit on these models only and hold out every other model with the target "
        "(each forecast and scored against its truth)",
    )
    split.add_argument(
        "--holdout",
        choices=["none"],
        help="none: fit on every model with the target (nothing held out), e.g. to forecast "
        "new models with `osl predict --fit` or `--heldout MODEL-WITHOUT-TARGET`",
    )
    f.add_argument("--x", choices=X_KINDS, default="pcs", help="predictor: PCs, FLOPs or size")
    f.add_argument(
        "--scale",
        type=positive_float("--scale"),
        default=1.0,
        help="divide the target by this before its unit is read (a score in points needs "
        "none; default 1)",
    )
    f.add_argument(
        "--metric-range",
        metavar="LO,HI",
        help="min-max normalise the target by its metric range before fitting, "
        "y' = (y - LO) / (HI - LO), LO and HI in the target's own unit, e.g. 0.25,1 (fractions) "
        "or 25,100 (points) for 4-way multiple choice (Sec. 4); scores below LO (below "
        "chance) are kept; forecasts and intervals are reported in points (default: none)",
    )
    add(f, "--reference-family", help="family f of Eq. 7-8")
    add(f, "--level")
    add(f, "--out", help="save the fit as JSON")
    add(f, "--json", "--quiet", "--missing", "--score-unit")
    f.set_defaults(handler=_fit)

    pp = verbs.add_parser(
        "predict",
        help="forecast new models with a saved `osl fit` (with intervals) or a preregistered "
        "Table C.1 law (App. C.9), no refitting",
    )
    src = pp.add_mutually_exclusive_group(required=True)
    add(src, "--fit", required=False, help="a fit saved by `osl fit --out` (JSON)")
    add(src, "--preset", help="Table C.1 law: " + ", ".join(PRESETS))
    add(
        pp,
        "--benchmarks",
        required=True,
        help="table of the new models' benchmark scores, fractions or points (the fit's or "
        "the preset's columns; FLOPs or size for a --x flops/size fit)",
    )
    pp.add_argument(
        "--scale",
        type=positive_float("--scale"),
        default=1.0,
        help="with --fit, a target column in --benchmarks (the truth) is divided by "
        "this, as in `osl fit --scale` (default 1)",
    )
    add(pp, "--out", help="with --fit: the forecasts as .csv or .json")
    add(pp, "--level", "--json", "--quiet", "--score-unit")
    pp.set_defaults(handler=_predict)

    s = verbs.add_parser("select", help="V-optimal families of models to evaluate (Eq. 9)")
    add(s, "--benchmarks", required=True)
    s.add_argument("--budget", type=int, required=True, help="maximum number of models")
    s.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="FAMILY",
        help="family that must be selected (repeatable or comma-separated)",
    )
    add(s, "--metrics", "--pcs", "--max-families")
    s.add_argument(
        "--max-size",
        type=positive_float("--max-size"),
        help="only candidates with at most this many parameters (B)",
    )
    s.add_argument(
        "--random",
        type=int,
        default=0,
        metavar="N",
        help="also report N random family subsets (baseline)",
    )
    add(s, "--seed", "--json", "--quiet", "--missing", "--score-unit")
    s.set_defaults(handler=_select)

    g = verbs.add_parser("gap", help="post-training gain vs f-equivalent FLOPs (Sec. 4.3)")
    add(g, "--benchmarks", required=True)
    g.add_argument("--targets", help="optional table with both target columns, joined on Model")
    g.add_argument("--without", required=True, help="target column without the technique")
    g.add_argument("--with", dest="with_", required=True, help="target column with it")
    add(g, "--exclude-metric", "--pcs")
    add(g, "--cutoff-flops", default=LLAMA2_7B_FLOPS)
    add(g, "--reference-family", "--json", "--quiet", "--missing", "--score-unit")
    g.set_defaults(handler=_gap)

    r = verbs.add_parser(
        "robustness", help="test MSE vs test fraction and AUE per predictor (App. C.4)"
    )
    add(r, "--benchmarks", required=True, help="table of models x benchmark scores")
    r.add_argument("--targets", help="optional table with the target column(s), joined on Model")
    r.add_argument("--target", required=True, help="column(s) to forecast, comma-separated")
    add(r, "--metrics", help="comma-separated benchmark columns spanning the PCs")
    add(r, "--exclude-metric")
    r.add_argument(
        "--predictors",
        default=",".join(DEFAULT_PREDICTORS),
        help="comma-separated: pcs:K (PC law with K components), flops, size "
        "(default: %(default)s)",
    )
    r.add_argument(
        "--split",
        choices=SPLITS,
        default="flops",
        help="cutoff on training FLOPs (default) or on the target accuracy (emergent tasks)",
    )
    r.add_argument("--n-fractions", type=int, default=12, help="number of test fractions")
    r.add_argument("--max-fraction", type=float, default=0.6, help="largest test fraction")
    r.add_argument("--min-fraction", type=float, default=0.05, help="smallest test fraction")
    r.add_argument(
        "--scale",
        type=positive_float("--scale"),
        default=1.0,
        help="divide the target(s) by this before their unit is read (a score in points "
        "needs none; default 1)",
    )
    r.add_argument(
        "--n-polish",
        type=int,
        default=4,
        help="starts polished per fit (16 = exactly the `osl fit` estimator; default %(default)s)",
    )
    add(r, "--out", help="save the sweep as JSON")
    add(r, "--json", "--quiet", "--missing", "--score-unit")
    r.set_defaults(handler=_robustness)

    c = verbs.add_parser("pca", help="the capability space alone (explained variance, loadings)")
    add(c, "--benchmarks", help="table of models x benchmark scores")
    add_evals_flags(c)
    add(c, "--metrics", help="comma-separated benchmark columns (default: every numeric column)")
    add(c, "--pcs", "--json", "--quiet", "--missing", "--score-unit")
    c.set_defaults(handler=_pca)


def _fit(args: argparse.Namespace) -> int:
    metric_range = parse_metric_range(args.metric_range)
    out = check_writable(args.out)
    check_out_format(out, (".json",))
    table = with_targets(read_source(args), args.targets, [args.target], args.scale)
    holdout, extra, new_models = holdout_plan(
        table,
        args.target,
        heldout=names_list(args.heldout, "--heldout"),
        train_models=names_list(args.train_models, "--train-models"),
        holdout=args.holdout,
        holdout_top=args.holdout_top,
        cutoff_flops=args.cutoff_flops,
    )
    est = ObservationalScalingLaw(
        args.pcs,
        x=args.x,
        metrics=names_list(args.metrics, "--metrics"),
        exclude_metrics=tuple(args.exclude_metric),
        holdout=holdout,
        reference_family=args.reference_family,
        level=args.level,
        metric_range=metric_range,
        score_unit=args.score_unit,
        **extra,
    ).fit(table, args.target)
    if out is not None:
        atomic_write_text(out, est.result_.to_json())
    ans = fit_answer(est, table, args.level, new_models)
    return emit(args, ans.contract(), ans.summary())


def _predict(args: argparse.Namespace) -> int:
    if args.fit is None:
        ans = preset_answer(
            get_preset(args.preset), read_benchmarks(args.benchmarks), args.level, args.score_unit
        )
        record_forecast(args, ans.contract())
        return emit(args, ans.contract(), ans.summary())
    out = check_writable(args.out, [args.benchmarks, args.fit])
    check_out_format(out, (".csv", ".json"))
    res = OSLResult.from_json(Path(args.fit))
    ans = saved_fit_answer(
        res, read_benchmarks(args.benchmarks), args.level, args.scale, args.score_unit
    )
    if out is not None:
        atomic_write_text(out, predictions_file_text(ans.fields["predictions"], out.suffix))
    record_forecast(args, {**ans.contract(), "task": res.target})
    return emit(args, ans.contract(), ans.summary())


def _select(args: argparse.Namespace) -> int:
    table = read_benchmarks(args.benchmarks)
    include = [n for item in args.include for n in names_list(item, "--include")]
    sel = SubsetSelector(
        args.pcs,
        max_families=args.max_families,
        include=include,
        max_size=args.max_size,
        metrics=names_list(args.metrics, "--metrics"),
        score_unit=args.score_unit,
    ).fit(table)
    ans = selection_answer(sel, args.budget, args.random, args.seed)
    return emit(args, ans.contract(), ans.summary())


def _gap(args: argparse.Namespace) -> int:
    gap = post_training_gap(
        read_benchmarks(args.benchmarks),
        args.without,
        args.with_,
        targets=read_table(args.targets) if args.targets else None,
        n_components=args.pcs,
        exclude_metrics=tuple(args.exclude_metric),
        cutoff_flops=args.cutoff_flops,
        reference_family=args.reference_family,
        score_unit=args.score_unit,
    )
    return emit(args, gap.contract(), gap.summary())


def _robustness(args: argparse.Namespace) -> int:
    out = check_writable(args.out)
    check_out_format(out, (".json",))
    fractions = sweep_fractions(args.n_fractions, args.max_fraction, args.min_fraction)
    names = names_list(args.target, "--target")
    table = with_targets(read_benchmarks(args.benchmarks), args.targets, names, args.scale)
    res = (
        RobustnessSweep(
            names_list(args.predictors, "--predictors"),
            split=args.split,
            fractions=fractions,
            metrics=names_list(args.metrics, "--metrics"),
            exclude_metrics=tuple(args.exclude_metric),
            n_polish=args.n_polish,
            score_unit=args.score_unit,
        )
        .fit(table, names)
        .result_
    )
    if out is not None:
        atomic_write_text(out, res.to_json())
    return emit(args, res.contract(), res.summary())


def _pca(args: argparse.Namespace) -> int:
    ans = pca_answer(
        read_source(args), args.pcs, names_list(args.metrics, "--metrics"), args.score_unit
    )
    return emit(args, ans.contract(), ans.summary())
