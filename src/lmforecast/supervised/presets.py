"""Published supervised-law coefficients, each with its source.

Natural parameters of L(N, D) = E + (A/N^alpha + B/D^beta)^gamma (gamma = 1 for `chinchilla`).
"""

from __future__ import annotations

from ..laws import get_law
from ..uncertainty.normal import z_of

PRESETS: dict[str, dict] = {
    "busbridge2025": {
        "form": "chinchilla-gamma",
        "params": {
            "A": 3355.0,
            "B": 18186.0,
            "E": 1.220,
            "alpha": 0.408,
            "beta": 0.431,
            "gamma": 0.452,
        },
        "ci": {
            "A": [3346.0, 3360.0],
            "B": [18157.0, 18236.0],
            "E": [1.190, 1.247],
            "alpha": [0.405, 0.411],
            "beta": [0.428, 0.433],
            "gamma": [0.442, 0.461],
        },
        "ci_level": 0.9,
        "n_obs": 73,
        "source": "Busbridge et al. 2025, Distillation Scaling Laws, Table 6 (supervised column; "
        "English C4, N non-embedding parameters, 90% bootstrap CIs, 73 runs)",
    },
    "hoffmann2022": {
        "form": "chinchilla",
        "params": {"A": 406.4, "B": 410.7, "E": 1.69, "alpha": 0.34, "beta": 0.28},
        "ci": {},
        "ci_level": None,
        "n_obs": 400,
        "source": "Hoffmann et al. 2022, Training Compute-Optimal LLMs, Sec. 3.3 / Eq. 10 "
        "(Approach 3 parametric fit; MassiveText, total parameters)",
    },
    "besiroglu2024": {
        "form": "chinchilla",
        "params": {"A": 482.01, "B": 2085.43, "E": 1.8172, "alpha": 0.3478, "beta": 0.3658},
        "ci": {
            "A": [124.58, 850.96],
            "B": [574.38, 6897.20],
            "E": [1.7, 1.94],
            "alpha": [0.2786, 0.4197],
            "beta": [0.2954, 0.4412],
        },
        "ci_level": 0.8,
        "n_obs": 240,
        "source": "Besiroglu et al. 2024, Chinchilla Scaling: A replication attempt (Epoch AI), "
        "Table 1 (refit of Approach 3 on data extracted from Hoffmann et al. Fig. 4)",
    },
}

# Forecast intervals of the presets (docs/trust.md): parameter samples from the published CIs,
# an assumed run-to-run scatter of the final loss, and the default extrapolation scatter per unit
# unit of distance r = max(0, ln C / max_compute, ln N / max_N) beyond the paper's runs (no
# max_D: the papers do not state their largest token count per run). max_compute is approximate:
# the largest training run of the data behind each fit; max_N is the largest model size the
# paper states, min_N the smallest (a forecast below it is as far outside the paper's runs).
DEFAULT_EXTRAPOLATION_SLOPE = 0.01  # per unit z; median of our backtests (docs/trust.md)
ASSUMED_RUN_SCATTER = 0.005  # log-loss scatter of a new run around the law (seed noise)

PRESET_INTERVALS: dict[str, dict] = {
    "busbridge2025": {
        "method": "published 90% CIs + assumed run scatter + default extrapolation slope",
        "max_compute": 7.4e21,  # 2.41B on 512B tokens / 7.75B at M=20 (Sec. E.2 protocol)
        "max_N": 12.6e9,  # Sec. 4.1: supervised models "range from 143M to 12.6B"
        "min_N": 143e6,  # the same sentence
        "noise": ASSUMED_RUN_SCATTER,
        "bias_slope": 0.0,
        "k_fixed": DEFAULT_EXTRAPOLATION_SLOPE,
    },
    "hoffmann2022": {
        "method": "no published CIs; assumed run scatter + default extrapolation slope",
        "max_compute": 3e21,  # largest IsoFLOP budget of Hoffmann et al. Fig. 3
        "max_N": 16e9,  # abstract: "from 70 million to over 16 billion parameters"
        "min_N": 70e6,  # the same sentence
        "noise": ASSUMED_RUN_SCATTER,
        "bias_slope": 0.0,
        "k_fixed": DEFAULT_EXTRAPOLATION_SLOPE,
    },
    "besiroglu2024": {
        "method": "published 80% CIs + assumed run scatter + default extrapolation slope",
        "max_compute": 3e21,  # refit of Hoffmann et al.'s runs
        "max_N": 16e9,  # the same runs
        "min_N": 70e6,
        "noise": ASSUMED_RUN_SCATTER,
        "bias_slope": 0.0,
        "k_fixed": DEFAULT_EXTRAPOLATION_SLOPE,
    },
}


def preset_param_samples(name: str, n: int = 400, seed: int = 0) -> list[list[float]]:
    """Fit-space parameter vectors drawn from a preset's published CIs: independent normals in
    fit space (log A, log B, log E, exponents) whose central `ci_level` mass spans each CI.
    Empty when the paper publishes no CIs. Ignoring the correlations makes these wider than
    the paper's joint bootstrap, i.e. conservative."""
    import numpy as np

    p = PRESETS[name]
    if not p["ci"]:
        return []
    law = get_law(p["form"])
    z = z_of(p["ci_level"])
    mid = law.from_natural(p["params"])
    lo = law.from_natural({k: v[0] for k, v in p["ci"].items()})
    hi = law.from_natural({k: v[1] for k, v in p["ci"].items()})
    sd = (hi - lo) / (2 * z)
    rng = np.random.default_rng(seed)
    return (mid + rng.normal(size=(n, mid.size)) * sd).tolist()
