"""Could a downstream interval track each forecast's own error? Rank correlations of the
default ensemble's absolute error with the per-forecast signals an interval could use.

On the nested scenarios of `benchmarks/downstream_nested.py` (Pythia acc and acc_norm, both
suites; Gemstones), per (scenario, task, target): the absolute error of the default ensemble's
point forecast and five signals known before the target is trained:
- `eval_sd`: harness stderr of the largest fitted model's final score;
- `spread`: standard deviation of the three members' forecasts;
- `gain`: |forecast - largest fitted model's score|;
- `inner`: RMS error of the ensemble forecasting the two largest fitted models from the smaller
  ones (needs >= 3 smaller models; missing otherwise);
- `jitter`: checkpoint-to-checkpoint noise of the largest fitted model's last six scores.
Prints, per split, Spearman's rank correlation of each signal with the error (docs/downstream.md
quotes the table).

    PYTHONPATH=src python benchmarks/downstream_width_signals.py [--quick]
"""

from __future__ import annotations

import argparse
import copy
import warnings

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from downstream_nested import GEMSTONES, scenarios
from lmforecast.downstream.forecaster import ENSEMBLE, DownstreamForecaster
from lmforecast.downstream.members import subset
from lmforecast.downstream.tables import task_data

SIGNALS = ("eval_sd", "spread", "gain", "inner", "jitter")


def _inner(td, runs, chance) -> float:
    errs = []
    for j in (len(runs) - 1, len(runs) - 2):
        small = runs[runs["C"] < runs["C"].iloc[j]]
        if len(small) < 3:
            continue
        p = DownstreamForecaster(bootstrap=0, chance=chance).fit_task_data(
            subset(td, small["model"])
        )
        errs.append(float(p.predict(np.array([runs["C"].iloc[j]]))[0]) - runs["score"].iloc[j])
    return float(np.sqrt(np.mean(np.square(errs)))) if errs else float("nan")


def signal_rows(quick: bool = False) -> pd.DataFrame:
    rows = []
    for evals, scs in scenarios(quick, GEMSTONES):
        for sc in scs:
            for task in sc.tasks:
                td_all = task_data(evals, task=task, loss_task=sc.loss_task, metric=sc.metric,
                                   models=list(sc.fit_models) + list(sc.targets))  # fmt: skip
                td = copy.copy(td_all)
                ck = td_all.checkpoints
                td.checkpoints = ck[ck["model"].isin(sc.fit_models)].reset_index(drop=True)
                est = DownstreamForecaster(bootstrap=0, chance=sc.chance.get(task))
                est.fit_task_data(td)
                runs = td.runs
                last = td.checkpoints[td.checkpoints["model"] == runs["model"].iloc[-1]]
                tail = last.sort_values("step")["score"].to_numpy()[-6:]
                jitter = np.std(np.diff(tail), ddof=1) / np.sqrt(2) if len(tail) >= 3 else np.nan
                inner = _inner(td, runs, est.chance_)
                tg = td_all.runs[td_all.runs["model"].isin(sc.targets)]
                C = tg["C"].to_numpy(float)
                members = [m for m in ENSEMBLE if m not in est.refused_]
                pts = np.stack([est._member_point(m, C) for m in members])
                pred = est.predict(C)
                for k in range(len(tg)):
                    rows.append({"suite": sc.suite, "split": sc.split, "task": task,
                                 "target": tg["model"].iloc[k],
                                 "error": abs(pred[k] - tg["score"].iloc[k]),
                                 "eval_sd": est.eval_sd_, "spread": pts[:, k].std(ddof=1),
                                 "gain": abs(pred[k] - est.largest_["score"]), "inner": inner,
                                 "jitter": jitter})  # fmt: skip
    return pd.DataFrame(rows)


def correlations(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for split, g in df.groupby("split"):
        for s in SIGNALS:
            ok = g[s].notna()
            rho = spearmanr(g["error"][ok], g[s][ok])[0] if ok.sum() > 2 else float("nan")
            out.append({"split": split, "signal": s, "n": int(ok.sum()), "spearman": rho,
                        "median": float(g[s][ok].median())})  # fmt: skip
    return pd.DataFrame(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="reduced size (tests)")
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    df = signal_rows(a.quick)
    print(f"{len(df)} forecasts; MAE per split: "
          + ", ".join(f"{s} {g['error'].mean():.2f}" for s, g in df.groupby("split")))  # fmt: skip
    print(correlations(df).to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
