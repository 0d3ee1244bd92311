"""Hugging Face helpers (optional extra ``hf``): hidden-state features and token losses.

Both load *local* weights only (``local_files_only=True``); nothing is ever downloaded. torch and
transformers are imported lazily, so importing this module without the extra is harmless and
using it fails with a message naming the extra.

Texts longer than the model's context are scored with sliding windows (see `_windows`): each
window holds at most ``max_length`` tokens (default: the model's context length) and advances by
half of it, and a token's loss / hidden state comes from the first window that holds it with at
least half a window of left context (or from the first window, for the first tokens).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import InputError, require_all
from .features import FeatureExtractor, HashedNgramFeatures, TextFeatures
from .mapping import disjoint_offsets, offsets_function

_CONTEXT_ATTRS = ("max_position_embeddings", "n_positions", "n_ctx", "seq_length")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


@contextmanager
def _quiet_transformers(transformers, quiet: bool):
    """Silence transformers' own progress bars ("Loading weights") while loading, if asked."""
    log = getattr(getattr(transformers, "utils", None), "logging", None)
    was_on = quiet and log is not None and log.is_progress_bar_enabled()
    if was_on:
        log.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            log.enable_progress_bar()


def _load(model_path: str | Path, device: str | None, with_model: bool = True, progress=True):
    """Tokenizer (and model) from a local folder; a missing or unreadable folder is an
    `InputError` naming it (never a download, never a raw traceback)."""
    torch, transformers = require_all(("torch", "transformers"), "hf")
    path = Path(model_path)
    if not path.is_dir():
        raise InputError(f"{path}: no such local model folder (models are never downloaded)")
    if with_model and device is not None:
        check_device(torch, device)
    with _quiet_transformers(transformers, not progress):
        return _load_folder(torch, transformers, path, device, with_model)


def check_device(torch, device: str) -> None:
    """A ``--device`` torch understands and this machine has; one-line InputError otherwise."""
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError, TypeError) as exc:
        raise InputError(f"--device {device!r}: not a torch device ({_first_line(exc)})") from None
    if dev.type == "cuda":
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if n == 0 or (dev.index or 0) >= n:
            raise InputError(
                f"--device {device}: no such CUDA device on this machine ({n} available)"
            )
    elif dev.type == "mps" and not torch.backends.mps.is_available():
        raise InputError(f"--device {device}: MPS is not available on this machine")
    elif dev.type not in ("cpu", "cuda", "mps"):
        raise InputError(f"--device {device}: use cpu, cuda[:N] or mps")


def _load_folder(torch, transformers, path: Path, device: str | None, with_model: bool):
    try:
        tok = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except Exception as exc:  # OSError/ValueError/KeyError... from a folder that is not a model
        raise InputError(f"{path}: cannot load a tokenizer: {_first_line(exc)}") from None
    if not getattr(tok, "is_fast", False):
        raise InputError(f"{path}: needs a fast tokenizer (character offsets come from it)")
    model = None
    if with_model:
        try:
            model = transformers.AutoModelForCausalLM.from_pretrained(
                str(path), local_files_only=True
            )
        except Exception as exc:
            raise InputError(f"{path}: cannot load a causal LM: {_first_line(exc)}") from None
        dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
        model.to(dev)
        model.eval()
    return torch, tok, model


