"""The `lmforecast` command: one sub-command group per method.

Each group lives in its own module exposing `register(subparsers)`; modules not present in this
installation are skipped, so methods plug in without touching this file's logic.

Every verb goes through the same door (`run_handler`): flags are range-checked by the shared
flag policy (`cli.flags`), output paths are checked for writability (and for not being an input)
before any work, user mistakes (`InputError`) print one line and exit 2, and anything else that
escapes prints one ``internal error`` line and exits 1 (``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import sys
import traceback
import warnings

from .. import __version__
from ..errors import InputError, OptionalDependencyError
from ..parallel import lifeline
from ..safe_write import set_follow_symlinks

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
    "lmforecast.cli.backtest",
    "lmforecast.cli.examples",
]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's own convention)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from .flags import apply_flag_policy

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
    parser.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="let an output path that is a symbolic link be written through to its target "
        "(refused by default; accepted anywhere on the line)",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the full traceback of an internal error (also: LMFORECAST_DEBUG=1)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = False  # a bare `lmforecast` prints the command list (see main)
    for mod in COMMAND_MODULES:
        if importlib.util.find_spec(mod) is None:
            continue
        importlib.import_module(mod).register(sub)
    apply_flag_policy(parser)
    from .help import decorate

    decorate(parser)
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    text = str(message).replace("\n", " ")
    sys.stderr.write(f"lmforecast: warning: {text}\n")


_NUMPY_REPR = re.compile(
    r"np\.(?:float|int|uint|complex)\d*\(([^()]*)\)|np\.(?:str_|bool_?)\(([^()]*)\)"
)


def _one_line(exc: BaseException) -> str:
    """The message on one line, numpy scalar reprs (``np.float64(1.5)``) shown as plain values
    (a safety net: messages are built with `errors.fmt_value`)."""
    msg = " ".join(str(exc).split()) or type(exc).__name__
    msg = _NUMPY_REPR.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), msg)
    msg = msg.replace("np.True_", "True").replace("np.False_", "False")
    return msg if len(msg) <= 400 else msg[:397] + "..."


def _commands(parser: argparse.ArgumentParser) -> str:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return ", ".join(a.choices)
    return ""  # pragma: no cover


def run_handler(args: argparse.Namespace, debug: bool = False) -> int:
    """Run a parsed command behind the door: pre-flight checks, then the handler; every
    failure becomes one stderr line and an exit status (2 user mistake, 1 internal error)."""
    from .flags import preflight

    try:
        from ..parallel import parse_scheduler, scheduler  # checked before the verb runs

        spec = getattr(args, "scheduler", None)
        sched = None if spec is None else parse_scheduler(spec, "--scheduler")
        notes = preflight(args)
        with scheduler(sched):
            code = args.handler(args)
    except (InputError, OptionalDependencyError) as exc:
        sys.stderr.write(f"lmforecast: error: {_one_line(exc)}\n")
        return 2
    except KeyboardInterrupt as exc:  # SIGINT or SIGTERM (`parallel.lifeline`): end every worker
        lifeline.end_children()
        sys.stderr.write("lmforecast: interrupted\n")
        return 128 + lifeline.signal_number(exc)  # 130 for SIGINT, 143 for SIGTERM
    except BrokenPipeError:  # stdout closed early (e.g. `| head`): not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:  # pragma: no cover
            pass
        return 0
    except OSError as exc:  # the environment refused a read/write the door could not foresee
        if debug:
            traceback.print_exc()
        name = " ".join(str(getattr(exc, "filename", None) or "").split())  # one line, short
        where = f"{name if len(name) <= 80 else name[:77] + '...'}: " if name else ""
        sys.stderr.write(f"lmforecast: error: {where}{exc.strerror or _one_line(exc)}\n")
        return 2
    except Exception as exc:
        if debug:
            traceback.print_exc()
        sys.stderr.write(
            f"lmforecast: internal error: {type(exc).__name__}: {_one_line(exc)} "
            "(run with --debug for the traceback)\n"
        )
        return 1
    if not code:
        for n in notes:
            sys.stderr.write(f"lmforecast: note: {n}\n")
    return int(code or 0)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = os.environ.get("LMFORECAST_DEBUG", "") not in ("", "0")
    if "--debug" in argv:  # accepted anywhere on the line, not only before the command
        argv = [a for a in argv if a != "--debug"]
        debug = True
    follow = "--follow-symlinks" in argv
    argv = [a for a in argv if a != "--follow-symlinks"]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        sys.stderr.write(
            f"usage: lmforecast [--version] [--debug] [--scheduler SPEC] COMMAND ...\n"
            f"commands: {_commands(parser)}\n"
            "run `lmforecast COMMAND --help` for a command's verbs and flags\n"
        )
        return 2
    warnings.showwarning = _one_line_warning
    old = set_follow_symlinks(follow)
    try:
        with lifeline.signals_end_workers():
            return run_handler(args, debug)
    finally:
        set_follow_symlinks(old)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
