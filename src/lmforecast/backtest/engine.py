"""Rolling-origin backtests in compute: fit on the runs below a compute cutoff, forecast every run
above it, for several cutoffs, and record each forecast's error, interval and extrapolation ratio.

The engine is generic over methods through a two-method adapter protocol (see `Adapter`), so
any forecaster (supervised laws, naive baselines, later distillation/FLP/OSL) can be backtested
the same way. Relative error is (forecast - truth) / truth: negative means the forecast is too
low. The extrapolation ratio of a forecast is its compute over the largest fitted compute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ..display import SummaryDisplay
from ..errors import InputError
from ..parallel import map_tasks
from ..params import UNIT_OPEN
from ..store import dump_json, load_json

if TYPE_CHECKING:  # pandas loads where a backtest runs, not at import
    import pandas as pd

RATIO_BINS = (1.0, 3.0, 10.0, 100.0, np.inf)


@runtime_checkable
class Fitted(Protocol):
    """What an adapter's `fit` returns."""

    def predict(self, test: pd.DataFrame) -> np.ndarray:
        """Point forecasts of the target for every row of `test`."""

    def interval(self, test: pd.DataFrame, level: float) -> tuple[np.ndarray, np.ndarray] | None:
        """(lower, upper) at `level` for every row of `test`, or None if the method has none."""


@runtime_checkable
class Adapter(Protocol):
    """A forecasting method as the backtest engine sees it: `name` and `fit(train) -> Fitted`.

    `train`/`test` are the user's table (all columns kept) split by the compute column.
    """

    name: str

    def fit(self, train: pd.DataFrame) -> Fitted: ...


