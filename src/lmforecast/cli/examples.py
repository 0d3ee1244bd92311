"""`lmforecast examples`: list or copy the example inputs the README's quick starts use."""

from __future__ import annotations

import argparse

from ..errors import InputError
from .common import print_json
from .options import add

EPILOG = """examples:
  lmforecast examples list
  lmforecast examples copy .     # then run the README's quick-start lines from this folder"""


def register(sub) -> None:
    p = sub.add_parser(
        "examples",
        help="list or copy the example input files",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    ls = verbs.add_parser("list", help="list the example files (method/file)", epilog=EPILOG)
    add(ls, "--json", help="print a JSON list")
    ls.set_defaults(handler=_list)
    cp = verbs.add_parser(
        "copy",
        help="copy every example into DIR/<method>/<file>",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cp.add_argument("dir", metavar="DIR", help="destination folder (created if missing)")
    cp.set_defaults(handler=_copy)


def _list(args) -> int:
    from ..examples import names, path

    if args.json:
        print_json({n: str(path(n)) for n in names()})
    else:
        print("\n".join(names()))
    return 0


def _copy(args) -> int:
    from ..examples import copy

    if not str(args.dir).strip():  # Path("") is the current folder: never copy there unasked
        raise InputError("examples copy: empty folder name; give a folder, e.g. `examples copy .`")
    written = copy(args.dir)
    print(f"copied {len(written)} example file(s) into {args.dir}")
    return 0
