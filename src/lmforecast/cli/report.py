"""`lmforecast report --out DIR`: the main job, every analysis on bundled data, and on the user's
own files where given (`--runs`, `--fit`, `--evals`, `--ledger`: `report.builder.USER_INPUTS`)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..ledger import Ledger
from ..report.builder import (
    REPORT_FILES,
    SECTION_INPUTS,
    USER_INPUTS,
    ReportContext,
    build_report,
)
from ..store import safe_write
from .options import add


def register(sub) -> None:
    p = sub.add_parser(
        "report", help="HTML + JSON report of every analysis, on bundled data and on yours"
    )
    add(p, "--out", required=True, help="output folder (created if needed)")
    p.add_argument("--sections", help="comma-separated subset, e.g. supervised,distill")
    add(p, "--seed")
    p.add_argument("--quick", action="store_true", help="smaller bootstraps (for smoke tests)")
    add(
        p,
        "--jobs",
        default=2,
        help="sections built at once in worker processes (1: serial, -1: one per core); "
        "the numbers do not depend on it",
    )
    add(p, "--quiet")
    for name, what in USER_INPUTS.items():  # one flag per input the sections read
        p.add_argument(f"--{name}", metavar="PATH", help=what)
    p.set_defaults(handler=_report)


def _report(args) -> int:
    secs = None
    if args.sections is not None:
        secs = [s.strip() for s in args.sections.split(",") if s.strip()]
        if not secs:
            raise InputError("--sections: empty list; name at least one section, or omit the flag")
        for key in secs:  # a section asked for that has nothing to show without the user's file
            reads, needs = SECTION_INPUTS.get(key, ((), False))
            if needs and not any(getattr(args, r, None) is not None for r in reads):
                flags = " or ".join(f"--{r} PATH" for r in reads)
                raise InputError(f"--sections {key} needs {flags} (it reports on your data)")
    if args.jobs == 0 or args.jobs < -1:
        raise InputError(f"--jobs must be a positive number of workers or -1, got {args.jobs}")
    for name in REPORT_FILES:  # before the (long) build: a folder or link in the way
        kind = safe_write.target_kind(Path(args.out) / name, "--out")[1]
        if kind == "special":
            raise InputError(f"--out {args.out}: {name} is not a regular file; remove it first")
    inputs = {k: getattr(args, k) for k in USER_INPUTS if getattr(args, k, None) is not None}
    _check_inputs(inputs)
    ctx = ReportContext(
        seed=args.seed, quick=args.quick, progress=not args.quiet, jobs=args.jobs, inputs=inputs
    )
    numbers = build_report(args.out, sections=secs, ctx=ctx)
    if not args.quiet:
        for note in numbers["headline"]["notes"]:
            print(f"note: {note}")
        print(f"wrote {args.out}/report.html and report.json ({len(numbers['sections'])} sections)")
    return 0


def _check_inputs(inputs: dict[str, str]) -> None:
    """A missing or unreadable file fails at the door, before any section is built."""
    for name, path in inputs.items():
        if not Path(path).is_file():
            raise InputError(f"--{name} {path}: no such file")
    if "ledger" in inputs:
        Ledger(inputs["ledger"]).close()
    if "curves" in inputs:  # a malformed curves table names its run, row and column here
        from ..curves import read_curves

        read_curves(inputs["curves"], what=f"--curves {inputs['curves']}")
    if "fit" in inputs:
        from ..supervised import SupervisedScalingLaw

        SupervisedScalingLaw.load(inputs["fit"])
    if "runs" in inputs:
        from ..report.sections.yours import read_runs

        read_runs(inputs["runs"])
