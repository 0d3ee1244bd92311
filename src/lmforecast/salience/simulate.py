"""Planted data for the CSV method: accuracy driven by a known subset of tokens.

Model families use different tokenizers and differ in their loss on generic ("filler") text
through a family offset that is unrelated to capability, so the all-token average loss
disagrees with accuracy across families (the paper's motivation, Sec. 1 and Fig. 6). Within a
model, the loss on *salient* words falls linearly with a latent skill s_m, and accuracy follows
Eq. 2 in that skill. A method that finds the salient tokens recovers one sigmoid for all
families; the all-token and label-token baselines cannot.

This is simulated data (the paper publishes no token losses); it is used by the tests, the
report section and the benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

SALIENT_WORDS = (
    "therefore",
    "because",
    "hence",
    "implies",
    "equals",
    "total",
    "answer",
    "step",
    "sum",
    "thus",
)


def _tokenize(text: str, kind: str) -> np.ndarray:
    """Source tokenizers of the simulated families (all character-offset based)."""
    import re

    if kind == "words":
        pat = r"\w+|[^\w\s]"
    elif kind == "spaced":  # words with their leading space, SentencePiece-like
        pat = r"\s?\w+|\s?[^\w\s]"
    elif kind == "chunks3":
        return np.array([[i, min(i + 3, len(text))] for i in range(0, len(text), 3)], np.int64)
    elif kind == "whitespace":
        pat = r"\S+"
    else:
        raise ValueError(kind)
    return np.array([m.span() for m in re.finditer(pat, text)], np.int64).reshape(-1, 2)


@dataclass
class PlantedData:
    texts: dict[str, str]
    records: list[dict]
    scores: pd.DataFrame  # model, family, split, score (a fraction, as Eq. 2 draws it), skill
    label_losses: dict[str, float]
    salient_words: tuple[str, ...]
    gamma: float  # Eq. 2's floor, a fraction

    @property
    def chance(self) -> float:
        """The chance level in points (`gamma` times 100), what `fit_salience` takes."""
        return 100.0 * self.gamma


def planted_salience_data(
    *,
    n_texts: int = 40,
    words_per_text: int = 60,
    n_families: int = 4,
    models_per_family: int = 6,
    salient_fraction: float = 0.1,
    gamma: float = 0.25,
    score_noise: float = 0.003,
    loss_noise: float = 0.05,
    seed: int = 0,
) -> PlantedData:
    """Simulate texts, per-model source-token losses, accuracies and label-token losses."""
    rng = np.random.default_rng(seed)
    syll = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "se", "di", "pa", "zu", "fe"]
    fillers = sorted({"".join(rng.choice(syll, size=rng.integers(1, 4))) for _ in range(400)})
    fillers = [f for f in fillers if f not in SALIENT_WORDS]
    texts: dict[str, str] = {}
    for t in range(n_texts):
        words = []
        for _ in range(words_per_text):
            if rng.random() < salient_fraction:
                w = str(rng.choice(SALIENT_WORDS))
            else:
                w = str(rng.choice(fillers))
            if rng.random() < 0.08:
                w = w.capitalize()
            words.append(w)
            if rng.random() < 0.1:
                words[-1] += str(rng.choice([",", ".", ";"]))
        texts[f"t{t:03d}"] = " ".join(words)

    kinds = ["words", "spaced", "chunks3", "whitespace"]
    fam_skill_lo = np.linspace(-1.0, 0.2, n_families)
    rng.shuffle(fam_skill_lo)
    # family offsets on generic text grow with capability: the all-token loss misleads
    fam_offset = 0.35 * (fam_skill_lo - fam_skill_lo.mean()) + rng.normal(0, 0.02, n_families)
    label_offset = rng.normal(0, 0.5, n_families)
    rows, records, label = [], [], {}
    for f in range(n_families):
        skills = fam_skill_lo[f] + np.linspace(0.0, 1.6, models_per_family)
        for j, s in enumerate(skills):
            name = f"fam{f}-m{j}"
            split = (
                "test"
                if j == models_per_family - 1
                else "validation"
                if j == models_per_family - 2
                else "train"
            )
            score = gamma + (1 - gamma) / (1 + np.exp(-2.5 * (s - 0.4)))
            score = float(np.clip(score + rng.normal(0, score_noise), 0, 1))
            rows.append((name, f"fam{f}", split, score, float(s)))
            label[name] = float(1.2 - 0.5 * s + label_offset[f])
            for tid, text in texts.items():
                rate = np.full(len(text), 0.05 + 0.1 * fam_offset[f])  # spaces, punctuation
                for m in _word_spans(text):
                    w = text[m[0] : m[1]].lower()
                    if w in SALIENT_WORDS:
                        rate[m[0] : m[1]] = 0.9 - 0.35 * s
                    else:
                        rate[m[0] : m[1]] = 1.0 + fam_offset[f] - 0.2 * s
                rate = np.maximum(rate, 0.01)
                rate *= np.exp(rng.normal(0, loss_noise, len(text)))
                off = _tokenize(text, kinds[f % len(kinds)])
                cs = np.r_[0.0, np.cumsum(rate)]
                losses = cs[off[:, 1]] - cs[off[:, 0]]
                records.append(
                    {
                        "model": name,
                        "text_id": tid,
                        "offsets": off.tolist(),
                        "losses": losses.tolist(),
                    }
                )
    scores = pd.DataFrame(rows, columns=["model", "family", "split", "score", "skill"])
    return PlantedData(texts, records, scores, label, SALIENT_WORDS, gamma)


def _word_spans(text: str):
    import re

    return [m.span() for m in re.finditer(r"\w+", text)]