def _context_length(model) -> int | None:
    """The model's maximum sequence length from its config (GPT-2 ``n_positions``, ...)."""
    cfg = getattr(model, "config", None)
    for attr in _CONTEXT_ATTRS:
        value = getattr(cfg, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def check_window(batch_size: int, max_length: int | None) -> None:
    """Refuse a batch of fewer than 1 text or a window of fewer than 2 tokens (a token's loss
    needs one token before it)."""
    if batch_size < 1:
        raise InputError(f"--batch-size (batch_size=) must be >= 1, got {batch_size}")
    if max_length is not None and max_length < 2:
        raise InputError(f"--max-length (max_length=) must be >= 2 tokens, got {max_length}")


def _window_length(model, max_length: int | None) -> int | None:
    ctx = _context_length(model)
    if max_length is None:
        return ctx
    if int(max_length) < 2:
        raise InputError(f"max_length must be >= 2 tokens, got {max_length}")
    return int(max_length) if ctx is None else min(int(max_length), ctx)


def _windows(n: int, length: int | None) -> list[tuple[int, int, int]]:
    """Sliding windows ``(begin, keep_from, end)`` over n tokens: the model sees tokens
    ``[begin, end)`` and its outputs are kept for ``[keep_from, end)``. Windows advance by half a
    window, so every kept token after the first window has >= length // 2 tokens of context."""
    if length is None or n <= length:
        return [(0, 0, n)]
    stride = max(1, length // 2)
    out, done, begin = [], 0, 0
    while done < n:
        end = min(begin + length, n)
        out.append((begin, done, end))
        done, begin = end, begin + stride
    return out


def _batches(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _encode_one(tok, text: str):
    """Token ids, offsets and special-token mask of one whole text (no truncation)."""
    enc = tok(
        text,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
        add_special_tokens=True,
        truncation=False,
        verbose=False,
    )
    ids = np.asarray(enc["input_ids"], np.int64)
    off = np.asarray(enc["offset_mapping"], np.int64).reshape(-1, 2)
    special = np.asarray(enc["special_tokens_mask"], bool)
    return ids, off, special


def _run_windows(torch, model, encoded: list, length: int | None, batch_size: int, hidden: bool):
    """Run the model over every window of every text, batched and right-padded by hand.

    Returns per text ``(nll, H)``: nll[t] = -log p(x_t | window context) (NaN for token 0,
    which nothing predicts), and H[t] the final hidden state (when `hidden`).
    """
    dev = next(model.parameters()).device
    jobs = [(i, w) for i, (ids, _, _) in enumerate(encoded) for w in _windows(len(ids), length)]
    nll = [np.full(len(ids), np.nan) for ids, _, _ in encoded]
    hid: list = [None] * len(encoded)
    for batch in _batches([j for j in jobs if j[1][2] > j[1][0]], max(1, batch_size)):
        k = max(end - begin for _, (begin, _, end) in batch)
        x = np.zeros((len(batch), k), np.int64)  # pad id 0 is masked out
        mask = np.zeros((len(batch), k), np.int64)
        for b, (i, (begin, _, end)) in enumerate(batch):
            x[b, : end - begin] = encoded[i][0][begin:end]
            mask[b, : end - begin] = 1
        input_ids = torch.from_numpy(x).to(dev)
        out = model(
            input_ids=input_ids,
            attention_mask=torch.from_numpy(mask).to(dev),
            output_hidden_states=hidden,
        )
        logp = torch.log_softmax(out.logits[:, :-1].float(), dim=-1)
        lv = -logp.gather(-1, input_ids[:, 1:, None])[..., 0].cpu().numpy()
        hs = out.hidden_states[-1].float().cpu().numpy() if hidden else None
        for b, (i, (begin, keep, end)) in enumerate(batch):
            t = np.arange(max(keep, begin + 1), end)  # tokens with a predecessor in the window
            nll[i][t] = lv[b, t - begin - 1]
            if hidden:
                if hid[i] is None:
                    hid[i] = np.zeros((len(encoded[i][0]), hs.shape[-1]), np.float32)
                hid[i][keep:end] = hs[b, keep - begin : end - begin]
    return nll, hid


def _progress(total: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, unit="text")


class HuggingFaceFeatures:
    """Final hidden states of a frozen local causal LM (CSV paper Eq. 3: f_theta's input).

    Special tokens (BOS/EOS) are dropped; each kept token's offsets are the fast tokenizer's
    ``offset_mapping`` made non-overlapping (`mapping.disjoint_offsets`). Texts longer than
    ``max_length`` (default: the model's context) use sliding windows (module docstring). Runs on
    ``device`` (default: CUDA when available, else CPU). ``H`` is float32, one row per kept token.
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
        check_window(batch_size, max_length)
        self.model_path = str(model_path)
        self.device = device
        self.batch_size = int(batch_size)
        self.max_length = max_length
        self.progress = progress
        self._tok = None
        self._model = None

    def config(self) -> dict:
        return {
            "name": self.name,
            "model_path": self.model_path,
            "batch_size": self.batch_size,
            "max_length": self.max_length,
        }

    def _ensure(self, with_model: bool):
        if self._tok is None or (with_model and self._model is None):
            torch, self._tok, model = _load(
                self.model_path, self.device, with_model, progress=self.progress
            )
            self._model = model or self._model
            self._torch = torch

    def tokenize(self, text: str) -> np.ndarray:
        self._ensure(with_model=False)
        _, off, special = _encode_one(self._tok, text)
        return disjoint_offsets(off[~special])

    def extract(self, texts: Mapping[str, str]) -> TextFeatures:
        self._ensure(with_model=True)
        torch, tok, model = self._torch, self._tok, self._model
        length = _window_length(model, self.max_length)
        ids = list(texts)
        offs: list[np.ndarray] = []
        rows: list[np.ndarray] = []
        with torch.no_grad(), _progress(len(ids), "hidden states", self.progress) as bar:
            for chunk in _batches(ids, max(1, self.batch_size)):
                encoded = [_encode_one(tok, texts[t]) for t in chunk]
                _, hid = _run_windows(torch, model, encoded, length, self.batch_size, True)
                for (_, off, special), h in zip(encoded, hid):
                    keep = ~special
                    offs.append(disjoint_offsets(off[keep]))
                    rows.append(h[keep] if h is not None else np.zeros((0, 0), np.float32))
                bar.update(len(chunk))
        dim = max((r.shape[1] for r in rows if r.size), default=0)
        rows = [r if r.size else np.zeros((0, dim), np.float32) for r in rows]
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
    loss is -log p(x_i | x_<i) from the logits at position i-1 (CSV paper Sec. 3, the l^s_i of
    Algorithm 1); special tokens are dropped, and a first text token with nothing before it (no
    BOS) has no loss and is omitted, so its characters carry zero loss in Algorithm 1. Texts
    longer than ``max_length`` (default: the model's context) are scored with sliding windows
    (module docstring), so every token after the first gets a loss. Offsets are made
    non-overlapping with `mapping.disjoint_offsets`.
    """
    check_window(batch_size, max_length)
    torch, tok, model = _load(model_path, device, progress=progress)
    length = _window_length(model, max_length)
    name = model_name or Path(model_path).name
    ids = list(texts)
    records: list[dict] = []
    with torch.no_grad(), _progress(len(ids), f"token losses {name}", progress) as bar:
        for chunk in _batches(ids, max(1, batch_size)):
            encoded = [_encode_one(tok, texts[t]) for t in chunk]
            nll, _ = _run_windows(torch, model, encoded, length, batch_size, False)
            for tid, (_, off, special), lv in zip(chunk, encoded, nll):
                pos = np.flatnonzero(~special & ~np.isnan(lv))
                offsets = disjoint_offsets(off[~special])
                kept = np.flatnonzero(~special)
                offsets = offsets[np.isin(kept, pos)]
                records.append(
                    {
                        "model": name,
                        "text_id": str(tid),
                        "offsets": offsets.astype(int).tolist(),
                        "losses": lv[pos].astype(float).tolist(),
                    }
                )
            bar.update(len(chunk))
    return records


def hf_tokenizer_offsets(tokenizer_path: str | Path):
    """A ``text -> offsets`` function from a local fast tokenizer (special tokens dropped,
    offsets made non-overlapping)."""
    _, tok, _ = _load(tokenizer_path, None, with_model=False)
    return offsets_function(tok)


def extractor_from_config(cfg: Mapping) -> FeatureExtractor:
    """Rebuild an extractor from `config()` (used to re-score new texts with a saved head)."""
    if cfg.get("name") == HashedNgramFeatures.name:
        return HashedNgramFeatures(dim=int(cfg["dim"]))
    if cfg.get("name") == "huggingface":
        max_length = cfg.get("max_length")
        return HuggingFaceFeatures(
            cfg["model_path"],
            batch_size=int(cfg.get("batch_size", 8)),
            max_length=None if max_length is None else int(max_length),
        )
    raise InputError(f"unknown feature extractor {cfg.get('name')!r}")