def compute_of(df: pd.DataFrame, compute_col: str = "C") -> np.ndarray:
    """The compute of every run: column `compute_col`, else 6 N D from columns N and D."""
    import pandas as pd

    if compute_col in df.columns:
        c = pd.to_numeric(df[compute_col], errors="coerce").to_numpy(float)
    elif {"N", "D"} <= set(df.columns):
        c = 6.0 * df["N"].to_numpy(float) * df["D"].to_numpy(float)
    else:
        raise InputError(
            f"runs: no compute column {compute_col!r} (and no N and D columns to compute 6ND); "
            "name it with --compute-col (compute_col=)"
        )
    bad = ~(np.isfinite(c) & (c > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"runs: column {compute_col!r} row {i + 1}: compute must be a positive number, "
            f"got {float(c[i])!r}"
        )
    return c


#: Relative tolerance within which two runs share a compute level: a C column and 6 N D of the
#: same isoFLOP budget differ in their last bits (5e-8 on the bundled runs), and an exact
#: comparison put half a budget on each side of a cutoff.
LEVEL_RTOL = 1e-6


def snap_levels(compute: np.ndarray, rtol: float = LEVEL_RTOL) -> np.ndarray:
    """`compute` with values that agree within `rtol` (chained in sorted order) replaced by the
    smallest of them, so one budget is one level whatever its last bits."""
    c = np.asarray(compute, float)
    order = np.argsort(c, kind="stable")
    s = c[order]
    new_group = np.ones(s.size, bool)
    new_group[1:] = s[1:] > s[:-1] * (1.0 + rtol)
    first = s[np.flatnonzero(new_group)][np.cumsum(new_group) - 1]
    out = np.empty_like(c)
    out[order] = first
    return out


def choose_cutoffs(compute: np.ndarray, n_cutoffs: int = 4, min_train: int = 1) -> list[float]:
    """`n_cutoffs` cutoffs (existing compute levels) spread evenly in log compute among the levels
    that leave at least `min_train` runs at or below them and at least one run above."""
    compute = np.asarray(compute, float)
    levels = np.unique(compute)
    if levels.size < 2:
        raise InputError(
            f"runs: a backtest needs at least two compute levels, found {int(levels.size)}"
        )
    if n_cutoffs < 1:
        raise InputError(f"--n-cutoffs (n_cutoffs=) must be >= 1, got {n_cutoffs}")
    cand = np.array([lv for lv in levels[:-1] if np.sum(compute <= lv) >= min_train])
    if cand.size == 0:
        raise InputError(
            f"runs: no compute cutoff leaves {min_train} runs to fit and one to forecast "
            f"({compute.size} runs at {levels.size} compute levels)"
        )
    targets = np.linspace(np.log(cand[0]), np.log(cand[-1]), n_cutoffs)
    idx = [int(np.argmin(np.abs(np.log(cand) - t))) for t in targets]
    return [float(cand[i]) for i in sorted(set(idx))]


def check_cutoffs(compute: np.ndarray, cutoffs: Sequence[float]) -> list[float]:
    """Validate user cutoffs: each must leave at least one run on each side."""
    levels = np.unique(compute)
    if levels.size < 2:
        raise InputError(
            f"runs: a backtest needs at least two compute levels, found {int(levels.size)}"
        )
    out = []
    for c in cutoffs:
        c = float(c)
        below = compute <= c * (1.0 + LEVEL_RTOL)
        n_lo, n_hi = int(np.sum(below)), int(np.sum(~below))
        if not (np.isfinite(c) and n_lo and n_hi):
            raise InputError(
                f"--cutoffs (cutoffs=): cutoff {c:g} leaves {n_lo} run(s) to fit and {n_hi} to "
                f"forecast; "
                f"pick a value between {float(levels[0]):g} and {float(levels[-2]):g}"
            )
        out.append(c)
    return sorted(set(out))


def resolve_cutoffs(
    df: pd.DataFrame, compute_col: str, cutoffs, n_cutoffs: int, min_train: int
) -> tuple[np.ndarray, list[float]]:
    """(compute levels, cutoffs): compute snapped to one level per budget (`snap_levels`), and
    the given cutoffs checked or `n_cutoffs` chosen on those levels (the CLI validates before
    fitting with the same call: chosen on unsnapped compute, an isoFLOP table's top budget once
    split in two and became a cutoff that left nothing to forecast)."""
    C = snap_levels(compute_of(df, compute_col))
    if cutoffs is None or len(cutoffs) == 0:
        return C, choose_cutoffs(C, n_cutoffs, min_train)
    return C, check_cutoffs(C, cutoffs)


@dataclass
class BacktestResult(SummaryDisplay):
    """Every forecast of a rolling-origin backtest (`forecasts`, one row per method x cutoff x
    held-out run) and the settings that produced it. `summary_table()` aggregates by method and
    extrapolation-ratio bin; `to_json`/`from_json` round-trip exactly."""

    forecasts: pd.DataFrame
    level: float
    cutoffs: list[float]
    methods: list[str]
    compute_col: str = "C"
    target_col: str = "loss"
    meta: dict[str, Any] = field(default_factory=dict)

    def summary_table(self, bins: Sequence[float] = RATIO_BINS) -> pd.DataFrame:
        """Per method and ratio bin: forecasts, median |rel. error|, mean rel. error, coverage,
        median relative half-width (NaN where the method has no interval)."""
        import pandas as pd

        f = self.forecasts
        rows = []
        edges = list(bins)
        for m in self.methods:
            g = f[f["method"] == m]
            groups = [("all", g)]
            for lo, hi in zip(edges[:-1], edges[1:]):
                sel = g[(g["ratio"] > lo) & (g["ratio"] <= hi)]
                if len(sel):
                    lab = f"({lo:g}, {hi:g}]" if np.isfinite(hi) else f"> {lo:g}"
                    groups.append((lab, sel))
            for lab, s in groups:
                rows.append(_stats(m, lab, s))
        return pd.DataFrame(rows)

    def summary(self) -> str:
        t = self.summary_table()
        cut = ", ".join(f"{c:.3g}" for c in self.cutoffs)
        head = (
            f"Rolling-origin backtest: {len(self.cutoffs)} cutoffs in {self.compute_col} ({cut}); "
            f"{int((self.forecasts['method'] == self.methods[0]).sum())} forecasts per method; "
            f"{100 * self.level:g}% intervals.\n"
            "rel. error = (forecast - truth)/truth; ratio = forecast compute / largest fitted "
            "compute; half-width relative to the forecast; coverage counts a non-finite "
            "interval (column non-finite) as a miss."
        )
        return head + "\n" + _format_table(t)

    # ---- persistence -----------------------------------------------------------------------
    def contract(self) -> dict:
        """The backtest as plain data (what `backtest --json` prints, beside the runs' source
        and form): level, cutoffs, methods, the summary table and every forecast."""
        return {
            "level": self.level,
            "cutoffs": self.cutoffs,
            "methods": self.methods,
            "summary": self.summary_table().to_dict(orient="records"),
            "forecasts": self.forecasts.to_dict(orient="records"),
        }

    def to_dict(self) -> dict:
        f = self.forecasts
        return {
            "kind": "BacktestResult",
            "level": float(self.level),
            "cutoffs": [float(c) for c in self.cutoffs],
            "methods": list(self.methods),
            "compute_col": self.compute_col,
            "target_col": self.target_col,
            "meta": self.meta,
            "forecasts": {c: _jsonable_col(f[c]) for c in f.columns},
        }

    def to_json(self, path: str | Path | None = None) -> str:

        return dump_json(self.to_dict(), path)  # the package's one (atomic) writer

    @classmethod
    def from_dict(cls, d: Mapping) -> BacktestResult:
        import pandas as pd

        return cls(
            forecasts=pd.DataFrame(d["forecasts"]),
            level=d["level"],
            cutoffs=list(d["cutoffs"]),
            methods=list(d["methods"]),
            compute_col=d.get("compute_col", "C"),
            target_col=d.get("target_col", "loss"),
            meta=dict(d.get("meta", {})),
        )

    @classmethod
    def from_json(cls, text_or_path: str | Path) -> BacktestResult:

        return cls.from_dict(load_json(text_or_path, "saved backtest"))


def _jsonable_col(s: pd.Series) -> list:
    if s.dtype.kind in "fc":
        return [float(v) for v in s.to_numpy(float)]
    if s.dtype.kind in "iu":
        return [int(v) for v in s]
    if s.dtype.kind == "b":
        return [bool(v) for v in s]
    return [str(v) for v in s]


def interval_status(lower, upper) -> tuple[np.ndarray, np.ndarray]:
    """(has_interval, finite): a method without intervals gives NaN bounds (no interval); an
    interval with an infinite or NaN bound beside a given one is a FAILED forecast."""
    lo, hi = np.asarray(lower, float), np.asarray(upper, float)
    has = ~(np.isnan(lo) & np.isnan(hi))
    return has, has & np.isfinite(lo) & np.isfinite(hi)


def _stats(method: str, label: str, s: pd.DataFrame) -> dict:
    has, fin = interval_status(s["lower"], s["upper"])
    cov = np.asarray(s["covered"], bool) & fin
    return {
        "method": method,
        "ratio": label,
        "n": int(len(s)),
        "median |rel err| %": 100 * float(np.median(np.abs(s["rel_error"]))),
        "mean rel err %": 100 * float(np.mean(s["rel_error"])),
        # coverage over every forecast with an interval: a non-finite one counts as a miss
        "coverage %": 100 * float(np.mean(cov[has])) if has.any() else np.nan,
        "non-finite": int(np.sum(has & ~fin)),
        "median rel half-width %": 100 * float(np.median(s["rel_halfwidth"][fin]))
        if fin.any()
        else np.nan,
    }


def _format_table(t: pd.DataFrame) -> str:
    def fmt(v):
        if isinstance(v, float):
            return "-" if not np.isfinite(v) else f"{v:.2f}"
        return str(v)

    cols = list(t.columns)
    cells = [[fmt(v) for v in row] for row in t.itertuples(index=False)]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(cols)]
    line = "  ".join(c.rjust(w) for c, w in zip(cols, widths))
    out = [line, "-" * len(line)]
    out += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join(out)


