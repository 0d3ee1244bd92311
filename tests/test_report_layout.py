"""Figures lay out their text without overlaps: titles, axis and tick labels and legends are
drawn and their boxes compared, and a legend may not sit on a bar or an interval bar."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection
from matplotlib.patches import Rectangle

from lmforecast.backtest import BacktestResult
from lmforecast.plots import backtest as bplots
from lmforecast.plots.style import log_axis, new_figure


def _texts(fig):
    """(name, box) of every visible, non-empty piece of text, a legend counted as one box."""
    r = fig.canvas.get_renderer()
    fig.draw(r)
    out = []
    for ax in fig.axes:
        items = [("title", t) for t in (ax.title, ax._left_title, ax._right_title)]
        items += [("xlabel", ax.xaxis.label), ("ylabel", ax.yaxis.label)]
        items += [("label", t) for t in ax.texts]  # annotations of points
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.get_visible():  # a twin's shared axis is not drawn
                continue
            for tick in axis._update_ticks():  # the ticks drawn: those inside the view
                for lab in (tick.label1, tick.label2):
                    items.append(("tick", lab))
        for name, t in items:
            if t.get_visible() and t.get_text().strip():
                out.append((f"{name} {t.get_text()!r}", t.get_window_extent(r)))
        leg = ax.get_legend()
        if leg is not None:
            out.append(("legend", leg.get_window_extent(r)))
    return out


def _overlapping(fig, pad: float = 0.5) -> list[tuple[str, str]]:
    boxes = [(n, b) for n, b in _texts(fig) if b.width > 0 and b.height > 0]
    bad = []
    for (n1, b1), (n2, b2) in itertools.combinations(boxes, 2):
        if b1.padded(-pad).overlaps(b2.padded(-pad)):
            bad.append((n1, n2))
    return bad


def _legend_on_marks(fig) -> list[str]:
    """Legends drawn over a bar or an interval bar of their own axes (twins included)."""
    r = fig.canvas.get_renderer()
    fig.draw(r)
    hits = []
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is None:
            continue
        box = leg.get_window_extent(r)
        same = [a for a in fig.axes if a.bbox.bounds == ax.bbox.bounds]  # twinx share a box
        for a in same:
            for p in a.patches:
                if isinstance(p, Rectangle) and p.get_height() > 0:
                    if box.overlaps(p.get_window_extent(r)):
                        hits.append(f"bar at x={p.get_x():.3g}")
            for c in a.collections:
                if isinstance(c, LineCollection):
                    for seg in c.get_segments():
                        px = a.transData.transform(seg)
                        x0, y0 = px.min(axis=0)
                        x1, y1 = px.max(axis=0)
                        if box.x0 < x1 and x0 < box.x1 and box.y0 < y1 and y0 < box.y1:
                            hits.append(f"interval bar at x={seg[0, 0]:.3g}")
    return hits


def _backtest(seed: int = 0) -> BacktestResult:
    """Forecasts shaped like the trust section's: ratios 1.5-40, a wide interval far out."""
    rng = np.random.default_rng(seed)
    rows = []
    ratios = [1.4, 3.9, 4.0, 5.2, 8.8, 38.0]
    for m, scale in (("supervised:chinchilla", 0.08), ("baseline:persistence", 0.15),
                     ("baseline:power-law-C", 0.1)):  # fmt: skip
        for i, ratio in enumerate(ratios):
            truth = 3.0 - 0.1 * i
            err = rng.normal(0, scale)
            pred = truth * (1 + err)
            half = 0.5 * pred if ratio > 30 else 0.15 * pred
            iv = m.startswith("supervised")
            lo, hi = (pred - half, pred + half) if iv else (np.nan, np.nan)
            rows.append({"method": m, "cutoff": 1.0, "ratio": ratio, "truth": truth,
                         "forecast": pred, "rel_error": pred / truth - 1, "lower": lo,
                         "upper": hi, "covered": bool(iv and lo <= truth <= hi),
                         "finite": bool(iv),
                         "rel_halfwidth": half / pred if iv else np.nan})  # fmt: skip
    f = pd.DataFrame(rows)
    return BacktestResult(forecasts=f, level=0.9, cutoffs=[1.0],
                          methods=["supervised:chinchilla", "baseline:persistence",
                                   "baseline:power-law-C"])  # fmt: skip


def test_backtest_calibration_figure_has_no_overlapping_text_or_covered_bar():
    fig = bplots.calibration(_backtest())
    assert fig.get_layout_engine() is not None  # constrained layout
    assert _overlapping(fig) == []
    assert _legend_on_marks(fig) == []
    # the short log axis is labelled in plain numbers, never "2x10^0" minor labels
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels(minor=True)]
    assert all(not s for s in labels), labels
    major = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert "10" in major and not any("times" in s or "^" in s for s in major), major


