"""Hugging Face helpers (optional extra ``hf``): hidden-state features and token losses.

Both load *local* weights only (``local_files_only=True``); nothing is ever downloaded. torch and
transformers are imported lazily, so importing this module without the extra is harmless and
using it fails with a message naming the extra.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from ..errors import InputError, require
from .features import TextFeatures


def _load(model_path: str | Path, device: str | None, with_model: bool = True):
    torch = require("torch", "hf")
    transformers = require("transformers", "hf")
    path = Path(model_path)
    if not path.exists():
        raise InputError(f"{path}: no such local model folder (models are never downloaded)")
    tok = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    if not getattr(tok, "is_fast", False):
        raise InputError(f"{path}: needs a fast tokenizer (character offsets come from it)")
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "right"  # position i-1 must be the real token before token i
    model = None
    if with_model:
        model = transformers.AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True)
        dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
        model.to(dev)
        model.eval()
    return torch, tok, model


def _batches(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _encode(tok, texts: list[str], max_length: int | None):
    return tok(
        texts,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
        add_special_tokens=True,
        padding=True,
        truncation=max_length is not None,
        max_length=max_length,
        return_tensors="pt",
    )


def _progress(total: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, unit="text")


class HuggingFaceFeatures:
    """Final hidden states of a frozen local causal LM (CSV paper Eq. 3: f_theta's input).

    Special tokens (BOS/EOS/padding) are dropped; each kept token's offsets come from the fast
    tokenizer's ``offset_mapping``. Runs on ``device`` (default: CUDA when available, else CPU).
    """

    name = "huggingface"

    def __init__(
        self,
        model_path: str | Path,
        *,
        device: str | None = None,
        batch_size: int = 8,
        max_length: int | None = None,
        progress: bool = True,
    ):
        self.model_path = str(model_path)
        self.device = device
        self.batch_size = int(batch_size)
        self.max_length = max_length
        self.progress = progress
        self._tok = None
        self._model = None

    def config(self) -> dict:
        return {"name": self.name, "model_path": self.model_path, "batch_size": self.batch_size}

    def _ensure(self, with_model: bool):
        if self._tok is None or (with_model and self._model is None):
            torch, self._tok, model = _load(self.model_path, self.device, with_model)
            self._model = model or self._model
            self._torch = torch

    def tokenize(self, text: str) -> np.ndarray:
        self._ensure(with_model=False)
        enc = self._tok(text, return_offsets_mapping=True, return_special_tokens_mask=True)
        keep = np.asarray(enc["special_tokens_mask"]) == 0
        return np.asarray(enc["offset_mapping"], np.int64).reshape(-1, 2)[keep]

    def extract(self, texts: Mapping[str, str]) -> TextFeatures:
        self._ensure(with_model=True)
        torch, tok, model = self._torch, self._tok, self._model
        ids = list(texts)
        offs: list[np.ndarray] = []
        rows: list[np.ndarray] = []
        dev = next(model.parameters()).device
        with torch.no_grad(), _progress(len(ids), "hidden states", self.progress) as bar:
            for chunk in _batches(ids, self.batch_size):
                enc = _encode(tok, [texts[t] for t in chunk], self.max_length)
                out = model(
                    input_ids=enc["input_ids"].to(dev),
                    attention_mask=enc["attention_mask"].to(dev),
                    output_hidden_states=True,
                )
                hidden = out.hidden_states[-1].float().cpu().numpy()
                keep = (enc["special_tokens_mask"] == 0) & (enc["attention_mask"] == 1)
                for b in range(len(chunk)):
                    k = keep[b].numpy().astype(bool)
                    offs.append(enc["offset_mapping"][b].numpy()[k].astype(np.int64))
                    rows.append(hidden[b][k])
                bar.update(len(chunk))
        H = np.concatenate(rows).astype(np.float32) if rows else np.zeros((0, 0), np.float32)
        lengths = np.array([len(texts[t]) for t in ids], np.int64)
        return TextFeatures([str(t) for t in ids], lengths, offs, H, self.config())


def hf_token_losses(
    model_path: str | Path,
    texts: Mapping[str, str],
    *,
    model_name: str | None = None,
    device: str | None = None,
    batch_size: int = 8,
    max_length: int | None = None,
    progress: bool = True,
) -> list[dict]:
    """Per-token losses (nats) of a local causal LM on each text, with character offsets.

    Returns records ``{"model", "text_id", "offsets", "losses"}`` (the M.jsonl format). Token i's
    loss is -log p(x_i | x_<i) from the logits at position i-1; special tokens are dropped, and a
    first text token with nothing before it (no BOS) has no loss and is omitted, so its
    characters carry zero loss in Algorithm 1.
    """
    torch, tok, model = _load(model_path, device)
    name = model_name or Path(model_path).name
    ids = list(texts)
    records: list[dict] = []
    dev = next(model.parameters()).device
    with torch.no_grad(), _progress(len(ids), f"token losses {name}", progress) as bar:
        for chunk in _batches(ids, batch_size):
            enc = _encode(tok, [texts[t] for t in chunk], max_length)
            input_ids = enc["input_ids"].to(dev)
            logits = model(input_ids=input_ids, attention_mask=enc["attention_mask"].to(dev)).logits
            logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
            nll = -logp.gather(-1, input_ids[:, 1:, None])[..., 0].cpu().numpy()
            keep = (enc["special_tokens_mask"] == 0) & (enc["attention_mask"] == 1)
            for b, tid in enumerate(chunk):
                k = keep[b].numpy().astype(bool)
                k[0] = False  # position 0 is never predicted
                pos = np.flatnonzero(k)
                records.append(
                    {
                        "model": name,
                        "text_id": str(tid),
                        "offsets": enc["offset_mapping"][b].numpy()[pos].astype(int).tolist(),
                        "losses": nll[b, pos - 1].astype(float).tolist(),
                    }
                )
            bar.update(len(chunk))
    return records


def hf_tokenizer_offsets(tokenizer_path: str | Path):
    """A ``text -> offsets`` function from a local fast tokenizer (special tokens dropped)."""
    from .mapping import offsets_function

    _, tok, _ = _load(tokenizer_path, None, with_model=False)
    return offsets_function(tok)
