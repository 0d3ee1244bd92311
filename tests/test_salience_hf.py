"""Hugging Face helpers with a tiny fake tokenizer/model (torch only; transformers not needed).

Checks the indexing that is easy to get wrong: the loss of token i comes from the logits at
position i-1, padding and special tokens are dropped, offsets line up with the text.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lmforecast.salience import hf  # noqa: E402

BOS, PAD, V = 1, 0, 40


class FakeTokenizer:
    """Character-level fast-tokenizer stand-in: BOS + one token per character."""

    is_fast = True
    pad_token = "<pad>"

    def _one(self, text):
        ids = [BOS] + [2 + ord(c) % (V - 2) for c in text]
        return ids, [(0, 0)] + [(i, i + 1) for i in range(len(text))], [1] + [0] * len(text)

    def __call__(self, texts, return_tensors=None, padding=False, **kw):
        if isinstance(texts, str):
            ids, off, sp = self._one(texts)
            return {"input_ids": ids, "offset_mapping": off, "special_tokens_mask": sp}
        enc = [self._one(t) for t in texts]
        k = max(len(e[0]) for e in enc)
        pad = [k - len(e[0]) for e in enc]
        return {
            "input_ids": torch.tensor([e[0] + [PAD] * p for e, p in zip(enc, pad)]),
            "attention_mask": torch.tensor([[1] * len(e[0]) + [0] * p for e, p in zip(enc, pad)]),
            "offset_mapping": torch.tensor([e[1] + [(0, 0)] * p for e, p in zip(enc, pad)]),
            "special_tokens_mask": torch.tensor([e[2] + [1] * p for e, p in zip(enc, pad)]),
        }


class FakeCausalLM(torch.nn.Module):
    """Causal running mean of embeddings -> logits; hidden state = the running mean."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.emb = torch.nn.Parameter(torch.randn(V, 8, generator=g))
        self.out = torch.nn.Parameter(torch.randn(8, V, generator=g))

    def forward(self, input_ids, attention_mask=None, output_hidden_states=False):
        e = self.emb[input_ids]
        pos = torch.arange(1, input_ids.shape[1] + 1)[None, :, None]
        h = torch.cumsum(e, dim=1) / pos

        class Out:
            pass

        o = Out()
        o.logits = h @ self.out
        o.hidden_states = (e, h)
        return o


@pytest.fixture
def fake(monkeypatch):
    model = FakeCausalLM()
    monkeypatch.setattr(hf, "_load", lambda *a, **k: (torch, FakeTokenizer(), model))
    return model


def _manual_losses(model, text):
    ids, _, _ = FakeTokenizer()._one(text)
    x = torch.tensor([ids])
    with torch.no_grad():
        logp = torch.log_softmax(model(x).logits[0], dim=-1)
    return np.array([-float(logp[i - 1, ids[i]]) for i in range(1, len(ids))])


def test_token_losses_shift_padding_and_offsets(fake):
    texts = {"a": "hello world", "b": "hi", "c": "naïve café"}
    recs = hf.hf_token_losses("unused", texts, model_name="fake", batch_size=2, progress=False)
    assert [r["text_id"] for r in recs] == ["a", "b", "c"]
    for r in recs:
        text = texts[r["text_id"]]
        assert r["model"] == "fake"
        assert r["offsets"] == [[i, i + 1] for i in range(len(text))]
        np.testing.assert_allclose(r["losses"], _manual_losses(fake, text), rtol=1e-5)


def test_features_drop_special_and_padding_tokens(fake):
    texts = {"a": "abc", "b": "hello"}
    feats = hf.HuggingFaceFeatures("unused", batch_size=2, progress=False).extract(texts)
    assert feats.n_tokens == 8 and feats.H.shape == (8, 8) and feats.H.dtype == np.float32
    assert feats.offsets[1].tolist() == [[i, i + 1] for i in range(5)]
    ids, _, _ = FakeTokenizer()._one("hello")
    with torch.no_grad():
        h = fake(torch.tensor([ids]), output_hidden_states=True).hidden_states[-1][0, 1:]
    np.testing.assert_allclose(feats.H[3:], h.numpy(), rtol=1e-6)
    assert feats.extractor["name"] == "huggingface"
