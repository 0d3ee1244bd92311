"""FLP / FLP-M figures (Chen et al., Fig. 1/2, 4, 6 and 14 styles). No fitting happens here."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .style import new_figure


def flops_to_loss(
    est,
    runs: pd.DataFrame,
    targets: pd.DataFrame | None = None,
    c_col="C",
    loss_col="loss",
    *,
    ax=None,
):
    """Stage 1 of FLP: final sampling models and the fitted L(C) = (C/C_N)^alpha (Eq. 1)."""
    fig, ax = new_figure(ax=ax)
    C = runs[c_col].to_numpy(float)
    hi = C.max() if targets is None else max(C.max(), targets[c_col].max())
    grid = np.logspace(np.log10(C.min()) - 0.1, np.log10(hi) + 0.1, 200)
    ax.scatter(C, runs[loss_col], color="C0", label="sampling models (final)")
    if targets is not None:
        ax.scatter(
            targets[c_col],
            targets[loss_col],
            marker="*",
            s=120,
            color="C3",
            label="targets (held out)",
        )
    ax.plot(grid, est.predict_loss(grid), color="k", lw=1.2, label="Eq. 1 fit")
    ax.set_xscale("log")
    ax.set_xlabel("training FLOPs C")
    ax.set_ylabel("validation loss")
    ax.legend(fontsize=8)
    return fig


def loss_to_performance(
    est, checkpoints: pd.DataFrame, targets: pd.DataFrame | None = None, loss_col="loss", *, ax=None
):
    """Stage 2 of FLP (Fig. 1/2 style): emerged (kept) and dropped checkpoints, the linear map,
    the random level and the +threshold line."""
    fig, ax = new_figure(ax=ax)
    L = checkpoints[loss_col].to_numpy(float)
    P = checkpoints[est.task].to_numpy(float) if est.task in checkpoints else None
    if P is None:
        P = checkpoints[[c for c in checkpoints if c.lower() == est.task.lower()][0]].to_numpy()
    kept = est.filter_.kept
    ax.scatter(L[~kept], P[~kept], s=10, color="0.6", label="dropped (not improved / emerged)")
    ax.scatter(L[kept], P[kept], s=14, color="C0", label="kept (emerged)")
    if targets is not None:
        ax.scatter(
            targets[loss_col],
            targets[est.task],
            marker="*",
            s=120,
            color="C3",
            label="targets (held out)",
        )
        lo = min(L.min(), targets[loss_col].min())
    else:
        lo = L.min()
    if est.method == "flp":  # the fit over the emerged range and the extrapolation to targets
        top = L[kept].max() + 0.25 if kept.any() else L.max()
        grid = np.linspace(lo - 0.05, top, 100)
        ax.plot(grid, est.stage2_.predict(L=grid), color="k", lw=1.2, label="Eq. 2 fit")
    r = est.settings_.chance
    ax.axhline(r, color="C1", ls=":", lw=1, label=f"random ({r:g})")
    ax.axhline(r + est.threshold, color="C1", ls="--", lw=0.8, label=f"random + {est.threshold:g}")
    ax.invert_xaxis()
    ax.set_xlabel("validation loss")
    ax.set_ylabel(f"{est.settings_.name} (points)")
    ax.legend(fontsize=7)
    return fig


#: where a point's label may go, in points from the point: right, below, left, above, further
_OFFSETS = ((4, 3), (4, -9), (-4, 3), (-4, -9), (4, 10), (4, -16), (-4, 10), (-4, -16))


def label_points(ax, x, y, labels, fontsize: float = 6) -> None:
    """Label each point (x, y) beside it, at the first of `_OFFSETS` where its text overlaps no
    label already placed (nearby points' labels no longer print over each other); a label with
    no free place is left out rather than printed over another."""
    r = ax.figure.canvas.get_renderer()
    ax.autoscale_view()  # the limits the figure will be drawn with
    placed = []
    for xi, yi, lab in sorted(zip(x, y, labels), key=lambda p: (p[0], p[1])):
        for dx, dy in _OFFSETS:
            t = ax.annotate(
                lab,
                (xi, yi),
                xytext=(dx, dy),
                textcoords="offset points",
                fontsize=fontsize,
                alpha=0.7,
                annotation_clip=False,
                ha="left" if dx > 0 else "right",
            )
            box = t.get_window_extent(r)
            if not any(box.overlaps(b) for b in placed):
                placed.append(box)
                break
            t.remove()


def predicted_vs_actual(predicted, actual, labels=None, title: str = "", *, ax=None):
    """Fig. 4 style: predicted score against actual, with the identity line. `predicted` may be
    a dict of method -> array (one colour each)."""
    fig, ax = new_figure(ax=ax)
    actual = np.asarray(actual, float)
    series = predicted if isinstance(predicted, dict) else {"prediction": predicted}
    for i, (name, pred) in enumerate(series.items()):
        ax.scatter(actual, np.asarray(pred, float), color=f"C{i}", label=name)
    lo = min(actual.min(), *(np.min(p) for p in series.values())) - 1
    hi = max(actual.max(), *(np.max(p) for p in series.values())) + 1
    ax.plot([lo, hi], [lo, hi], color="k", lw=0.8, ls="--")
    if labels is not None:
        first = np.asarray(next(iter(series.values())), float)
        label_points(ax, actual, first, [str(v) for v in labels])
    ax.set_xlabel("actual score (points)")
    ax.set_ylabel("predicted score (points)")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    return fig


def mixture_curves(curves: dict, markers: dict | None = None, *, ax=None):
    """Fig. 6 style: predicted score against the last source's share, one line per task; the
    best ratio is marked. `markers` maps task -> (ratios, actual scores) to overlay."""
    fig, ax = new_figure(ax=ax)
    for i, (task, mc) in enumerate(curves.items()):
        r = mc.ratios[:, -1]
        best = mc.best_ratio
        if best is None:  # a flat (saturated) scan has no best ratio: no star
            ax.plot(r, mc.performance, color=f"C{i}", label=f"{task} (flat: no best ratio)")
        else:
            label = f"{task} (best {best:.2f})" if np.ndim(best) == 0 else f"{task} (best)"
            ax.plot(r, mc.performance, color=f"C{i}", label=label)
            ax.scatter(
                [r[mc.best_index]],
                [mc.performance[mc.best_index]],
                color=f"C{i}",
                marker="*",
                s=100,
            )
        if markers and task in markers:
            xs, ys = markers[task]
            ax.scatter(xs, ys, color=f"C{i}", marker="o", facecolors="none")
    ax.set_xlabel(f"share of {next(iter(curves.values())).sources[-1]} data")
    ax.set_ylabel("predicted score (points)")
    ax.legend(fontsize=8)
    return fig


def domain_loss_fits(est, runs: pd.DataFrame, sources_cols=None):
    """Fig. 14 style: per-domain loss of the final models against total FLOPs, coloured by the
    last source's share, with the fitted law at each sampled share."""
    domains = list(est.domains_)
    ncols = min(3, len(domains))
    nrows = int(np.ceil(len(domains) / ncols))
    fig, axes = new_figure(ncols=ncols, nrows=nrows, width=3.6, height=3.0)
    axes = np.atleast_1d(axes).ravel()
    cols = sources_cols or [f"C_{s}" for s in est.sources_]
    F = runs[cols].to_numpy(float)
    tot = F.sum(1)
    share = np.round(F[:, -1] / tot, 3)
    grid = np.logspace(np.log10(tot.min()), np.log10(tot.max()), 50)
    for ax, d in zip(axes, domains):
        for j, r in enumerate(np.unique(share)):
            m = share == r
            ax.scatter(tot[m], runs[f"loss_{d}"].to_numpy()[m], s=10, color=f"C{j}")
            base = F[m][0] / tot[m][0]
            pred = est.predict_losses(grid[:, None] * base[None, :])[d]
            ax.plot(grid, pred, color=f"C{j}", lw=0.8, label=f"{r:g}")
        ax.set_xscale("log")
        ax.set_title(d, fontsize=9)
    for ax in axes[len(domains) :]:
        ax.set_visible(False)
    axes[0].legend(fontsize=6, title="share", title_fontsize=6)
    return fig


def _grouped_bars(ax, table: pd.DataFrame, hatched=()):
    """Bars of `table` (rows = methods, columns = tasks), grouped by task."""
    tasks, methods = list(table.columns), list(table.index)
    width = 0.8 / max(len(methods), 1)
    x = np.arange(len(tasks))
    for i, m in enumerate(methods):
        vals = table.loc[m].to_numpy(float)
        ax.bar(
            x + (i - (len(methods) - 1) / 2) * width,
            np.where(np.isfinite(vals), vals, 0.0),
            width,
            label=m,
            color=f"C{i}",
            hatch="//" if m in hatched else None,
            alpha=0.6 if m in hatched else 1.0,
        )
    ax.set_xticks(x, tasks, fontsize=8)
    finite = table.to_numpy(float)
    finite = finite[np.isfinite(finite) & (finite > 0)]
    if finite.size and finite.max() / finite.min() > 50:
        ax.set_yscale("log")
    ax.set_ylabel("relative error (%)")
    ax.legend(
        fontsize=7,
        ncol=len(methods),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.08),
        frameon=False,
    )


def loss_to_performance_candidates(result, title: str = "", *, ax=None):
    """Fig. 8 style: relative error of the Sec. 6.2 loss -> performance candidates per task
    (a `LossToPerformanceComparison`); the constant reference is hatched. Log scale when the
    errors span more than 50x."""
    fig, ax = new_figure(ax=ax, width=6.2)
    _grouped_bars(ax, result.errors(), hatched=("Constant",))
    ax.set_title(
        title or f"loss -> performance ({result.settings['losses']} target losses)", fontsize=9
    )
    return fig


def single_distribution(result, title: str = "", *, ax=None):
    """Fig. 9 style: relative error of FLP and FLP-M per task when every sampling LM shares one
    data distribution (a `SingleDistributionCheck`)."""
    fig, ax = new_figure(ax=ax)
    _grouped_bars(ax, result.errors())
    ax.set_title(title or "one data distribution: FLP vs FLP-M", fontsize=9)
    return fig
