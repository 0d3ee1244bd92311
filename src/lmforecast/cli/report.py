"""`lmforecast report --out DIR`: the main job, every analysis on bundled data."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..ledger import Ledger
from ..report.builder import REPORT_FILES, ReportContext, build_report
from ..store import safe_write


def register(sub) -> None:
    p = sub.add_parser("report", help="HTML + JSON report of every analysis on bundled data")
    p.add_argument("--out", required=True, help="output folder (created if needed)")
    p.add_argument("--sections", help="comma-separated subset, e.g. supervised,distill")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="smaller bootstraps (for smoke tests)")
    p.add_argument(
        "--jobs",
        type=int,
        default=2,
        help="sections built at once in worker processes (1: serial, -1: one per core); "
        "the numbers do not depend on it",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--ledger", metavar="PATH", help="add a Forecast record section (docs/ledger.md)"
    )
    p.set_defaults(handler=_report)


def _report(args) -> int:
    secs = None
    if args.sections is not None:
        secs = [s.strip() for s in args.sections.split(",") if s.strip()]
        if not secs:
            raise InputError("--sections: empty list; name at least one section, or omit the flag")
        if "ledger" in secs and args.ledger is None:  # it would build an empty report
            raise InputError("--sections ledger needs --ledger PATH (the ledger to report on)")
    if args.jobs == 0 or args.jobs < -1:
        raise InputError(f"--jobs must be a positive number of workers or -1, got {args.jobs}")
    for name in REPORT_FILES:  # before the (long) build: a folder or link in the way
        kind = safe_write.target_kind(Path(args.out) / name, "--out")[1]
        if kind == "special":
            raise InputError(f"--out {args.out}: {name} is not a regular file; remove it first")
    if args.ledger is not None:  # a wrong file fails at the door, before any section is built
        Ledger(args.ledger).close()
    ctx = ReportContext(seed=args.seed, quick=args.quick, progress=not args.quiet, jobs=args.jobs,
                        ledger=args.ledger)  # fmt: skip
    numbers = build_report(args.out, sections=secs, ctx=ctx)
    if not args.quiet:
        print(f"wrote {args.out}/report.html and report.json ({len(numbers['sections'])} sections)")
    return 0
