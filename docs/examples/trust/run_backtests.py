"""Reproduce the numbers of docs/trust.md (takes minutes; run one part at a time).

    S=docs/examples/trust/run_backtests.py P=/work/shared/data/pythia/zero-shot
    PYTHONPATH=src python $S zoo [FORMS]
    PYTHONPATH=src python $S pythia-split $P [FORMS]      # FORMS: comma-separated, default all
    PYTHONPATH=src python $S pythia-split-deduped $P [FORMS]
    PYTHONPATH=src python $S pythia-rolling $P [FORMS]

zoo: rolling-origin backtest of every form (default intervals) and the naive baselines on the
bundled zoo's 13 supervised runs. pythia-split: fit on the Pythia models below 1B parameters
(70M, 160M, 410M; checkpoints from step 13,000), forecast 1B, 1.4B and 2.8B at every checkpoint.
pythia-rolling: rolling origin in compute within the models below 1B.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import pandas as pd

from lmforecast.backtest import (
    PersistenceBaseline,
    PowerLawBaseline,
    SupervisedAdapter,
    rolling_origin,
)
from lmforecast.backtest.datasets import pythia_lambada_runs

FORMS = ("chinchilla", "chinchilla-gamma", "overtrain", "average")


def _adapters(forms):
    return [SupervisedAdapter(f) for f in forms] + [PersistenceBaseline(), PowerLawBaseline()]


def zoo(forms=FORMS):
    from lmforecast.zoo import load_zoo

    runs = load_zoo().runs
    runs = runs[runs["kind"] == "supervised"][["N", "D", "C", "loss"]]
    t = time.perf_counter()
    bt = rolling_origin(runs, _adapters(forms), n_cutoffs=3, min_train=8)
    print(bt.summary())
    print(f"({time.perf_counter() - t:.0f} s)")


def pythia_split(folder, forms=FORMS, deduped=False):
    df = pythia_lambada_runs(folder, deduped=deduped)
    small = df[df["N"] < 1e9]
    big = df[df["N"] >= 1e9]
    rows = []
    for ad in _adapters(forms):
        t = time.perf_counter()
        fitted = ad.fit(small)
        pred = fitted.predict(big)
        iv = fitted.interval(big, 0.9)
        dt = time.perf_counter() - t
        y = big["loss"].to_numpy()
        rel = pred / y - 1
        for sel_name, sel in (
            ("final (step 143000)", big["step"].to_numpy() == 143000),
            ("all checkpoints", np.ones(len(big), bool)),
        ):
            row = {
                "method": ad.name,
                "forecasts": sel_name,
                "n": int(sel.sum()),
                "rel err range %": f"{100 * rel[sel].min():+.1f} .. {100 * rel[sel].max():+.1f}",
                "median |rel err| %": 100 * float(np.median(np.abs(rel[sel]))),
                "fit s": dt,
            }
            if iv is not None:
                lo, hi = iv
                cov = (lo <= y) & (y <= hi)
                row["covered"] = f"{int(cov[sel].sum())}/{int(sel.sum())}"
                row["median rel half-width %"] = 100 * float(np.median(((hi - lo) / 2 / pred)[sel]))
            rows.append(row)
        print(rows[-2], flush=True)
        print(rows[-1], flush=True)
    print(pd.DataFrame(rows).to_string(index=False))


def pythia_rolling(folder, forms=FORMS):
    df = pythia_lambada_runs(folder)
    small = df[df["N"] < 1e9][["N", "D", "C", "loss"]]
    bt = rolling_origin(small, _adapters(forms), n_cutoffs=3, min_train=21)
    print(bt.summary())


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    what = sys.argv[1]
    forms = tuple(sys.argv[3].split(",")) if len(sys.argv) > 3 else FORMS
    if what == "zoo":
        zoo(tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else FORMS)
    elif what == "pythia-split":
        pythia_split(sys.argv[2], forms)
    elif what == "pythia-split-deduped":
        pythia_split(sys.argv[2], forms, deduped=True)
    elif what == "pythia-rolling":
        pythia_rolling(sys.argv[2], forms)
