"""A tiny decoder-only transformer (GPT-style, pre-LayerNorm) for the small-model zoo.

Shapes follow a fixed aspect ratio d_model = rho_model * n_layers, so that the FLOPs accounting
F(N) of Busbridge et al. (2025) App. H.1 (Eq. 57-69) applies with one `Architecture`
(`zoo_architecture`): plain GELU FFN (n_ffn = 2, rho_ffn = 4), multi-head attention (g_size = 1),
learned positions, tied input/output embeddings, no biases in linear layers.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ..compute.flops import Architecture
from ..errors import require


@dataclass(frozen=True)
class ModelConfig:
    """Shape of one zoo model."""

    n_layers: int
    d_model: int
    n_heads: int
    vocab_size: int
    n_ctx: int

    def to_dict(self) -> dict:
        return asdict(self)


def zoo_architecture(rho_model: float, n_ctx: int, n_vocab: int) -> Architecture:
    """The `Architecture` (App. H.1 ratios) that the zoo's models realise exactly."""
    return Architecture(
        n_ctx=n_ctx, n_vocab=n_vocab, rho_model=rho_model, rho_ffn=4.0, n_ffn=2, g_size=1
    )


def count_non_embedding(cfg: ModelConfig) -> int:
    """Non-embedding parameters: per layer 12 d^2 (QKV, output, 4d FFN) + 2 LayerNorms (4 d),
    plus the final LayerNorm (2 d). Token and position embeddings are excluded (App. H.2)."""
    d = cfg.d_model
    return cfg.n_layers * (12 * d * d + 4 * d) + 2 * d


def build_model(cfg: ModelConfig, seed: int):
    """Instantiate the torch module for `cfg`, initialised deterministically from `seed`."""
    torch = require("torch", "torch")
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            d = cfg.d_model
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d, bias=False)
            self.proj = nn.Linear(d, d, bias=False)
            self.ln2 = nn.LayerNorm(d)
            self.fc = nn.Linear(d, 4 * d, bias=False)
            self.out = nn.Linear(4 * d, d, bias=False)

        def forward(self, x):
            B, T, d = x.shape
            h = cfg.n_heads
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (t.view(B, T, h, d // h).transpose(1, 2) for t in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(B, T, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.config = cfg
            self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
            self.pos = nn.Embedding(cfg.n_ctx, cfg.d_model)
            self.blocks = nn.ModuleList(Block() for _ in range(cfg.n_layers))
            self.ln_f = nn.LayerNorm(cfg.d_model)

        def forward(self, idx):
            T = idx.shape[1]
            x = self.tok(idx) + self.pos.weight[:T]
            for b in self.blocks:
                x = b(x)
            return self.ln_f(x) @ self.tok.weight.T  # tied output embedding

    gen = torch.Generator().manual_seed(seed)
    model = TinyLM()
    std = 0.02
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                s = (
                    std / math.sqrt(2 * cfg.n_layers)
                    if name.endswith(("proj.weight", "out.weight"))
                    else std
                )
                p.copy_(torch.randn(p.shape, generator=gen) * s)
    n = sum(p.numel() for n_, p in model.named_parameters() if not n_.startswith(("tok.", "pos.")))
    assert n == count_non_embedding(cfg), (n, count_non_embedding(cfg))
    return model
