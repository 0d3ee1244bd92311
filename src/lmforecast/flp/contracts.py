"""What `flp fit --json` and `flpm fit --json` print: a fitted FLP's or FLP-M's stages and
checkpoint counts as plain data (`FLP.contract`, `FLPM.contract`)."""

from __future__ import annotations


def flp_contract(est) -> dict:
    """FLP (Sec. 3): the task, method, chance level, both stages' parameters, stage 2's R^2 and
    the checkpoints kept / dropped by the emergence filter."""
    return {
        "task": est.settings_.name,
        "method": est.method,
        "chance": est.settings_.chance,
        "stage1": None if est.stage1_ is None else est.stage1_.params,
        "stage2": est.stage2_.params,
        "stage2_r2": est.stage2_r2_,
        "checkpoints": est.filter_.counts(),
    }


def flpm_contract(est) -> dict:
    """FLP-M (Sec. 4): the form, mapper, sources and domains, each domain's stage-1 parameters
    and whether they are identified, the checkpoint counts and the zero-share settings."""
    return {
        "task": est.settings_.name,
        "form": est.form,
        "mapper": est.mapper,
        "sources": list(est.sources_),
        "domains": list(est.domains_),
        "stage1": {d: r.params for d, r in est.stage1_.items()},
        "stage1_identified": {d: r.law_.identified(r.theta) for d, r in est.stage1_.items()},
        "checkpoints": est.filter_.counts(),
        "zero_share": est.zero_share,
        "zero_floor": est.zero_floor,
        "n_zero_share_runs": est.n_zero_share_,
        "zero_share_sensitivity": est.zero_share_sensitivity_,
    }
