"""How far a forecast reaches beyond what its interval was tested on, said at predict time.

Two cases get a warning (docs/trust.md "Where the intervals fail"):
- r > R_MEASURED: further out than the real suites' held-out forecasts the prior was measured
  on (about 7x past the fitted runs); the scale only grows in proportion beyond.
- runs at one token count (their D spans less than `forms.ONE_D_DECADES`) and a forecast at
  another D: the runs say nothing about how loss moves with D, and no inner check could test
  it (a Gemstones ladder at D = 20B forecast at 350B missed by 14-25% inside a 3% interval
  before `stack.untested_reach` widened such intervals).
- a token ratio D/N outside the fitted runs' range, beyond what the stack's inner check held
  out: the forecast leans on the laws' N-D trade-off where nothing tested it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np

from ..errors import DomainWarning, first_time
from .forms import ONE_D_DECADES
from .intervals import distance
from .stack import R_MEASURED, untested_ratio, untested_reach


class ReachWarning(DomainWarning):
    """A forecast reaches past what its interval was tested on (silenced inside backtests,
    which extrapolate on purpose and report the distance in their table)."""


def reach_warnings(owner, cal: Mapping | None, N, D, stacklevel: int = 3) -> None:
    """Warn for the forecasts at (N, D) that reach past the tested range: each kind once per
    `owner` (a fitted law; its first far forecast says it, a loop over many does not repeat
    it, since each message names its own N and D)."""
    if not cal or "max_compute" not in cal:
        return
    N, D = (np.ravel(x) for x in np.broadcast_arrays(np.asarray(N, float), np.asarray(D, float)))
    if N.size == 0:
        return
    r = distance(6.0 * N * D, cal, N=N, D=D)
    i = int(np.argmax(r))
    if r[i] > R_MEASURED and first_time(owner, "far"):
        warnings.warn(
            f"N={N.flat[i]:.4g}, D={D.flat[i]:.4g} lies {math.exp(r[i]):.3g}x outside the fitted "
            f"runs ({_side(cal, N.flat[i], D.flat[i])}; r = {r[i]:.2f}); the interval's scale was "
            "measured on real suites up to "
            f"about {math.exp(R_MEASURED):.0f}x (r = {R_MEASURED:g}) and only grows in "
            "proportion beyond: read it as a rough guess",
            ReachWarning,
            stacklevel=stacklevel,
        )
    _ratio_warning(owner, cal, N, D, stacklevel + 1)
    ex = untested_reach(cal, D)  # ln of how far D lies outside a one-token-count ladder's
    if ex is None:
        return
    j = int(np.argmax(ex))
    if ex.flat[j] > ONE_D_DECADES * math.log(10) and first_time(owner, "one-D"):
        warnings.warn(
            f"the runs were all trained on about D={math.sqrt(cal['min_D'] * cal['max_D']):.3g} "
            f"tokens, and this forecast is at D={D.flat[j]:.4g} ({math.exp(ex.flat[j]):.3g}x "
            "away): the runs carry no "
            "information on how the loss moves with D and no check tested it: the forecast "
            "leans on C = 6ND alone, and its interval counts that distance at the single "
            "form's prior scale (wide, untested); add runs at other token counts",
            ReachWarning,
            stacklevel=stacklevel,
        )


def _side(cal: Mapping, N: float, D: float) -> str:
    """'below their smallest N=..., D=...' or 'beyond their largest ...': which end of the
    fitted range the forecast leaves (the larger of the two log distances)."""
    C = 6.0 * N * D
    below = [
        math.log(float(cal[k]) / v)
        for k, v in (("min_compute", C), ("min_N", N), ("min_D", D))
        if cal.get(k)
    ]
    above = [
        math.log(v / float(cal[k]))
        for k, v in (("max_compute", C), ("max_N", N), ("max_D", D))
        if cal.get(k)
    ]
    end, word = (
        ("min", "below their smallest")
        if below and max(below) > max(above, default=0.0)
        else ("max", "beyond their largest")
    )
    known = [f"{k}={float(cal[f'{end}_{k}']):.3g}" for k in ("N", "D") if cal.get(f"{end}_{k}")]
    return f"{word} {', '.join(known)}" if known else f"{word} compute"


def _ratio_warning(owner, cal: Mapping, N, D, stacklevel: int) -> None:
    stk = getattr(getattr(owner, "result_", None), "meta", {}).get("stack")
    ex = untested_ratio(cal, D, N, stk)
    if ex is None:
        return
    j = int(np.argmax(ex))
    if ex.flat[j] > ONE_D_DECADES * math.log(10) and first_time(owner, "ratio"):
        lo, hi = stk["ratio_range"]
        warnings.warn(
            f"N={N.flat[j]:.4g}, D={D.flat[j]:.4g} trains {D.flat[j] / N.flat[j]:.3g} tokens per "
            f"parameter, outside the fitted runs' D/N of {lo:.3g} to {hi:.3g} and past what the "
            "fit's inner check tested: the forecast leans on the laws' N-D trade-off untested, "
            "and its interval counts that distance at the single form's prior scale; add runs "
            "near that ratio",
            ReachWarning,
            stacklevel=stacklevel,
        )
