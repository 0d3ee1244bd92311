"""FLOPs accounting (6ND and the F(N) of Busbridge et al. App. H) and compute-optimal allocation."""

from .flops import (
    Architecture,
    forward_flops_per_token,
    non_embedding_params,
    sigma_coefficients,
    total_params,
    training_flops,
)

__all__ = [
    "Architecture",
    "forward_flops_per_token",
    "non_embedding_params",
    "sigma_coefficients",
    "total_params",
    "training_flops",
]
