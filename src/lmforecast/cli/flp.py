"""`lmforecast flp fit|predict` and `lmforecast flpm fit|predict|optimize-mixture|compare|
single-distribution` (Chen et al.)."""

from __future__ import annotations

import argparse
import math

from ..downstream.forecaster import METHODS as DOWNSTREAM_METHODS
from ..errors import InputError
from ..flp.intervals import AT_BOUND_NOTE, NOT_EMERGED_NOTE, interval_or_none
from ..flp.mixture import FLPM
from ..flp.model import FLP, METHODS, clip_scores, relative_error
from ..flp.schema import MAPPERS
from ..laws.flp import MIXTURE_FORMS
from ..store.registry import saved_kind
from .common import (
    add_level_flag,
    add_output_flags,
    atomic_write_text,
    check_out_format,
    check_writable,
    emit,
    positive_float,
    print_json,
    refuse_flags,
    warn_if_fraction_actual,
)
from .downstream import (
    add_evals_fit_flags,
    add_nd_flags,
    check_actual,
    fit_from_evals,
    predict_from_fit,
)
from .flp_inputs import _columns, _load, _read, _table_flags
from .flp_studies import register_studies
from .ledger import record_forecast


def register(sub) -> None:
    p = sub.add_parser("flp", help="FLP: FLOPs -> loss -> downstream score (Chen et al.)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    f = verbs.add_parser("fit", help="fit both stages for one task")
    _table_flags(f)
    _evals_flags(f)
    f.add_argument(
        "--method",
        choices=list(dict.fromkeys(METHODS + DOWNSTREAM_METHODS)),
        default=None,
        help="flp (default with --runs) or a baseline: fp (Eq. 3), gpt4 (Eq. 6), llama3 "
        "(App. D); with --evals: ensemble (default), auto, sigmoid, local-linear, trend, flp, ...",
    )
    f.add_argument(
        "--bootstrap",
        type=int,
        default=200,
        metavar="B",
        help="bootstrap refits per stage behind the 90%% prediction intervals of `flp predict` "
        "(default %(default)s, about a second; 0: no intervals)",
    )
    f.set_defaults(handler=_flp_fit)
    pr = verbs.add_parser(
        "predict",
        help="forecast the score at a training compute, with a prediction interval; scores are "
        "clipped to [0, 100] points (a warning says when, or when C is far beyond the runs)",
    )
    pr.add_argument("--fit", required=True)
    pr.add_argument(
        "--flops",
        type=positive_float("--flops"),
        metavar="C",
        help="training FLOPs (required, except for a fit of `flp fit --evals "
        "--stage1 nd`: give --params and --tokens)",
    )
    add_nd_flags(pr)
    pr.add_argument("--actual", type=float, help="actual score: also print Eq. 4 relative error")
    add_level_flag(pr)
    add_output_flags(pr)
    pr.set_defaults(handler=_flp_predict)

    m = sub.add_parser("flpm", help="FLP-M: data mixtures -> domain losses -> score")
    verbs = m.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    f = verbs.add_parser("fit", help="fit per-domain FLOPs -> loss laws and the loss -> score map")
    _table_flags(f)
    f.add_argument(
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
    f.add_argument("--steps", type=int, default=2000, help="network training steps")
    f.add_argument(
        "--bootstrap",
        type=int,
        default=50,
        metavar="B",
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
    pr.add_argument("--fit", required=True)
    add_level_flag(pr)
    pr.add_argument(
        "--flops-per-source",
        required=True,
        metavar="C1,C2,...",
        help="training FLOPs spent on each source, in the fit's source order",
    )
    add_output_flags(pr)
    pr.set_defaults(handler=_flpm_predict)
    o = verbs.add_parser("optimize-mixture", help="best mixing ratio for a total compute")
    o.add_argument("--fit", required=True)
    o.add_argument("--flops", type=positive_float("--flops"), required=True, metavar="C")
    o.add_argument(
        "--ratios",
        default="0:0.5:0.01",
        metavar="START:STOP:STEP",
        help="grid of the last source's share (simplex lattice for K > 2)",
    )
    add_level_flag(o)
    add_output_flags(o)
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
    f.add_argument(
        "--evals",
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
    ).fit(runs, ck, columns=_columns(args))
    if out is not None:
        atomic_write_text(out, est.to_json())
    return emit(
        args,
        {
            "task": est.settings_.name,
            "method": est.method,
            "chance": est.settings_.chance,
            "stage1": None if est.stage1_ is None else est.stage1_.params,
            "stage2": est.stage2_.params,
            "stage2_r2": est.stage2_r2_,
            "checkpoints": est.filter_.counts(),
        },
        est.summary(),
    )


def _flp_predict(args) -> int:
    if saved_kind(args.fit) == "DownstreamForecaster":  # a fit of `flp fit --evals`
        return predict_from_fit(args)
    refuse_flags(
        {"--params": args.params is not None, "--tokens": args.tokens is not None},
        "applies to a fit of `flp fit --evals` (by N and D); a --runs fit forecasts from --flops C",
    )
    if args.flops is None:
        raise InputError("the following arguments are required: --flops")
    check_actual(args.actual, positive=True)  # Eq. 4 divides by it
    est = _load(args.fit, FLP)
    est.warn_if_extrapolating(args.flops)
    P = float(est.predict([args.flops])[0])
    L = est.predict_loss([args.flops])
    L = None if L is None else float(L[0])
    res: dict = {"loss": L, "performance": P}
    if est.stage2_.bootstrap:
        lo, hi = est.predict_interval(args.flops, level=args.level)
        res["interval"] = interval_or_none(lo[0], hi[0])
        res["level"] = args.level
        raw = float(est.predict([args.flops], clip=False)[0])
        if raw < est.settings_.chance + est.threshold:
            res["interval_note"] = NOT_EMERGED_NOTE
        elif res["interval"] is None or hi[0] >= 100:
            res["interval_note"] = AT_BOUND_NOTE
    else:
        res["interval"] = None
    est.warn_if_not_emerged(P, None if res["interval"] is None else res["interval"][0])
    if args.actual is not None:
        warn_if_fraction_actual(args.actual, P)
        res["relative_error"] = float(relative_error(P, args.actual))
    record_forecast(args, res)
    if args.json:
        print_json(res)
    else:
        msg = f"C = {args.flops:.4g} FLOPs: "
        if L is not None:
            msg += f"{'loss' if est.method == 'flp' else 'NLL'} {float(L):.4f}, "
        msg += f"{est.settings_.name} {P:.2f} points"
        if res["interval"]:
            msg += f" [{res['interval'][0]:.2f}, {res['interval'][1]:.2f}] ({args.level:g} PI)"
        if "relative_error" in res:
            msg += f"; relative error {100 * res['relative_error']:.2f}%"
        print(msg + (f"\nnote: {res['interval_note']}" if "interval_note" in res else ""))
    return 0


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
    ).fit(runs, ck, columns=_columns(args))
    if out is not None:
        atomic_write_text(out, est.to_json())
    return emit(
        args,
        {
            "task": est.settings_.name,
            "form": est.form,
            "mapper": est.mapper,
            "sources": list(est.sources_),
            "domains": list(est.domains_),
            "stage1": {d: r.params for d, r in est.stage1_.items()},
            "stage1_identified": {d: r.law_.identified(r.theta) for d, r in est.stage1_.items()},
            "checkpoints": est.filter_.counts(),
            "zero_share": est.zero_share,
            "zero_floor": est.zero_floor,
            "n_zero_share_runs": est.n_zero_share_,
            "zero_share_sensitivity": est.zero_share_sensitivity_,
        },
        est.summary(),
    )


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
    est = _load(args.fit, FLPM)
    F = _parse_flops_list(args.flops_per_source)
    losses = est.predict_losses([F]).iloc[0]
    est.warn_if_extrapolating([F])
    P = float(clip_scores(est.performance_from_losses(losses.to_numpy()[None, :]))[0])
    res = {"losses": {d: float(v) for d, v in losses.items()}, "performance": P}
    res["interval"] = None
    if est.bootstrap:
        lo, hi = est.predict_interval([F], level=args.level)
        res["interval"], res["level"] = interval_or_none(lo[0], hi[0]), args.level
        if _at_bound(res["interval"]):
            res["interval_note"] = AT_BOUND_NOTE  # null where it collapsed onto the bound
    record_forecast(args, res)
    if args.json:
        print_json(res)
    else:
        parts = ", ".join(f"{d} {v:.4f}" for d, v in res["losses"].items())
        iv = res["interval"]
        extra = f" [{iv[0]:.2f}, {iv[1]:.2f}] ({args.level:g} PI)" if iv else ""
        note = f"\nnote: {res['interval_note']}" if "interval_note" in res else ""
        print(f"domain losses: {parts}\n{est.settings_.name}: {P:.2f} points{extra}{note}")
    return 0


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
    est = _load(args.fit, FLPM)
    start, stop, step = _parse_ratios(args.ratios)
    mc = est.optimize_mixture(args.flops, start, stop, step)
    res = {
        "best_ratio": mc.best_ratio,
        "performance": float(mc.performance[mc.best_index]),
        "curve": mc.curve(),
    }
    edge = mc.edge_advice
    res["at_scan_edge"] = mc.at_scan_edge
    note = mc.tie_note
    if mc.flat:  # no best ratio: say why (flat at the clipped bound: saturated)
        res["flat"], res["saturated"] = True, mc.saturated
    if note:
        res["note"] = note
    if est.bootstrap:
        iv = est.mixture_intervals(mc, args.level)
        res.update(
            interval=iv["performance"],
            best_ratio_interval=iv["best_ratio"],
            level=args.level,
            interval_basis=_MIX_BASIS,
        )
        if _at_bound(res["interval"]):
            res["interval_note"] = AT_BOUND_NOTE
    if args.json:
        print_json(res)
        return 0
    name, n = est.settings_.name, len(mc.performance)
    where = f"C = {args.flops:.4g} FLOPs, sources {', '.join(est.sources_)}: "
    if mc.flat:
        print(f"{where}no best ratio: {note}")
    else:
        print(
            f"{where}best ratio {res['best_ratio']} -> {name} {res['performance']:.2f} points "
            f"(scan of {n} mixtures)"
            + (f" at the end of the scanned range: {edge}" if edge else "")
            + (f"\nnote: {note}" if note else "")
        )
    if est.bootstrap:
        iv, riv = res["interval"], res["best_ratio_interval"]
        score = "null" if iv is None else f"{iv[0]:.2f} .. {iv[1]:.2f} points"
        print(
            f"{100 * args.level:g}% intervals: score {score}; best ratio "
            f"{'null (no best ratio)' if riv is None else riv} ({_MIX_BASIS})"
            + (f"\nnote: {res['interval_note']}" if "interval_note" in res else "")
        )
    return 0


def _at_bound(iv) -> bool:
    """An FLP-M score interval that is null (collapsed onto a bound) or touches 0 or 100."""
    return iv is None or iv[0] <= 0 or iv[1] >= 100


_MIX_BASIS = (
    "score: prediction interval at the best ratio; best ratio: percentile interval of each "
    "bootstrap draw's own best ratio on the scan grid"
)
