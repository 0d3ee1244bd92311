"""Downstream tasks with known random baselines, built from the validation split.

- ``hellaswag_like``: 4-way multiple-choice continuation of English prose (docstrings); the
  ending with the highest per-character log-likelihood wins (Hellaswag's length-normalised
  scoring, normalised by characters so byte and BPE models are scored alike). Random = 25%.
- ``code_mc``: 4-way choice of the next source line of standard-library code. Random = 25%.
- ``arith``: exact match on ``a+b=`` / ``a-b=`` problems, scored by greedy decoding under teacher
  forcing: every answer token (digits and the closing newline) must be the model's argmax.
  Multi-digit problems are held out of training; with single digits (the ``full`` preset) the
  task is the whole 155-problem table, which the training text teaches. Random = the chance of
  guessing the answer uniformly from its range (0..2(m-1) for sums, 0..m-1 for differences,
  m = 10**digits), averaged over items.

Scores are in percentage points, as the FLP paper prints them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .corpus import arithmetic_problem

CONTEXT_CHARS = 36
MAX_ENDING = 22


@dataclass(frozen=True)
class TaskInfo:
    name: str
    metric: str
    chance: float  # percent
    domain: str


@dataclass
class MCItem:
    context: str
    choices: tuple[str, ...]
    label: int


def _endings_at_words(text: str, rng, n: int) -> list[tuple[str, str]]:
    out = []
    for _ in range(n * 4):
        if len(out) >= n or len(text) < CONTEXT_CHARS + MAX_ENDING + 2:
            break
        i = int(rng.integers(CONTEXT_CHARS, len(text) - MAX_ENDING))
        j = text.rfind(" ", i - 8, i)
        if j < CONTEXT_CHARS:
            continue
        ctx, rest = text[j - CONTEXT_CHARS : j], text[j:]
        cut = rest.rfind(" ", 10, MAX_ENDING)
        if cut < 10 or "\n" in rest[:cut]:
            continue
        out.append((ctx, rest[:cut]))
    return out


def prose_mc(docs: list[str], n_items: int, seed: int) -> list[MCItem]:
    """Hellaswag-like items: a 36-character context and its true 10-22 character ending."""
    rng = np.random.default_rng(seed)
    pairs: list[tuple[str, str]] = []
    order = rng.permutation(len(docs))
    for k in order:
        text = " ".join(docs[k].split())
        pairs.extend(_endings_at_words(text, rng, 1))
        if len(pairs) >= n_items:
            break
    return _with_distractors(pairs, rng)


def code_mc(docs: list[str], n_items: int, seed: int) -> list[MCItem]:
    """Next-line items: the 36 characters before a line (indentation included) and the line."""
    rng = np.random.default_rng(seed)
    pairs: list[tuple[str, str]] = []
    for k in rng.permutation(len(docs)):
        lines = docs[k].split("\n")
        pos = np.cumsum([len(x) + 1 for x in lines])
        cand = [
            i
            for i in range(1, len(lines))
            if 8 <= len(lines[i].strip()) <= MAX_ENDING and pos[i - 1] > CONTEXT_CHARS + 40
        ]
        if not cand:
            continue
        per_doc = max(1, -(-n_items // len(docs)))
        for i in rng.choice(cand, size=min(per_doc, len(cand)), replace=False):
            line = lines[i]
            body = line.lstrip()
            start = int(pos[i - 1]) + (len(line) - len(body))
            pairs.append((docs[k][start - CONTEXT_CHARS : start], body))
        if len(pairs) >= n_items:
            break
    return _with_distractors(pairs[:n_items], rng)


def _with_distractors(pairs, rng) -> list[MCItem]:
    if len(pairs) < 8:
        raise InputError(
            f"corpus too small: only {len(pairs)} multiple-choice items could be built"
        )
    items = []
    n = len(pairs)
    for i, (ctx, end) in enumerate(pairs):
        others = [pairs[j][1] for j in rng.permutation(n) if j != i and pairs[j][1] != end][:3]
        choices = [end, *others]
        perm = rng.permutation(4)
        items.append(MCItem(ctx, tuple(choices[p] for p in perm), int(np.argmax(perm == 0))))
    return items


def arithmetic_table(max_digits: int = 1) -> list[tuple[str, str]]:
    """Every problem with operands below 10**max_digits: all sums, and all non-negative
    differences (``a-b`` with a >= b)."""
    m = 10**max_digits
    sums = [(f"{a}+{b}=", str(a + b)) for a in range(m) for b in range(m)]
    diffs = [(f"{a}-{b}=", str(a - b)) for a in range(m) for b in range(a + 1)]
    return sums + diffs


def arith_items(n_items: int, seed: int, max_digits: int = 2) -> list[tuple[str, str]]:
    """``n_items`` distinct problems (prompt, answer) drawn from the seed, or the whole table
    when it has no more than ``n_items`` problems (single digits: 155)."""
    table_size = 10 ** (2 * max_digits) + 10**max_digits * (10**max_digits + 1) // 2
    if table_size <= n_items:
        return arithmetic_table(max_digits)
    rng = np.random.default_rng(seed)
    seen, out = set(), []
    while len(out) < n_items:
        p, a = arithmetic_problem(rng, max_digits)
        if p not in seen:
            seen.add(p)
            out.append((p, a))
    return out


def arith_chance(items: list[tuple[str, str]], max_digits: int = 2) -> float:
    """Percent chance of a uniform guess over each item's answer range: sums of operands below
    m = 10**max_digits lie in 0..2(m-1) (2m - 1 values), differences in 0..m-1 (m values)."""
    m = 10**max_digits
    return float(100.0 * np.mean([1 / (2 * m - 1) if "+" in p else 1 / m for p, _ in items]))


@dataclass
class TaskSet:
    """Every task's items; built once per build from the validation split."""

    prose: list[MCItem]
    code: list[MCItem]
    arith: list[tuple[str, str]]
    arith_digits: int = 2

    def infos(self) -> list[TaskInfo]:
        return [
            TaskInfo("hellaswag_like", "accuracy", 25.0, "prose"),
            TaskInfo(
                "arith",
                "exact_match",
                arith_chance(self.arith, self.arith_digits),
                "arith",
            ),
            TaskInfo("code_mc", "accuracy", 25.0, "code"),
        ]


def build_tasks(
    valid_docs: dict[str, list[str]], n_mc: int, n_arith: int, seed: int, arith_digits: int = 2
) -> TaskSet:
    return TaskSet(
        prose_mc(valid_docs["prose"], n_mc, seed),
        code_mc(valid_docs["code"], n_mc, seed + 1),
        arith_items(n_arith, seed + 2, arith_digits),
        arith_digits,
    )
