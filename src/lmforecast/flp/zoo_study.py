"""FLP, FLP-M and the Sec. 6 ablations on the small-model zoo: the numbers the report's zoo part
shows (fits below the largest size, forecasts of the largest; Eq. 4 errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..errors import InputError
from .candidates import compare_loss_to_performance
from .comparison import form_comparison
from .mixture import FLPM
from .model import FLP, relative_error
from .single_distribution import single_distribution_check
from .tables import filter_checkpoints
from .zoo_data import (
    DOMAINS,
    flp_tables,
    flpm_tables,
    loss_to_performance_split,
    single_distribution_split,
    with_total_flops,
    zoo_chance,
    zoo_tasks,
)


def zoo_ablations(zoo, *, steps: int = 2000, seed: int = 0) -> tuple:
    """Sec. 6.2 candidates on the zoo's Sec. 5.1-shaped split (targets: the largest mixture
    size at the non-reference code shares) and the Sec. 6.3 check on the supervised runs (one
    mixture, code share 0.4; targets: the largest size). Returns (comparison, check)."""
    tasks = zoo_tasks(zoo)
    rp = {t: zoo_chance(zoo, t) for t in tasks}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = compare_loss_to_performance(
            *loss_to_performance_split(zoo), tasks, chance=rp, steps=steps, seed=seed
        )
        chk = single_distribution_check(
            *single_distribution_split(zoo), tasks, chance=rp, steps=steps, seed=seed
        )
    return cmp, chk


def zoo_flp_summary(zoo, *, bootstrap: int = 40, seed: int = 0) -> dict:
    """FLP (Eq. 1-2) and FP (Eq. 3) fitted on the zoo's supervised runs and checkpoints below the
    largest size, forecasting the largest size's final models (Eq. 4 errors). Tasks that leave
    fewer than 2 checkpoints after the Sec. 3.3 filter are reported as dropped, with counts."""
    runs, ck = flp_tables(zoo)
    big = runs["N"] == runs["N"].max()
    train, target = runs[~big], runs[big]
    ck_train = ck[ck["model"].isin(train["model"])].reset_index(drop=True)
    C = target["C"].to_numpy()
    tasks, rows, fits = {}, [], {}
    for task in zoo_tasks(zoo):
        rp = zoo_chance(zoo, task)
        rep = filter_checkpoints(ck_train, ck_train[task].to_numpy(float), rp)
        info: dict = {"random": rp, **rep.counts()}
        tasks[task] = info
        if rep.kept.sum() < 2:
            info["fitted"] = False
            continue
        est = FLP(task, chance=rp, bootstrap=bootstrap, seed=seed)
        est.fit(train, ck_train)
        fp = FLP(task, method="fp", chance=rp, bootstrap=0).fit(train, ck_train)
        actual = target[task].to_numpy(float)
        pred, pred_fp = est.predict(C), fp.predict(C)
        lo, hi = est.predict_interval(C, level=0.9) if bootstrap else (pred * np.nan, pred * np.nan)
        e_flp, e_fp = relative_error(pred, actual), relative_error(pred_fp, actual)
        fits[task] = est
        info.update(
            fitted=True,
            flp_rel_errors=e_flp.tolist(),
            fp_rel_errors=e_fp.tolist(),
            flp_mean_rel_error=float(e_flp.mean()),
            fp_mean_rel_error=float(e_fp.mean()),
            in_interval=int(((actual >= lo) & (actual <= hi)).sum()),
            stage2_slope=float(est.stage2_.params.get("w1", np.nan)),
        )
        for i, m in enumerate(target["model"]):
            rows.append(
                {
                    "task": task,
                    "target": m,
                    "actual": actual[i],
                    "FLP": pred[i],
                    "90% PI": f"[{lo[i]:.1f}, {hi[i]:.1f}]",
                    "FLP err %": 100 * e_flp[i],
                    "FP": pred_fp[i],
                    "FP err %": 100 * e_fp[i],
                    "kept ckpts": info["kept"],
                }
            )
    return {
        "table": pd.DataFrame(rows),
        "fits": fits,
        "runs": train,
        "checkpoints": ck_train,
        "targets": target,
        "held_out_N": int(runs["N"].max()),
        "n_train_runs": len(train),
        "tasks": tasks,
    }


def zoo_flpm_summary(zoo, *, steps: int = 2000, seed: int = 0) -> dict:
    """FLP-M (Sec. 4: M4 per domain, two-layer network on the domain losses) against FLP (total
    FLOPs) on the zoo's mixture runs, two sources (general, code): held out the largest size at
    every mixture, and each code share at every size (leave one mixture out). Also the held-out
    domain-loss error of stage 1 with M4 against M1 (total FLOPs only, Table 3)."""
    runs, ck = flpm_tables(zoo)
    dcols = [f"loss_{d}" for d in DOMAINS]
    splits = {f"N={int(runs['N'].max()):,}": runs["N"] == runs["N"].max()}
    for r in sorted(runs["code_share"].unique()):
        splits[f"code share {r:g}"] = np.isclose(runs["code_share"], r)
    # tasks usable on every split: enough emerged checkpoints (Sec. 3.3) for the network
    tasks, dropped = [], {}
    for task in zoo_tasks(zoo):
        rp = zoo_chance(zoo, task)
        rep = filter_checkpoints(ck, ck[task].to_numpy(float), rp)
        if rep.kept.sum() >= 2 * (len(DOMAINS) + 1):
            tasks.append(task)
        else:
            dropped[task] = rep.counts()
    rows, preds = [], {"FLP-M": [], "FLP": []}
    actual_all = []
    for name, hold in splits.items():
        tr, te = runs[~hold], runs[hold]
        ck_tr = ck[ck["model"].isin(tr["model"])].reset_index(drop=True)
        F = te[["C_general", "C_code"]].to_numpy()
        row: dict = {"held out": name, "runs held out": int(hold.sum())}
        fc = form_comparison(tr[["C_general", "C_code", *dcols]], te, ("M4", "M1"))
        for form in ("M4", "M1"):
            row[f"domain loss err {form} %"] = 100 * float(fc.loc[form, "average"])
        for task in tasks:
            rp = zoo_chance(zoo, task)
            actual = te[task].to_numpy(float)
            try:
                m = FLPM(task, steps=steps, chance=rp, seed=seed, bootstrap=0)
                m = m.fit(tr, ck_tr)
                f = FLP(task, chance=rp, bootstrap=0)
                f.fit(with_total_flops(tr), with_total_flops(ck_tr))
            except InputError:
                row[f"{task} FLP-M err %"] = row[f"{task} FLP err %"] = np.nan
                continue
            pm, pf = m.predict(F), f.predict(F.sum(1))
            row[f"{task} FLP-M err %"] = 100 * float(relative_error(pm, actual).mean())
            row[f"{task} FLP err %"] = 100 * float(relative_error(pf, actual).mean())
            if task == tasks[0]:
                preds["FLP-M"].append(pm)
                preds["FLP"].append(pf)
                actual_all.append(actual)
        rows.append(row)
    df = pd.DataFrame(rows)
    shares = sorted(runs["code_share"].unique())
    interior = [
        any(name == f"code share {r:g}" for r in shares[1:-1]) for name in df["held out"]
    ]  # mixtures inside the sampled range: interpolation in the mixture, not extrapolation
    out = {
        "table": df,
        "tasks": tasks,
        "dropped": dropped,
        "n_runs": len(runs),
        "code_shares": sorted(float(r) for r in runs["code_share"].unique()),
        "domain_loss_error_pct": {
            form: float(df[f"domain loss err {form} %"].mean()) for form in ("M4", "M1")
        },
        "domain_loss_error_interior_pct": {
            form: float(df.loc[interior, f"domain loss err {form} %"].mean())
            for form in ("M4", "M1")
        },
        "rel_error_pct": {t: float(df[f"{t} FLP-M err %"].mean()) for t in tasks},
        "flp_rel_error_pct": {t: float(df[f"{t} FLP err %"].mean()) for t in tasks},
    }
    if actual_all:
        out["predicted"] = {k: np.concatenate(v) for k, v in preds.items()}
        out["actual"] = np.concatenate(actual_all)
    return out
