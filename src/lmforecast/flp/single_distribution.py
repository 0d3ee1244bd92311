"""Sec. 6.3 / Fig. 9 (Chen et al.): FLP against FLP-M when all sampling LMs share one data
distribution.

FLP: total FLOPs -> average validation loss (Eq. 1) -> score (Eq. 2). FLP-M: FLOPs per source
-> domain losses (Eq. 5 = M4 per domain) -> score (two-layer network, Sec. 4.2). With one mixing
ratio r for every run, the per-source FLOPs are C^G = (1 - r) C and C^C = r C, so log C^G,
log C^C and log(C^G + C^C) differ only by constants: Eq. 5's compute terms are collinear, and
log L^D = (a_C + a_C1 + a_C2) log C + const, i.e. M4 collapses to one power law in total compute
per domain (M1, = Eq. 1 per domain). The domain losses of the sampling LMs then move together,
so decomposing the loss adds no information, while FLP-M estimates K stage-1 laws instead of one
and feeds K correlated inputs to a network: the paper's reasons (Sec. 6.3) why FLP-M is worse.
The check reports the diagnostics of that argument next to the held-out errors.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd

from ..data.validate import numeric_column
from ..display import SummaryDisplay
from ..errors import InputError
from ..laws import get_law
from ..laws.flp import MIXTURE_FORMS
from .fitting import fit_stage1
from .mixture import FLPM
from .model import FLP
from .schema import MAPPERS
from .study import (
    HeldOutErrors,
    StudyTables,
    prediction_rows,
    prepare_tables,
    target_scores,
    task_chance,
    task_list,
)
from .tables import Columns
from .tasks import EMERGENCE_THRESHOLD

METHODS = ("FLP", "FLP-M")


class SingleDistributionCheck(SummaryDisplay, HeldOutErrors):
    """Result of `single_distribution_check` (Fig. 9 layout) with the collinearity diagnostics."""

    kind: ClassVar[str] = "SingleDistributionCheck"
    methods: ClassVar[tuple[str, ...]] = METHODS

    def flpm_worse(self) -> pd.Series:
        """Per task (and the mean over tasks): is FLP-M's held-out error above FLP's (Fig. 9)?"""
        e = self.errors()
        return (e.loc["FLP-M"] > e.loc["FLP"]).rename("flpm_worse")

    def contract(self) -> dict:
        """What `flpm single-distribution --json` prints: the FLP / FLP-M errors, whether
        FLP-M is worse (Fig. 9), the sources' shares and the collinearity diagnostics."""
        d = self.diagnostics
        keys = (
            "design_rank",
            "form_vs_m1_max_rel_diff",
            "min_domain_loss_correlation",
            "stage1_loss_error_pct",
        )
        return {
            "relative_error_pct": self.errors_contract(),
            "flpm_worse": self.flpm_worse().to_dict(),
            "shares": dict(zip(d["sources"], d["shares"])),
            "retained_checkpoints": d["n_points"],
            **{k: d[k] for k in keys},
        }

    def summary(self) -> str:
        d = self.diagnostics
        shares = ", ".join(f"{s} {v:.4g}" for s, v in zip(d["sources"], d["shares"]))
        s1 = d["stage1_loss_error_pct"]
        return self._table_text(
            [
                "FLP vs FLP-M on one data distribution (Chen et al., Sec. 6.3, Fig. 9)",
                f"relative error (%) on {d['n_targets']} target run(s), mean per task; "
                f"{d['n_runs']} sampling runs, shares {shares}",
            ],
            [
                "retained checkpoints (Sec. 3.3): "
                + "  ".join(f"{t} {d['n_points'][t]}" for t in self.tasks),
                f"collinearity: rank of the centred [log C, log C_k] over the runs = "
                f"{d['design_rank']} (1: Eq. 5's compute terms are collinear);",
                f"FLP-M's {self.settings['form']} and M1 (total FLOPs) stage-1 forecasts differ by "
                f"at most {d['form_vs_m1_max_rel_diff']:.2g} (relative)",
                f"domain losses move together: min pairwise correlation of log domain losses "
                f"over the runs {d['min_domain_loss_correlation']:.4f}",
                f"stage-1 held-out loss error: FLP average loss {s1['FLP']:.2f}%, FLP-M domain "
                f"losses {s1['FLP-M']:.2f}% (mean over {len(d['domains'])} domains)",
            ],
        )


