"""Figures for the distillation scaling law (Busbridge et al. 2025, Figs. 2, 7, 8, 9 style).

Each function takes a fitted/preset `DistillationScalingLaw` (or plans computed from one) and
returns a matplotlib Figure; nothing is fitted here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.colors import TwoSlopeNorm

from ..compute.flops import forward_flops_per_token as F
from .style import new_figure


def isoflop_profiles(model, teacher_loss: float, budgets: Sequence[float], runs=None, *, ax=None):
    """Student loss along IsoFLOP profiles D_S = C / 3F(N_S) for one teacher (Fig. 2)."""
    fig, ax = new_figure(ax=ax)
    N = np.logspace(8, 10.5, 200)
    for C in budgets:
        D = C / (3.0 * F(N))
        ax.plot(N, model.predict(N, D, teacher_loss), label=f"C = {C:.0e}")
    if runs is not None:
        r = runs[np.isclose(runs["L_T"], teacher_loss, rtol=1e-6)]
        ax.scatter(r["N_S"], r["L_S"], s=10, c="k", zorder=3, label="runs")
    ax.set_xscale("log")
    ax.set_xlabel("student parameters N_S")
    ax.set_ylabel("student cross-entropy L_S")
    ax.set_title(f"IsoFLOP students, teacher L_T = {teacher_loss:.3f}")
    ax.legend(fontsize=8)
    return fig


def student_loss_contours(
    model, student_tokens: float, teacher_losses=None, student_params=None, *, ax=None
):
    """L_S - L~_S over (teacher loss, student size) at fixed D_S, with L_T*(N_S) (Fig. 7)."""
    LT = np.linspace(model.E_ + 0.15, 3.0, 160) if teacher_losses is None else teacher_losses
    NS = np.logspace(8, 11, 120) if student_params is None else student_params
    G_LT, G_N = np.meshgrid(LT, NS)
    diff = model.predict(G_N, student_tokens, G_LT) - model.supervised_loss(G_N, student_tokens)
    fig, ax = new_figure(ax=ax)
    lo, hi = float(np.nanmin(diff)), float(np.nanmax(diff))
    norm = TwoSlopeNorm(0.0, vmin=min(lo, -1e-6), vmax=max(hi, 1e-6))
    cs = ax.contourf(G_LT, G_N, diff, levels=21, cmap="RdBu_r", norm=norm)
    fig.colorbar(cs, ax=ax, label="L_S - L~_S (blue: distillation better)")
    lt_star, _ = model.optimal_teacher_loss(NS, student_tokens)
    ax.plot(lt_star, NS, "k--", label="optimal teacher L_T*")
    ax.set_yscale("log")
    ax.set_xlabel("teacher cross-entropy L_T")
    ax.set_ylabel("student parameters N_S")
    ax.set_title(f"D_S = {student_tokens:.2g} tokens")
    ax.legend(fontsize=8)
    return fig


def compute_optimal_allocations(plans):
    """Fig. 8/9 style: L_S* and the supervised baseline vs compute (left), and the compute split
    between student training, teacher inference and teacher pretraining (right), for plans of
    one student size in one or more scenarios."""
    fig, axes = new_figure(ncols=2)
    ax1, ax2 = axes[0, 0], axes[0, 1]
    for p in plans:
        ax1.plot(p.flops, p.student_loss, label=p.scenario)
    ax1.plot(plans[0].flops, plans[0].supervised_loss, "k--", label="supervised")
    ax1.set_xscale("log")
    ax1.set_xlabel("total compute C (FLOPs)")
    ax1.set_ylabel("student cross-entropy")
    ax1.legend(fontsize=7)
    p = plans[-1]
    parts = np.vstack(
        [p.flops_student_training, p.flops_teacher_inference, p.flops_teacher_pretraining]
    )
    ax2.stackplot(
        p.flops,
        parts / p.flops,
        labels=["student training", "teacher inference", "teacher pretraining"],
    )
    ax2.set_xscale("log")
    ax2.set_ylim(0, 1)
    ax2.set_xlabel("total compute C (FLOPs)")
    ax2.set_ylabel(f"share of compute ({p.scenario})")
    ax2.legend(fontsize=7, loc="lower left")
    return fig


def zoo_students_vs_teacher(model, runs, *, ax=None):
    """Zoo students: measured L_S against teacher loss L_T, one colour per student (N_S, D_S),
    with the fitted Eq. 8 curve and (dashed) the student trained supervised (Fig. 7 slices)."""
    fig, ax = new_figure(ax=ax)
    LT = np.linspace(float(runs["L_T"].min()) * 0.85, float(runs["L_T"].max()) * 1.08, 120)
    for i, ((ns, ds), g) in enumerate(runs.groupby(["N_S", "D_S"])):
        color = f"C{i}"
        label = f"N_S={ns:,.0f}, D_S={ds:,.0f}"
        ax.scatter(g["L_T"], g["L_S"], color=color, zorder=3, label=label)
        ax.plot(LT, model.predict(np.full_like(LT, ns), np.full_like(LT, ds), LT), color=color)
        if "L_S_supervised" in g:
            ax.axhline(float(g["L_S_supervised"].iloc[0]), color=color, ls="--", lw=0.8)
    ax.set_xlabel("teacher cross-entropy L_T")
    ax.set_ylabel("student cross-entropy L_S")
    ax.set_title("Zoo distillation: students vs teacher loss, Eq. 8 fit")
    ax.legend(fontsize=7)
    return fig