def rolling_origin(
    runs: pd.DataFrame,
    adapters: Sequence[Adapter] | Adapter,
    *,
    cutoffs: Sequence[float] | None = None,
    n_cutoffs: int = 4,
    min_train: int = 8,
    level: float = 0.9,
    compute_col: str = "C",
    target_col: str = "loss",
    scheduler=None,
    progress: bool = False,
) -> BacktestResult:
    """Backtest every adapter: for each cutoff, fit on runs with compute <= cutoff and forecast
    every run above it. `cutoffs=None` picks `n_cutoffs` by `choose_cutoffs`. `scheduler`
    (docs/scaling-out.md) runs the (cutoff, adapter) fits on Dask; the default runs them here,
    in order; the table is the same either way. `progress` shows a bar of (cutoff, method) fits
    done."""
    import pandas as pd

    UNIT_OPEN.check("--level (level=)", level)
    if isinstance(adapters, Adapter) or hasattr(adapters, "fit"):
        adapters = [adapters]  # type: ignore[list-item]
    adapters = list(adapters)
    for a in adapters:
        if not (hasattr(a, "fit") and hasattr(a, "name")):
            raise InputError(
                f"adapters: {a!r} is not an adapter (an object with `name` and `fit`; e.g. "
                "lmforecast.supervised.adapter.SupervisedAdapter('chinchilla'))"
            )
    df = runs.reset_index(drop=True)
    if target_col not in df.columns:
        raise InputError(f"runs: missing target column {target_col!r}")
    C, cuts = resolve_cutoffs(df, compute_col, cutoffs, n_cutoffs, min_train)
    y = pd.to_numeric(df[target_col], errors="coerce").to_numpy(float)
    shared = {"df": df, "C": C, "y": y, "cuts": list(cuts), "adapters": adapters, "level": level}
    payloads = [(i, j) for i in range(len(cuts)) for j in range(len(adapters))]
    frames = map_tasks(
        _backtest_task,
        payloads,
        shared=shared,
        scheduler=scheduler,
        desc="backtest",
        progress=progress,
        unit="fit",
    )
    forecasts = pd.concat(frames, ignore_index=True)
    return BacktestResult(
        forecasts=forecasts,
        level=float(level),
        cutoffs=[float(c) for c in cuts],
        methods=[a.name for a in adapters],
        compute_col=compute_col,
        target_col=target_col,
    )


