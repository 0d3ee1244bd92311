"""Published supervised-law coefficients, each with its source.

Natural parameters of L(N, D) = E + (A/N^alpha + B/D^beta)^gamma (gamma = 1 for `chinchilla`).
"""

from __future__ import annotations

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
