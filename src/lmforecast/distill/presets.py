"""Published distillation-law coefficients (Busbridge et al. 2025, Table 6), with their intervals,
and the fit they make (`preset_fit`).

The supervised column lives in `lmforecast.supervised.presets` under the same name; a
distillation preset names the supervised preset that supplies L~_S = L(N_S, D_S) (Eq. 1).
"""

from __future__ import annotations

from ..errors import InputError
from ..fitting import FitResult
from ..laws import get_law
from ..supervised import SupervisedScalingLaw
from .schema import LAW_NAME

DISTILL_PRESETS: dict[str, dict] = {
    "busbridge2025": {
        "params": {
            "A'": 2243.0,
            "B'": 24181.0,
            "alpha'": 0.321,
            "beta'": 0.637,
            "gamma'": 0.764,
            "c0": 2.549,
            "c1": 522.6,
            "f1": 0.090,
            "d1": 1.315,
        },
        "ci": {
            "A'": [2227.0, 2255.0],
            "B'": [24084.0, 24266.0],
            "alpha'": [0.319, 0.324],
            "beta'": [0.634, 0.640],
            "gamma'": [0.732, 0.788],
            "c0": [2.425, 2.615],
            "c1": [522.6, 522.6],
            "f1": [0.088, 0.093],
            "d1": [1.302, 1.327],
        },
        "ci_level": 0.9,
        "n_obs": 697,
        "supervised": "busbridge2025",
        "source": "Busbridge et al. 2025, Distillation Scaling Laws, Table 6 (distillation "
        "column; English C4, N non-embedding parameters, 90% bootstrap CIs, 697 runs)",
    }
}


def preset_fit(name: str) -> tuple[FitResult, SupervisedScalingLaw]:
    """The published fit of preset `name` (`busbridge2025` = Table 6, both columns): Eq. 8's
    coefficients with their intervals as a `FitResult` carrying the supervised law in ``meta``,
    and that supervised law (the supervised preset the distillation preset names)."""
    if name not in DISTILL_PRESETS:
        raise InputError(f"unknown preset {name!r}; known: {', '.join(sorted(DISTILL_PRESETS))}")
    p = DISTILL_PRESETS[name]
    law = get_law(LAW_NAME)
    sup = SupervisedScalingLaw.from_preset(p["supervised"])
    res = FitResult.from_published(
        LAW_NAME,
        law.from_natural(p["params"]).tolist(),
        p["params"],
        ci=p["ci"],
        ci_level=p["ci_level"],
        n_obs=p["n_obs"],
        loss={"name": "huber", "delta": 1e-4},
        meta={
            "preset": name,
            "source": p["source"],
            "supervised": sup.params_,
            "supervised_fit": sup.result_.to_dict(),
            "supervised_source": f"preset {p['supervised']} (Table 6 supervised column, "
            "English C4)",
        },
    )
    return res, sup
