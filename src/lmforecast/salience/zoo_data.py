"""Adapters from the small-model zoo's tables (docs/zoo.md) to the CSV fit (Ge, Xing et al.).

The zoo ships the salience inputs in their native formats: `texts.jsonl` (text_id, text),
`token_losses.jsonl` (model, text_id, offsets, losses; BPE and byte-level models tokenise the
same texts differently, so Algorithm 1 maps them onto one target tokenizer) and `scores.csv`
(model, tokenizer, split by size within each tokenizer family, scores in [0, 1], read as
fractions by `fit_salience`'s ``score_unit="auto"``; the chance levels are points).
"""

from __future__ import annotations

import pandas as pd

from ..errors import InputError


def zoo_texts(zoo) -> dict[str, str]:
    """text_id -> text."""
    return {str(t["text_id"]): str(t["text"]) for t in zoo.texts()}


def zoo_chance(zoo, task: str) -> float:
    """Chance level of `task` in points (tasks.csv holds percent)."""
    t = zoo.tasks.set_index("name")
    if task not in t.index:
        raise InputError(f"zoo tasks: no task {task!r}; known: {', '.join(t.index)}")
    return float(t.loc[task, "chance"])


def zoo_scores(zoo, task: str) -> pd.DataFrame:
    """The scores table for one task: model, tokenizer, split, score (a fraction, as
    scores.csv holds it)."""
    s = zoo.scores
    if task not in s.columns:
        raise InputError(f"zoo scores: no column {task!r}")
    out = s[["model", "tokenizer", "split", task]].rename(columns={task: "score"})
    return out.reset_index(drop=True)


def emerged_tasks(zoo, margin: float = 5.0) -> list[str]:
    """Tasks whose best score over the zoo's models clears random + `margin` points (the FLP
    paper's 5-point emergence rule, Sec. 3.3; compared in the fractions scores.csv holds): the
    ones with signal to fit."""
    return [
        t
        for t in zoo.tasks["name"].astype(str)
        if t in zoo.scores.columns
        and float(zoo.scores[t].max()) >= zoo_chance(zoo, t) / 100.0 + margin / 100.0
    ]


def zoo_salience_inputs(zoo, task: str) -> tuple[dict[str, str], list[dict], pd.DataFrame, float]:
    """(texts, loss records, scores, chance) ready for `fit_salience`."""
    return zoo_texts(zoo), zoo.token_losses(), zoo_scores(zoo, task), zoo_chance(zoo, task)


__all__ = ["emerged_tasks", "zoo_texts", "zoo_chance", "zoo_scores", "zoo_salience_inputs"]