@pytest.mark.parametrize("lo,hi,want", [(1.3, 45.0, {"2", "5", "10", "20"}),
                                        (1e19, 1e25, set())])  # fmt: skip
def test_log_axis_labels_steps_on_short_axes_and_decades_on_long(lo, hi, want):
    fig, ax = new_figure()
    ax.plot([lo, hi], [1, 2])
    log_axis(ax, "x", lo, hi)
    ax.set_xlim(lo, hi)
    fig.draw(fig.canvas.get_renderer())
    major = {t.get_text() for t in ax.get_xticklabels() if t.get_text()}
    assert want <= major, major
    if not want:  # a long axis: decades only, as mathtext
        assert all("10^" in s for s in major) and len(major) >= 5, major
    assert not any(t.get_text() for t in ax.get_xticklabels(minor=True))
    assert _overlapping(fig) == []


def test_every_figure_uses_constrained_layout_and_never_switches_it():
    """No plot calls tight_layout over the constrained engine (matplotlib warns and drops it)."""
    fig, ax = new_figure(ncols=2)
    assert type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    import pathlib

    import lmforecast.plots as P

    for p in pathlib.Path(P.__file__).parent.glob("*.py"):
        assert "fig.tight_layout(" not in p.read_text(), p.name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bplots.calibration(_backtest(1)).canvas.draw()


def test_report_png_keeps_every_text_the_layout_placed():
    """The embedded PNG is the whole laid-out figure: every title, label and legend inside it
    (a crop box computed before the layout ran cut off the titles the layout moved down)."""
    import io

    from PIL import Image

    from lmforecast.plots.supervised import parity
    from lmforecast.report.html import figure_png

    class Law:
        def predict(self, N, D):
            return 2.0 + 1e3 / np.asarray(N) ** 0.3

    runs = pd.DataFrame({"N": np.geomspace(1e7, 1e9, 8), "D": np.geomspace(1e9, 1e11, 8)})
    runs["loss"] = Law().predict(runs["N"], runs["D"]) * 1.01
    for fig in (parity(Law(), runs, runs.index >= 6), bplots.calibration(_backtest())):
        w, h = fig.get_size_inches()
        png = Image.open(io.BytesIO(figure_png(fig, dpi=80)))
        assert png.size == (round(w * 80), round(h * 80))
        inside = fig.bbox.padded(1)
        for name, box in _texts(fig):
            assert inside.x0 <= box.x0 and box.x1 <= inside.x1, name
            assert inside.y0 <= box.y0 and box.y1 <= inside.y1, name


def test_ledger_figure_labels_times_briefly_without_overlap(tmp_path):
    """Forecasts made seconds apart (a ledger filled by a script): short time labels, not
    microsecond stamps running into each other."""
    from lmforecast.ledger import Ledger, over_time
    from lmforecast.plots.ledger import plot_over_time

    with Ledger(tmp_path / "L.db", create=True) as L:
        for p, y in [(2.0, 2.05), (3.0, 3.3), (2.5, 2.45)]:
            L.resolve(L.add(method="supervised", point=p, lo=p - 0.1, hi=p + 0.1, level=0.9), y)
        df = L.records()
    fig = plot_over_time(over_time(df), level=0.9)
    assert _overlapping(fig) == []
    fig.canvas.draw()
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert labels and all(len(s) <= 12 for s in labels), labels


def test_point_labels_do_not_print_over_each_other():
    """FLP-M's predicted-vs-actual figure labels close points (3B at five code ratios): each
    label sits beside its own point where it overlaps no other."""
    from lmforecast.plots.flp import predicted_vs_actual

    actual = np.array([60.4, 60.8, 61.0, 62.0, 62.9, 69.8])
    pred = np.array([60.2, 61.3, 61.8, 63.2, 62.6, 71.6])
    labels = [f"3B r={r:.2f}" for r in (0.0, 0.1, 0.2, 0.4, 0.5)] + ["7B r=0.30"]
    fig = predicted_vs_actual(pred, actual, labels, title="FLP-M, ARC")
    assert _overlapping(fig) == []
    shown = [t for t in fig.axes[0].texts]
    assert len(shown) >= 5  # at most one crowded label left out
    for t in shown:  # beside its own point, not on the identity line
        i = labels.index(t.get_text())
        assert t.xy == (actual[i], pred[i])
