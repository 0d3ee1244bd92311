"""Sec. 6.2 / Fig. 8 (Chen et al.): which loss -> performance map should FLP-M use?

The paper fits four candidates on the sampling LMs and measures each one's relative error
(Eq. 4) on the targets, feeding the targets' *actual* domain losses (METHODS.md 3.4, "Target
prediction"):

1. FLOPs: Eq. 5's form with the score as target, P = ((sum_k C_k)/C_T)^a_C prod_k
   (C_k/C_k0)^a_k, from FLOPs per source (no losses at all);
2. Average: linear regression on the average validation loss (FLP's Eq. 2);
3. Domain-Linear: linear regression on the K domain losses;
4. Domain-Neural: the two-layer network of Sec. 4.2 (FLP-M's choice).

All four are fitted on the same retained checkpoints (Sec. 3.3 filter). The FLOPs candidate uses
each checkpoint's FLOPs spent so far per source (the reading of the FP baseline, docs/flp.md
reading 8). `losses="predicted"` instead runs every candidate end to end from the targets'
FLOPs (Average = FLP, Domain-* = FLP-M with predicted domain losses, Sec. 4). A constant
predictor (mean retained score) is reported as a reference row; it is not one of the paper's.
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
from .study import (
    HeldOutErrors,
    prediction_rows,
    prepare_tables,
    target_scores,
    task_chance,
    task_list,
)
from .tables import Columns, task_scores
from .tasks import EMERGENCE_THRESHOLD

CANDIDATES = ("FLOPs", "Average", "Domain-Linear", "Domain-Neural")
CONSTANT = "Constant"
LOSS_MODES = ("actual", "predicted")


class LossToPerformanceComparison(SummaryDisplay, HeldOutErrors):
    """Result of `compare_loss_to_performance` (Fig. 8 / Table 4 layout)."""

    kind: ClassVar[str] = "LossToPerformanceComparison"
    methods: ClassVar[tuple[str, ...]] = (*CANDIDATES, CONSTANT)

    def findings(self) -> pd.DataFrame:
        """The paper's three Sec. 6.2 claims per task (and on the mean over tasks): FLOPs is
        the worst of the four candidates; the better domain-loss map beats Average;
        Domain-Neural beats Domain-Linear."""
        e = self.errors()
        return pd.DataFrame(
            {
                "flops_worst": e.loc["FLOPs"] >= e.loc[list(CANDIDATES[1:])].max(),
                "domain_beats_average": e.loc[["Domain-Linear", "Domain-Neural"]].min()
                < e.loc["Average"],
                "neural_beats_linear": e.loc["Domain-Neural"] < e.loc["Domain-Linear"],
            }
        )

    def contract(self) -> dict:
        """What `flpm compare --json` prints: the loss mode, the method x task errors, the
        Sec. 6.2 findings and the checkpoints and losses used."""
        f, d = self.findings(), self.diagnostics
        return {
            "losses": self.settings["losses"],
            "relative_error_pct": self.errors_contract(),
            "findings": {c: f[c].to_dict() for c in f.columns},
            "retained_checkpoints": d["n_points"],
            "average_loss": d["average_loss"],
            "skipped": d["skipped"],
        }

    def summary(self) -> str:
        s, d = self.settings, self.diagnostics
        n_t = len(dict.fromkeys(self.predictions["target"]))
        kept = "  ".join(f"{t} {d['n_points'][t]}" for t in self.tasks)
        return self._table_text(
            [
                "FLP-M loss -> performance candidates (Chen et al., Sec. 6.2, Fig. 8 / Table 4)",
                f"relative error (%) on {n_t} target run(s), mean per task; {s['losses']} "
                f"target losses; average loss = {d['average_loss']}",
            ],
            [
                f"retained checkpoints (Sec. 3.3): {kept}",
                "FLOPs = Eq. 5 form on FLOPs per source; Average = Eq. 2 on the average loss;",
                "Domain-Linear / Domain-Neural = linear / two-layer network on the domain losses;",
                "Constant = mean retained score (reference, not one of the paper's candidates)",
                *(
                    f"not fitted: {t} {m}: {why}"
                    for t, v in d.get("skipped", {}).items()
                    for m, why in v.items()
                ),
            ],
        )


def checkpoint_source_flops(
    ck: pd.DataFrame,
    runs: pd.DataFrame,
    run_flops: np.ndarray,
    sources: tuple[str, ...],
    columns: Columns,
) -> np.ndarray:
    """(n, K) FLOPs spent so far on each source at each checkpoint: the `C_<source>` columns if
    the checkpoint table has them all, else the checkpoint's total `C` split in its model's
    final mixing ratio (RUNS)."""
    cols = [f"C_{s}" for s in sources]
    if all(c in ck.columns for c in cols):
        return np.column_stack([numeric_column(ck, c, lower=0.0, what="checkpoints") for c in cols])
    if columns.C not in ck.columns:
        raise InputError(
            f"checkpoints: the FLOPs candidate needs the FLOPs spent so far at each checkpoint: "
            f"columns {', '.join(cols)}, or {columns.C!r} (split by the model's mixing ratio)"
        )
    C = numeric_column(ck, columns.C, positive=True, what="checkpoints")
    shares = pd.DataFrame(run_flops / run_flops.sum(1, keepdims=True))
    shares.index = runs[columns.model].astype(str)
    shares = shares[~shares.index.duplicated()]
    return C[:, None] * shares.loc[ck[columns.model].astype(str)].to_numpy()


def compare_loss_to_performance(
    runs: pd.DataFrame,
    checkpoints: pd.DataFrame | None,
    targets: pd.DataFrame,
    tasks,
    *,
    losses: str = "actual",
    chance=None,
    threshold: float = EMERGENCE_THRESHOLD,
    train_loss_decimals: int = 2,
    form: str = "M4",
    ratio_floor: float = 1e-3,
    steps: int = 2000,
    n_init: int = 5,
    seed: int = 0,
    constant: bool = True,
    columns: Columns | None = None,
    score_unit: str = "auto",
) -> LossToPerformanceComparison:
    """Sec. 6.2 / Fig. 8: fit the FLOPs, Average, Domain-Linear and Domain-Neural loss ->
    performance maps on the sampling runs' retained checkpoints and report each one's Eq. 4
    error on the target runs.

    `runs` are the final sampling models (FLOPs per source, `loss_<domain>`), `checkpoints` their
    intermediate checkpoints (None: the runs' rows), `targets` the held-out runs (FLOPs per
    source, domain losses, scores). `tasks`: one name or several. `losses="actual"` (the paper's
    ablation) feeds the targets' measured losses; "predicted" runs each pipeline from FLOPs
    (Average = FLP, Domain-* = FLP-M with `form` in stage 1). `chance`: None (Table 2),
    one number, or a dict per task. The network settings (`steps`, `n_init`, `seed`) are FLPM's.
    Scores are points; a score column in fractions is converted at the door (`score_unit`).
    """
    if losses not in LOSS_MODES:
        raise InputError(f"losses must be one of {', '.join(LOSS_MODES)}, got {losses!r}")
    if form not in MIXTURE_FORMS:
        raise InputError(f"unknown form {form!r}; use one of {', '.join(MIXTURE_FORMS)}")
    columns = columns or Columns()
    tasks = task_list(tasks)
    tabs = prepare_tables(runs, checkpoints, targets, columns)
    runs, ck, tg = tabs.runs, tabs.checkpoints, tabs.targets
    names = (
        tg[columns.model].astype(str).tolist()
        if columns.model in tg.columns
        else [f"target {i + 1}" for i in range(len(tg))]
    )
    L_act = np.column_stack(
        [numeric_column(tg, c, positive=True, what="targets") for c in tabs.domain_cols]
    )
    avg_act = numeric_column(tg, columns.loss, positive=True, what="targets")
    C_t = numeric_column(tg, columns.C, positive=True, what="targets")
    F_ck = checkpoint_source_flops(ck, runs, tabs.run_flops, tabs.sources, columns)
    flops_law = get_law(MIXTURE_FORMS["M4"], sources=tabs.sources, ratio_floor=ratio_floor)
    X_t = {f"C_{s}": tabs.target_flops[:, i] for i, s in enumerate(tabs.sources)}
    rows, n_points, flops_fits, fits, skipped = [], {}, {}, {}, {}
    for task in tasks:
        rp = task_chance(chance, task)
        actual = target_scores(tg, task, score_unit)
        common = dict(chance=rp, threshold=threshold, train_loss_decimals=train_loss_decimals)
        common["score_unit"] = score_unit
        flp = FLP(task, bootstrap=0, **common).fit(runs, ck, columns=columns)
        keep = flp.filter_.kept
        P = task_scores(ck, task, score_unit)[1][keep]  # points, as FLP read them
        X = {f"C_{s}": F_ck[keep, i] for i, s in enumerate(tabs.sources)}
        fits[task], skipped[task], preds = {"Average": flp}, {}, {}
        if losses == "actual":
            preds["Average"] = flp.stage2_.predict(L=avg_act)
        else:
            preds["Average"] = flp.predict(C_t)
        try:
            if (P <= 0).any():
                raise InputError("Eq. 5 is fitted in log space and needs scores > 0")
            with np.errstate(over="ignore"):  # unidentified constants C_T, C_k may be huge
                f = fits[task]["FLOPs"] = fit_stage1(flops_law, X, P)  # Eq. 5, target log P
                flops_fits[task] = flops_law.identified(f.theta)
            preds["FLOPs"] = f.predict(**X_t)
        except InputError as exc:  # too few retained checkpoints for this candidate
            skipped[task]["FLOPs"], preds["FLOPs"] = str(exc), np.full(len(tg), np.nan)
        mix = dict(
            form=form, zero_floor=ratio_floor, steps=steps, n_init=n_init, seed=seed, bootstrap=0
        )  # point errors only; no intervals needed
        for name, mapper in (("Domain-Linear", "domain-linear"), ("Domain-Neural", "neural")):
            try:
                est = fits[task][name] = FLPM(task, mapper=mapper, **common, **mix).fit(
                    runs, ck, columns=columns
                )
            except InputError as exc:
                skipped[task][name], preds[name] = str(exc), np.full(len(tg), np.nan)
                continue
            preds[name] = (
                est.performance_from_losses(L_act)
                if losses == "actual"
                else est.predict(tabs.target_flops)
            )
        if constant:
            preds[CONSTANT] = np.full(len(tg), float(P.mean()))
        preds = {m: preds[m] for m in (*CANDIDATES, CONSTANT) if m in preds}
        for method, p in preds.items():
            rows += prediction_rows(task, method, names, actual, p)
        n_points[task] = int(keep.sum())
    settings = {
        "losses": losses,
        "tasks": tasks,
        "chance": chance,
        "threshold": float(threshold),
        "form": form,
        "ratio_floor": float(ratio_floor),
        "steps": int(steps),
        "n_init": int(n_init),
        "seed": int(seed),
    }
    diagnostics = {
        "n_points": n_points,
        "sources": list(tabs.sources),
        "domains": [c[5:] for c in tabs.domain_cols],
        "average_loss": tabs.average_loss,
        "n_runs": len(runs),
        "n_targets": len(tg),
        "flops_candidate_identified": flops_fits,
        "skipped": {t: v for t, v in skipped.items() if v},
    }
    return LossToPerformanceComparison(pd.DataFrame(rows), settings, diagnostics, fits)
