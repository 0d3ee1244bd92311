"""Trial (issue 21, not adopted): which per-fit signal should scale the stack's interval?

The default interval (docs/trust.md, tables in docs/trust_validation.md) is

    log L_hat +- z ( sqrt(s_noise^2 + s_boot^2) + k S max(1, r / 2) )

with S = s_inner, the RMS error of the stacked forecast on the fit's own inner backtest. The
width criterion of issue 21 (median half-width <= 2 x median |error|) needs S to track how far
off each suite's forecasts will be. This script refits the default on every split of the real
suites (`benchmarks/trust_suites.py`), records other signals a fit knows before it forecasts,
and scores each as S, with and without the base spread, strictly leave-one-suite-out: k is the
smallest scale covering 90% of the other four suites' forecasts (each suite weighted equally).

Signals (all from the training runs only):
- ``s_inner``: RMS of the stacked inner errors (the default);
- ``inner_mae`` / ``inner_median``: their mean / median |error| (less driven by one outlier);
- ``spread``: RMS over the inner held-out runs of the three candidates' standard deviation
  (how much the laws disagree where they were tested);
- ``run_mad``: median |residual| of the stacked fit on its own runs;
- ``size_rms``: RMS over model sizes of each size's mean residual (a new size's own offset);
- combinations: hypot(s_inner, spread), sqrt(s_inner run_mad).

``oracle`` rows give, per suite, the ratio of the narrowest interval of ONE width per suite that
covers 90% of it (chosen on the suite itself): what no rule without per-forecast information can
beat. Results: docs/trust_validation.md ("Tried, not adopted: other width signals").

    python benchmarks/trust_width_signals.py [--cache signals.csv] [--write-docs]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lmforecast.supervised import stack as st  # noqa: E402
from lmforecast.supervised.adapter import SupervisedAdapter, _Fitted  # noqa: E402
from lmforecast.supervised.calibration import suite_weights  # noqa: E402
from lmforecast.supervised.stack import R_MEASURED  # noqa: E402
from lmforecast.uncertainty.normal import z_of  # noqa: E402
from trust_suites import ROOT, cached_forecasts  # noqa: E402

BEGIN, END = "<!-- width-signals:begin -->", "<!-- width-signals:end -->"


class _SignalFitted(_Fitted):
    def __init__(self, est, cols, train):
        super().__init__(est, cols)
        self.train = train

    def terms(self, test) -> dict:
        out = super().terms(test)
        n = len(test)
        out.update({k: np.full(n, v) for k, v in self.signals().items()})
        return out

    def signals(self) -> dict:
        nan = dict.fromkeys(("inner_mae", "inner_median", "spread"), np.nan)
        est, tr = self.est, self.train
        N, D = tr["N"].to_numpy(float), tr["D"].to_numpy(float)
        res = np.log(tr["loss"].to_numpy(float)) - np.log(est.predict(N, D))
        per_size = pd.Series(res).groupby(N).mean().to_numpy()
        out = {"run_mad": float(np.median(np.abs(res))),
               "size_rms": float(np.sqrt(np.mean(per_size**2)))}  # fmt: skip
        stk = est.result_.meta.get("stack")
        if not stk:
            return {**out, **nan}
        # the rows the stack saw: replicates averaged, as the adapter's fit does
        data = tr[["N", "D", "loss"]].groupby(["N", "D"], as_index=False)["loss"].mean()
        e, _ = st.inner_backtest(est, est.result_.meta["form"], data)
        s = st.stacked_errors(e, stk["weights"])
        if not np.isclose(np.sqrt(np.mean(s**2)), stk["s_inner"], rtol=1e-6):
            raise RuntimeError("the recomputed inner backtest differs from the fit's")
        cand = np.stack([np.nan_to_num(e[c]) for c in st.CANDIDATES])
        return {**out, "inner_mae": float(np.mean(np.abs(s))),
                "inner_median": float(np.median(np.abs(s))),
                "spread": float(np.sqrt(np.mean(np.var(cand, axis=0))))}  # fmt: skip


class SignalAdapter(SupervisedAdapter):
    """The default fit; its fitted object also reports the trial signals."""

    def fit(self, train):
        fitted = super().fit(train)
        return _SignalFitted(fitted.est, fitted.cols, train)


SIGNALS = {
    "s_inner (default)": lambda f: f["s_inner"],
    "inner_mae": lambda f: f["inner_mae"],
    "inner_median": lambda f: f["inner_median"],
    "spread": lambda f: f["spread"],
    "run_mad": lambda f: f["run_mad"],
    "size_rms": lambda f: f["size_rms"],
    "hypot(s_inner, spread)": lambda f: np.hypot(f["s_inner"], f["spread"]),
    "sqrt(s_inner run_mad)": lambda f: np.sqrt(f["s_inner"] * f["run_mad"]),
}


def _terms(f: pd.DataFrame, signal, base: bool) -> tuple[np.ndarray | float, np.ndarray]:
    """The base and the signal term of `half_width`, which do not depend on k."""
    r = f["r"].to_numpy(float)
    s = np.asarray(signal(f), float)
    unit = np.where(np.isfinite(f["s_inner"]), s * np.maximum(1.0, r / R_MEASURED), r)
    b = np.hypot(f["noise"], f["s_boot"]).to_numpy(float) if base else 0.0
    return b, unit


def half_width(f: pd.DataFrame, signal, k: float, base: bool) -> np.ndarray:
    """Log half-width: z (base + k S max(1, r/2)) on stacked rows, z (base + k r) elsewhere
    (fits with too few sizes for a stack keep the single-form term)."""
    b, unit = _terms(f, signal, base)
    return z_of(0.9) * (b + k * unit)


def _coverage(f, h) -> float:
    w = f["w"].to_numpy(float)
    return float(np.sum(w * (np.abs(f["e"]) <= h)) / w.sum())


def choose_k(f, signal, base: bool, level: float = 0.9) -> float:
    """The smallest k covering `level` of f (equal suite weights), by bisection; the terms
    that do not depend on k are computed once."""
    b, unit = _terms(f, signal, base)
    z, w, e = z_of(0.9), f["w"].to_numpy(float), np.abs(f["e"].to_numpy(float))
    lo, hi = 0.0, 100.0
    for _ in range(60):
        mid = (lo + hi) / 2
        covered = float(np.sum(w * (e <= z * (b + mid * unit))) / w.sum())
        lo, hi = (lo, mid) if covered >= level else (mid, hi)
    return hi


def loso(f: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for name, sig in SIGNALS.items():
        for base in (True, False):
            held_h = pd.Series(np.nan, index=f.index)
            for s in f["suite"].unique():
                held = f[f["suite"] == s]
                k = choose_k(f[f["suite"] != s], sig, base)
                h = half_width(held, sig, k, base)
                held_h[held.index] = h
                rows.append({"signal": name, "base": base, "suite": s, "k": k,
                             "coverage": _coverage(held, h),
                             "ratio": np.median(h) / np.median(np.abs(held["e"]))})  # fmt: skip
            rows.append({"signal": name, "base": base, "suite": "pooled",
                         "coverage": _coverage(f, held_h.to_numpy())})  # fmt: skip
    for s in f["suite"].unique():
        held = f[f["suite"] == s]
        a = np.abs(held["e"].to_numpy())
        w = held["w"].to_numpy()
        o = np.argsort(a)
        q = a[o][np.searchsorted(np.cumsum(w[o]) / w.sum(), 0.9)]
        rows.append({"signal": "oracle: one width per suite", "base": False, "suite": s,
                     "coverage": 0.9, "ratio": q / np.median(a)})  # fmt: skip
    return pd.DataFrame(rows)


def markdown(t: pd.DataFrame) -> str:
    suites = [s for s in t["suite"].unique() if s != "pooled"]
    head = "| signal S | base | pooled | " + " | ".join(suites) + " |"
    lines = [head, "|" + "---|" * (3 + len(suites))]
    for (name, base), g in t.groupby(["signal", "base"], sort=False):
        g = g.set_index("suite")
        pooled = f"{g.loc['pooled', 'coverage']:.3f}" if "pooled" in g.index else "-"
        cells = [f"{g.loc[s, 'coverage']:.2f} / {g.loc[s, 'ratio']:.1f}x" for s in suites]
        yes = "yes" if base else "no"
        lines.append(f"| {name} | {yes} | {pooled} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--suites", default="pythia,datablations,gemstones,porian,zoo")
    ap.add_argument("--cache", type=Path, default=None, help="reuse/store forecasts (CSV)")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    f = cached_forecasts(args.shared, args.suites, lambda: [SignalAdapter(name="default")],
                         args.cache)  # fmt: skip
    f = f.assign(e=np.log(f["truth"] / f["forecast"]), w=suite_weights(f)).reset_index(drop=True)
    t = loso(f)
    md = markdown(t)
    print("coverage of 90% (leave-one-suite-out) / median half-width over median |error|")
    print(md)
    if args.write_docs:
        doc = ROOT / "docs" / "trust_validation.md"
        text = doc.read_text()
        a, b = text.index(BEGIN), text.index(END) + len(END)
        doc.write_text(text[:a] + f"{BEGIN}\n{md}\n{END}" + text[b:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
