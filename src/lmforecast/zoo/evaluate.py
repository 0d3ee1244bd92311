"""Evaluation of a zoo model: per-domain validation loss, task scores, per-token losses.

Losses are natural-log cross-entropies per token of the model's own tokenizer (nats/token).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import require
from .corpus import DOMAINS
from .data import REFERENCE_WEIGHTS, Streams, validation_windows
from .tasks import TaskSet


@dataclass
class EvalSet:
    """Everything a checkpoint is evaluated on, pre-tokenised for one tokenizer."""

    windows: dict[str, tuple[np.ndarray, np.ndarray]]
    mc: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    arith: tuple[np.ndarray, np.ndarray, np.ndarray]
    n_ctx: int


def _pack(seqs: list[np.ndarray], n_ctx: int, pad: int):
    x = np.full((len(seqs), n_ctx), pad, np.int64)
    for i, s in enumerate(seqs):
        x[i, : len(s)] = s[:n_ctx]
    return x


def _continuations(tok, contexts: list[str], endings: list[str], n_ctx: int):
    """Sequences [BOS] + context + ending (context cut from the left to fit), as inputs x,
    targets y and a mask of the ending's target positions."""
    seqs, masks = [], []
    for c, e in zip(contexts, endings):
        ci, ei = tok.encode(c), tok.encode(e)
        ci = ci[max(0, len(ci) + len(ei) + 1 - n_ctx - 1) :]
        full = np.concatenate([[tok.bos_id], ci, ei])
        m = np.zeros(len(full) - 1, bool)
        m[len(ci) :] = True
        seqs.append(full)
        masks.append(m)
    width = max(len(s) - 1 for s in seqs)  # pad to the longest item, not to n_ctx
    x = _pack([s[:-1] for s in seqs], width, tok.bos_id)
    y = _pack([s[1:] for s in seqs], width, 0)
    mask = np.zeros_like(x, bool)
    for i, m in enumerate(masks):
        mask[i, : len(m)] = m
    return x, y, mask


def build_evalset(tok, streams: Streams, tasks: TaskSet, n_ctx: int, valid_tokens: int) -> EvalSet:
    """Tokenise validation windows (``valid_tokens`` per domain) and every task item."""
    windows = {
        d: validation_windows(streams.valid[d], valid_tokens, n_ctx, tok.bos_id) for d in DOMAINS
    }
    mc = {}
    for name, items in (("hellaswag_like", tasks.prose), ("code_mc", tasks.code)):
        ctx = [it.context for it in items for _ in it.choices]
        ends = [c for it in items for c in it.choices]
        x, y, mask = _continuations(tok, ctx, ends, n_ctx)
        nchar = np.array([len(e) for e in ends], float)
        labels = np.array([it.label for it in items])
        mc[name] = (x, y, mask, nchar, labels)
    ctx = ["\n" + p for p, _ in tasks.arith]
    ends = [a + "\n" for _, a in tasks.arith]
    x, y, mask = _continuations(tok, ctx, ends, n_ctx)
    return EvalSet(windows, mc, (x, y, mask), n_ctx)


def _logprobs(model, x: np.ndarray, y: np.ndarray, batch: int = 256):
    """Per-position log p(y | x) and whether y is the argmax, batched, no gradients."""
    torch = require("torch", "torch")
    lps, hits = [], []
    with torch.no_grad():
        for i in range(0, len(x), batch):
            xb = torch.from_numpy(x[i : i + batch])
            yb = torch.from_numpy(y[i : i + batch])
            logits = model(xb).float()
            lp = torch.log_softmax(logits, -1)
            lps.append(lp.gather(-1, yb[..., None])[..., 0].numpy())
            hits.append((logits.argmax(-1) == yb).numpy())
    return np.concatenate(lps), np.concatenate(hits)


def evaluate(model, ev: EvalSet) -> dict[str, float]:
    """``loss_<domain>`` (nats/token), ``loss`` (reference-mixture average), task scores (%)."""
    was_training = model.training
    model.eval()
    out: dict[str, float] = {}
    for d, (x, y) in ev.windows.items():
        lp, _ = _logprobs(model, x, y)
        out[f"loss_{d}"] = float(-lp.mean())
    out["loss"] = float(sum(REFERENCE_WEIGHTS[d] * out[f"loss_{d}"] for d in DOMAINS))
    for name, (x, y, mask, nchar, labels) in ev.mc.items():
        lp, _ = _logprobs(model, x, y)
        score = (lp * mask).sum(1) / nchar
        pred = score.reshape(-1, 4).argmax(1)
        out[name] = float(100.0 * np.mean(pred == labels))
    x, y, mask = ev.arith
    _, hit = _logprobs(model, x, y)
    out["arith"] = float(100.0 * np.mean(np.all(hit | ~mask, axis=1)))
    model.train(was_training)
    return out


def token_losses(model, tok, text: str, n_ctx: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-token losses (nats) with character offsets for a text, in windows of n_ctx tokens,
    each window starting after BOS (as in training)."""
    ids, offsets = tok.encode_with_offsets(text)
    losses = np.empty(len(ids))
    was_training = model.training
    model.eval()
    for s in range(0, len(ids), n_ctx):
        y = ids[s : s + n_ctx][None, :]
        x = np.concatenate([[[tok.bos_id]], y[:, :-1]], axis=1)
        lp, _ = _logprobs(model, x, y)
        losses[s : s + y.shape[1]] = -lp[0]
    model.train(was_training)
    return offsets, losses
