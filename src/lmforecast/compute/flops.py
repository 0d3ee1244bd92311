"""FLOPs accounting.

- `6ND`: the standard training-cost approximation (Kaplan et al. 2020; Hoffmann et al. 2022).
- `F(N)`: forward FLOPs per token with attention-context and vocabulary terms, Busbridge et al.
  (2025) App. H.1, Eq. 57-69: F(N) = 2N (1 + sigma1 n_ctx / N^(1/3) + sigma2 n_vocab / N^(2/3)),
  sigma1 = (1/(rho omega^2))^(1/3) (Eq. 66), sigma2 = (rho/omega)^(1/3) (Eq. 68), with
  omega = 2 + 2/g_size + n_ffn rho_ffn (Eq. 61). Training costs 3 F(N) per token (Eq. 70).
- Parameter counting of App. H.2 (Table 9/10, "Ours (Total)").

Defaults are the distillation paper's architecture: rho_model = d_model/n_layers = 128,
n_ctx = 4096, n_vocab = 32168 (Sec. G.4; see docs/ambiguities.md), MHA (g_size = 1), gated FFN
(n_ffn = 3) with rho_ffn = 8/3, so omega = 12.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..errors import InputError


@dataclass(frozen=True)
class Architecture:
    """Architecture ratios that turn a parameter count into FLOPs per token (App. H)."""

    n_ctx: int = 4096
    n_vocab: int = 32168
    rho_model: float = 128.0  # d_model / n_layers
    rho_ffn: float = 8.0 / 3.0  # d_ffn / d_model
    n_ffn: int = 3  # 3 for gated (SwiGLU) FFNs, 2 for plain
    g_size: int = 1  # query heads per kv head (1 = MHA)

    @property
    def omega(self) -> float:
        """Eq. 61: omega = 2 + 2/g_size + n_ffn * rho_ffn (= 12 for the paper's models)."""
        return 2.0 + 2.0 / self.g_size + self.n_ffn * self.rho_ffn

    def to_dict(self) -> dict:
        return asdict(self)


DISTILLATION_PAPER = Architecture()


def sigma_coefficients(arch: Architecture = DISTILLATION_PAPER) -> tuple[float, float]:
    """(sigma1, sigma2) of Eq. 66 and Eq. 68."""
    w, rho = arch.omega, arch.rho_model
    return (1.0 / (rho * w * w)) ** (1.0 / 3.0), (rho / w) ** (1.0 / 3.0)


def forward_flops_per_token(N, arch: Architecture = DISTILLATION_PAPER) -> np.ndarray:
    """F(N) of Eq. 69: forward FLOPs per token of a model with N non-embedding parameters."""
    N = _positive(N, "N")
    s1, s2 = sigma_coefficients(arch)
    return 2.0 * N * (1.0 + s1 * arch.n_ctx / np.cbrt(N) + s2 * arch.n_vocab / np.cbrt(N) ** 2)


def training_flops(N, D, accounting: str = "6ND", arch: Architecture = DISTILLATION_PAPER):
    """Training FLOPs for N non-embedding parameters on D tokens: 6ND or 3 F(N) D (Eq. 70)."""
    N = _positive(N, "N")
    D = _positive(D, "D")
    if accounting == "6ND":
        return 6.0 * N * D
    if accounting == "F(N)":
        return 3.0 * forward_flops_per_token(N, arch) * D
    raise InputError(f"unknown FLOPs accounting {accounting!r}; use '6ND' or 'F(N)'")


def flops_per_token(N, accounting: str = "6ND", arch: Architecture = DISTILLATION_PAPER):
    """Training FLOPs per token: 6N or 3F(N)."""
    return training_flops(N, 1.0, accounting, arch)


def non_embedding_params(
    n_layers, d_model, d_ffn=None, n_heads=None, arch: Architecture = DISTILLATION_PAPER
):
    """Non-embedding parameters, App. H.2 Table 9 "Ours (Total)" less the embedding.

    Per layer: two RMSNorm gains (2 d_model), QK-norm gains (2 d_head), QKV
    (1 + 2/g_size) d_model^2, output projection d_model^2, FFN n_ffn d_model d_ffn; plus the
    final norm (d_model). Normalisation gains are counted, as the paper's N does.
    """
    n_layers = np.asarray(n_layers, float)
    d_model = np.asarray(d_model, float)
    d_ffn = np.asarray(d_ffn if d_ffn is not None else arch.rho_ffn * d_model, float)
    d_head = d_model / n_heads if n_heads is not None else 128.0
    per_layer = (
        2 * d_model
        + 2 * d_head
        + (1 + 2 / arch.g_size) * d_model**2
        + d_model**2
        + arch.n_ffn * d_model * d_ffn
    )
    return n_layers * per_layer + d_model


def total_params(
    n_layers, d_model, d_ffn=None, n_heads=None, n_vocab=32768, arch=DISTILLATION_PAPER
):
    """All parameters: non-embedding plus a (tied) n_vocab x d_model embedding (Table 9)."""
    return non_embedding_params(n_layers, d_model, d_ffn, n_heads, arch) + n_vocab * np.asarray(
        d_model, float
    )


def _positive(x, name: str) -> np.ndarray:
    a = np.asarray(x, float)
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        bad = a[~(np.isfinite(a) & (a > 0))].ravel()[:1]
        raise InputError(f"{name} must be positive and finite, got {bad[0] if bad.size else a}")
    return a
