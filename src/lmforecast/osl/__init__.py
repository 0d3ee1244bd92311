"""Observational scaling laws (Ruan, Maddison & Hashimoto 2024, arXiv 2405.10938).

Capabilities from public benchmarks (PCA, Eq. 5), a sigmoid law on the top PCs (Eq. 6) with
holdouts of stronger models, f-equivalent FLOPs (Eq. 7-8), benchmark weights, post-training gap
analysis (Sec. 4.3), the holdout-cutoff robustness sweep with AUE (App. C.4) and V-optimal
model-subset selection (Sec. 5, Eq. 9).

Units: scores are points (0-100, `lmforecast.scores`) in and out; tables in fractions (0-1, as
the paper's are written) are read at the door (`score_unit`, `data.to_fractions`). The
equations, the PCA and `CapabilitySpace` (which takes fractions) run on fractions inside.
"""

from .capability import CapabilitySpace, capability_table, family_fits, pca_impute
from .data import (
    BASE_METRICS,
    EVAL_FAMILIES,
    PREREGISTRATION_MODELS,
    load_table_b1,
    load_table_b2,
    paper_base_models,
    read_benchmarks,
    to_fractions,
)
from .fit import merge_targets
from .model import ObservationalScalingLaw
from .newmodels import forecast_saved_fit
from .posttraining import PostTrainingGap, post_training_gap
from .presets import PRESETS, PreregisteredLaw, get_preset
from .result import OSLResult
from .robustness import (
    RobustnessResult,
    RobustnessSweep,
    aue,
    robustness_sweep,
    sweep_fractions,
    threshold_split,
)
from .selection import Selection, SubsetSelector
from .splits import LLAMA2_7B_FLOPS, cutoff_split, list_split, top_split

__all__ = [
    "BASE_METRICS",
    "EVAL_FAMILIES",
    "PREREGISTRATION_MODELS",
    "LLAMA2_7B_FLOPS",
    "CapabilitySpace",
    "ObservationalScalingLaw",
    "OSLResult",
    "PostTrainingGap",
    "PRESETS",
    "PreregisteredLaw",
    "get_preset",
    "RobustnessResult",
    "RobustnessSweep",
    "Selection",
    "SubsetSelector",
    "aue",
    "capability_table",
    "cutoff_split",
    "family_fits",
    "forecast_saved_fit",
    "to_fractions",
    "list_split",
    "load_table_b1",
    "load_table_b2",
    "merge_targets",
    "paper_base_models",
    "pca_impute",
    "post_training_gap",
    "read_benchmarks",
    "robustness_sweep",
    "sweep_fractions",
    "threshold_split",
    "top_split",
]
