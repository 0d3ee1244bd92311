"""Token streams per domain and split, and deterministic batch sampling.

A training batch is a function of (seed, run, step) only, so a resumed run sees exactly the
batches an uninterrupted one would. Each sequence is ``[BOS] + n_ctx - 1`` tokens of one domain,
drawn with the run's mixing weights; its ``n_ctx`` targets are the next tokens.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from .corpus import DOMAINS, Corpus


def mixture_weights(code_share: float) -> dict[str, float]:
    """Two sources: ``code`` with weight r, and ``general`` (prose and arithmetic, 1:1) with 1 - r.

    The default r = 0.4 gives prose 0.3, code 0.4, arith 0.3 (the reference mixture)."""
    g = 1.0 - code_share
    return {"prose": g / 2.0, "code": code_share, "arith": g / 2.0}


REFERENCE_CODE_SHARE = 0.4
REFERENCE_WEIGHTS = mixture_weights(REFERENCE_CODE_SHARE)


@dataclass
class Streams:
    """Concatenated token ids per domain for one tokenizer: ``train[d]`` and ``valid[d]``."""

    train: dict[str, np.ndarray]
    valid: dict[str, np.ndarray]


def encode_corpus(corpus: Corpus, tok) -> Streams:
    """Encode every document and join them with a newline token between documents."""
    nl = tok.encode("\n")
    out = {}
    for split, docs in (("train", corpus.train), ("valid", corpus.valid)):
        out[split] = {}
        for d in DOMAINS:
            parts = []
            for ids in tok.encode_many(docs[d]):
                parts.extend((ids, nl))
            out[split][d] = np.concatenate(parts).astype(np.int32)
    return Streams(out["train"], out["valid"])


def run_hash(run_id: str) -> int:
    return zlib.crc32(run_id.encode())


def sample_batch(
    streams: Streams,
    weights: dict[str, float],
    batch: int,
    n_ctx: int,
    bos_id: int,
    seed: int,
    run_id: str,
    step: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Inputs ``(batch, n_ctx)`` starting with BOS and targets ``(batch, n_ctx)``."""
    rng = np.random.default_rng([seed, run_hash(run_id), step])
    p = np.array([weights[d] for d in DOMAINS])
    dom = rng.choice(len(DOMAINS), size=batch, p=p / p.sum())
    y = np.empty((batch, n_ctx), np.int64)
    for i, k in enumerate(dom):
        s = streams.train[DOMAINS[k]]
        o = int(rng.integers(0, len(s) - n_ctx))
        y[i] = s[o : o + n_ctx]
    x = np.concatenate([np.full((batch, 1), bos_id), y[:, :-1]], axis=1)
    return x, y


def validation_windows(stream: np.ndarray, n_tokens: int, n_ctx: int, bos_id: int):
    """Non-overlapping windows over the first ``n_tokens`` of a validation stream."""
    n = min(n_tokens, len(stream)) // n_ctx
    y = stream[: n * n_ctx].reshape(n, n_ctx).astype(np.int64)
    x = np.concatenate([np.full((n, 1), bos_id), y[:, :-1]], axis=1)
    return x, y
