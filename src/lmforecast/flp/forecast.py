"""One forecast with its interval and notes, as `flp predict`, `flpm predict` and
`flpm optimize-mixture` print it.

FLP (`FLP.forecast_one`):
the score at C FLOPs (Chen et al. 2024, Sec. 3: FLOPs -> loss -> score), the stage-1 loss, the
bootstrap prediction interval of both stages, the note saying why an interval is not a plain
bootstrap interval (below emergence, at a score bound; `flp.intervals`), and against a known
score the relative error of Eq. 4. FLP-M (`FLPM.forecast_one`): the domain losses and the
score for FLOPs per source (Sec. 4); `FLPM.best_mixture`: the best mixing ratio of a scan with
its score, the percentile interval of each bootstrap draw's own best ratio, and the scan's
notes (tie, end of the scanned range, saturated)."""

from __future__ import annotations

import math
import warnings

from ..errors import DomainWarning, InputError, fmt_value
from ..forecast import Forecast
from .intervals import AT_BOUND_NOTE, NOT_EMERGED_NOTE, interval_or_none


def check_actual(actual: float | None, *, positive: bool = False) -> float | None:
    """A known score `actual` is in points: refused outside [0, 100] (or (0, 100] where Eq. 4's
    relative error divides by it), one line naming the value."""
    if actual is None:
        return None
    a = float(actual)
    if not (math.isfinite(a) and (0 < a if positive else 0 <= a) and a <= 100):
        where = "(0, 100]" if positive else "[0, 100]"
        raise InputError(
            f"--actual (actual=) {fmt_value(actual)}: a score must lie in {where} points"
        )
    return a


def warn_if_fraction(actual: float, forecast: float, name: str = "actual") -> None:
    """An `actual` score of 0.45 beside a forecast in points (0-100) is most likely a fraction:
    say how it is read (an 8,911% relative error otherwise comes with no hint)."""
    if 0 < actual <= 1 < forecast:
        warnings.warn(
            f"{name} {actual:g} is read in points (0-100), as the forecast {forecast:.2f} "
            f"is: a fraction? (give {100 * actual:g})",
            DomainWarning,
            stacklevel=3,
        )


def flp_forecast(est, C: float, level: float, actual: float | None = None) -> Forecast:
    """The forecast of a fitted `FLP` at `C` FLOPs (see the module docstring); warns, as
    `FLP.predict` users are warned, when C extrapolates far or the score has not emerged."""
    C = float(C)
    actual = check_actual(actual, positive=True)  # Eq. 4 divides by it
    est.warn_if_extrapolating(C)
    P = float(est.predict([C])[0])
    L = est.predict_loss([C])
    L = None if L is None else float(L[0])
    fields: dict = {"loss": L, "performance": P}
    interval, notes = None, []
    if est.stage2_.bootstrap:
        lo, hi = est.predict_interval([C], level=level)
        interval = interval_or_none(lo[0], hi[0])
        fields.update(interval=interval, level=level)
        raw = float(est.predict([C], clip=False)[0])
        if raw < est.settings_.chance + est.threshold:
            notes.append(NOT_EMERGED_NOTE)
        elif interval is None or hi[0] >= 100:
            notes.append(AT_BOUND_NOTE)
        if notes:
            fields["interval_note"] = notes[0]
    else:
        fields["interval"] = None
    est.warn_if_not_emerged(P, None if interval is None else interval[0])
    if actual is not None:
        warn_if_fraction(actual, P)
        fields["relative_error"] = abs(P - actual) / actual  # Eq. 4
    text = f"C = {C:.4g} FLOPs: "
    if L is not None:
        text += f"{'loss' if est.method == 'flp' else 'NLL'} {L:.4f}, "
    text += f"{est.settings_.name} {P:.2f} points"
    if interval:
        text += f" [{interval[0]:.2f}, {interval[1]:.2f}] ({level:g} PI)"
    if "relative_error" in fields:
        text += f"; relative error {100 * fields['relative_error']:.2f}%"
    text += "".join(f"\nnote: {n}" for n in notes)
    return Forecast(fields, text, notes, value=P, interval=interval, level=level)


