"""The next run to train: candidates ranked by expected interval shrinkage per FLOP."""

from .advisor import NextRunAdvice, advise, candidate_grid, fit_with_bootstrap, target_width

__all__ = ["NextRunAdvice", "advise", "candidate_grid", "fit_with_bootstrap", "target_width"]
