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
- Tokenizer offsets (`offsets_function`, `salience.hf`) pass through `disjoint_offsets`: a
  character that byte-level BPE splits between two tokens (reported in both spans) belongs to
  the later token.

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


def disjoint_offsets(offsets) -> np.ndarray:
    """Make a fast tokenizer's offsets non-overlapping (a reading for Algorithm 1's tau_i).

    Byte-level BPE can split one multi-byte character between two tokens; the tokenizer then
    reports that character in both spans (``"aï"`` as ``[1, 3]`` followed by ``[2, 3]``). Each
    shared character is given to the *later* token: the earlier token's span (every member of
    its group of identical spans) ends where the later one starts, possibly becoming zero-width
    (whose loss then goes to the character at its position). Other offsets are unchanged.
    """
    off = np.array(offsets, np.int64).reshape(-1, 2)
    if len(off) < 2:
        return off
    g = _groups(off)
    first = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    gs, ge = off[first, 0], off[first, 1]
    nxt = np.r_[gs[1:], np.iinfo(np.int64).max]
    clip = (nxt < ge) & (nxt >= gs)
    off[:, 1] = np.where(clip, nxt, ge)[g]
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
    return _char_losses_many([np.asarray(offsets, np.int64).reshape(-1, 2)], [losses], n_chars)[0]


def _char_losses_many(offsets: list[np.ndarray], losses: list, n_chars: int) -> np.ndarray:
    """Step 1 for several tokenizations of one text at once: (R, n_chars) character losses.

    Record r's characters live at r * n_chars + c in one flat array, so all records are spread
    with a handful of vectorised passes instead of one Python-level pass per record.
    """
    R, n = len(offsets), n_chars
    out = np.zeros(R * n, float)
    counts = np.array([len(o) for o in offsets])
    if counts.sum() == 0:
        return out.reshape(R, n)
    shift = np.repeat(np.arange(R, dtype=np.int64) * n, counts)
    off = np.concatenate(offsets).astype(np.int64)
    local_start = off[:, 0]
    off = off + shift[:, None]
    lv = np.concatenate([np.asarray(x, float).ravel() for x in losses])
    g = _groups(off)
    first = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    gl = np.bincount(g, weights=lv)
    gs, ge = off[first, 0], off[first, 1]
    w = ge - gs
    empty = w == 0
    if empty.any():  # zero-width: the character at its position (the last one at the end)
        pos = np.minimum(local_start[first][empty], n - 1) + shift[first][empty]
        np.add.at(out, pos, gl[empty])
    keep = ~empty
    w, gs, gl = w[keep], gs[keep], gl[keep]
    if w.size:
        total = int(w.sum())
        idx = np.repeat(gs - (np.cumsum(w) - w), w) + np.arange(total)
        out += np.bincount(idx, weights=np.repeat(gl / w, w), minlength=R * n)
    return out.reshape(R, n)


def _target_plan(target_offsets: np.ndarray, n: int):
    """Owner group of every character, group of every target token, and group sizes."""
    off = np.asarray(target_offsets, np.int64).reshape(-1, 2)
    g = _groups(off)
    first = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    gs, ge = off[first, 0], off[first, 1]
    nonempty = np.flatnonzero(ge > gs)
    if nonempty.size == 0:
        raise InputError("the target tokenization covers no character of the text")
    owner = np.minimum(np.searchsorted(ge[nonempty], np.arange(n), side="right"), nonempty.size - 1)
    return nonempty[owner], g, np.bincount(g), len(first)


def sum_to_target(char_loss: np.ndarray, target_offsets: np.ndarray) -> np.ndarray:
    """Step 2 of Algorithm 1: l^t_j = sum of the character losses inside target token j.

    `char_loss` is (n,) or (R, n) for R records of the same text; returns (k,) or (R, k).
    """
    cl = np.atleast_2d(np.asarray(char_loss, float))
    R, n = cl.shape
    if len(np.asarray(target_offsets).reshape(-1, 2)) == 0:
        return np.zeros((R, 0)) if np.ndim(char_loss) == 2 else np.zeros(0)
    owner, g, size, G = _target_plan(target_offsets, n)
    flat_owner = (owner[None, :] + G * np.arange(R)[:, None]).ravel()
    gl = np.bincount(flat_owner, weights=cl.ravel(), minlength=R * G).reshape(R, G)
    out = gl[:, g] / size[g]
    return out if np.ndim(char_loss) == 2 else out[0]


def map_losses(
    source_offsets, source_losses, target_offsets, n_chars: int, where: str = ""
) -> np.ndarray:
    """Algorithm 1: losses of source tokens -> losses of target tokens of the same text."""
    return map_losses_many([(source_offsets, source_losses)], target_offsets, n_chars, [where])[0]


def map_losses_many(
    sources: list, target_offsets, n_chars: int, where: list[str] | None = None
) -> np.ndarray:
    """Algorithm 1 for R (offsets, losses) records of one text (e.g. R models, each with its
    own tokenizer) onto one target tokenization: returns (R, k) target-token losses."""
    where = where or [""] * len(sources)
    offs, losses = [], []
    for (o, lv), wh in zip(sources, where):
        off = check_offsets(o, n_chars, wh)
        offs.append(off)
        losses.append(check_losses(lv, len(off), wh))
    tgt = check_offsets(target_offsets, n_chars, f"{where[0]} (target)" if where[0] else "target")
    return sum_to_target(_char_losses_many(offs, losses, n_chars), tgt).reshape(len(sources), -1)


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
    if (arr < 0).any():
        i = int(np.argmax(arr < 0))
        raise InputError(
            f"{pre}token {i}: loss {float(arr[i]):g} is negative (a per-token loss is a "
            "negative log-probability, >= 0)"
        )
    return arr


def offsets_function(tokenizer):
    """A ``text -> (k, 2) offsets`` function from any tokenizer Algorithm 1 can use.

    Accepts a plain function returning offsets, a Hugging Face ``transformers`` fast tokenizer
    (called with ``return_offsets_mapping=True``; special tokens dropped), or a ``tokenizers``
    ``Tokenizer`` (``encode(text).offsets``). Tokenizer offsets pass through `disjoint_offsets`.
    """
    if getattr(tokenizer, "is_fast", False):

        def hf(text: str) -> np.ndarray:
            enc = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
            keep = np.asarray(enc["special_tokens_mask"]) == 0
            return disjoint_offsets(
                np.asarray(enc["offset_mapping"], np.int64).reshape(-1, 2)[keep]
            )

        return hf
    if hasattr(tokenizer, "encode") and not callable(getattr(tokenizer, "offsets", None)):

        def rust(text: str) -> np.ndarray:
            enc = tokenizer.encode(text)
            off = np.asarray(enc.offsets, np.int64).reshape(-1, 2)
            special = getattr(enc, "special_tokens_mask", None)
            return disjoint_offsets(off if special is None else off[np.asarray(special) == 0])

        return rust
    if callable(tokenizer):
        return lambda text: np.asarray(tokenizer(text), np.int64).reshape(-1, 2)
    raise InputError(f"cannot get character offsets from a {type(tokenizer).__name__}")
