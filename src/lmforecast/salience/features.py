"""Per-token features for the scoring head f_theta (CSV paper, Eq. 3 and Sec. 4.1).

The paper feeds the final hidden states of a frozen LM (InternLM2.5-1.8B) to the head. Features
are computed once and cached (`TextFeatures.save`/`load`, an ``.npz`` read without pickle), so
training the head never re-runs the LM.

Two extractors share one small interface (``tokenize(text) -> offsets``, ``extract(texts) ->
TextFeatures``, ``config()``):

- `HashedNgramFeatures`: torch-free, deterministic hashed token/bigram/context/shape features
  (a sparse matrix). Lets the method run and be tested without heavy dependencies.
- `HuggingFaceFeatures` (optional extra ``hf``, in `salience.hf`, with `extractor_from_config`):
  final hidden states of a local causal LM.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ..store import atomic_write_bytes

_WORD_RE = re.compile(r"\w+|[^\w\s]")


def word_offsets(text: str) -> np.ndarray:
    """Built-in tokenizer: words (``\\w+``) and single punctuation characters; whitespace is
    left uncovered. Returns (k, 2) character offsets."""
    spans = [m.span() for m in _WORD_RE.finditer(text)]
    return np.array(spans, np.int64).reshape(-1, 2)


def char_offsets(text: str) -> np.ndarray:
    """Built-in tokenizer: one token per character."""
    n = len(text)
    return np.stack([np.arange(n), np.arange(1, n + 1)], axis=1).astype(np.int64)


BUILTIN_TOKENIZERS = {"words": word_offsets, "chars": char_offsets}


@dataclass
class TextFeatures:
    """Target tokenization and per-token features of the validation texts.

    `H` has one row per target token over all texts in order (dense array or CSR matrix);
    `ptr[i]:ptr[i+1]` are the rows of text i.
    """

    text_ids: list[str]
    text_lengths: np.ndarray
    offsets: list[np.ndarray]
    H: np.ndarray | sp.csr_matrix
    extractor: dict

    @property
    def ptr(self) -> np.ndarray:
        return np.r_[0, np.cumsum([len(o) for o in self.offsets])].astype(np.int64)

    @property
    def n_tokens(self) -> int:
        return int(self.ptr[-1])

    @property
    def n_chars(self) -> int:
        return int(np.sum(self.text_lengths))

    def contract(self) -> dict:
        """What `salience features` prints: the number of texts and tokens, the feature width."""
        return {"texts": len(self.text_ids), "tokens": self.n_tokens, "dim": int(self.H.shape[1])}

    def save(self, path: str | Path) -> None:
        """Write an ``.npz`` cache (loaded with ``allow_pickle=False``)."""
        import json

        arrays = {
            "text_ids": np.array(self.text_ids, dtype=str),
            "text_lengths": np.asarray(self.text_lengths, np.int64),
            "offsets": np.concatenate(self.offsets).astype(np.int64)
            if self.offsets
            else np.zeros((0, 2), np.int64),
            "ptr": self.ptr,
            "extractor": np.array(json.dumps(self.extractor)),
        }
        if sp.issparse(self.H):
            H = sp.csr_matrix(self.H)
            arrays.update(
                H_data=H.data, H_indices=H.indices, H_indptr=H.indptr, H_shape=np.array(H.shape)
            )
        else:
            arrays["H"] = np.asarray(self.H)
        import io

        buf = io.BytesIO()
        np.savez(buf, **arrays)
        atomic_write_bytes(path, buf.getvalue())  # a failed run leaves the old file intact

    @classmethod
    def load(cls, path: str | Path) -> TextFeatures:

        if not Path(path).exists():
            raise InputError(f"{path}: no such file")
        if not Path(path).is_file():  # a FIFO would block the read
            raise InputError(f"{path}: not a regular file, expected a features file (.npz)")
        try:
            z = np.load(path, allow_pickle=False)
        except Exception as exc:  # zip/npy parse errors of a file that is not ours
            raise InputError(f"{path}: not a features file written by lmforecast ({exc})") from None
        try:
            return cls._from_npz(z, path)
        except ValueError as exc:  # np.load refuses object arrays: never unpickled
            if "allow_pickle" in str(exc):
                raise InputError(
                    f"{path}: holds a pickled (object) array; refused without unpickling it "
                    "(a features file holds numbers and text only)"
                ) from None
            raise InputError(f"{path}: not a features file written by lmforecast ({exc})") from None
        except (KeyError, IndexError, TypeError) as exc:
            raise InputError(f"{path}: not a features file written by lmforecast ({exc})") from None

    @classmethod
    def _from_npz(cls, z, path) -> TextFeatures:
        import json

        with z:
            need = {"text_ids", "text_lengths", "offsets", "ptr", "extractor"}
            if not need <= set(z.files) or not ({"H"} <= set(z.files) or "H_data" in z.files):
                raise InputError(f"{path}: not a features file written by lmforecast")
            ptr = z["ptr"]
            off = z["offsets"]
            if "H" in z.files:
                H = z["H"]
            else:
                H = sp.csr_matrix(
                    (z["H_data"], z["H_indices"], z["H_indptr"]), shape=tuple(z["H_shape"])
                )
            return cls(
                text_ids=[str(t) for t in z["text_ids"]],
                text_lengths=z["text_lengths"],
                offsets=[off[ptr[i] : ptr[i + 1]] for i in range(len(ptr) - 1)],
                H=H,
                extractor=json.loads(str(z["extractor"])),
            )

    def select(self, text_ids: Sequence[str], where: str = "features") -> TextFeatures:
        """The features of the given texts, in that order (error naming a missing text id)."""
        pos = {t: i for i, t in enumerate(self.text_ids)}
        missing = [t for t in text_ids if t not in pos]
        if missing:
            raise InputError(f"{where}: no features for text_id {missing[0]!r}")
        idx = [pos[t] for t in text_ids]
        if idx == list(range(len(self.text_ids))):
            return self
        ptr = self.ptr
        rows = np.concatenate([np.arange(ptr[i], ptr[i + 1]) for i in idx])
        return TextFeatures(
            [self.text_ids[i] for i in idx],
            np.asarray(self.text_lengths)[idx],
            [self.offsets[i] for i in idx],
            self.H[rows],
            self.extractor,
        )


class FeatureExtractor(Protocol):
    """What the CSV method needs from a feature extractor."""

    def tokenize(self, text: str) -> np.ndarray: ...

    def extract(self, texts: Mapping[str, str]) -> TextFeatures: ...

    def config(self) -> dict: ...


class HashedNgramFeatures:
    """Torch-free stand-in for LM hidden states: hashed sparse features of token i and context.

    For each token (built-in ``words`` tokenizer) it sets, in a ``dim``-dimensional space, the
    hashed indicator of the lower-cased token, of the (previous, current) bigram, of the previous
    token (the context x_<i of Eq. 3), and of the token's shape (digit / alpha / punctuation /
    capitalised). Hashing is CRC32, so features are identical across runs and machines.
    """

    name = "hashed-ngram"

    def __init__(self, dim: int = 4096):
        if int(dim) < 8:
            raise InputError(f"feature dim must be >= 8, got {dim}")
        self.dim = int(dim)
        self._cache: dict[str, int] = {}

    def config(self) -> dict:
        return {"name": self.name, "dim": self.dim, "tokenizer": "words"}

    def tokenize(self, text: str) -> np.ndarray:
        return word_offsets(text)

    def _h(self, key: str) -> int:
        v = self._cache.get(key)
        if v is None:
            v = zlib.crc32(key.encode("utf-8")) % self.dim
            self._cache[key] = v
        return v

    @staticmethod
    def _shape(tok: str) -> str:
        if tok.isdigit():
            return "digit"
        if tok.isalpha():
            return "upper" if tok[:1].isupper() else "alpha"
        if tok.isalnum():
            return "alnum"
        return "punct"

    def extract(self, texts: Mapping[str, str]) -> TextFeatures:
        ids, lengths, offs, cols = [], [], [], []
        for tid, text in texts.items():
            off = self.tokenize(text)
            toks = [text[s:e].lower() for s, e in off]
            prev = ["<s>"] + toks[:-1]
            for t, p, (s, e) in zip(toks, prev, off):
                cols.append(
                    (
                        self._h("u:" + t),
                        self._h("b:" + p + "|" + t),
                        self._h("p:" + p),
                        self._h("s:" + self._shape(text[s:e])),
                    )
                )
            ids.append(str(tid))
            lengths.append(len(text))
            offs.append(off)
        n = len(cols)
        idx = np.array(cols, np.int64).reshape(n, 4)
        H = sp.csr_matrix(
            (np.ones(4 * n), idx.ravel(), np.arange(0, 4 * n + 1, 4)), shape=(n, self.dim)
        )
        H.sum_duplicates()
        return TextFeatures(ids, np.array(lengths, np.int64), offs, H, self.config())
