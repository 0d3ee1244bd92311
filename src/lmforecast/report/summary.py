"""The report's summary: one row per verdict (method, data, error, baseline, coverage).

A section states its verdicts with `Section.verdict(...)`; for a section that states none, the
row is read from the numbers it already reports (`EXTRACTORS`, one small reader per section
key). Every value shown in the summary table is stored in the report JSON under ``"summary"``,
and the HTML cells are formatted from exactly those values (`summary_html`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping
from typing import Any

COLUMNS = ("method", "data", "metric", "error", "baseline", "baseline_error", "coverage")


def row(
    method: str,
    data: str,
    metric: str,
    error: float | None,
    baseline: str | None = None,
    baseline_error: float | None = None,
    coverage: float | None = None,
    *,
    n: int | None = None,
    simulated: bool = False,
) -> dict[str, Any]:
    """One verdict: `error` of `method` on `data` (by `metric`), the same metric of the
    `baseline`, and the interval coverage (a fraction) where the method gives intervals;
    `simulated` marks a study on data simulated from a known law (it checks the code recovers
    the law, not how forecasts hold on real runs)."""
    return {
        "method": method,
        "data": data,
        "metric": metric,
        "error": _num(error),
        "baseline": baseline,
        "baseline_error": _num(baseline_error),
        "coverage": _num(coverage),
        "n": n,
        "simulated": bool(simulated),
    }


def _num(v) -> float | None:
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _mean(d: Mapping) -> float:
    vals = [float(v) for v in d.values() if v is not None]
    return sum(vals) / len(vals) if vals else float("nan")


def _supervised(n: Mapping) -> list[dict]:
    ex = n["extrapolation"]
    return [
        row(
            f"supervised law ({n['fit']['form']})",
            f"{n['fit']['n_runs']} simulated runs; fitted on {ex['fit_on']}, "
            f"{ex['n_heldout']} held out",
            "max |rel error| of held-out loss",
            ex["max_rel_error"],
            simulated=True,
        )
    ]


def _trust(n: Mapping) -> list[dict]:
    errs = n["median_abs_rel_error"]
    method = next(k for k in errs if not k.startswith("baseline"))
    base = min((k for k in errs if k.startswith("baseline")), key=lambda k: errs[k])
    return [
        row(
            f"backtest {method}",
            f"{n['n_runs']} runs, {len(n['cutoffs'])} compute cutoffs",
            "median |rel error| above the cutoff",
            errs[method],
            base.split(":", 1)[1],
            errs[base],
            n.get("coverage"),
        )
    ]


def _distill(n: Mapping) -> list[dict]:
    return [
        row(
            "distillation law (Eq. 8)",
            f"{n['n_runs']} simulated distillation runs, extrapolated",
            "max |rel error| of student loss",
            n["extrapolation_max_rel_error"],
            simulated=True,
        )
    ]


def _flp(n: Mapping) -> list[dict]:
    out = []
    f = n.get("flp")
    if f:
        out.append(
            row(
                "FLP (FLOPs -> loss -> score)",
                "simulated 7B/13B targets",
                "mean |rel error| % of score",
                f["mean_rel_error_flp_pct"],
                "FP (FLOPs -> score)",
                f["mean_rel_error_fp_pct"],
                simulated=True,
            )
        )
    m = n.get("flpm")
    if m:
        out.append(
            row(
                "FLP-M (mixtures)",
                "simulated mixtures, " + ", ".join(m["rel_error_pct"]),
                "mean |rel error| % of score",
                _mean(m["rel_error_pct"]),
                "FLP",
                _mean(m["flp_rel_error_pct"]),
                simulated=True,
            )
        )
    return out


def _downstream(n: Mapping) -> list[dict]:
    out = []
    for suite, s in n.items():
        mae = s["mae"]
        out.append(
            row(
                "downstream ensemble",
                f"Pythia evals ({suite} suite), backtest",
                "MAE (score points)",
                mae.get("ensemble"),
                "persistence",
                mae.get("persistence"),
            )
        )
    return out


def _osl(n: Mapping) -> list[dict]:
    out = []
    for target, m in n["holdout_test_mse"].items():
        out.append(
            row(
                "OSL (3 PCs)",
                f"Table B.1 models, {target} held out by FLOPs",
                "test MSE",
                m["pcs"],
                "log FLOPs",
                m["flops"],
            )
        )
    return out


def _salience(n: Mapping) -> list[dict]:
    return [
        row(
            "CSV (salience-weighted loss)",
            "simulated token losses" if n.get("simulated") else "token losses",
            "test MSE of accuracy",
            n["test_mse"],
            "all-token loss",
            n["all_token_test_mse"],
            simulated=bool(n.get("simulated")),
        )
    ]


def _trust_downstream(n: Mapping) -> list[dict]:
    out = []
    for r in n.get("osl_pooled", [])[:1]:
        out.append(
            row(
                f"{r['method']} intervals",
                "Table B.1 holdouts, pooled",
                "MAE",
                r["mae"],
                coverage=r["coverage"],
                n=r["n"],
            )
        )
    for r in n.get("flp", []):
        out.append(
            row(
                f"{r['method']} intervals",
                f"{r['study']} study",
                "MAE (score points)",
                r["mae"],
                coverage=r["coverage"],
                n=r["n"],
                simulated=r["study"] == "simulated",
            )
        )
    return out


def _zoo(n: Mapping) -> list[dict]:
    return [
        row(
            "supervised law on the zoo",
            f"{n['n_runs']} really trained tiny LMs",
            "max |rel error| of held-out loss",
            n["supervised_held_out_max_rel_error"],
        )
    ]


def _isoflop(n: Mapping) -> list[dict]:
    truth = n["truth"]["a"]
    a2, a1 = n["approach2"], n["approach1"]
    return [
        row(
            "isoFLOP Approach 2 (Hoffmann et al.)",
            "bundled simulated isoFLOP profiles (known law)",
            "|a - a_true| (N* ~ C^a)",
            abs(a2["a"] - truth),
            "Approach 1",
            abs(a1["a"] - truth),
            simulated=True,
        )
    ]


def _recipes(n: Mapping) -> list[dict]:
    k_true = 2.5  # the bundled pair is simulated with this multiplier (examples/files/recipes)
    lo, hi = n["interval"] if n.get("interval") else (float("nan"), float("nan"))
    return [
        row(
            "effective compute between recipes",
            "bundled simulated recipe pair (k = 2.5)",
            "|k - k_true| / k_true",
            abs(n["multiplier"] - k_true) / k_true,
            coverage=float(lo <= k_true <= hi),
            n=1,
            simulated=True,
        )
    ]


def _shape(n: Mapping) -> list[dict]:
    truth = n["truth"]["curvature"]  # planted in the bundled example (examples/files/shape)
    return [
        row(
            "width/depth residual test (shape term)",
            f"bundled simulated checkpoints ({n['n_models']} shapes, planted c2 = {truth:g})",
            "|c2 - c2_true| / c2_true",
            abs(n["coef"][2] - truth) / truth,
            n=n["n_models"],
            simulated=True,
        )
    ]


def _ledger(n: Mapping) -> list[dict]:
    o = n["scores"]["overall"]
    return [
        row(
            "forecast record (ledger)",
            f"{o['n_resolved']} resolved forecasts",
            "mean |error|",
            o["mean_abs_error"],
            coverage=o["coverage"],
            n=o["n_resolved"],
        )
    ]


EXTRACTORS: dict[str, Callable[[Mapping], list[dict]]] = {
    "supervised": _supervised,
    "trust": _trust,
    "distill": _distill,
    "flp": _flp,
    "downstream": _downstream,
    "osl": _osl,
    "salience": _salience,
    "trust_downstream": _trust_downstream,
    "zoo": _zoo,
    "planner": lambda n: [],  # an interactive tool, no verdict
    "yours": lambda n: [],  # states its verdicts itself (Section.verdict)
    "dataconstrained": lambda n: [],  # coefficients and advice on example runs, no held-out test
    "isoflop": _isoflop,
    "recipes": _recipes,
    "shape": _shape,
    # advice, no verdict here: checking it means a simulated campaign that refits a bootstrap
    # after every added run (minutes); benchmarks/bench_nextrun.py runs it against a ladder
    "nextrun": lambda n: [],
    "ledger": _ledger,
    # the section states its row (the example's truth is known only there); a user's curves
    # have no truth to score against
    "curves": lambda n: [],
}


def summary_rows(key: str, numbers: Mapping, stated: list[dict]) -> list[dict]:
    """The verdict rows of section `key`: those it stated, else read from its numbers (a
    section whose numbers lack what its reader needs gives a row saying so)."""
    rows = list(stated)
    if not rows and key in EXTRACTORS:
        try:
            rows = EXTRACTORS[key](numbers)
        except (KeyError, TypeError, IndexError, StopIteration, ValueError) as exc:
            rows = [row(key, "—", f"summary unavailable: {type(exc).__name__} {exc}", None)]
    return [dict(r, section=key) for r in rows]


def fmt(v, pct: bool = False) -> str:
    """How the summary shows a number (4 significant digits; a fraction as a percentage)."""
    if v is None:
        return "—"
    return f"{100 * v:.1f}%" if pct else f"{v:.4g}"


def _table(rows: list[dict], titles: Mapping[str, str], caption: str, kind: str) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in ("Method", "Data", "Metric", "Error", "Baseline", "Baseline error", "Coverage")
    )
    body = []
    for r in rows:
        e = html.escape
        link = f'<a href="#{e(r["section"])}" title="{e(titles.get(r["section"], ""))}">'
        body.append(
            f"<tr data-section='{e(r['section'])}'><td class='l'>{link}{e(r['method'])}</a></td>"
            f"<td class='l'>{e(r['data'])}</td><td class='l'>{e(r['metric'])}</td>"
            f"<td>{fmt(r['error'])}</td><td class='l'>{e(r['baseline'] or '—')}</td>"
            f"<td>{fmt(r['baseline_error'])}</td><td>{fmt(r['coverage'], pct=True)}</td></tr>"
        )
    return (
        f"<table class='summary-{kind}'><caption>{html.escape(caption)}</caption><thead><tr>"
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def summary_html(rows: list[dict], titles: Mapping[str, str]) -> str:
    """The summary tables, one row per verdict, its method linked to its section: verdicts on
    real data first, then the simulated studies, each table labelled as such."""
    real = [r for r in rows if not r.get("simulated")]
    sim = [r for r in rows if r.get("simulated")]
    parts = []
    if real:
        parts.append(
            _table(
                real,
                titles,
                "On real data: forecasts checked against held-out "
                "truths (lower error is better; coverage is the share of held-out "
                "truths inside the nominal intervals)",
                "real",
            )
        )
    if sim:
        parts.append(
            _table(
                sim,
                titles,
                "SIMULATED studies: data drawn from a known law, so "
                "these check that the code recovers a planted law; they do not say "
                "how well forecasts hold on real runs",
                "simulated",
            )
        )
    return f"<div id='summary'><h2>Summary</h2>{''.join(parts)}</div>"


def _judge(rows: list[dict]) -> tuple[str, str]:
    """A section's real-data verdicts in one sentence and a trust word: `trust` (beats its
    baseline where it has one, intervals covering at least 80%), `caution` (one of the two
    fails), `unknown` (no baseline and no interval to judge by)."""
    with_base = [r for r in rows if r["error"] is not None and r["baseline_error"] is not None]
    beats = [r for r in with_base if r["error"] <= r["baseline_error"]]
    covs = [r["coverage"] for r in rows if r["coverage"] is not None]
    parts = []
    if len(rows) == 1:
        r = rows[0]
        pct = "rel error" in r["metric"] and "%" not in r["metric"]  # a fraction: as a percentage
        parts.append(f"{r['metric']} {fmt(r['error'], pct)}")
        if r["baseline_error"] is not None:
            parts.append(f"baseline {r['baseline']}: {fmt(r['baseline_error'], pct)}")
    elif with_base:
        parts.append(f"better than its baseline in {len(beats)} of {len(with_base)} checks")
    else:
        parts.append(f"{len(rows)} checks")
    if covs:
        parts.append(
            f"{fmt(sum(covs) / len(covs), pct=True)} of held-out truths inside the "
            "intervals" + (" (mean over checks)" if len(covs) > 1 else "")
        )
    ok_base = not with_base or len(beats) * 2 > len(with_base)
    ok_cov = not covs or min(covs) >= 0.8
    if not with_base and not covs:
        word = "unknown"
    else:
        word = "trust" if ok_base and ok_cov else "caution"
    return "; ".join(parts), word


ADVICE = {
    "trust": "beats its naive baseline with intervals that cover: usable as is",
    "caution": "check before relying on it: it loses to its baseline or its intervals cover "
    "too little (below 80%); use the baseline or widen the intervals",
    "unknown": "no baseline or interval to judge it by",
}


def headline(rows: list[dict], inputs: Mapping[str, str], notes: list[str]) -> dict:
    """The report's headline: one entry per section with verdicts on real data (the user's own
    data first): what was forecast, how far off on held-out truths, and whether to trust it.
    Simulated studies are not in it (they recover planted laws)."""
    out = []
    by_sec: dict[str, list[dict]] = {}
    for r in rows:
        if not r.get("simulated"):
            by_sec.setdefault(r["section"], []).append(r)
    order = sorted(by_sec, key=lambda k: k not in ("yours", "ledger"))
    for key in order:
        rs = by_sec[key]
        text, word = _judge(rs)
        datas = list(dict.fromkeys(r["data"].split(",")[0] for r in rs))
        what = (
            rs[0]["method"] + " on " + rs[0]["data"]
            if len(rs) == 1
            else (
                f"{len(rs)} checks ({', '.join(dict.fromkeys(r['method'] for r in rs))}) on "
                + "; ".join(datas[:3])
                + (f" and {len(datas) - 3} more" if len(datas) > 3 else "")
            )
        )
        out.append(
            {
                "section": key,
                "yours": key in ("yours", "ledger"),
                "what": what,
                "how_far_off": text,
                "trust": word,
            }
        )
    return {"inputs": dict(inputs), "notes": list(notes), "entries": out}


def headline_html(h: dict, titles: Mapping[str, str]) -> str:
    e = html.escape
    items = []
    for x in h["entries"]:
        who = "<b>Your data</b>: " if x["yours"] else ""
        items.append(
            f"<li data-section='{e(x['section'])}' data-trust='{e(x['trust'])}'>{who}"
            f"<a href='#{e(x['section'])}'>{e(titles.get(x['section'], x['section']))}</a>: "
            f"{e(x['what'])}. {e(x['how_far_off'][:1].upper() + x['how_far_off'][1:])}. "
            f"<i>{e(x['trust'])}</i>: "
            f"{e(ADVICE[x['trust']])}.</li>"
        )
    if not h["inputs"]:
        lead = (
            "No data of yours was given: every section below runs on bundled data. Give "
            "`--runs`, `--fit`, `--evals` or `--ledger` for forecasts of your own runs."
        )
    else:
        given = ", ".join(f"--{k} {v}" for k, v in h["inputs"].items())
        lead = f"Your data: {given}. Its sections come first."
    notes = "".join(f"<li>{e(n)}</li>" for n in h["notes"])
    return (
        f"<div id='headline'><h2>Headline</h2><p>{e(lead)}</p>"
        + (f"<ul class='notes'>{notes}</ul>" if notes else "")
        + "<p>Forecasts checked against held-out truths on real data:</p>"
        + (f"<ul>{''.join(items)}</ul>" if items else "<p>none in this report.</p>")
        + "<p>Simulated studies are listed separately in the summary below.</p></div>"
    )
