"""The real-suite trust table: written by `benchmarks/trust_suites.py --write-docs` into
docs/trust_validation.md (between markers) and into the bundled `trust_summary.json`, which the
report's trust section shows without the suites themselves (numbers derived from them, with
provenance).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

SUMMARY_FILE = Path(__file__).with_name("trust_summary.json")
BEGIN, END = "<!-- trust-table:begin -->", "<!-- trust-table:end -->"
FLOOR_BEGIN, FLOOR_END = "<!-- width-floor:begin -->", "<!-- width-floor:end -->"
COLS = {
    "suite": "suite",
    "method": "method",
    "n": "forecasts",
    "nonfinite": "non-finite",
    "coverage": "coverage of 90%",
    "median_halfwidth_pct": "median half-width %",
    "mean_abs_pct": "mean abs % error",
    "median_abs_pct": "median abs % error",
    "k": "k (LOSO)",
}


SIMPLE = ("baseline:power-law-C", "point:chinchilla", "overtrain-ls")  # the simple laws


@lru_cache(maxsize=1)
def load_summary() -> dict:
    """{"table": [rows], "pooled": {...}, "verdicts": [...], "provenance": {...}}."""
    return json.loads(SUMMARY_FILE.read_text())


def verdicts(table: pd.DataFrame) -> list[dict]:
    """Per suite, the criteria for the default: coverage >= 0.70; median half-width
    <= max(2 x median abs error, 1%); mean abs error <= 1.1 x the best simple law's."""
    out = []
    for s, g in table.groupby("suite", sort=False):
        d = g[g["method"] == "default"].iloc[0]
        simple = g[g["method"].isin(SIMPLE)]
        best = simple.loc[simple["mean_abs_pct"].idxmin()]
        hw_cap = max(2 * d["median_abs_pct"], 1.0)
        out.append(
            {
                "suite": s,
                "coverage": float(d["coverage"]),
                "coverage_ok": bool(d["coverage"] >= 0.7),
                "halfwidth": float(d["median_halfwidth_pct"]),
                "halfwidth_cap": float(hw_cap),
                "halfwidth_ok": bool(d["median_halfwidth_pct"] <= hw_cap),
                "mae": float(d["mean_abs_pct"]),
                "best_simple": str(best["method"]),
                "best_simple_mae": float(best["mean_abs_pct"]),
                "mae_ok": bool(d["mean_abs_pct"] <= 1.1 * best["mean_abs_pct"]),
            }
        )
    return out


def width_floor(f: pd.DataFrame, method: str = "default") -> pd.DataFrame:
    """Per suite, quantiles of the method's |% error| and what they imply: an interval of ONE
    width per suite that covers exactly a fraction q of its forecasts has half-width q_q, so
    its ratio to the median error is q_q / q_50 whatever the interval rule (an "oracle" that
    knows each suite's errors). Where q_90 / q_50 > 2, no rule of constant width per suite meets
    both 90% coverage and half-width <= 2x the median error."""
    d = f[f["method"] == method]
    rows = []
    for s, g in d.groupby("suite", sort=False):
        a = 100 * np.abs(g["forecast"].to_numpy(float) / g["truth"].to_numpy(float) - 1)
        q50, q70, q90 = np.quantile(a, [0.5, 0.7, 0.9])
        rows.append(
            {
                "suite": s,
                "q50": q50,
                "q70": q70,
                "q90": q90,
                "ratio70": q70 / q50,
                "ratio90": q90 / q50,
            }
        )
    return pd.DataFrame(rows)


def floor_markdown(fl: pd.DataFrame) -> str:
    lines = [
        "| suite | median abs % error | 70th pct | 90th pct | 70th / median | 90th / median |",
        "|---|---|---|---|---|---|",
    ]
    for r in fl.itertuples(index=False):
        lines.append(
            f"| {r.suite} | {r.q50:.2f} | {r.q70:.2f} | {r.q90:.2f} | "
            f"{r.ratio70:.2f} | {r.ratio90:.2f} |"
        )
    return "\n".join(lines)


def markdown(table: pd.DataFrame, pooled: dict) -> str:
    t = table[[c for c in COLS if c in table.columns]].rename(columns=COLS)
    lines = ["| " + " | ".join(t.columns) + " |", "|" + "---|" * len(t.columns)]
    for row in t.itertuples(index=False):
        cells = []
        for v in row:
            if isinstance(v, float):
                cells.append("-" if not np.isfinite(v) else f"{v:.3g}")
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        f"Pooled leave-one-suite-out coverage of the default's 90% intervals (each suite "
        f"weighted equally): **{pooled['coverage']:.3f}** over {pooled['n']} forecasts."
    )
    lines.append("")
    lines.append(
        "| suite | coverage >= 0.70 | half-width <= max(2 x median error, 1%) | "
        "mean error <= 1.1 x best simple law |"
    )
    lines.append("|---|---|---|---|")
    for v in verdicts(table):
        lines.append(
            f"| {v['suite']} | {v['coverage']:.2f} {'yes' if v['coverage_ok'] else 'NO'} | "
            f"{v['halfwidth']:.2f}% vs {v['halfwidth_cap']:.2f}% "
            f"{'yes' if v['halfwidth_ok'] else 'NO'} | {v['mae']:.2f}% vs {v['best_simple']} "
            f"{v['best_simple_mae']:.2f}% {'yes' if v['mae_ok'] else 'NO'} |"
        )
    return "\n".join(lines)


def write_docs(loso: pd.DataFrame, pooled: dict, raw: pd.DataFrame, root: Path, floor=None) -> None:
    """Replace the table between the markers of docs/trust_validation.md (and the width-floor
    table of `width_floor` between its own markers, if given); write trust_summary.json."""
    doc = Path(root) / "docs" / "trust_validation.md"
    text = doc.read_text()
    if floor is not None and FLOOR_BEGIN in text and FLOOR_END in text:
        a, b = text.index(FLOOR_BEGIN), text.index(FLOOR_END) + len(FLOOR_END)
        text = text[:a] + f"{FLOOR_BEGIN}\n{floor_markdown(floor)}\n{FLOOR_END}" + text[b:]
    block = f"{BEGIN}\n{markdown(loso, pooled)}\n{END}"
    if BEGIN in text and END in text:
        a, b = text.index(BEGIN), text.index(END) + len(END)
        text = text[:a] + block + text[b:]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    doc.write_text(text)
    clean = loso.astype(object).where(pd.notna(loso), None)
    summary = {
        "table": clean.to_dict(orient="records"),
        "pooled": {k: v for k, v in pooled.items()},
        "verdicts": verdicts(loso),
        "provenance": {
            "script": "benchmarks/trust_suites.py --write-docs",
            "suites": "Pythia (bundled), datablations, Gemstones, Porian (../shared/data/suites), "
            "zoo (bundled)",
            "protocol": "leave-one-suite-out: the default's k chosen on the other suites",
        },
    }
    SUMMARY_FILE.write_text(json.dumps(summary, indent=1) + "\n")
    load_summary.cache_clear()