def check_single_ratio(tabs: StudyTables, tol: float) -> np.ndarray:
    """The shared mixing ratio of runs and targets (shares per source); InputError naming the
    first row whose shares differ from the first run's by more than `tol`."""
    ref = tabs.run_flops[0] / tabs.run_flops[0].sum()
    for what, F in (("runs", tabs.run_flops), ("targets", tabs.target_flops)):
        S = F / F.sum(1, keepdims=True)
        dev = np.abs(S - ref).max(1)
        if (dev > tol).any():
            i = int(np.argmax(dev > tol))
            got = ", ".join(f"{s} {v:.4g}" for s, v in zip(tabs.sources, S[i]))
            want = ", ".join(f"{s} {v:.4g}" for s, v in zip(tabs.sources, ref))
            raise InputError(
                f"{what}: row {i + 1}: mixing shares ({got}) differ from the first run's "
                f"({want}); the single-distribution check needs one mixing ratio (select the "
                f"rows of one ratio, or raise the tolerance {tol:g})"
            )
    return ref


def compute_design_rank(F: np.ndarray, ratio_floor: float, rtol: float = 1e-4) -> int:
    """Numerical rank of the centred Eq. 5 compute features [log sum_k C_k, log C_k] (source
    compute floored as the laws do): 1 when every run has the same mixing ratio. Singular values
    below `rtol` x the largest count as zero (shares rounded in the 6th digit, as in the zoo's
    tables, leave ~1e-7)."""
    tot = F.sum(1)
    A = np.column_stack([np.log(tot), np.log(np.maximum(F, ratio_floor * tot[:, None]))])
    A = A - A.mean(0)
    s = np.linalg.svd(A, compute_uv=False)
    return int((s > rtol * max(s[0], 1e-300)).sum())