def forecast_split(ad: Adapter, train, test, level: float, truth=None):
    """Fit `ad` on `train` and forecast every row of `test` (`truth`: default its ``loss``
    column), as every cutoff of `rolling_origin` is scored. Returns (rows, fitted): one row per
    forecast with ``truth``, ``forecast``, ``rel_error``, ``log_error``, ``lower``, ``upper``
    (NaN where the method has no interval), ``covered``, ``finite`` and ``rel_halfwidth``."""
    import pandas as pd

    fitted = ad.fit(train)
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging fit is counted, not warned
        pred = np.asarray(fitted.predict(test), float).ravel()
        iv = fitted.interval(test, level)
    lo, hi = (np.full(pred.shape, np.nan),) * 2 if iv is None else map(np.ravel, iv)
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    _, fin = interval_status(lo, hi)
    truth = np.asarray(test["loss"] if truth is None else truth, float)
    rows = pd.DataFrame(
        {
            "truth": truth,
            "forecast": pred,
            "rel_error": pred / truth - 1.0,
            "log_error": np.log(truth) - np.log(pred),
            "lower": lo,
            "upper": hi,
            "covered": fin & (lo <= truth) & (truth <= hi),
            "finite": fin,
            "rel_halfwidth": np.where(fin, (hi - lo) / (2.0 * pred), np.nan),
        }
    )
    return rows, fitted


def _backtest_task(payload, shared) -> pd.DataFrame:
    """One (cutoff, adapter) of `rolling_origin`: fit below the cutoff, forecast above it
    (a module-level function of plain data, so it can run on a Dask worker)."""
    i, j = payload
    df, C = shared["df"], shared["C"]
    cut, ad, level = shared["cuts"][i], shared["adapters"][j], shared["level"]
    tr = C <= cut * (1.0 + LEVEL_RTOL)
    te = ~tr
    rows, _ = forecast_split(ad, df[tr], df[te], level, truth=shared["y"][te])
    rows.insert(0, "ratio", C[te] / float(C[tr].max()))
    rows.insert(0, "compute", C[te])
    rows.insert(0, "row", np.flatnonzero(te).astype(int))
    rows.insert(0, "n_train", int(tr.sum()))
    rows.insert(0, "cutoff", float(cut))
    rows.insert(0, "method", ad.name)
    return rows
