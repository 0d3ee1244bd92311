"""The fitted downstream forecaster's summary text: its task, data, each stage's parameters
with their bootstrap intervals, refusals and the internal backtest (`summary()`)."""

from __future__ import annotations

import numpy as np

from .members import TWO_STAGE, Stage1, _map


def _labelled(names, values, boot=None) -> str:
    """'name value [lo, hi], ...' (summary lines a reader can map onto the method's equation;
    90% percentile intervals over the bootstrap replicates `boot` when there are some)."""
    B = np.asarray(boot if boot is not None else [], float)
    ok = B.ndim == 2 and len(B) >= 2 and B.shape[1] == len(values)
    q = np.nanquantile(B, [0.05, 0.95], axis=0) if ok else None
    return ", ".join(
        f"{k} {v:.4g}" + (f" [{q[0, i]:.4g}, {q[1, i]:.4g}]" if ok else "")
        for i, (k, v) in enumerate(zip(names, values))
    )


def summary_text(est) -> str:
    """What `DownstreamForecaster.summary()` prints (a fitted forecaster)."""
    lines = [
        f"DownstreamForecaster: task {est.task_} ({est.metric_}, chance {est.chance_:g} "
        f"points), loss = {est.loss_task_}; method {est.method}"
        + (f" -> {est.selected_}" if est.method == "auto" else ""),
        f"models: {est.n_models_}   checkpoints: {est.n_checkpoints_}   largest: "
        f"{est.largest_['model']} ({est.largest_['score']:.2f} points at "
        f"{est.largest_['C']:.3g} FLOPs)",
    ]
    if est.stage1_ is not None:
        p = _labelled(Stage1(est.stage1).law.names, est.stage1_["params"])
        lines.append(f"stage 1 ({est.stage1}): {p}, residual sd {est.stage1_['resid_sd']:.3g}")
    for n, st in est.members_.items():
        if "params" in st:
            names = (
                _map(n, est.chance_, est.window).names
                if n in TWO_STAGE
                else ("slope per ln C", "score at 1e18 FLOPs")
            )
            note = getattr(_map(n, est.chance_, est.window), "bound_note", None)
            lines.append(
                f"  {n}: {_labelled(names, st['params'], st.get('boot'))}"
                + (note(st["params"]) if note else "")
            )
        elif "value" in st:
            lines.append(f"  {n}: {st['value']:.2f} points")
        else:
            fb = " (fallback: all checkpoints)" if st.get("fallback") else ""
            lines.append(f"  {n}: FLP-package fit{fb}")
    if any("boot" in st for st in est.members_.values()):
        lines.append("  (members: [5%, 95%] of the bootstrap replicates' parameters)")
    for n, why in est.refused_.items():
        lines.append(f"  {n}: refused ({why})")
    if est.selection_errors_:
        e = ", ".join(f"{k} {v:.2f}" for k, v in est.selection_errors_.items())
        lines.append(f"internal backtest MAE (points): {e}")
    return "\n".join(lines)


def fit_contract(est) -> dict:
    """What `downstream fit --json` prints (`DownstreamForecaster.contract`): the task, method,
    the member chosen, chance, how many models and checkpoints were fitted, the members refused
    and each member's backtest error, and stage 1's parameters."""
    return {
        "task": est.task_,
        "method": est.method,
        "selected": est.selected_,
        "chance": est.chance_,
        "models": est.n_models_,
        "checkpoints": est.n_checkpoints_,
        "refused": est.refused_,
        "selection_errors": est.selection_errors_,
        "stage1": None if est.stage1_ is None else est.stage1_["params"],
    }
