"""Out-of-sample check: are the default's 90% intervals honest on data shapes the prior never saw?

The interval prior (`supervised/trust_prior.json`) was chosen on the splits of
`benchmarks/trust_suites.py`, which fit every run below a cut. A user's suite is often thinner:
a ladder with one run per size (one tokens-per-parameter ratio, or the final checkpoint of each
size), or a few runs per size. This script builds such suites from the same real data and
nothing in it is tuned: per ladder it fits the default (`SupervisedScalingLaw()`, intervals on)
to the smaller sizes and forecasts the largest one and the two largest, then reports coverage
of the 90% interval, the median half-width and the median absolute error, per shape and suite.

Shapes (per model size):
- `ratio-20`, `ratio-100`: the run nearest 20 / 100 tokens per parameter (within 0.15 decade);
- `final`: the run with the most tokens (the end of each size's training);
- `three-per-size`: three runs spread evenly in log D.
Ladders need at least 6 sizes. Results: docs/trust_validation.md ("Thin suites").

    python benchmarks/trust_shapes.py [--shared ../shared/data] [--out shapes.csv]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lmforecast.fitting.threads import single_blas_thread  # noqa: E402
from lmforecast.supervised.calibration import rescale  # noqa: E402
from trust_constant_ratio import ladder  # noqa: E402
from trust_suites import ROOT, load_all  # noqa: E402

MIN_SIZES = 6


def final(df: pd.DataFrame) -> pd.DataFrame:
    return df.loc[df.groupby("N")["D"].idxmax()].sort_values("N").reset_index(drop=True)


def three_per_size(df: pd.DataFrame) -> pd.DataFrame:
    def pick(g: pd.DataFrame) -> pd.DataFrame:
        g = g.sort_values("D")
        idx = np.unique(np.round(np.linspace(0, len(g) - 1, 3)).astype(int))
        return g.iloc[idx]

    parts = [pick(g) for _, g in df.groupby("N")]
    return pd.concat(parts).sort_values(["N", "D"]).reset_index(drop=True)


SHAPES = {
    "ratio-20": lambda df: ladder(df, 1.3),
    "ratio-100": lambda df: ladder(df, 2.0),
    "final": final,
    "three-per-size": three_per_size,
}


def shape_suites(shared: Path, suites=None) -> dict:
    """{suite: {"sub/shape": ladder}} for every ladder of at least MIN_SIZES sizes."""
    out: dict = {}
    for suite, subs in load_all(shared).items():
        if suites is not None and suite not in suites:
            continue
        for sub, df in subs.items():
            for shape, make in SHAPES.items():
                lad = make(df)
                if lad["N"].nunique() >= MIN_SIZES:
                    out.setdefault(suite, {})[f"{sub}/{shape}"] = lad
    return out


def run(shared: Path, suites=None) -> pd.DataFrame:
    """The default's forecasts (with its interval terms) of the largest one and two sizes."""
    from lmforecast.backtest.suites import suite_forecasts
    from lmforecast.supervised.adapter import SupervisedAdapter

    def prog(suite, sub, split, name):
        print(f"{suite}/{sub} {split}", file=sys.stderr)

    with warnings.catch_warnings(), single_blas_thread():
        warnings.simplefilter("ignore")
        f = suite_forecasts(shape_suites(shared, suites), [SupervisedAdapter(name="default")],
                            splits=("size-1", "size-2"), min_train=5, progress=prog)  # fmt: skip
    f["shape"] = f["sub"].str.rsplit("/", n=1).str[-1]
    return f


def summarise(f: pd.DataFrame, k: dict | None = None) -> pd.DataFrame:
    """Per shape and suite (each (sub-suite, split) cell weighs equally within a suite), with the
    intervals as fitted or rescaled to the scales `k` ({suite: {"default", "stack"}})."""
    if k is not None:
        f = pd.concat([rescale(g, k[s]) for s, g in f.groupby("suite")], ignore_index=True)
    f = f.assign(
        covered=(f["lower"] <= f["truth"]) & (f["truth"] <= f["upper"]),
        half_width_pct=100 * (f["upper"] - f["lower"]) / (2 * f["forecast"]),
        abs_pct_error=100 * np.abs(f["forecast"] / f["truth"] - 1),
        stacked=np.isfinite(f["s_inner"]),
    )
    cell = ["shape", "suite", "sub", "split"]
    c = f.groupby(cell).agg(
        n=("covered", "size"),
        coverage=("covered", "mean"),
        half_width=("half_width_pct", "median"),
        error=("abs_pct_error", "median"),
        stacked=("stacked", "mean"),
    )
    s = c.groupby(["shape", "suite"]).agg(
        forecasts=("n", "sum"),
        coverage=("coverage", "mean"),
        median_half_width_pct=("half_width", "median"),
        median_abs_pct_error=("error", "median"),
        stacked_share=("stacked", "mean"),
    )
    s["ratio"] = s["median_half_width_pct"] / s["median_abs_pct_error"]
    return s.round(3).reset_index()


def markdown(t: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(t.columns) + " |", "|" + "---|" * len(t.columns)]
    lines += ["| " + " | ".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in row) + " |"
              for row in t.itertuples(index=False)]  # fmt: skip
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=None, help="store every forecast (CSV)")
    ap.add_argument("--cache", type=Path, default=None, help="summarise stored forecasts")
    args = ap.parse_args(argv)
    f = pd.read_csv(args.cache) if args.cache else run(args.shared)
    if args.out:
        f.to_csv(args.out, index=False)
    s = summarise(f)
    print(markdown(s))
    per_suite = s.groupby("suite")["coverage"].mean()
    print(f"\npooled coverage (suites equal): {per_suite.mean():.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
