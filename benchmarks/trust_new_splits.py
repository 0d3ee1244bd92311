"""Held-out checks of the default 90% loss-forecast intervals on splits that neither
trust_suites.py nor trust_shapes.py runs (built in the ninth session by a reviewer who took no
part in the design; docs/trust_validation.md reports them). Nothing in the
package was chosen on these numbers: the one-token-count interval rule they led to has no knob.

Public API only: SupervisedScalingLaw() with default settings, .fit(train[N, D, loss]),
.predict(test[N, D]), .predict_interval(test[N, D]) (level 0.9, kind "forecast").
Beside it, a 1-D compute law L = E + A*C^-a (C = 6ND) fitted with scipy to the same rows.

Checks (none is a split of benchmarks/trust_suites.py or trust_shapes.py):
  porian-next2x     per config: fit budgets <= b, forecast the runs at 2b (b = 2e17, 8e17, 3.2e18)
  porian-ahead8x    the same fits, forecast the runs at 8b (1.6e18, 6.4e18, 2.56e19)
  porian-interior   per config: fit every budget but 1.6e18, forecast 1.6e18 (interpolation)
  datab-budget      single-epoch C4: fit C <= 1.3e19 -> forecast (1.3e19, 1.3e20];
                    fit C <= 1.3e20 -> forecast (1.3e20, 1.0e21]
  datab-longerD     single-epoch C4: the largest-D row of every N with >= 2 rows held out
  gem-oneD-17x      Gemstones FineWeb-Edu, every 3rd ckpt: fit D <= final/8 (only D = 20B: one
                    token count), forecast each model's final ckpt (350B)
  gem-early2x       every 3rd ckpt, fit D <= final/2, forecast the final ckpt
  gem-early8x-all   EVERY ckpt (10, 20, 30, 40B), fit D <= final/8, forecast the final ckpt
  gem-early4x-all   every ckpt, fit D <= final/4, forecast the final ckpt
  gem-wide-out      fit 18 models, forecast the widest of the 100M/500M/1B/2B groups
  gem-deep-out      fit 18 models, forecast the deepest model of each group
  gem-narrow2wide   fit width <= 1280, forecast width >= 1536 (all ckpts kept)
  gem-dclm-*        the DCLM validation loss: size-1, size-2, top-20%-compute splits
  pythia-early      standard & deduped: fit steps <= 33k, forecast step 143k (final)
  pythia-midsize    standard & deduped: hold out 410m (resp. 1b), fit the other 5 sizes
  pythia-size3      standard & deduped: fit 70m/160m/410m, forecast 1b/1.4b/2.8b

    python benchmarks/trust_new_splits.py [--shared ../shared/data] [--jobs 2]
        [--only porian,datab,gem,pythia] [--out FORECASTS.csv] [--rescore] [--max-fits N]
writes the forecasts to --out and prints the per-check table (about 10 min on 2 cores).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse
import sys
import time
import warnings
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

ROOT = Path(__file__).resolve().parents[1]
SUITES = ROOT.parent / "shared" / "data" / "suites"  # --shared sets it


# ----------------------------------------------------------------------------- compute law
def fit_compute_law(C, L):
    """L = E + A (C/C0)^-a by least squares on log L, multi-start; returns predict(C)."""
    C = np.asarray(C, float)
    L = np.asarray(L, float)
    if not (np.all(np.isfinite(C)) and np.all(C > 0)):
        raise ValueError("compute must be finite and positive")
    C0 = np.exp(np.mean(np.log(C)))
    x = C / C0
    lmin = L.min()

    def res(p):
        E, logA, a = p
        return np.log(E + np.exp(logA) * x ** (-a)) - np.log(L)

    best = None
    for fE in (0.0, 0.5, 0.8, 0.9, 0.97):
        for a0 in (0.03, 0.1, 0.3, 0.6):
            E0 = fE * lmin
            A0 = max(np.median((L - E0) * x**a0), 1e-8)
            p0 = [E0, float(np.clip(np.log(A0), -59, 59)), a0]
            try:
                r = least_squares(res, p0, bounds=([0, -60, 1e-4], [0.999 * lmin, 60, 3.0]))
            except Exception as e:  # noqa: F841
                print("compute law start failed:", e, file=sys.stderr)
                continue
            if best is None or r.cost < best.cost:
                best = r
    E, logA, a = best.x
    return lambda Cn: E + np.exp(logA) * (np.asarray(Cn, float) / C0) ** (-a)


# ----------------------------------------------------------------------------- one fit
def one_fit(task):
    check, label, train, test = task
    warnings.simplefilter("ignore")
    from lmforecast.backtest.suites import distance
    from lmforecast.supervised import SupervisedScalingLaw

    t0 = time.perf_counter()
    # float: Gemstones' N and D are int64 and 6*N*D overflows int64
    tr = train[["N", "D", "loss"]].astype(float).reset_index(drop=True)
    te = test[["N", "D"]].astype(float).reset_index(drop=True)
    out = pd.DataFrame({"check": check, "fit": label, "N": te["N"], "D": te["D"],
                        "truth": test["loss"].to_numpy(float)})  # fmt: skip
    for c in ("model", "step", "budget", "size", "_check"):
        if c in test.columns:
            out[c] = test[c].to_numpy()
    out["n_train"] = len(tr)
    out["sizes_train"] = tr["N"].nunique()
    try:
        m = SupervisedScalingLaw().fit(tr)
        f = np.asarray(m.predict(te), float)
        lo, hi = m.predict_interval(te)
        meta = m.result_.meta
        st = meta.get("stack")
        out["form"] = meta.get("form")
        out["stacked"] = isinstance(st, dict)
        out["s_inner"] = st.get("s_inner") if isinstance(st, dict) else np.nan
        out["error"] = ""
    except Exception as e:  # a refused/failed fit is a failed forecast
        f = lo = hi = np.full(len(te), np.nan)
        out["form"] = ""
        out["stacked"] = False
        out["s_inner"] = np.nan
        out["error"] = f"{type(e).__name__}: {e}"[:200]
    out["forecast"], out["lower"], out["upper"] = f, np.asarray(lo, float), np.asarray(hi, float)
    law = fit_compute_law(6 * tr["N"] * tr["D"], tr["loss"])
    out["claw"] = law(6 * te["N"] * te["D"])
    out["r"] = distance(tr, te)
    out["C_ratio"] = (te["N"] * te["D"]).to_numpy() / (tr["N"] * tr["D"]).max()
    out["secs"] = time.perf_counter() - t0
    return out


# ----------------------------------------------------------------------------- checks
def porian_tasks():
    from lmforecast.data.suites import porian_runs

    tasks = []
    for cfg, df in porian_runs(SUITES / "porian").items():
        short = cfg.split(":", 1)[1]
        budgets = np.sort(df["budget"].unique())

        def at(b, df=df):
            return df[np.isclose(df["budget"], b, rtol=1e-6)]

        for b in (2e17, 8e17, 3.2e18):
            tr = df[df["budget"] <= b * (1 + 1e-9)]
            te2, te8 = at(2 * b), at(8 * b)
            parts = []
            if len(te2):
                parts.append(te2.assign(_check="porian-next2x"))
            if len(te8):
                parts.append(te8.assign(_check="porian-ahead8x"))
            if parts:
                te = pd.concat(parts)
                tasks.append(("porian-budget", f"{short}|fit<= {b:.2g}", tr, te))
        if np.any(np.isclose(budgets, 1.6e18)):
            tr = df[~np.isclose(df["budget"], 1.6e18)]
            tasks.append(("porian-interior", f"{short}|all but 1.6e18", tr, at(1.6e18)))
    return tasks


def datab_tasks():
    from lmforecast.data.suites import datablations_runs

    df = datablations_runs(SUITES / "datablations")["c4"]
    C = df["C"]
    tasks = [
        ("datab-budget", "fit C<=1.3e19 -> (1.3e19,1.3e20]", df[C <= 1.3e19],
         df[(C > 1.3e19) & (C <= 1.3e20)]),
        ("datab-budget", "fit C<=1.3e20 -> (1.3e20,1e21]", df[C <= 1.3e20],
         df[(C > 1.3e20) & (C <= 1e21)]),
    ]  # fmt: skip
    g = df.groupby("N")["D"]
    multi = df["N"].map(g.size()) >= 2
    held = multi & (df["D"] == df["N"].map(g.max()))
    tasks.append(("datab-longerD", "max-D row of each N with >=2 rows", df[~held], df[held]))
    return tasks


def gem_tasks():
    from lmforecast.backtest.suites import suite_splits
    from lmforecast.data.suites import gemstones_runs

    df = gemstones_runs(SUITES / "gemstones")["fineweb-edu"]
    width = df["model"].str.extract(r"-(\d+)x(\d+)").astype(int)
    df = df.assign(width=width[0].to_numpy(), depth=width[1].to_numpy())
    Dfin = df["D"].max()
    final = df[df["D"] == df.groupby("model")["D"].transform("max")]
    # every 3rd ckpt below final/8 is the single D = 20B: a one-token-count ladder
    tasks = [
        ("gem-oneD-17x", "every=3 ckpts, fit D<=final/8 (only D=20B) -> final ckpt (350B)",
         df[df["D"] <= Dfin / 8], final),
        ("gem-early2x", "every=3 ckpts, fit D<=final/2 -> final ckpt", df[df["D"] <= Dfin / 2],
         final),
    ]  # fmt: skip
    a1 = gemstones_runs(SUITES / "gemstones", every=1)["fineweb-edu"]
    for frac, name in ((8, "gem-early8x-all"), (4, "gem-early4x-all")):
        tasks.append((name, f"every ckpt, fit D<=final/{frac} -> final ckpt",
                      a1[a1["D"] <= Dfin / frac], final))  # fmt: skip
    wide = ["Gemstone-768x3", "Gemstone-1792x7", "Gemstone-2560x8", "Gemstone-3072x12"]
    deep = ["Gemstone-256x80", "Gemstone-768x45", "Gemstone-1280x36", "Gemstone-1536x50"]
    for name, hold in (("gem-wide-out", wide), ("gem-deep-out", deep)):
        te = df["model"].isin(hold)
        tasks.append((name, "hold " + ",".join(h.split("-")[1] for h in hold), df[~te], df[te]))
    tasks.append(("gem-narrow2wide", "fit width<=1280 -> width>=1536",
                  df[df["width"] <= 1280], df[df["width"] >= 1536]))  # fmt: skip
    dc = gemstones_runs(SUITES / "gemstones", loss="loss_dclm")["dclm"]
    for split, tr, te in suite_splits(dc):
        tasks.append((f"gem-dclm-{split}", f"DCLM loss, {split}", dc[tr], dc[te]))
    return tasks


def pythia_tasks():
    from lmforecast.backtest.datasets import pythia_lambada_runs

    tasks = []
    for ded in (False, True):
        df = pythia_lambada_runs(deduped=ded)
        tag = "deduped" if ded else "standard"
        last = df["step"].max()
        tasks.append(("pythia-early", f"{tag}: fit step<=33k -> step {last}",
                      df[df["step"] <= 33000], df[df["step"] == last]))  # fmt: skip
        for size in ("410m", "1b"):
            te = df["size"] == size
            tasks.append(("pythia-midsize", f"{tag}: hold {size}", df[~te], df[te]))
        small = df["size"].isin(["70m", "160m", "410m"])
        tasks.append(
            ("pythia-size3", f"{tag}: fit 70m-410m -> 1b,1.4b,2.8b", df[small], df[~small])
        )
    return tasks


GROUPS = {"porian": porian_tasks, "datab": datab_tasks, "gem": gem_tasks, "pythia": pythia_tasks}


# ----------------------------------------------------------------------------- scoring
def score(f: pd.DataFrame) -> pd.DataFrame:
    f = f.copy()
    if "_check" in f.columns:
        f["check"] = f["_check"].fillna(f["check"])
    fin = np.isfinite(f["lower"]) & np.isfinite(f["upper"]) & np.isfinite(f["forecast"])
    f["covered"] = fin & (f["lower"] <= f["truth"]) & (f["truth"] <= f["upper"])
    f["hw_pct"] = 100 * (f["upper"] - f["lower"]) / (2 * f["forecast"])
    f["err_pct"] = 100 * (f["forecast"] / f["truth"] - 1)
    f["claw_err_pct"] = 100 * (f["claw"] / f["truth"] - 1)
    f["below"] = f["truth"] < f["lower"]
    f["above"] = f["truth"] > f["upper"]
    return f


def summarise(f: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for check, g in f.groupby("check", sort=False):
        e, ce = g["err_pct"].abs(), g["claw_err_pct"].abs()
        per_fit = g.groupby("fit")["covered"].mean()
        rows.append({
            "check": check, "fits": g["fit"].nunique(), "n": len(g),
            "failed": int((~np.isfinite(g["forecast"])).sum()),
            "coverage": g["covered"].mean(), "cov_fit_avg": per_fit.mean(),
            "truth<lo": int(g["below"].sum()), "truth>hi": int(g["above"].sum()),
            "med_hw%": g["hw_pct"].median(), "med_err%": e.median(), "mean_err%": e.mean(),
            "p90_err%": e.quantile(0.9), "hw/med_err": g["hw_pct"].median() / e.median(),
            "claw_med%": ce.median(), "claw_mean%": ce.mean(),
            "stacked": g["stacked"].mean(), "med_r": g["r"].median(),
        })  # fmt: skip
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    global SUITES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="porian,datab,gem,pythia")
    ap.add_argument(
        "--out", type=Path, default=None, help="store (or, with --rescore, read) the forecasts"
    )
    ap.add_argument("--rescore", action="store_true", help="summarise an existing --out")
    ap.add_argument(
        "--max-fits", type=int, default=None, help="fit only the first N tasks (a quick check)"
    )
    a = ap.parse_args(argv)
    SUITES = a.shared / "suites"
    if not a.rescore:
        tasks = [t for g in a.only.split(",") for t in GROUPS[g]()][: a.max_fits]
        print(f"{len(tasks)} fits", file=sys.stderr)
        t0 = time.perf_counter()
        res = []
        with Pool(a.jobs) as pool:
            for i, r in enumerate(pool.imap_unordered(one_fit, tasks), 1):
                res.append(r)
                print(f"{time.perf_counter() - t0:7.1f}s {i}/{len(tasks)} {r['check'].iloc[0]} "
                      f"{r['fit'].iloc[0]}", file=sys.stderr)  # fmt: skip
        f = pd.concat(res, ignore_index=True)
        # the porian-budget task carries its two checks in _check
        if a.out and a.out.exists() and a.only != "porian,datab,gem,pythia":
            old = pd.read_csv(a.out)
            groups = tuple(a.only.split(","))
            old = old[~old["check"].str.startswith(groups)]
            f = pd.concat([old, f], ignore_index=True)
        if a.out:
            f.to_csv(a.out, index=False)
    elif a.out is None:
        ap.error("--rescore needs --out FORECASTS.csv")
    else:
        f = pd.read_csv(a.out)
    f = score(f)
    s = summarise(f)
    pd.set_option("display.width", 250)
    print(s.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    # pooled: each check weighs equally (coverage of the check = per-forecast mean)
    fam = f["check"].str.split("-").str[0]
    fs = f.assign(fam=fam).groupby("fam")["covered"].agg(["size", "mean"])
    print("\nper family (every forecast of the family's checks):")
    print(fs.round(3).to_string())
    print(f"families weighted equally {fs['mean'].mean():.3f}")
    print(
        f"\npooled per-forecast coverage {f['covered'].mean():.3f} over {len(f)} forecasts;"
        f" checks weighted equally {s['coverage'].mean():.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
