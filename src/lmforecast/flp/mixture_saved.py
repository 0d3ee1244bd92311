"""The saved form of an FLP-M fit (Chen et al., Sec. 4-6; `FLPM.to_dict` / `FLPM.from_dict`):
the configuration, the task settings, sources and domains, the checkpoint filter (Sec. 3.3),
the stage-1 law of each domain (Table 3) with its bootstrap, the stage-2 mapper (the Sec. 4.2
network or the Sec. 6.2 linear coefficients) with its bootstrap and residual scale, and the
zero-share sensitivity. Its checks live in `flp.schema.check_flpm`."""

from __future__ import annotations

import numpy as np

from ..fitting import FitResult
from .network import TwoLayerNetwork
from .tables import FilterReport
from .tasks import TaskSettings

FORMAT_VERSION = 1


def flpm_dict(est) -> dict:
    """A fitted `FLPM` as plain data (strict JSON once written; loads back bit-for-bit)."""
    return {
        "kind": "FLPM",
        "format_version": FORMAT_VERSION,
        "config": {
            "task": est.task,
            "form": est.form,
            "mapper": est.mapper,
            "chance": est.chance,
            "threshold": float(est.threshold),
            "train_loss_decimals": int(est.train_loss_decimals),
            "zero_share": est.zero_share,
            "zero_floor": float(est.zero_floor),
            "hidden": est.hidden,
            "lr": est.lr,
            "steps": est.steps,
            "weight_decay": est.weight_decay,
            "n_init": est.n_init,
            "bootstrap": int(est.bootstrap),
            "seed": est.seed,
            "score_unit": est.score_unit,
        },
        "settings": dict(est.settings_.__dict__),
        "sources": list(est.sources_),
        "domains": list(est.domains_),
        "filter": {k: v.tolist() for k, v in est.filter_.__dict__.items()},
        "n_runs": est.n_runs_,
        "n_points": est.n_points_,
        "stage1": {d: r.to_dict() for d, r in est.stage1_.items()},
        "network": None if est.network_ is None else est.network_.to_dict(),
        "coef": None if est.coef_ is None else est.coef_.tolist(),
        "coef_boot": getattr(est, "coef_boot_", np.zeros((0,))).tolist(),
        "residual_scale": getattr(est, "residual_scale_", None),
        "n_zero_share": getattr(est, "n_zero_share_", 0),
        "zero_share_sensitivity": getattr(est, "zero_share_sensitivity_", None),
    }


def restore_flpm(est, d: dict):
    """`est` (an `FLPM` made from ``d["config"]``) with the fitted state of the saved dict `d`
    (checked by `schema.check_flpm`) restored; returns it."""
    est.settings_ = TaskSettings(**d["settings"])
    est.sources_, est.domains_ = tuple(d["sources"]), tuple(d["domains"])
    f = d["filter"]
    est.filter_ = FilterReport(
        *(np.array(f[k], bool) for k in ("kept", "not_improved", "not_emerged"))
    )
    est.n_runs_, est.n_points_ = d["n_runs"], d["n_points"]
    est.stage1_ = {k: FitResult.from_dict(v) for k, v in d["stage1"].items()}
    est.network_ = None if d["network"] is None else TwoLayerNetwork.from_dict(d["network"])
    est.coef_ = None if d["coef"] is None else np.array(d["coef"], float)
    if d.get("coef_boot"):
        est.coef_boot_ = np.array(d["coef_boot"], float)
    if d.get("residual_scale") is not None:
        est.residual_scale_ = d["residual_scale"]
    est.n_zero_share_ = d.get("n_zero_share", 0)
    est.zero_share_sensitivity_ = d.get("zero_share_sensitivity")
    return est