def single_distribution_check(
    runs: pd.DataFrame,
    checkpoints: pd.DataFrame | None,
    targets: pd.DataFrame,
    tasks,
    *,
    chance=None,
    threshold: float = EMERGENCE_THRESHOLD,
    train_loss_decimals: int = 2,
    form: str = "M4",
    mapper: str = "neural",
    ratio_floor: float = 1e-3,
    steps: int = 2000,
    n_init: int = 5,
    seed: int = 0,
    ratio_tol: float = 1e-3,
    columns: Columns | None = None,
    score_unit: str = "auto",
) -> SingleDistributionCheck:
    """Sec. 6.3 / Fig. 9: fit FLP (total FLOPs -> average loss -> score) and FLP-M (FLOPs per
    source -> domain losses -> network) on runs that all share one mixing ratio, and compare
    their Eq. 4 errors on the target runs (same ratio). Tables as in
    `compare_loss_to_performance`; `ratio_tol` is the largest allowed difference in any source's
    share. Diagnostics: the design rank of Eq. 5's compute terms (1 = collinear), the largest
    difference between FLP-M's stage-1 forecasts and per-domain M1 (total FLOPs) fits, the
    smallest correlation between the runs' log domain losses, and stage-1 held-out loss errors.
    """
    if form not in MIXTURE_FORMS:
        raise InputError(f"unknown form {form!r}; use one of {', '.join(MIXTURE_FORMS)}")
    if mapper not in MAPPERS:
        raise InputError(f"unknown mapper {mapper!r}; use one of {', '.join(MAPPERS)}")
    if not ratio_tol >= 0:
        raise InputError(f"ratio_tol must be >= 0, got {ratio_tol}")
    columns = columns or Columns()
    tasks = task_list(tasks)
    tabs = prepare_tables(runs, checkpoints, targets, columns)
    shares = check_single_ratio(tabs, ratio_tol)
    runs, ck, tg = tabs.runs, tabs.checkpoints, tabs.targets
    names = (
        tg[columns.model].astype(str).tolist()
        if columns.model in tg.columns
        else [f"target {i + 1}" for i in range(len(tg))]
    )
    C_t = numeric_column(tg, columns.C, positive=True, what="targets")
    L_t = np.column_stack(
        [numeric_column(tg, c, positive=True, what="targets") for c in tabs.domain_cols]
    )
    L_runs = np.column_stack(
        [numeric_column(runs, c, positive=True, what="runs") for c in tabs.domain_cols]
    )
    avg_t = numeric_column(tg, columns.loss, positive=True, what="targets")
    rows, n_points, fits = [], {}, {}
    flpm = None
    for task in tasks:
        rp = task_chance(chance, task)
        actual = target_scores(tg, task, score_unit)
        common = dict(
            chance=rp,
            threshold=threshold,
            train_loss_decimals=train_loss_decimals,
            score_unit=score_unit,
        )
        flp = FLP(task, bootstrap=0, **common).fit(runs, ck, columns=columns)
        flpm = FLPM(
            task,
            form=form,
            mapper=mapper,
            zero_floor=ratio_floor,
            steps=steps,
            n_init=n_init,
            seed=seed,
            bootstrap=0,
            **common,
        ).fit(runs, ck, columns=columns)
        rows += prediction_rows(task, "FLP", names, actual, flp.predict(C_t))
        rows += prediction_rows(task, "FLP-M", names, actual, flpm.predict(tabs.target_flops))
        n_points[task] = flpm.n_points_
        fits[task] = {"FLP": flp, "FLP-M": flpm}
    # stage-1 diagnostics (identical for every task: stage 1 does not depend on the task)
    X_runs = {f"C_{s}": tabs.run_flops[:, i] for i, s in enumerate(tabs.sources)}
    m1 = get_law(MIXTURE_FORMS["M1"], sources=tabs.sources, ratio_floor=ratio_floor)
    L_m1 = np.column_stack(
        [
            _m1_forecast(m1, X_runs, L_runs[:, j], tabs.target_flops, tabs.sources)
            for j in range(L_runs.shape[1])
        ]
    )
    L_flpm = flpm.predict_losses(tabs.target_flops)[list(flpm.domains_)].to_numpy()
    flp_loss = fits[tasks[0]]["FLP"].predict_loss(C_t)
    corr = np.corrcoef(np.log(L_runs).T) if L_runs.shape[1] > 1 else np.ones((1, 1))
    settings = {
        "tasks": tasks,
        "chance": chance,
        "threshold": float(threshold),
        "form": form,
        "mapper": mapper,
        "ratio_floor": float(ratio_floor),
        "steps": int(steps),
        "n_init": int(n_init),
        "seed": int(seed),
        "ratio_tol": float(ratio_tol),
    }
    diagnostics = {
        "n_points": n_points,
        "sources": list(tabs.sources),
        "domains": [c[5:] for c in tabs.domain_cols],
        "shares": shares.tolist(),
        "average_loss": tabs.average_loss,
        "n_runs": len(runs),
        "n_targets": len(tg),
        "design_rank": compute_design_rank(tabs.run_flops, ratio_floor),
        "form_vs_m1_max_rel_diff": float(np.max(np.abs(L_flpm / L_m1 - 1))),
        "min_domain_loss_correlation": float(corr.min()),
        "stage1_loss_error_pct": {
            "FLP": float(100 * np.mean(np.abs(flp_loss / avg_t - 1))),
            "FLP-M": float(100 * np.mean(np.abs(L_flpm / L_t - 1))),
        },
    }
    return SingleDistributionCheck(pd.DataFrame(rows), settings, diagnostics, fits)


def _m1_forecast(law, X_runs, L, target_flops, sources) -> np.ndarray:
    res = fit_stage1(law, X_runs, L)
    return res.predict(**{f"C_{s}": target_flops[:, i] for i, s in enumerate(sources)})
