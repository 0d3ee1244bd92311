"""`lmforecast flp fit|predict` and `lmforecast flpm fit|predict|optimize-mixture|compare|
single-distribution` (Chen et al.)."""

from __future__ import annotations

import argparse
import math

from ..downstream.forecaster import METHODS as DOWNSTREAM_METHODS
from ..errors import InputError
from ..flp.mixture import FLPM
from ..flp.model import FLP, METHODS
from ..flp.schema import MAPPERS
from ..laws.flp import MIXTURE_FORMS
from ..store.registry import saved_kind
from .common import (
    atomic_write_text,
    check_out_format,
    check_writable,
    emit,
    refuse_flags,
)
from .downstream import (
    add_evals_fit_flags,
    add_nd_flags,
    fit_from_evals,
    predict_from_fit,
)
from .flp_inputs import _columns, _load, _read, _table_flags
from .flp_studies import register_studies
from .ledger import record_forecast
from .options import add


def register(sub) -> None:
    p = sub.add_parser("flp", help="FLP: FLOPs -> loss -> downstream score (Chen et al.)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    f = verbs.add_parser("fit", help="fit both stages for one task")
    _table_flags(f)
    _evals_flags(f)
    add(
        f,
        "--method",
        choices=list(dict.fromkeys(METHODS + DOWNSTREAM_METHODS)),
        default=None,
        help="flp (default with --runs) or a baseline: fp (Eq. 3), gpt4 (Eq. 6), llama3 "
        "(App. D); with --evals: ensemble (default), auto, sigmoid, local-linear, trend, flp, ...",
    )
    add(
        f,
        "--bootstrap",
        help="bootstrap refits per stage behind the 90%% prediction intervals of `flp predict` "
        "(default %(default)s, about a second; 0: no intervals)",
    )
    f.set_defaults(handler=_flp_fit)
    pr = verbs.add_parser(
        "predict",
        help="forecast the score at a training compute, with a prediction interval; scores are "
        "clipped to [0, 100] points (a warning says when, or when C is far beyond the runs)",
    )
    add(pr, "--fit")
    add(
        pr,
        "--flops",
        required=False,
        metavar="C",
        help="training FLOPs (required, except for a fit of `flp fit --evals "
        "--stage1 nd`: give --params and --tokens)",
    )
    add_nd_flags(pr)
    add(pr, "--actual", "--level", "--json", "--quiet")
    pr.set_defaults(handler=_flp_predict)

    m = sub.add_parser("flpm", help="FLP-M: data mixtures -> domain losses -> score")
    verbs = m.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    f = verbs.add_parser("fit", help="fit per-domain FLOPs -> loss laws and the loss -> score map")
    _table_flags(f)
    add(
        f,
        "--form",
        choices=list(MIXTURE_FORMS),
        default="M4",
        help="FLOPs -> domain loss form (Table 3; M4 = Eq. 5)",
    )
    f.add_argument(
        "--mapper",
        choices=MAPPERS,
        default="neural",
        help="loss -> score map (Sec. 4.2 network; Sec. 6.2 alternatives)",
    )
    add(f, "--steps")
    add(
        f,
        "--bootstrap",
        default=50,
        help="bootstrap refits of both stages behind the prediction intervals of `flpm predict` "
        "(default %(default)s; 0: no intervals)",
    )
    f.add_argument(
        "--zero-share",
        default="floor",
        choices=("floor", "drop"),
        help="runs with a source share of 0: 'floor' its compute at --zero-floor x the total "
        "(default), or 'drop' them from stage 1 (docs/flp.md: held-out comparison)",
    )
    f.add_argument(
        "--zero-floor",
        default="1e-3",
        metavar="F",
        help="floor of a source's compute as a fraction of the total, in (0, 1) "
        "(default %(default)s)",
    )
    f.set_defaults(handler=_flpm_fit)
    pr = verbs.add_parser(
        "predict", help="forecast domain losses and score, with a prediction interval"
    )
    add(pr, "--fit", "--level")
    pr.add_argument(
        "--flops-per-source",
        required=True,
        metavar="C1,C2,...",
        help="training FLOPs spent on each source, in the fit's source order",
    )
    add(pr, "--json", "--quiet")
    pr.set_defaults(handler=_flpm_predict)
    o = verbs.add_parser("optimize-mixture", help="best mixing ratio for a total compute")
    add(o, "--fit")
    add(o, "--flops", metavar="C")
    o.add_argument(
        "--ratios",
        default="0:0.5:0.01",
        metavar="START:STOP:STEP",
        help="grid of the last source's share (simplex lattice for K > 2)",
    )
    add(o, "--level", "--json", "--quiet")
    o.set_defaults(handler=_flpm_optimize)
    register_studies(verbs)


# ---- flp ---------------------------------------------------------------------------------


def _evals_flags(f: argparse.ArgumentParser) -> None:
    """`flp fit --evals TABLE`: build runs/checkpoints from a tidy evaluation table and fit a
    `lmforecast.downstream.DownstreamForecaster` (handled by cli/downstream.py)."""
    for a in f._actions:
        if "--runs" in a.option_strings:
            a.required = False
            a.help = "final sampling models (CSV/Parquet/JSONL); or give --evals"
    add(
        f,
        "--evals",
        required=False,
        help="tidy evaluation table (lmforecast.data.evals schema; `pythia`: the bundled one)",
    )
    add_evals_fit_flags(f, with_common=False)


def _flp_fit(args) -> int:
    if args.evals is not None:
        if args.runs or args.checkpoints:
            raise InputError("give either --evals or --runs/--checkpoints, not both")
        if args.threshold != 5.0:
            raise InputError(
                "--threshold applies to --runs/--checkpoints fits; with "
                "--evals the FLP member keeps the paper's 5-point filter "
                "(Sec. 3.3)"
            )
        if args.score_unit != "auto":
            raise InputError(
                "--score-unit applies to --runs/--checkpoints fits; with --evals the scores "
                "are converted by their metric"
            )
        return fit_from_evals(args)
    if args.runs is None:
        raise InputError("the following arguments are required: --runs (or --evals)")
    refuse_flags(
        {
            "--models": args.models is not None,
            "--loss-task": args.loss_task != "auto",
            "--loss-metric": args.loss_metric is not None,
            "--metric": args.metric != "acc",
            "--stage1": args.stage1 is not None,
        },
        "applies only with --evals TABLE (a --runs fit reads its score from the --task column)",
    )
    args.method = args.method or "flp"
    if args.method not in METHODS:
        raise InputError(
            f"--method {args.method!r} needs --evals; with --runs use one of {', '.join(METHODS)}"
        )
    out = check_writable(args.out)
    check_out_format(out, (".json",))
    runs, ck = _read(args)
    est = FLP(
        args.task,
        method=args.method,
        chance=args.chance,
        threshold=args.threshold,
        bootstrap=args.bootstrap,
        seed=args.seed,
        score_unit=args.score_unit,
    ).fit(runs, ck, columns=_columns(args))
    if out is not None:
        atomic_write_text(out, est.to_json())
    return emit(args, est.contract(), est.summary())


def _flp_predict(args) -> int:
    if saved_kind(args.fit) == "DownstreamForecaster":  # a fit of `flp fit --evals`
        return predict_from_fit(args)
    refuse_flags(
        {"--params": args.params is not None, "--tokens": args.tokens is not None},
        "applies to a fit of `flp fit --evals` (by N and D); a --runs fit forecasts from --flops C",
    )
    if args.flops is None:
        raise InputError("the following arguments are required: --flops")
    fc = _load(args.fit, FLP).forecast_one(args.flops, level=args.level, actual=args.actual)
    record_forecast(args, fc.contract())
    return emit(args, fc.contract(), fc.summary())


# ---- flpm --------------------------------------------------------------------------------


def _flpm_fit(args) -> int:
    out = check_writable(args.out)
    check_out_format(out, (".json",))
    runs, ck = _read(args)
    est = FLPM(
        args.task,
        form=args.form,
        mapper=args.mapper,
        chance=args.chance,
        threshold=args.threshold,
        steps=args.steps,
        bootstrap=args.bootstrap,
        seed=args.seed,
        zero_share=args.zero_share,
        zero_floor=args.zero_floor,
        score_unit=args.score_unit,
    ).fit(runs, ck, columns=_columns(args))
    if out is not None:
        atomic_write_text(out, est.to_json())
    return emit(args, est.contract(), est.summary())


def _parse_flops_list(text: str) -> list[float]:
    vals = []
    for part in text.split(","):
        try:
            v = float(part)
        except ValueError:
            raise InputError(f"--flops-per-source: {part.strip()!r} is not a number") from None
        if not math.isfinite(v) or v < 0:
            raise InputError(f"--flops-per-source: {part.strip()!r} must be >= 0")
        vals.append(v)
    return vals


def _flpm_predict(args) -> int:
    F = _parse_flops_list(args.flops_per_source)
    fc = _load(args.fit, FLPM).forecast_one(F, level=args.level)
    record_forecast(args, fc.contract())
    return emit(args, fc.contract(), fc.summary())


def _parse_ratios(text: str) -> tuple[float, float, float]:
    parts = text.split(":")
    try:
        vals = tuple(float(p) for p in parts)
    except ValueError:
        raise InputError(f"--ratios: {text!r} is not START:STOP:STEP") from None
    if len(vals) != 3:
        raise InputError(f"--ratios: {text!r} is not START:STOP:STEP")
    return vals  # type: ignore[return-value]


def _flpm_optimize(args) -> int:
    start, stop, step = _parse_ratios(args.ratios)
    fc = _load(args.fit, FLPM).best_mixture(args.flops, start, stop, step, level=args.level)
    return emit(args, fc.contract(), fc.summary())
