"""`lmforecast downstream fit|predict|backtest`: downstream scores from an evaluation table
(also reached by `lmforecast flp fit --evals TABLE`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..data.evals import read_evals
from ..data.evals.views import FAMILY_CHOICES
from ..data.io import read_table
from ..downstream.aggregate import check_distinct_tasks, forecasts_answer
from ..downstream.backtest import BACKTEST_METHODS, backtest
from ..downstream.forecaster import DEFAULT_METHOD, METHODS, DownstreamForecaster
from ..downstream.stage1 import STAGE1
from ..errors import InputError
from .common import (
    atomic_write_text,
    check_out_format,
    check_writable,
    emit,
    positive_floats,
)
from .downstream_inputs import (
    check_chance,
    model_point_args,
    task_chances,
)
from .ledger import record_forecast
from .options import add


def _names(text: str | None, flag: str):
    if text is None:
        return None
    out = [t.strip() for t in text.split(",") if t.strip()]
    if not out:
        raise InputError(f"{flag}: no name in {text!r}")
    return out


def add_evals_fit_flags(
    p: argparse.ArgumentParser, *, with_common: bool = True, models: bool = True
) -> None:
    """Flags of a fit from a tidy evals table (shared with `flp fit --evals`; `backtest` names
    its models with --fit-models/--target instead of --models)."""
    p.add_argument(
        "--loss-task",
        default="auto",
        help="task whose loss (ln perplexity, bits per byte, ...) is stage 1; auto "
        "(default): the task's own loss when the table has one (e.g. bits_per_byte, "
        "or a task <task>_bpb), else lambada_openai",
    )
    p.add_argument(
        "--loss-metric",
        default=None,
        help="metric of --loss-task read as the loss (default: the first loss "
        "metric found: bits_per_byte, byte/word perplexity, nll, loss, "
        "ppl)",
    )
    p.add_argument("--metric", default="acc", help="score metric of --task (default acc)")
    if models:
        p.add_argument(
            "--models",
            metavar="M1,M2,...",
            help="fit only these models (default: all, but one of a family and its "
            "deduplicated twin, see --family)",
        )
        p.add_argument(
            "--family",
            choices=FAMILY_CHOICES,
            default=None,
            help="without --models, where the table holds a family and its "
            "deduplicated twin (pythia-*, pythia-*-deduped): fit the standard one "
            "(default), the deduped one, or all",
        )
    p.add_argument(
        "--stage1",
        choices=list(STAGE1),
        default=None,
        help="compute -> loss law on an evaluation table (power = Chen et al. Eq. 1; "
        "default: saturating)",
    )
    if with_common:
        add(p, "--evals", "--task")
        add(
            p,
            "--method",
            choices=METHODS,
            default=DEFAULT_METHOD,
            help="forecasting method (default ensemble; see docs/downstream.md)",
        )
        add(p, "--bootstrap", metavar=None, help="bootstrap replicates")
        add(p, "--chance", "--chance-file")
        add(p, "--seed")
        add(p, "--out", help="save the fit as JSON")
        add(p, "--json", "--quiet")


def fit_from_evals(args) -> int:
    """Handler of `downstream fit` and `flp fit --evals`."""
    out = check_writable(args.out)
    method = args.method or DEFAULT_METHOD
    if method not in METHODS:
        raise InputError(
            f"--method {method!r} does not apply to --evals; use one of {', '.join(METHODS)}"
        )
    evals = read_evals(args.evals, strict=False)
    chance = getattr(args, "chance", None)
    if isinstance(chance, float):  # `flp fit --evals --chance P`: one level, in points
        chance = check_chance(chance)
    elif chance is not None or getattr(args, "chance_file", None) is not None:
        chance = (task_chances(chance, [args.task], args.chance_file) or {}).get(args.task)
    stage1 = args.stage1 or "saturating"
    est = DownstreamForecaster(
        method, stage1=stage1, bootstrap=args.bootstrap, seed=args.seed, chance=chance
    )
    est.fit(
        evals,
        task=args.task,
        loss_task=args.loss_task,
        metric=args.metric,
        loss_metric=args.loss_metric,
        models=_names(args.models, "--models"),
        family=args.family,
    )
    # after the fit (a second or two), which names a missing --chance or a misspelt --task first
    check_out_format(out, (".json",))
    if out is not None:
        atomic_write_text(out, est.to_json())
    note = est.models_note_
    text = est.summary() + ("" if note is None else f"\n{note}")
    return emit(args, est.contract() | {"models_note": note}, text)


def add_predict_flags(p: argparse.ArgumentParser) -> None:
    add(
        p,
        "--fit",
        metavar="FIT[,FIT...]",
        help="saved fit (JSON); several (one per task, comma-separated) also forecast "
        "their task average",
    )
    add(
        p,
        "--flops",
        type=positive_floats("--flops"),
        required=False,
        metavar="C[,C...]",
        help="training FLOPs (a list: one forecast each)",
    )
    add_nd_flags(p)
    p.add_argument(
        "--model",
        metavar="NAME",
        help="forecast a known model: its parameters and final tokens from the "
        "built-in Pythia table or --models (e.g. pythia-6.9b; any case)",
    )
    p.add_argument(
        "--models",
        metavar="MODELS.csv",
        help="models table (model, params, tokens) for --model and --table, "
        "extending the built-in Pythia models",
    )
    p.add_argument(
        "--table",
        metavar="TARGETS.csv",
        help="one forecast per row (columns model, or params and tokens, or flops; "
        "optional task and score): with a score column the held-out MAE and "
        "coverage are printed too",
    )
    add(p, "--out", help="with --table: the forecasts as .csv or .json")
    add(p, "--actual", help="actual score (points): also print the error")
    add(p, "--level", "--json", "--quiet")


def add_nd_flags(p: argparse.ArgumentParser) -> None:
    """``--params N --tokens D``: a forecast point by model size and data (shared with `flp
    predict`, whose `--evals` fits with ``--stage1 nd`` need N and D, not FLOPs)."""
    add(p, "--params", help="parameters (with --tokens; FLOPs = 6 N D as in the table)")
    add(
        p,
        "--tokens",
        type=positive_floats("--tokens"),
        metavar="D[,D...]",
        help="tokens (a list: the model's trajectory, one forecast per checkpoint)",
    )


def load_fit(path: str) -> DownstreamForecaster:
    s = str(path)
    if s.lstrip().startswith(("{", "[")) or "\n" in s:
        raise InputError(
            "--fit: expects the path of a saved fit (a JSON file written by "
            "`downstream fit --out`), not JSON text"
        )
    try:
        ok = Path(s).is_file()
    except OSError:  # e.g. a name too long for the file system
        ok = False
    if not ok:
        raise InputError(f"--fit {s[:200]!r}: no such file")
    return DownstreamForecaster.from_json(Path(s))


def _points(args) -> list[dict]:
    """One keyword set per forecast point: {"flops": C} or {"N": N, "D": D}."""
    flops = getattr(args, "flops", None)
    N, D = getattr(args, "params", None), getattr(args, "tokens", None)
    if flops is None and (N is None or D is None):
        raise InputError("give --flops C, or both --params N and --tokens D")
    if flops is not None and (N is not None or D is not None):
        raise InputError("give either --flops or --params/--tokens, not both")
    if flops is not None:
        return [{"flops": c} for c in _as_tuple(flops)]
    return [{"N": N, "D": d} for d in _as_tuple(D)]


def _as_tuple(v) -> tuple:
    return tuple(v) if isinstance(v, tuple | list) else (v,)


def predict_from_fit(args, est: DownstreamForecaster | None = None) -> int:
    paths = [p.strip() for p in str(getattr(args, "fit", "") or "").split(",") if p.strip()]
    if getattr(args, "table", None) is not None:
        return _predict_table(args, paths)
    if getattr(args, "out", None) is not None:
        raise InputError("--out applies to --table (one forecast per row)")
    if getattr(args, "model", None) is not None:
        model_point_args(args, est or load_fit(paths[0] if paths else args.fit))
    elif getattr(args, "models", None) is not None:
        raise InputError("--models applies to --model or --table")
    points = _points(args)
    if est is None and (len(paths) > 1 or len(points) > 1):
        if args.actual is not None:
            raise InputError("--actual compares one forecast: give one --fit and one point")
        ests = [load_fit(p) for p in paths]
        check_distinct_tasks(ests, paths)
        return _predict_many(ests, points, args)
    est = est or load_fit(paths[0] if paths else args.fit)
    kw = points[0]
    for k in ("flops", "tokens"):  # one point: the ledger records plain numbers
        if isinstance(getattr(args, k, None), tuple):
            setattr(args, k, getattr(args, k)[0])
    fc = est.forecast_one(**kw, level=args.level, actual=args.actual)
    res = fc.contract()
    if getattr(args, "model", None) is not None:
        res["model"] = args.model
    record_forecast(args, res)
    return emit(args, res, fc.summary())


def _predict_table(args, paths: list[str]) -> int:
    """--table TARGETS: one forecast per row (`downstream.batch.forecast_table`); the truth's
    MAE and coverage where the table has a score column; --out writes the rows."""
    from ..downstream.batch import table_answer

    given = [
        f
        for f in ("flops", "params", "tokens", "model", "actual")
        if getattr(args, f, None) is not None
    ]
    if given:
        raise InputError(f"--table gives the forecast points: drop --{given[0]}")
    out = check_writable(args.out, [args.table, *paths])
    check_out_format(out, (".csv", ".json"))
    targets = read_table(args.table)
    ests = [load_fit(p) for p in paths]
    check_distinct_tasks(ests, paths)
    ans, rows = table_answer(ests, targets, level=args.level, models=getattr(args, "models", None))
    if out is not None:
        is_csv = out.suffix.lower() == ".csv"
        atomic_write_text(
            out, rows.to_csv(index=False) if is_csv else rows.to_json(orient="records")
        )
    record_forecast(args, ans.contract())
    return emit(args, ans.contract(), ans.summary())


def _predict_many(ests: list[DownstreamForecaster], points: list[dict], args) -> int:
    """Several points and/or several fits (`downstream.aggregate.forecasts_answer`)."""
    ans = forecasts_answer(ests, points, level=args.level)
    record_forecast(args, ans.contract())
    return emit(args, ans.contract(), ans.summary())


def _backtest(args) -> int:
    out = check_writable(args.out)
    check_out_format(out, (".csv", ".json"))
    evals = read_evals(args.evals, strict=False)
    methods = _names(args.methods, "--methods") or list(BACKTEST_METHODS)
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise InputError(
            f"--methods: unknown {', '.join(map(repr, bad))}; use {', '.join(METHODS)}"
        )
    tasks = _names(args.task, "--task")
    bt = backtest(
        evals,
        fit_models=_names(args.fit_models, "--fit-models"),
        target_model=args.target,
        tasks=tasks,
        loss_task=args.loss_task,
        metric=args.metric,
        methods=methods,
        level=args.level,
        bootstrap=args.bootstrap,
        seed=args.seed,
        stage1=args.stage1 or "saturating",
        chance=task_chances(args.chance, tasks, args.chance_file),
        loss_metric=args.loss_metric,
    )
    if out is not None:
        atomic_write_text(
            out,
            bt.rows.to_csv(index=False)
            if out.suffix.lower() == ".csv"
            else bt.rows.to_json(orient="records"),
        )
    return emit(args, bt.contract(), bt.summary())


def register(sub) -> None:
    p = sub.add_parser("downstream", help="downstream scores from evaluation tables (backtested)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    f = verbs.add_parser("fit", help="fit a task's forecaster from a tidy evals table")
    add_evals_fit_flags(f)
    f.set_defaults(handler=fit_from_evals)
    pr = verbs.add_parser("predict", help="forecast the score at a compute (or N and D)")
    add_predict_flags(pr)
    pr.set_defaults(handler=predict_from_fit)
    b = verbs.add_parser(
        "backtest",
        help="forecast a larger model from smaller ones, with FP and persistence baselines",
    )
    add(b, "--evals", help="tidy evaluation table (`pythia`: bundled)")
    add(b, "--task", metavar="T1,T2,...", help="task(s)")
    b.add_argument("--fit-models", required=True, metavar="M1,M2,...", help="models to fit on")
    b.add_argument("--target", required=True, help="model whose final score is forecast")
    b.add_argument(
        "--methods",
        metavar="M1,M2,...",
        help="methods (default: all); the naive baselines fp and persistence are "
        "always scored beside them",
    )
    add_evals_fit_flags(b, with_common=False, models=False)
    add(b, "--bootstrap", default=100, metavar=None, help="bootstrap replicates per fit")
    add(b, "--seed")
    add(
        b,
        "--chance",
        metavar="P|TASK=P,...",
        help="chance level in points: P for one task, TASK=P[,TASK=P] for several, "
        "repeatable (tasks not named keep the bundled table)",
    )
    add(b, "--chance-file")
    add(b, "--out", help="rows as .csv, or JSON (.json or no extension)")
    add(b, "--level", "--json", "--quiet")
    b.set_defaults(handler=_backtest)
