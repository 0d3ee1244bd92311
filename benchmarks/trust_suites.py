"""Real-suite trust benchmark: coverage, width and error of loss forecasts on five real suites.

Suites: Pythia (LAMBADA loss proxy, standard and deduped, bundled), datablations (single-epoch
C4 runs, seed replicates averaged), Gemstones (FineWeb-Edu loss, every 3rd constant-LR
checkpoint), Porian (15 isoFLOP configurations, one at a time) and the bundled zoo. Splits
(`lmforecast.backtest.suites`): largest size out, two largest sizes out, top 20% compute out;
only rows below the cut are fitted.

Methods: the supervised default (intervals calibrated by the bundled prior), the previous default
(`--extra`: forecasts of another run, e.g. the previous
default's, scored beside), and simple laws beside it: the 1-D compute law
E + A C^-a, `chinchilla`, `chinchilla-gamma` and `overtrain` point fits (squared log error, as
Gadre et al. fit it).

Leave-one-suite-out: the default's interval scale k (per unit of extrapolation distance) is
re-chosen on the four other suites for each held-out suite (`supervised.calibration.
calibrate_prior`) and scored on it; `--write-prior` stores k chosen on all five suites as the
package prior (supervised/trust_prior.json) and `--write-docs` regenerates the table in
docs/trust_validation.md and the bundled summary the report shows.

    python benchmarks/trust_suites.py [--shared ../shared/data] [--suites a,b] [--write-prior]
        [--write-docs] [--cache FORECASTS.csv] [--extra OLD_FORECASTS.csv]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

from lmforecast.backtest.datasets import pythia_lambada_runs
from lmforecast.backtest.suites import score_forecasts, suite_forecasts
from lmforecast.data.suites import datablations_runs, gemstones_runs, porian_runs
from lmforecast.fitting.threads import single_blas_thread
from lmforecast.zoo import load_zoo

ROOT = Path(__file__).resolve().parents[1]


def load_all(shared: Path) -> dict:
    z = load_zoo().runs
    z = z[z["kind"] == "supervised"][["model", "N", "D", "C", "loss"]].reset_index(drop=True)
    s = shared / "suites"
    return {
        "pythia": {
            "standard": pythia_lambada_runs(),
            "deduped": pythia_lambada_runs(deduped=True),
        },
        "datablations": datablations_runs(s / "datablations"),
        "gemstones": gemstones_runs(s / "gemstones"),
        "porian": porian_runs(s / "porian"),
        "zoo": {"supervised": z},
    }


def cached_forecasts(shared: Path, suites: str, make_methods, cache: Path | None) -> pd.DataFrame:
    """The forecasts table of `make_methods()` on the comma-separated `suites` (read from
    `cache` when it exists, else computed on one BLAS thread and stored there)."""
    if cache and cache.exists():
        return pd.read_csv(cache)
    want = suites.split(",")
    data = {k: v for k, v in load_all(shared).items() if k in want}
    t0 = time.perf_counter()

    def prog(suite, sub, split, name):
        print(f"  {time.perf_counter() - t0:7.1f}s {suite}/{sub[:40]} {split} {name}",
              file=sys.stderr)  # fmt: skip

    with single_blas_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = suite_forecasts(data, make_methods(), progress=prog)
    if cache:
        f.to_csv(cache, index=False)
    return f


def methods(calibration: str = "prior"):
    from lmforecast.backtest import PowerLawBaseline
    from lmforecast.supervised.adapter import PointAdapter, SupervisedAdapter

    out = [
        SupervisedAdapter(name="default", calibration=calibration),
        PowerLawBaseline(),
        PointAdapter("chinchilla"),
        PointAdapter("chinchilla-gamma"),
        PointAdapter("overtrain", loss="squared", name="overtrain-ls"),
    ]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--suites", default="pythia,datablations,gemstones,porian,zoo")
    ap.add_argument(
        "--extra",
        type=Path,
        default=None,
        help="forecasts of another method (same columns) to score beside",
    )
    ap.add_argument("--cache", type=Path, default=None, help="reuse/store forecasts (CSV)")
    ap.add_argument(
        "--only-default",
        action="store_true",
        help="run only the default (merge the simple laws from --extra)",
    )
    ap.add_argument("--calibration", default="prior", choices=["prior", "prior+backtest"])
    ap.add_argument("--write-prior", action="store_true")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    from lmforecast.supervised.calibration import loso_table, write_prior

    def make():
        ms = methods(args.calibration)
        return ms[:1] if args.only_default else ms

    f = cached_forecasts(args.shared, args.suites, make, args.cache)
    if args.extra:
        f = pd.concat([f, pd.read_csv(args.extra)], ignore_index=True)
    raw = score_forecasts(f, by=("suite", "method"))
    print("As fitted (default uses the bundled prior, which saw every suite):")
    print(raw.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    loso, pooled, k_all = loso_table(f)
    print("\nLeave-one-suite-out (default's k chosen on the other suites):")
    print(loso.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(pooled)
    if args.write_prior:
        write_prior(k_all, f)
    if args.write_docs:
        from lmforecast.supervised.trust_table import load_summary, width_floor, write_docs

        # rows of methods not re-run here (the pre-issue-21 `old-default`, whose code is gone
        # from the package) are carried over from the committed table, unchanged
        old = pd.DataFrame(load_summary()["table"])
        kept = old[~old["method"].isin(set(loso["method"]))]
        table = pd.concat([loso, kept], ignore_index=True) if len(kept) else loso
        write_docs(table, pooled, raw, ROOT, floor=width_floor(f))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
