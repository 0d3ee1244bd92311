"""Algorithm 1 of the CSV paper: map token losses between tokenizers through characters.

Each source token's loss is spread evenly over the characters it spans; the characters are then
summed into the target tokenizer's tokens. Everything works from character offsets
``[start, end)`` into the text, so any tokenizer plugs in (a Hugging Face fast tokenizer's
``offset_mapping``, or a plain function returning offsets).

Conventions (documented in docs/salience.md, "Readings of ambiguous passages"):

- Tokens with *identical* spans (byte-level BPE pieces of one multi-byte character) are one
  group: on the source side their losses are added; on the target side the group's loss is
  split evenly among its members.
- A zero-width source token (a BOS, or a byte piece reported with an empty span) puts its loss
  on the character at its position (the last character when it sits at the end of the text).
- A character no source token covers (whitespace some tokenizers drop) carries zero loss.
- A character no target token covers gives its loss to the next non-empty target token (the
  last one at the end of the text). Zero-width target tokens receive zero loss.

With these rules the total loss is conserved exactly (up to float rounding), and mapping onto
the same tokenization is the identity.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def check_offsets(offsets, n_chars: int, where: str = "") -> np.ndarray:
    """Validate offsets as an (k, 2) int array: inside the text, sorted, non-overlapping.

    Exact repeats of the previous span are allowed (byte-level pieces of one character).
    """
    pre = f"{where}: " if where else ""
    try:
        off = np.asarray(offsets, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{pre}offsets are not a list of [start, end] pairs") from None
    if off.size == 0:
        return np.zeros((0, 2), np.int64)
    if off.ndim != 2 or off.shape[1] != 2:
        raise InputError(f"{pre}offsets must be a list of [start, end] pairs")
    if not np.all(np.isfinite(off)) or np.any(off != np.round(off)):
        i = int(np.argmax(~np.isfinite(off).all(1) | (off != np.round(off)).any(1)))
        raise InputError(f"{pre}token {i}: offsets {off[i].tolist()} are not integers")
    off = off.astype(np.int64)
    s, e = off[:, 0], off[:, 1]
    bad = (s < 0) | (e < s) | (e > n_chars)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(
            f"{pre}token {i}: offsets [{s[i]}, {e[i]}] run past the text "
            f"(length {n_chars}) or end before they start"
        )
    same = (s[1:] == s[:-1]) & (e[1:] == e[:-1])
    overlap = ((s[1:] < e[:-1]) | (s[1:] < s[:-1])) & ~same
    if overlap.any():
        i = int(np.argmax(overlap)) + 1
        raise InputError(
            f"{pre}token {i}: offsets [{s[i]}, {e[i]}] overlap the previous token "
            f"[{s[i - 1]}, {e[i - 1]}] (offsets must be sorted and non-overlapping)"
        )
    return off


def _groups(off: np.ndarray) -> np.ndarray:
    """Group id of each token; consecutive tokens with identical spans share a group."""
    if len(off) == 0:
        return np.zeros(0, np.int64)
    new = np.ones(len(off), bool)
    new[1:] = (off[1:, 0] != off[:-1, 0]) | (off[1:, 1] != off[:-1, 1])
    return np.cumsum(new) - 1


def char_losses(offsets: np.ndarray, losses: np.ndarray, n_chars: int) -> np.ndarray:
    """Step 1 of Algorithm 1: per-character losses l^c_j = l^s_i / |tau^s_i| for j in tau^s_i."""
    off = np.asarray(offsets, np.int64).reshape(-1, 2)
    losses = np.asarray(losses, float)
    out = np.zeros(n_chars, float)
    if len(off) == 0:
        return out
    g = _groups(off)
    first = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    gl = np.bincount(g, weights=losses)
    gs, ge = off[first, 0], off[first, 1]
    w = ge - gs
    empty = w == 0
    if empty.any():
        pos = np.minimum(gs[empty], n_chars - 1)
        np.add.at(out, pos, gl[empty])
    keep = ~empty
    w, gs, gl = w[keep], gs[keep], gl[keep]
    if w.size:
        total = int(w.sum())
        base = np.repeat(gs - (np.cumsum(w) - w), w)
        idx = base + np.arange(total)
        out += np.bincount(idx, weights=np.repeat(gl / w, w), minlength=n_chars)
    return out


def sum_to_target(char_loss: np.ndarray, target_offsets: np.ndarray) -> np.ndarray:
    """Step 2 of Algorithm 1: l^t_j = sum of the character losses inside target token j."""
    off = np.asarray(target_offsets, np.int64).reshape(-1, 2)
    n = char_loss.size
    k = len(off)
    if k == 0:
        return np.zeros(0)
    g = _groups(off)
    first = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    gs, ge = off[first, 0], off[first, 1]
    nonempty = np.flatnonzero(ge > gs)
    if nonempty.size == 0:
        raise InputError("the target tokenization covers no character of the text")
    owner_ne = np.minimum(
        np.searchsorted(ge[nonempty], np.arange(n), side="right"), nonempty.size - 1
    )
    gl = np.bincount(nonempty[owner_ne], weights=char_loss, minlength=len(first))
    size = np.bincount(g)
    return gl[g] / size[g]


def map_losses(
    source_offsets, source_losses, target_offsets, n_chars: int, where: str = ""
) -> np.ndarray:
    """Algorithm 1: losses of source tokens -> losses of target tokens of the same text."""
    src = check_offsets(source_offsets, n_chars, where)
    tgt = check_offsets(target_offsets, n_chars, f"{where} (target)" if where else "target")
    losses = check_losses(source_losses, len(src), where)
    return sum_to_target(char_losses(src, losses, n_chars), tgt)


def check_losses(losses, n_tokens: int, where: str = "") -> np.ndarray:
    """Losses as a finite float array with one entry per token."""
    pre = f"{where}: " if where else ""
    try:
        arr = np.asarray(losses, dtype=float).ravel()
    except (TypeError, ValueError):
        raise InputError(f"{pre}losses are not a list of numbers") from None
    if arr.size != n_tokens:
        raise InputError(f"{pre}{arr.size} losses for {n_tokens} tokens (offsets)")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{pre}token {i}: loss {float(arr[i])!r} is NaN or infinite")
    return arr