def at_bound(iv) -> bool:
    """An FLP-M score interval that is null (collapsed onto a bound) or touches 0 or 100."""
    return iv is None or iv[0] <= 0 or iv[1] >= 100


MIXTURE_BASIS = (
    "score: prediction interval at the best ratio; best ratio: percentile interval of each "
    "bootstrap draw's own best ratio on the scan grid"
)


def flpm_forecast(est, F, level: float) -> Forecast:
    """The forecast of a fitted `FLPM` for FLOPs per source `F` (see the module docstring)."""
    losses = est.predict_losses([F]).iloc[0]
    est.warn_if_extrapolating([F])
    P = float(est.predict([F])[0])
    fields: dict = {"losses": {d: float(v) for d, v in losses.items()}, "performance": P}
    fields["interval"], notes = None, []
    if est.bootstrap:
        lo, hi = est.predict_interval([F], level=level)
        fields["interval"], fields["level"] = interval_or_none(lo[0], hi[0]), level
        if at_bound(fields["interval"]):  # null where it collapsed onto the bound
            notes.append(AT_BOUND_NOTE)
            fields["interval_note"] = AT_BOUND_NOTE
    iv = fields["interval"]
    parts = ", ".join(f"{d} {v:.4f}" for d, v in fields["losses"].items())
    extra = f" [{iv[0]:.2f}, {iv[1]:.2f}] ({level:g} PI)" if iv else ""
    text = f"domain losses: {parts}\n{est.settings_.name}: {P:.2f} points{extra}"
    text += "".join(f"\nnote: {n}" for n in notes)
    return Forecast(fields, text, notes, value=P, interval=iv, level=level)


def best_mixture(est, C: float, start: float, stop: float, step: float, level: float):
    """The best mixing ratio at `C` FLOPs over the scan start:stop:step (see the module
    docstring): a `Forecast` whose value is the score at the best ratio (None when the scan
    has no best ratio) and whose fields hold the ratio, the scanned curve and the intervals."""
    mc = est.optimize_mixture(C, start, stop, step)
    P = float(mc.performance[mc.best_index])
    res: dict = {"best_ratio": mc.best_ratio, "performance": P, "curve": mc.curve()}
    edge, note = mc.edge_advice, mc.tie_note
    res["at_scan_edge"] = mc.at_scan_edge
    if mc.flat:  # no best ratio: say why (flat at the clipped bound: saturated)
        res["flat"], res["saturated"] = True, mc.saturated
    if note:
        res["note"] = note
    if est.bootstrap:
        iv = est.mixture_intervals(mc, level)
        res.update(
            interval=iv["performance"],
            best_ratio_interval=iv["best_ratio"],
            level=level,
            interval_basis=MIXTURE_BASIS,
        )
        if at_bound(res["interval"]):
            res["interval_note"] = AT_BOUND_NOTE
    name, n = est.settings_.name, len(mc.performance)
    where = f"C = {C:.4g} FLOPs, sources {', '.join(est.sources_)}: "
    if mc.flat:
        lines = [f"{where}no best ratio: {note}"]
    else:
        lines = [
            f"{where}best ratio {res['best_ratio']} -> {name} {P:.2f} points "
            f"(scan of {n} mixtures)"
            + (f" at the end of the scanned range: {edge}" if edge else "")
            + (f"\nnote: {note}" if note else "")
        ]
    if est.bootstrap:
        iv, riv = res["interval"], res["best_ratio_interval"]
        score = "null" if iv is None else f"{iv[0]:.2f} .. {iv[1]:.2f} points"
        lines.append(
            f"{100 * level:g}% intervals: score {score}; best ratio "
            f"{'null (no best ratio)' if riv is None else riv} ({MIXTURE_BASIS})"
            + (f"\nnote: {res['interval_note']}" if "interval_note" in res else "")
        )
    notes = tuple(x for x in (note, edge, res.get("interval_note")) if x)
    iv = res.get("interval")
    return Forecast(res, "\n".join(lines), notes, value=P, interval=iv, level=level)
