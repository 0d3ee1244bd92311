"""`lmforecast zoo build|show`: train the small-model zoo, or summarise its tables."""

from __future__ import annotations

import argparse

from ..errors import InputError
from .common import print_json
from .options import add


def register(sub) -> None:
    p = sub.add_parser("zoo", help="the small-model zoo: really trained tiny LMs")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    b = verbs.add_parser(
        "build",
        help="train a zoo preset from scratch (resumable) and write its tables",
        description="Seeded and deterministic on one machine; a killed build resumes where it "
        "stopped. Needs the optional extra torch (pip install 'lmforecast[torch]').",
    )
    add(
        b,
        "--preset",
        required=True,
        help="full (about 16 min on one CPU core) or mini (under 1 min)",
    )
    add(b, "--out", required=True, help="output folder (new, empty, or this build's)")
    add(
        b,
        "--jobs",
        default=1,
        help="runs trained at once, one CPU core each (default 1; the tables do not depend on it)",
    )
    add(b, "--json", "--quiet")
    b.set_defaults(handler=_build)

    s = verbs.add_parser("show", help="summarise zoo tables (default: the bundled ones)")
    s.add_argument("folder", nargs="?", help="a build folder or its tables/ (default: bundled)")
    add(s, "--json", "--quiet")
    s.set_defaults(handler=_show)


def _build(args: argparse.Namespace) -> int:
    from ..zoo.build import build_zoo
    from ..zoo.presets import get_preset

    get_preset(args.preset)  # a bad preset fails before anything else
    meta = build_zoo(args.preset, args.out, progress=not args.quiet, jobs=args.jobs)
    summary = {
        "preset": meta["preset"],
        "runs": len(meta["runs"]),
        "wall_s": round(meta["wall_s_total"], 1),
        "tables": f"{args.out}/tables",
    }
    if args.json:
        print_json(summary)
    else:
        print(
            f"zoo {summary['preset']}: {summary['runs']} runs in {summary['wall_s']} s; "
            f"tables in {summary['tables']}"
        )
    return 0


def _show(args: argparse.Namespace) -> int:
    from ..zoo.tables import load_zoo

    z = load_zoo(args.folder)
    if z.runs.empty:
        raise InputError(f"{z.folder}: the runs table is empty")
    counts = z.runs.groupby("kind").size().to_dict()
    info = {
        "preset": z.metadata.get("preset"),
        "runs": counts,
        "checkpoints": len(z.checkpoints),
        "N_range": [int(z.runs["N"].min()), int(z.runs["N"].max())],
        "wall_s": z.metadata.get("wall_s_total"),
    }
    if args.json:
        print_json(info)
    else:
        cols = ["model", "N", "D", "loss", "hellaswag_like", "arith", "code_mc"]
        cols = [c for c in cols if c in z.runs.columns]
        print(z.runs[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0
