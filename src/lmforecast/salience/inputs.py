"""The CSV method's inputs as the command line and a notebook give them: the target tokenizer of
Algorithm 1 by name or folder, loss records with their texts, the scores of one task (a scores
table or a tidy evals table), the feature source of the scoring head (Eq. 3), and the text a
weights figure shows. Each refusal is one `InputError` line naming the flag and the value."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from ..data.evals import read_evals, to_scores
from ..data.validate import numeric_column
from ..errors import InputError
from .features import BUILTIN_TOKENIZERS, HashedNgramFeatures, TextFeatures
from .hf import HuggingFaceFeatures, check_window, hf_tokenizer_offsets
from .records import map_records, read_loss_records, read_scores, read_texts, size_split


def target_offsets(spec: str):
    """The ``text -> offsets`` function of Algorithm 1's target tokenizer: 'words' or 'chars'
    (built in) or a local Hugging Face tokenizer folder."""
    if spec in BUILTIN_TOKENIZERS:
        return BUILTIN_TOKENIZERS[spec]
    if not Path(spec).exists():
        raise InputError(
            f"--target-tokenizer: {spec!r} is neither 'words', 'chars' nor a local tokenizer folder"
        )
    return hf_tokenizer_offsets(spec)


def inline_texts(records: Iterable[Mapping], where: str) -> dict[str, str]:
    """text_id -> text from the 'text' field of each loss record (read from `where`); a record
    without one, or two records giving different texts for one text_id, is refused."""
    texts: dict[str, str] = {}
    for r in records:
        if not isinstance(r.get("text"), str):
            raise InputError(f"{where} line {r['_line']}: no 'text' field; pass --texts T.jsonl")
        prev = texts.setdefault(str(r["text_id"]), r["text"])
        if prev != r["text"]:
            raise InputError(
                f"{where} line {r['_line']}: text {str(r['text_id'])!r} differs from "
                "the text an earlier record gave for the same text_id"
            )
    return texts


def map_loss_file(losses: str | Path, target_tokenizer: str, texts: str | Path | None = None):
    """Algorithm 1 on a loss-records file: the records mapped onto `target_tokenizer` (see
    `target_offsets`), the texts read from `texts` or from each record's 'text' field."""
    records = read_loss_records(losses)
    text = read_texts(texts) if texts else inline_texts(records, str(losses))
    return map_records(records, text, target_offsets(target_tokenizer))


def read_task_scores(
    task: str,
    *,
    scores: str | Path | None = None,
    evals: str | Path | None = None,
    evals_metric: str = "acc",
    step: int | None = None,
    auto_split: bool = False,
) -> pd.DataFrame:
    """The model / split / score frame of `task` (scores as the table gives them, points or
    fractions: the fit's ``score_unit`` reads them): from a scores table (`read_scores`), or from
    a tidy evals table (`evals_metric` of `task` at each model's final step or `step`, split by
    size within each family as App. A does). Exactly one of `scores` and `evals`."""
    if (scores is None) == (evals is None):
        raise InputError("give exactly one of --scores and --evals")
    if scores is not None:
        if step is not None:
            raise InputError("--step applies to --evals only")
        return read_scores(scores, task, auto_split=auto_split)
    s = to_scores(read_evals(evals), task, evals_metric, step=step)
    score = numeric_column(s, task, lower=0.0, upper=100.0, what=f"{evals} {task}")
    split = size_split(s["family"].astype(str), s["size"].to_numpy(float))
    return pd.DataFrame({"model": s["model"].to_numpy(), "split": split, "score": score})


def feature_source(
    *,
    model: str | Path | None = None,
    features: str | Path | None = None,
    feature_dim: int = 4096,
    device: str | None = None,
    batch_size: int = 8,
    max_length: int | None = None,
    progress: bool = True,
):
    """(extractor, cached features or None) for the scoring head's input (Eq. 3): a local
    causal LM's hidden states (`model`), a features cache (`features`), or hashed n-grams of
    `feature_dim` (neither). At most one of `model` and `features`."""
    if model is not None and features is not None:
        raise InputError("give at most one of --model and --features")
    hashed = HashedNgramFeatures(feature_dim)
    if model is None:
        return hashed, TextFeatures.load(features) if features is not None else None
    check_window(batch_size, max_length)
    if not Path(model).is_dir():
        raise InputError(f"--model: {str(model)!r} is not a local model folder")
    ext = HuggingFaceFeatures(
        model, device=device, batch_size=batch_size, max_length=max_length, progress=progress
    )
    return ext, None


def weights_text(fits: list, texts: str | Path | None, text_id: str | None):
    """(text_id, text, offsets, weights) a salience-weights figure (Fig. 9) shows: one fit,
    the text `text_id` (default: the fit's first) read from `texts`, the same text the fit was
    trained on."""
    if len(fits) > 1:
        raise InputError("--kind weights shows one fit; give a single --fit")
    fit = fits[0]
    if not texts:
        raise InputError("--kind weights needs --texts (the fit stores weights, not the text)")
    read = read_texts(texts)
    tid = text_id or fit.text_ids[0]
    if tid not in fit.text_ids or tid not in read:
        raise InputError(f"--text-id: text {tid!r} is not in both the fit and the texts")
    off, w = fit.weights_of(tid)
    if len(read[tid]) != fit.text_lengths[fit.text_ids.index(tid)]:
        raise InputError(f"text {tid!r} differs from the text the fit was trained on")
    return tid, read[tid], off, w
