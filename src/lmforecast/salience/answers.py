"""What `salience predict` prints, built by the library: the predicted accuracy (Eq. 2) of
each model in loss records with its prediction interval, in points, or the note why a fit has
none (no bootstrap refits), as JSON and as an aligned text table."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping

from ..errors import DomainWarning
from ..forecast import Answer

NO_BOOTSTRAP_NOTE = (
    "this fit has no bootstrap refits (fitted with --bootstrap 0), so no interval: refit with "
    "--bootstrap > 0"
)


def table_text(df, level: float) -> str:
    """The predictions as a text table: capability to 4 significant digits, accuracies (and
    the interval's ends) in points to 2 decimals, columns aligned."""
    cols = {
        "model": [str(m) for m in df["model"]],
        "capability": [f"{v:.4g}" for v in df["capability"]],
        "predicted": [f"{v:.2f}" for v in df["predicted"]],
    }
    if "lower" in df:
        cols[f"{level:g} interval"] = [
            f"[{a:.2f}, {b:.2f}]" for a, b in zip(df["lower"], df["upper"])
        ]
    width = {k: max(len(k), *(len(v) for v in vals)) for k, vals in cols.items()}

    def row(vals):
        return "  ".join(v.ljust(width[k]) if k == "model" else v.rjust(width[k]) for k, v in vals)

    lines = [row((k, k) for k in cols)]
    lines += [row((k, cols[k][i]) for k in cols) for i in range(len(df))]
    return "\n".join(lines)


def predict_answer(fit, records: Iterable[Mapping], level: float):
    """(answer, table): each model's predicted accuracy in `records` with its interval (a
    `SalienceFit`'s `predict_records`), and the same rows as a DataFrame (for a CSV); without
    bootstrap refits the answer says there is no interval (and warns)."""
    df = fit.predict_records(records, level=level)
    preds = []
    for r in df.to_dict(orient="records"):
        lo, hi = r.pop("lower", None), r.pop("upper", None)
        r["interval"] = None if lo is None else [lo, hi]
        preds.append(r)
    res = {"task": fit.task, "level": level, "predictions": preds}
    notes = ()
    if not fit.bootstrap:  # as other verbs say it: no interval, and why
        res["interval_note"] = NO_BOOTSTRAP_NOTE
        notes = (NO_BOOTSTRAP_NOTE,)
        warnings.warn(NO_BOOTSTRAP_NOTE, DomainWarning, stacklevel=2)
    return Answer(res, table_text(df, level), notes), df
