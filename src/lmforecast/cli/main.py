"""The `lmforecast` command: one sub-command group per method.

Each group lives in its own module exposing `register(subparsers)`; modules not present in this
installation are skipped, so methods plug in without touching this file's logic.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import warnings

from .. import __version__
from ..errors import InputError, OptionalDependencyError

COMMAND_MODULES = [
    "lmforecast.cli.supervised",
    "lmforecast.cli.distill",
    "lmforecast.cli.flp",
    "lmforecast.cli.osl",
    "lmforecast.cli.salience",
    "lmforecast.cli.zoo",
    "lmforecast.cli.report",
    "lmforecast.cli.backtest",
]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's own convention)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="lmforecast", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"lmforecast {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in COMMAND_MODULES:
        if importlib.util.find_spec(mod) is None:
            continue
        importlib.import_module(mod).register(sub)
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(f"lmforecast: warning: {message}\n")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    warnings.showwarning = _one_line_warning
    try:
        code = args.handler(args)
    except (InputError, OptionalDependencyError) as exc:
        msg = str(exc).replace("\n", " ")
        sys.stderr.write(f"lmforecast: error: {msg}\n")
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        sys.stderr.write("lmforecast: interrupted\n")
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
