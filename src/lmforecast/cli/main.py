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
    "lmforecast.cli.downstream",
    "lmforecast.cli.osl",
    "lmforecast.cli.salience",
    "lmforecast.cli.zoo",
    "lmforecast.cli.evals",
    "lmforecast.cli.report",
    "lmforecast.cli.examples",
]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's own convention)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="lmforecast", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"lmforecast {__version__}")
    parser.add_argument(
        "--scheduler",
        metavar="SPEC",
        default=None,
        help="where parallel loops run: joblib (default), local:N (a Dask LocalCluster of N "
        "worker processes) or tcp://HOST:PORT (a running Dask scheduler); default "
        "$LMFORECAST_SCHEDULER. Needs lmforecast[dask]. See docs/scaling-out.md",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in COMMAND_MODULES:
        if importlib.util.find_spec(mod) is None:
            continue
        importlib.import_module(mod).register(sub)
    from .help import decorate

    decorate(parser)
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(f"lmforecast: warning: {message}\n")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    warnings.showwarning = _one_line_warning
    try:
        from ..parallel import parse_scheduler, scheduler  # checked before the verb runs

        spec = args.scheduler
        with scheduler(None if spec is None else parse_scheduler(spec, "--scheduler")):
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
