"""The zoo's two tokenizers, behind one interface that returns ids and character offsets.

- ``byte``: one token per byte (= per character: the corpus is ASCII), plus a BOS id 256.
- ``bpe``: a byte-level BPE trained with the Hugging Face ``tokenizers`` library on the zoo's
  training text, with digits split individually (so arithmetic answers tokenize digit by digit)
  and a ``<|bos|>`` special token.

Both give ``(ids, offsets)`` with offsets as character ``[start, end)`` spans into the text, the
format the salience method's loss mapping (its Algorithm 1) consumes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import require

BOS = "<|bos|>"


class ByteTokenizer:
    """Byte-level tokenizer: id = byte value, BOS = 256."""

    name = "byte"

    def __init__(self) -> None:
        self.vocab_size = 257
        self.bos_id = 256

    def encode(self, text: str) -> np.ndarray:
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8).astype(np.int64)

    def encode_with_offsets(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        ids = self.encode(text)
        starts = np.arange(len(ids))
        return ids, np.stack([starts, starts + 1], axis=1)

    def encode_many(self, texts: list[str]) -> list[np.ndarray]:
        return [self.encode(t) for t in texts]

    def to_json(self) -> str:
        return json.dumps({"type": "byte"})


class BPETokenizer:
    """Byte-level BPE from the ``tokenizers`` library (optional extra)."""

    name = "bpe"

    def __init__(self, tok) -> None:
        self._tok = tok
        self.vocab_size = tok.get_vocab_size()
        self.bos_id = tok.token_to_id(BOS)

    @classmethod
    def train(cls, texts: list[str], vocab_size: int) -> BPETokenizer:
        """Train a BPE of ``vocab_size`` tokens (256 bytes + BOS + merges) on ``texts``."""
        tk = require("tokenizers", "torch")
        tok = tk.Tokenizer(tk.models.BPE())
        tok.pre_tokenizer = tk.pre_tokenizers.Sequence(
            [
                tk.pre_tokenizers.Digits(individual_digits=True),
                tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
            ]
        )
        tok.decoder = tk.decoders.ByteLevel()
        trainer = tk.trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=[BOS],
            initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tok.train_from_iterator(texts, trainer=trainer)
        return cls(tok)

    @classmethod
    def from_json(cls, text: str) -> BPETokenizer:
        tk = require("tokenizers", "torch")
        return cls(tk.Tokenizer.from_str(text))

    def encode(self, text: str) -> np.ndarray:
        return np.asarray(self._tok.encode(text).ids, dtype=np.int64)

    def encode_with_offsets(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        enc = self._tok.encode(text)
        return np.asarray(enc.ids, dtype=np.int64), np.asarray(enc.offsets, dtype=np.int64)

    def encode_many(self, texts: list[str]) -> list[np.ndarray]:
        return [np.asarray(e.ids, dtype=np.int64) for e in self._tok.encode_batch(texts)]

    def to_json(self) -> str:
        return self._tok.to_str()


def load_tokenizer(path: str | Path):
    """Rebuild a tokenizer saved with ``to_json``."""
    text = Path(path).read_text()
    if json.loads(text).get("type") == "byte":
        return ByteTokenizer()
    return BPETokenizer.from_json(text)
