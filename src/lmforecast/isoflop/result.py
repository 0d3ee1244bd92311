"""The saved result of an isoFLOP fit: JSON that round-trips exactly, validated on load."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..display import SummaryDisplay
from ..store import Checker, dump_json, load_json, source_label

KIND = "IsoFlopResult"
VERSION = 1
FIELDS = (
    "approach",
    "a",
    "b",
    "log_GN",
    "log_GD",
    "a_interval",
    "b_interval",
    "level",
    "n_boot",
    "n_dropped",
    "seed",
    "budgets",
    "n_runs",
    "meta",
)


@dataclass
class IsoFlopResult(SummaryDisplay):
    """N*(C) = exp(log_GN) C^a, D*(C) = exp(log_GD) C^b; `budgets` rows are C, N*, D*, L*."""

    approach: int
    a: float
    b: float
    log_GN: float
    log_GD: float
    a_interval: list[float]
    b_interval: list[float]
    level: float
    n_boot: int
    n_dropped: int
    seed: int
    budgets: list[list[float]]
    n_runs: int
    meta: dict = field(default_factory=dict)

    def optimal(self, C) -> tuple[np.ndarray, np.ndarray]:
        """(N*, D*) at compute C from the fitted power laws."""
        C = np.asarray(C, float)
        return np.exp(self.log_GN) * C**self.a, np.exp(self.log_GD) * C**self.b

    def summary(self) -> str:
        p = 100 * self.level
        refused = self.meta.get("not_identified", {})

        def exp_iv(name, v) -> str:
            return (
                f"{p:g}% not identified by these runs"
                if name in refused
                else f"{p:g}% [{v[0]:.4f}, {v[1]:.4f}]"
            )

        lines = [
            f"IsoFLOP Approach {self.approach} (Hoffmann et al. 2022), {len(self.budgets)} "
            f"budgets, {self.n_runs} runs",
            f"  N*(C) ~ C^a: a = {self.a:.4f}  {exp_iv('a', self.a_interval)}",
            f"  D*(C) ~ C^b: b = {self.b:.4f}  {exp_iv('b', self.b_interval)}",
            "         C           N*           D*       L*",
        ]
        if self.meta.get("grouping"):
            lines.insert(1, f"  ({self.meta['grouping']})")
        lines += [f"  {c:10.4g}  {n:11.4g}  {d:11.4g}  {lo:.4f}" for c, n, d, lo in self.budgets]
        top = max(c for c, *_ in self.budgets)

        def iv(v) -> str:
            return f" {p:g}% [{v[0]:.4g}, {v[1]:.4g}]" if v else " (interval not identified)"

        for r in self.meta.get("at_flops", []):
            far = f" ({r['C'] / top:.3g}x the largest budget)" if r["C"] > top * 1.01 else ""
            lines.append(
                f"  at C = {r['C']:.4g}{far}: N* = {r['N_star']:.4g}"
                f"{iv(r.get('N_interval'))}, D* = {r['D_star']:.4g}"
                f"{iv(r.get('D_interval'))}"
            )
            refused = {**refused, **r.get("not_identified", {})}
        lines += [f"  note: {k}: {why}" for k, why in refused.items()]
        return "\n".join(lines)

    def contract(self) -> dict:
        """The `isoflop fit --json` output (a refused interval is null, its reason under
        "not_identified")."""
        refused = self.meta.get("not_identified", {})
        return {
            "approach": self.approach,
            "a": self.a,
            "b": self.b,
            "a_interval": None if "a" in refused else self.a_interval,
            "b_interval": None if "b" in refused else self.b_interval,
            "level": self.level,
            "budgets": self.budgets,
            "at_flops": self.meta.get("at_flops", []),
            "grouping": self.meta.get("grouping"),
            "not_identified": refused,
        }

    def to_dict(self) -> dict:
        return {"kind": KIND, "format_version": VERSION, **asdict(self)}

    def to_json(self, path: str | Path | None = None) -> str:
        return dump_json(self.to_dict(), path)

    @classmethod
    def from_json(cls, text_or_path) -> IsoFlopResult:
        d = load_json(text_or_path, "saved isoFLOP fit")
        check_isoflop(d, source_label(text_or_path))
        d = {k: d[k] for k in FIELDS}
        return cls(**json.loads(json.dumps(d)))


def check_isoflop(d, where: str) -> None:
    """Field-by-field validation of a saved isoFLOP result."""
    c = Checker(where)
    d = c.obj(d)
    c.keys(d, (*FIELDS, "kind", "format_version"))
    if d.get("kind") != KIND:
        c.fail("kind", f"must be {KIND!r}", d.get("kind"))
    if d.get("format_version") != VERSION:
        c.fail("format_version", f"must be {VERSION}", d.get("format_version"))
    for k in FIELDS:
        c.get(d, k)
    if d["approach"] not in (1, 2) or isinstance(d["approach"], bool):
        c.fail("approach", "must be 1 or 2", d["approach"])
    for k in ("a", "b", "log_GN", "log_GD"):
        c.num(d[k], k)
    for k in ("a_interval", "b_interval"):
        c.nums(d[k], k, 2, finite=False)
    c.num(d["level"], "level", lo=0, hi=1, lo_open=True, hi_open=True)
    for k in ("n_boot", "n_dropped", "seed", "n_runs"):
        c.int_(d[k], k)
    c.matrix(d["budgets"], "budgets", 4, lo=0, lo_open=True)
    c.obj(d["meta"], "meta")
