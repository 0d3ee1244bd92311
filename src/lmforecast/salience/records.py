"""Readers and validation for the CSV method's files (errors name model / text / token / row).

- texts ``T.jsonl``: ``{"text_id": .., "text": ..}`` per line;
- token losses ``M.jsonl``: ``{"model": .., "text_id": .., "offsets": [[s, e], ..],
  "losses": [..]}`` per line (character offsets into the text, one loss in nats per token);
- scores ``S.csv``: columns ``model``, ``split`` (train/validation/test), one column per task,
  in points (0-100) or fractions (0-1; the fit's ``score_unit`` says which, "auto" reads a column
  whose values all lie in [0, 1] as fractions).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.io import read_table
from ..data.validate import check_columns, numeric_column
from ..errors import InputError, fmt_value
from ..params import CHANCE_POINTS
from .mapping import check_losses, check_offsets, map_losses_many, offsets_function

SPLITS = ("train", "validation", "test")

# model -> text_id -> (offsets (k, 2), losses (k,))
LossTable = dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]


def _jsonl(path: str | Path) -> Iterable[tuple[int, dict]]:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if p.is_dir():
        raise InputError(f"{p}: is a folder, expected a JSONL file")
    try:
        lines = p.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{p}: not UTF-8 text (byte {exc.start}); expected JSONL, one JSON object per line"
        ) from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p} line {n}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise InputError(f"{p} line {n}: JSON nested too deeply") from None
        if not isinstance(rec, dict):
            raise InputError(f"{p} line {n}: expected a JSON object")
        yield n, rec


def read_texts(path: str | Path) -> dict[str, str]:
    """T.jsonl -> {text_id: text}, in file order."""
    out: dict[str, str] = {}
    for n, rec in _jsonl(path):
        for key in ("text_id", "text"):
            if key not in rec:
                raise InputError(f"{path} line {n}: missing field {key!r}")
        tid, text = str(rec["text_id"]), rec["text"]
        if not isinstance(text, str) or not text:
            raise InputError(f"{path} line {n}: text {tid!r} is empty or not a string")
        if tid in out:
            raise InputError(f"{path} line {n}: duplicate text_id {tid!r}")
        out[tid] = text
    if not out:
        raise InputError(f"{path}: no texts")
    return out


def read_loss_records(path: str | Path) -> list[dict]:
    """M.jsonl -> list of records, with the fields checked for presence."""
    recs = []
    for n, rec in _jsonl(path):
        for key in ("model", "text_id", "offsets", "losses"):
            if key not in rec:
                raise InputError(f"{path} line {n}: missing field {key!r}")
        rec = dict(rec)
        rec["_line"] = n
        recs.append(rec)
    if not recs:
        raise InputError(f"{path}: no loss records")
    return recs


def loss_table(records: Iterable[Mapping], lengths: Mapping[str, int]) -> LossTable:
    """Validate records against the texts' lengths (text_id -> characters): offsets inside the
    text, sorted, non-overlapping; finite losses; one record per (model, text); every model
    covers every text."""
    table: LossTable = {}
    for rec in records:
        model, tid = str(rec["model"]), str(rec["text_id"])
        where = f"model {model!r} text {tid!r}"
        if tid not in lengths:
            raise InputError(f"{where}: text_id {tid!r} is not among the texts")
        off = check_offsets(rec["offsets"], int(lengths[tid]), where)
        losses = check_losses(rec["losses"], len(off), where)
        per_model = table.setdefault(model, {})
        if tid in per_model:
            raise InputError(f"{where}: duplicate loss record")
        per_model[tid] = (off, losses)
    for model, per in table.items():
        missing = [t for t in lengths if t not in per]
        if missing:
            raise InputError(f"model {model!r}: no losses for text {missing[0]!r}")
    return table


def size_split(families, sizes, n_validation: int = 1, n_test: int = 1) -> np.ndarray:
    """App. A split: within each family, the largest `n_test` models are test, the next
    `n_validation` validation, the rest train (families too small to spare a train model keep
    all their models in train)."""
    fam = np.asarray(families).astype(str)
    size = np.asarray(sizes, float)
    out = np.full(fam.size, "train", dtype=object)
    for f in np.unique(fam):
        idx = np.flatnonzero(fam == f)
        if idx.size <= n_validation + n_test:
            continue
        order = idx[np.argsort(-size[idx], kind="stable")]
        out[order[:n_test]] = "test"
        out[order[n_test : n_test + n_validation]] = "validation"
    return out.astype(str)


def read_scores(path: str | Path, task: str, auto_split: bool = False) -> pd.DataFrame:
    """S.csv -> DataFrame with columns model, split, score (as the table gives it, points in
    [0, 100] or fractions in [0, 1]: the fit's ``score_unit`` reads it).

    With `auto_split`, a table without a `split` column gets the App. A split from its
    `family` and `size` columns (`size_split`).
    """
    df = read_table(path)
    what = str(path)
    if auto_split and "split" not in df.columns:
        check_columns(df, ["model", "family", "size"], what)
        sizes = numeric_column(df, "size", positive=True, what=what)
        df = df.assign(split=size_split(df["family"].astype(str), sizes))
    check_columns(df, ["model", "split"], what)
    if task not in df.columns:
        tasks = [c for c in df.columns if c not in ("model", "split")]
        raise InputError(f"{what}: no score column for task {task!r}; found {tasks}")
    models = df["model"].astype(str)
    dup = models.duplicated().to_numpy()
    if dup.any():
        i = int(np.argmax(dup))
        raise InputError(f"{what}: row {i + 1}: duplicate model {fmt_value(models.iloc[i])}")
    split = df["split"].astype(str).str.strip().str.lower()
    bad = ~split.isin(SPLITS).to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(
            f"{what}: column 'split' row {i + 1}: {df['split'].iloc[i]!r} is not one of "
            f"{', '.join(SPLITS)}"
        )
    score = numeric_column(df, task, lower=0.0, upper=100.0, what=what)
    return pd.DataFrame({"model": models.to_numpy(), "split": split.to_numpy(), "score": score})


def read_label_losses(path: str | Path, task: str) -> dict[str, float]:
    """Label-token baseline input: a table with columns model and <task> (mean answer NLL)."""
    df = read_table(path)
    check_columns(df, ["model", task], str(path))
    vals = numeric_column(df, task, what=str(path))
    return dict(zip(df["model"].astype(str), vals))


def parse_chance(spec: str, task: str) -> float:
    """``25`` or ``mmlu=25,gsm8k=0`` -> the chance level of `task` in points, in [0, 100)
    (error if the task has none). A value in (0, 1) given with scores in fractions is refused
    by the fit (`model.fraction_chance_hint`): it most likely meant a fraction."""
    spec = str(spec).strip()
    if "=" in spec:
        vals = {}
        for part in spec.split(","):
            if not part.strip():
                continue
            k, _, v = part.partition("=")
            vals[k.strip()] = v.strip()
        if task not in vals:
            raise InputError(f"--chance: task {task!r} has no chance value")
        spec = vals[task]
    try:
        g = float(spec)
    except ValueError:
        raise InputError(f"--chance: {spec!r} is not a number") from None
    if CHANCE_POINTS.failure(g) is not None:
        raise InputError(
            f"--chance: {g:g} must be {CHANCE_POINTS.bounds()} points (25 for four choices)"
        )
    return g


def write_jsonl(records: Iterable[Mapping]) -> str:
    return "".join(json.dumps(dict(r), ensure_ascii=False) + "\n" for r in records)


def map_records(records, texts, target_tokenizer) -> list[dict]:
    """Algorithm 1 on loss records (M.jsonl format) onto any target tokenizer
    (see `offsets_function`); returns records with the target offsets and mapped losses."""
    tok = offsets_function(target_tokenizer)
    table = loss_table(records, {t: len(s) for t, s in texts.items()})
    target = {t: tok(s) for t, s in texts.items()}
    models = list(table)
    out = []
    for tid in texts:
        mapped = map_losses_many(
            [table[m][tid] for m in models],
            target[tid],
            len(texts[tid]),
            [f"model {m!r} text {tid!r}" for m in models],
        )
        for m, row in zip(models, mapped):
            out.append(
                {
                    "model": m,
                    "text_id": tid,
                    "offsets": target[tid].tolist(),
                    "losses": row.tolist(),
                }
            )
    return out
