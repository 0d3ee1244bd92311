"""One supervised forecast as `supervised predict` and `supervised allocate` print it
(`SupervisedScalingLaw.forecast_one`, `SupervisedScalingLaw.allocation`): the loss at (N, D)
with its interval (Sec. 3 of Hoffmann et al. 2022; the interval of docs/trust.md) and the 1-D
compute law beside it; and the compute-optimal N*, D*, L* at a budget (Hoffmann et al. 2022,
Eq. 4) with the intervals of N*, D* and the note saying what they hold."""

from __future__ import annotations

from ..forecast import Forecast
from .allocation import allocation_note, allocation_ranges
from .forms import compute_law_predict

NO_ALLOCATION_INTERVAL = (
    "no N*/D* interval: the fit has no bootstrap refits or its form no closed-form optimum"
)


def _interval(model, N, D, level) -> list[float] | None:
    """The loss interval at (N, D), or None where the fit has none (a point fit)."""
    try:
        lo, hi = model.predict_interval(N, D, level=level)
    except ValueError:
        return None
    return [float(lo), float(hi)]


def _shown(iv, level: float) -> str:
    return f"  {100 * level:g}% interval [{iv[0]:.4f}, {iv[1]:.4f}]" if iv else ""


def point_forecast(model, N: float, D: float, level: float) -> Forecast:
    """The loss at N parameters and D tokens, its interval and the compute law's loss."""
    L = float(model.predict(N, D))
    fields: dict = {"loss": L}
    iv = _interval(model, N, D, level)
    if iv is not None:
        fields.update(interval=iv, level=level)
    lines = []
    cl = model.result_.meta.get("compute_law")
    if cl:
        fields["compute_law_loss"] = float(compute_law_predict(cl, N, D))
        lines.append(
            "1-D compute law beside it (L = E + A C^-a on the same runs): "
            f"{fields['compute_law_loss']:.4f}"
        )
    lines.append(f"L(N={N:.4g}, D={D:.4g}) = {L:.4f}" + _shown(iv, level))
    return Forecast(fields, "\n".join(lines), value=L, interval=iv, level=level)


def _pair(pair) -> str:
    return f"[{pair[0]:.4g}, {pair[1]:.4g}]" if pair else "(not identified by these runs)"


def allocation_forecast(model, C: float, level: float, accounting: str) -> Forecast:
    """N*, D*, L* at a budget of C FLOPs, the loss interval, the N*/D* intervals over the
    bootstrap refits (and the runs' own optima where the fit has them) and what they hold."""
    a = model.allocate(C, accounting=accounting)
    iv = _interval(model, a.N, a.D, level)
    opt = allocation_ranges(model, C, level, accounting)
    fields: dict = {"N": a.N, "D": a.D, "loss": a.loss, "accounting": a.accounting}
    if iv is not None:
        fields.update(interval=iv, level=level)
    fields["N_interval"] = opt["N"] if opt else None
    fields["D_interval"] = opt["D"] if opt else None
    note = allocation_note(model) if opt is not None else NO_ALLOCATION_INTERVAL
    fields["allocation_interval_note"] = note
    lines = [
        f"C = {C:.4g} FLOPs ({a.accounting}): N* = {float(a.N):.4g} params, "
        f"D* = {float(a.D):.4g} tokens (D/N = {float(a.D / a.N):.3g}), "
        f"L* = {float(a.loss):.4f}" + _shown(iv, level)
    ]
    notes = [note]
    if opt is not None:
        fields["not_identified"] = opt["not_identified"]
        basis = (
            "(refits and the runs' optima)"
            if model.result_.meta.get("allocation")
            else "over the bootstrap refits"
        )
        lines.append(
            f"{100 * level:g}% intervals {basis}: N* in {_pair(opt['N'])}, D* in {_pair(opt['D'])}"
        )
        lines.append(note)
        lines += [f"note: {n}" for n in opt["not_identified"]]
        notes += opt["not_identified"]
    L = float(a.loss)
    return Forecast(fields, "\n".join(lines), notes, value=L, interval=iv, level=level)
