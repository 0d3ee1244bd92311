"""Capability Salience Vector (Ge, Xing et al.): token-weighted loss -> downstream accuracy.

- `mapping`: Algorithm 1, loss mapping between tokenizers through characters.
- `features`: per-token features (torch-free hashed n-grams; Hugging Face hidden states in `hf`).
- `model`: the scoring head (Eq. 3) and Algorithm 2 (`CapabilitySalience`).
- `pipeline.fit_salience`: texts + loss records + scores -> `SalienceFit` (with baselines).
- `laws.salience`: the Eq. 2 sigmoid law fitted by Levenberg-Marquardt.

Scores and the chance level are percentage points (0-100) in and out, the package's one score
unit (`lmforecast.scores`); a score table in fractions is converted at the door
(``score_unit="auto"``), and Eq. 2 runs on fractions inside.
"""

from .features import HashedNgramFeatures, TextFeatures, char_offsets, word_offsets
from .law import baseline_fit, sigmoid_law
from .mapping import char_losses, map_losses, sum_to_target
from .model import CapabilitySalience
from .pipeline import fit_salience, mapped_loss_matrix
from .records import loss_table, read_loss_records, read_scores, read_texts
from .result import SalienceFit

__all__ = [
    "CapabilitySalience",
    "HashedNgramFeatures",
    "SalienceFit",
    "TextFeatures",
    "baseline_fit",
    "char_losses",
    "char_offsets",
    "fit_salience",
    "loss_table",
    "map_losses",
    "mapped_loss_matrix",
    "read_loss_records",
    "read_scores",
    "read_texts",
    "sigmoid_law",
    "sum_to_target",
    "word_offsets",
]
