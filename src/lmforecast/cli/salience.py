"""`lmforecast salience map-losses|fit|predict|features|token-losses|plot`: the CSV method.

Capability Salience Vector (Ge, Xing et al.): learn per-token weights on a validation text so the
weighted, character-normalised loss of a model predicts its accuracy on one task (Eq. 1-3,
Algorithms 1-2).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from ..store.safe_write import output_file
from .common import (
    atomic_write_text,
    check_out_format,
    check_writable,
    emit,
    figure_format,
    print_json,
)
from .flags import MAX_STEPS, _named, int_range
from .ledger import record_forecast
from .options import OPTIONS, add


def register(sub) -> None:
    p = sub.add_parser("salience", help="Capability Salience Vector: token losses -> accuracy")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    m = verbs.add_parser("map-losses", help="Algorithm 1: map token losses to another tokenizer")
    add(m, "--losses")
    m.add_argument(
        "--target-tokenizer",
        required=True,
        metavar="T",
        help="'words' or 'chars' (built in), or a local Hugging Face tokenizer folder",
    )
    add(
        m,
        "--texts",
        required=False,
        help="JSONL: text_id, text (or give a 'text' field per record)",
    )
    add(m, "--out", help="write the mapped records here (default: stdout)")
    m.set_defaults(handler=_map_losses)

    f = verbs.add_parser("fit", help="Algorithm 2: learn the CSV and the Eq. 2 law for one task")
    add(f, "--texts", help="JSONL: text_id, text")
    add(f, "--losses")
    f.add_argument("--scores", help="CSV: model, split, one column per task")
    add(
        f,
        "--evals",
        required=False,
        help="instead of --scores: tidy table from `lmforecast evals import` ('pythia' = the "
        "bundled one); score = --evals-metric of --task at each model's final step (or --step), "
        "split by size within family as --auto-split (default: none)",
    )
    f.add_argument("--evals-metric", default="acc", help="metric of --evals (default: %(default)s)")
    f.add_argument(
        "--step", type=int, help="with --evals: training step (default: each model's final one)"
    )
    add(f, "--task", help="score column to fit")
    f.add_argument(
        "--chance",
        required=True,
        metavar="G",
        help="chance level in points, in [0, 100) (25 for four choices; Eq. 2's gamma is G/100): "
        "a number, or 'task=value,...'; with scores in fractions a value in (0, 1) is refused "
        "as a likely fraction",
    )
    add(f, "--score-unit")
    f.add_argument(
        "--auto-split",
        action="store_true",
        help="no 'split' column: largest model of each 'family' (by 'size') test, next "
        "validation, rest train (App. A)",
    )
    f.add_argument(
        "--model",
        help="local Hugging Face causal LM folder (extra 'hf'): the scoring head reads its final "
        "hidden states (Eq. 3), the paper's path; without --model or --features the features "
        "are hashed n-grams (a torch-free fallback)",
    )
    add(f, "--device", help="with --model: torch device (default: cuda if available)")
    add(f, "--batch-size", help="with --model (default 8)")
    add(f, "--max-length", help="with --model: " + OPTIONS["--max-length"]["help"])
    f.add_argument("--features", help="cached features (.npz from `salience features`)")
    f.add_argument("--label-losses", help="table: model, <task> = mean answer NLL (baseline)")
    add(
        f,
        "--preset",
        help="optimiser setting: 'default' (Adam, lr 1e-3, 300 steps) or 'paper' (SGD, lr 1e-3, "
        "300 steps, Sec. 4.1); --optimizer/--lr/--steps override it (default: default)",
    )
    add(f, "--lr", help="learning rate (preset: 1e-3)")
    add(
        f,
        "--steps",
        # 0 is legal here (the initial weights, a baseline), unlike other verbs' --steps
        type=_named(int_range(0, MAX_STEPS), "--steps"),
        default=None,
        help="alternations of Algorithm 2 (preset: 300; 0 evaluates the initial weights)",
    )
    add(f, "--optimizer", help="theta's optimiser (preset default: adam)")
    add(f, "--activation")
    f.add_argument("--feature-dim", type=int, default=4096, help="hashed features (no --features)")
    add(
        f,
        "--bootstrap",
        help="bootstrap refits of the Eq. 2 law behind the prediction intervals of `salience "
        "predict` (default %(default)s; 0: none)",
    )
    add(f, "--seed")
    add(f, "--out", help="save the fit as JSON")
    add(f, "--json", "--quiet")
    f.set_defaults(handler=_fit)

    pr = verbs.add_parser(
        "predict",
        help="predicted accuracy of new models from their losses in points, each with a "
        "prediction interval (clipped to [0, 100])",
    )
    add(pr, "--fit", help="a fit saved by `salience fit --out`")
    add(pr, "--losses", "--level")
    add(pr, "--out", help="also write the predictions as CSV")
    add(pr, "--json", "--quiet")
    pr.set_defaults(handler=_predict)

    fe = verbs.add_parser("features", help="compute and cache per-token features (.npz)")
    add(fe, "--texts")
    fe.add_argument("--model", help="local Hugging Face causal LM folder (extra 'hf')")
    fe.add_argument("--feature-dim", type=int, default=4096, help="hashed features (no --model)")
    add(fe, "--device", help="torch device (default: cuda if available, else cpu)")
    add(fe, "--batch-size", "--max-length")
    add(fe, "--out", required=True)
    add(fe, "--json", "--quiet")
    fe.set_defaults(handler=_features)

    tl = verbs.add_parser("token-losses", help="per-token losses of a local HF model (extra 'hf')")
    tl.add_argument("--model", required=True, help="local Hugging Face causal LM folder")
    add(tl, "--texts")
    tl.add_argument("--name", help="model name in the records (default: folder name)")
    add(tl, "--device", "--batch-size", "--max-length")
    add(tl, "--out", required=True)
    add(tl, "--json", "--quiet")
    tl.set_defaults(handler=_token_losses)

    pl = verbs.add_parser("plot", help="token weights (Fig. 9) or predicted vs actual (Fig. 4)")
    add(pl, "--fit", nargs="+", help="one fit, or several (--kind fit)")
    add(pl, "--kind", choices=["weights", "fit"], default="weights")
    add(pl, "--texts", required=False, help="JSONL texts (needed for --kind weights)")
    pl.add_argument("--text-id", help="text to show (default: the first)")
    add(pl, "--out", required=True, help=".html or .png (weights), .png/.pdf/.svg (fit)")
    pl.set_defaults(handler=_plot)


# ---- verbs -----------------------------------------------------------------------------------
def _map_losses(args) -> int:
    from ..salience.inputs import map_loss_file
    from ..salience.records import write_jsonl

    out = check_writable(args.out)
    text = write_jsonl(map_loss_file(args.losses, args.target_tokenizer, args.texts))
    if out is None:
        sys.stdout.write(text)
    else:
        atomic_write_text(out, text)
    return 0


def _fit(args) -> int:
    from ..salience.inputs import feature_source, read_task_scores
    from ..salience.model import fraction_chance_hint, split_scores
    from ..salience.pipeline import fit_salience
    from ..salience.records import parse_chance, read_label_losses, read_loss_records, read_texts

    out = check_writable(args.out)
    check_out_format(out, (".json",))
    extractor, feats = feature_source(
        model=args.model,
        features=args.features,
        feature_dim=args.feature_dim,
        device=args.device,
        batch_size=args.batch_size,
        max_length=args.max_length,
        progress=not args.quiet,
    )
    texts, records = read_texts(args.texts), read_loss_records(args.losses)
    scores = read_task_scores(
        args.task,
        scores=args.scores,
        evals=args.evals,
        evals_metric=args.evals_metric,
        step=args.step,
        auto_split=args.auto_split,
    )
    chance = parse_chance(args.chance, args.task)
    _, _, scale = split_scores(scores["score"], args.score_unit, f"scores of task {args.task!r}")
    fraction_chance_hint(chance, scale, "--chance")  # before the (slow) feature extraction
    fit = fit_salience(
        texts,
        records,
        scores,
        task=args.task,
        chance=chance,
        score_unit=args.score_unit,
        features=feats,
        extractor=extractor,
        label_losses=read_label_losses(args.label_losses, args.task) if args.label_losses else None,
        preset=args.preset,
        lr=args.lr,
        n_steps=args.steps,
        optimizer=args.optimizer,
        activation=args.activation,
        bootstrap=args.bootstrap,
        seed=args.seed,
    )
    if out is not None:
        atomic_write_text(out, fit.to_json())
    return emit(args, fit.contract(), fit.summary())


def _predict(args) -> int:
    from ..salience.answers import predict_answer
    from ..salience.records import read_loss_records
    from ..salience.result import SalienceFit

    out = check_writable(args.out)
    check_out_format(out, (".csv",))
    fit = SalienceFit.from_json(args.fit)
    ans, df = predict_answer(fit, read_loss_records(args.losses), args.level)
    if out is not None:
        atomic_write_text(out, df.to_csv(index=False))
    emit(args, ans.contract(), ans.summary())
    record_forecast(args, ans.contract())
    return 0


def _features(args) -> int:
    from ..salience.inputs import feature_source
    from ..salience.records import read_texts

    out = check_writable(args.out)
    ext, _ = feature_source(
        model=args.model or None,
        feature_dim=args.feature_dim,
        device=args.device,
        batch_size=args.batch_size,
        max_length=args.max_length,
        progress=not args.quiet,
    )
    feats = ext.extract(read_texts(args.texts))
    with output_file(out, suffix=".npz") as tmp:  # the output policy: a device is written in place
        feats.save(tmp)
    print_json(feats.contract()) if args.json else print(json.dumps(feats.contract()))
    return 0


def _token_losses(args) -> int:
    from ..salience.hf import hf_token_losses
    from ..salience.records import read_texts, write_jsonl

    out = check_writable(args.out)
    recs = hf_token_losses(
        args.model,
        read_texts(args.texts),
        model_name=args.name,
        device=args.device,
        batch_size=args.batch_size,
        max_length=args.max_length,
        progress=not args.quiet,
    )
    atomic_write_text(out, write_jsonl(recs))
    return 0


def _plot(args: argparse.Namespace) -> int:
    from ..plots.salience import fit_figure, tasks_figure, weights_figure, weights_html
    from ..salience.inputs import weights_text
    from ..salience.result import SalienceFit

    out = check_writable(args.out)
    figure_format(out, html_ok=args.kind == "weights")
    if args.kind == "fit" and (args.texts or args.text_id):  # unused, and said so
        warnings.warn(
            "--texts and --text-id apply to --kind weights; --kind fit does not use them",
            stacklevel=2,
        )
    fits = [SalienceFit.from_json(f) for f in args.fit]
    if args.kind == "fit":
        _save_figure(fit_figure(fits[0]) if len(fits) == 1 else tasks_figure(fits), out)
        print(f"wrote {out} (fit, {len(fits)} task{'s' if len(fits) > 1 else ''})")
        return 0
    tid, text, off, w = weights_text(fits, args.texts, args.text_id)
    title = f"{fits[0].task}: {tid}"
    if out.suffix.lower() in (".html", ".htm"):
        atomic_write_text(out, weights_html(text, off, w, title=title))
    else:
        _save_figure(weights_figure(text, off, w, title=title), out)
    print(f"wrote {out} (salience weights on text {tid})")
    return 0


def _save_figure(fig, out: Path) -> None:
    suffix = out.suffix.lower() or ".png"
    with output_file(out, suffix=suffix) as tmp:  # atomic, mode per umask (safe_write)
        fig.savefig(tmp, format=suffix.lstrip("."), dpi=120, bbox_inches="tight")
