"""Validation of saved next-run advice (`next-run --out`), field by field."""

from __future__ import annotations

from ..store import Checker

KIND = "NextRunAdvice"
FIELDS = ("target", "current_width", "level", "candidates", "stop", "message", "n_boot")
CANDIDATE = (
    "N",
    "D",
    "flops",
    "expected_width",
    "shrink",
    "shrink_per_flop",
    "saturation_width",
    "flops_to_goal",
    "p_best",
)


def check_advice(d, where: str) -> None:
    c = Checker(where)
    d = c.record(d, FIELDS, KIND, label="saved next-run advice")
    t = c.obj(d["target"], "target")
    c.keys(t, ("N", "D"), "target")
    for k in ("N", "D"):
        c.num(c.get(t, k, "target"), f"target.{k}", lo=0, lo_open=True)
    c.num(d["current_width"], "current_width", lo=0)
    c.num(d["level"], "level", lo=0, hi=1, lo_open=True, hi_open=True)
    cands = c.list_(d["candidates"], "candidates", min_len=1)
    for i, row in enumerate(cands):
        p = f"candidates[{i}]"
        row = c.obj(row, p)
        c.keys(row, CANDIDATE, p)
        for k in ("N", "D", "flops"):
            c.num(c.get(row, k, p), f"{p}.{k}", lo=0, lo_open=True)
        c.num(c.get(row, "expected_width", p), f"{p}.expected_width", lo=0)
        c.num(c.get(row, "shrink", p), f"{p}.shrink", hi=1)
        c.num(c.get(row, "shrink_per_flop", p), f"{p}.shrink_per_flop")
        # a candidate that never reaches the goal has infinite FLOPs to goal; the saturation
        # width of a candidate whose forecast does not vary across the bootstrap is undefined
        c.num(c.get(row, "saturation_width", p), f"{p}.saturation_width", finite=False)
        c.num(c.get(row, "flops_to_goal", p), f"{p}.flops_to_goal", finite=False, lo=0)
        c.num(c.get(row, "p_best", p), f"{p}.p_best", lo=0, hi=1)
    c.bool_(d["stop"], "stop")
    c.str_(d["message"], "message")
    c.int_(d["n_boot"], "n_boot")
