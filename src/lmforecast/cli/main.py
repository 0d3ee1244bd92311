"""The `lmforecast` command: one sub-command group per method.

Each group lives in its own module exposing `register(subparsers)`; modules not present in this
installation are skipped, so methods plug in without touching this file's logic.

Every verb goes through the same door (`run_handler`): flags are range-checked by the shared
flag policy (`cli.flags`), output paths are checked for writability (and for not being an input)
before any work, user mistakes (`InputError`) print one line and exit 2, and anything else that
escapes prints one ``internal error`` line and exits 1 (``--debug`` shows the traceback).

Start-up imports only what the line needs: `main` finds the command word and imports
that one module; the top-level ``--help`` and ``--version`` import none (each command's one-line
help comes from the table `cli.commands.COMMANDS`, which a test keeps equal to the modules' own
`register` calls, read from their source by `commands_in_source`). The global flags ``--debug`` and
``--scheduler SPEC`` are accepted anywhere on the line (`_hoist_global_flags`).
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import importlib.util
import os
import re
import sys
import traceback
import warnings

from .. import __version__
from ..errors import InputError, OptionalDependencyError
from .commands import COMMANDS
from .global_flags import GLOBAL_FLAGS as LEDGER_FLAGS
from .global_flags import OWN_LEDGER_COMMANDS, add_global_flags

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
    "lmforecast.cli.dataconstrained",
    "lmforecast.cli.isoflop",
    "lmforecast.cli.recipes",
    "lmforecast.cli.nextrun",
    "lmforecast.cli.shape",
    "lmforecast.cli.runs",
    "lmforecast.cli.curves",
    "lmforecast.cli.ledger",
]


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # "-1e21" is a (negative) value, as "-1" and "-.5" are to argparse, so `--flops -1e21`
        # says it must be positive instead of "expected one argument"
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$", re.I)
        self._line: list[str] = []

    def parse_known_args(self, args=None, namespace=None):
        # the line this parser reads (a verb's parser gets the words after its name), kept so
        # an error names a mistyped flag rather than what it made go missing
        self._line = [str(a) for a in (sys.argv[1:] if args is None else args)]
        return super().parse_known_args(args, namespace)

    def error(self, message):  # one line, exit 2 (argparse's own convention)
        unknown = _unknown_options(self, self._line)
        if unknown:
            message = unknown
        else:
            message += _did_you_mean(self, message)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _subparsers(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of `parser` and of its sub-commands, recursively."""
    out = set(parser._option_string_actions)
    sub = _subparsers(parser)
    for child in sub.choices.values() if sub else ():
        out |= _option_strings(child)
    return out


def _close(flag: str, known) -> str | None:
    import difflib

    close = difflib.get_close_matches(flag.replace("_", "-"), sorted(known), n=1, cutoff=0.75)
    return close[0] if close and close[0] != flag else None


def _unknown_options(parser: argparse.ArgumentParser, line: list[str]) -> str:
    """'unknown option --tokns; did you mean --tokens?' for the ``--`` words of `line` that no
    parser along it knows (walking into the command and verb named on it), or where a verb's
    flag stands before the verb, where it goes; "" when every flag is known."""
    at, where, path, value_next = parser, [], [], False
    for tok in line:
        if tok == "--":
            break
        if value_next:  # the value of the flag before it
            value_next = False
            continue
        sub = _subparsers(at)
        if sub is not None and tok in sub.choices:
            at = sub.choices[tok]
            path.append(tok)
            continue
        if sub is not None and not tok.startswith("-"):
            return ""  # a mistyped command or verb: argparse's "invalid choice" names it
        action = at._option_string_actions.get(tok)
        value_next = action is not None and action.nargs != 0
        flag = tok.split("=", 1)[0]
        if tok.startswith("--") and not any(o.startswith(flag) for o in at._option_string_actions):
            where.append((flag, at))  # (argparse takes an unambiguous prefix as the flag)
    deepest = at
    if not where:
        return ""
    flag, owner = where[0]
    if owner is not deepest and flag in deepest._option_string_actions:
        verb = " ".join(path)
        return (
            f"{flag} is an option of `{verb}`: put it after the verb (lmforecast {verb} ... {flag})"
        )
    hints = []
    for flag, owner in where:
        close = _close(flag, owner._option_string_actions) or _close(flag, _option_strings(owner))
        hints.append((flag, close))
    if len(hints) == 1:
        flag, close = hints[0]
        return f"unknown option {flag}" + (f"; did you mean {close}?" if close else "")
    return "unknown options " + ", ".join(f"{f} (did you mean {c}?)" if c else f for f, c in hints)


def _did_you_mean(parser: argparse.ArgumentParser, message: str) -> str:
    """'; did you mean --loss-col?' for a mistyped flag in argparse's unrecognized-arguments
    message (`--loss_col`, `--bootstraps`)."""
    head = "unrecognized arguments: "
    if not message.startswith(head):
        return ""
    known = _option_strings(parser)
    hints = []
    for tok in message[len(head) :].split():
        if tok.startswith("--"):
            flag = tok.split("=", 1)[0]
            close = _close(flag, known)
            if close:  # a flag of another verb is not a typo of itself
                hints.append((flag, close))
    if len(hints) == 1:
        return f" (did you mean {hints[0][1]}?)"
    return f" (did you mean {', '.join(f'{c} for {f}' for f, c in hints)}?)" if hints else ""


@functools.cache
def _command_table() -> tuple[tuple[str, str, str], ...]:
    """(command, one-line help, module) of every command whose module is installed
    (`cli.commands.COMMANDS`, kept equal to `commands_in_source()` by a test)."""
    return tuple(row for row in COMMANDS if importlib.util.find_spec(row[2]) is not None)


def commands_in_source() -> tuple[tuple[str, str, str], ...]:
    """(command, one-line help, module) of every command, read from the modules' source without
    importing them: each `register(sub)` calls ``sub.add_parser("name", help="...")``."""
    rows = []
    for mod in COMMAND_MODULES:
        spec = importlib.util.find_spec(mod)
        if spec is None or not spec.origin:
            continue
        with open(spec.origin, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for fn in tree.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "register" and fn.args.args):
                continue
            sub = fn.args.args[0].arg
            for node in ast.walk(fn):
                if not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_parser"
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == sub
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):
                    continue
                text = ""
                for kw in node.keywords:
                    if kw.arg == "help":
                        try:
                            text = ast.literal_eval(kw.value)
                        except ValueError:
                            text = ""
                rows.append((node.args[0].value, text, mod))
    return tuple(rows)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `lmforecast` parser. With `command` (a command word, or ``""`` for none), only the
    module defining that command is imported; the other commands are listed by name and help."""
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
    add_global_flags(parser)  # --ledger PATH --label NAME (cli/ledger.py)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = False  # a bare `lmforecast` prints the command list (see main)
    if command is None:
        wanted = [m for m in COMMAND_MODULES if importlib.util.find_spec(m) is not None]
    else:
        wanted = sorted({m for name, _, m in _command_table() if name == command})
    for name, text, mod in _command_table():
        if mod not in wanted:
            sub.add_parser(name, help=text, add_help=False)
    for mod in COMMAND_MODULES:
        if mod in wanted:
            importlib.import_module(mod).register(sub)
    order = [name for name, _, _ in _command_table()]
    sub._choices_actions.sort(key=lambda a: order.index(a.dest) if a.dest in order else len(order))
    if wanted:
        from .flags import apply_flag_policy

        apply_flag_policy(parser)
    from .help import decorate

    decorate(parser)
    return parser


@functools.cache
def _parser_for(command: str | None) -> argparse.ArgumentParser:
    """`build_parser(command)`, built once per process: a notebook or test calling `main`
    many times pays the ~50 ms of building (argparse's help-text lookups) once per command."""
    return build_parser(command)


def _current(handler):
    """The handler as its module holds it now: a parser built once keeps the function it was
    given, and a module attribute replaced since (a reload, a test's patch) must be the one run."""
    module = sys.modules.get(getattr(handler, "__module__", ""))
    name = getattr(handler, "__qualname__", ".")
    return handler if module is None or "." in name else getattr(module, name, handler)


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    text = str(message).replace("\n", " ")
    sys.stderr.write(f"lmforecast: warning: {text}\n")


# not right after a quote: a quoted value is the user's own text (a cell reading
# 'np.float64(1.5)' is shown as it is, not as 1.5, which would hide why it is not a number)
_NUMPY_REPR = re.compile(
    r"(?<!['\"])(?:np\.(?:float|int|uint|complex)\d*\(([^()]*)\)|np\.(?:str_|bool_?)\(([^()]*)\))"
)
_NUMPY_BOOL = re.compile(r"(?<!['\"])np\.(True|False)_")


def _one_line(exc: BaseException) -> str:
    """The message on one line, numpy scalar reprs (``np.float64(1.5)``) shown as plain values
    (a safety net: messages are built with `errors.fmt_value`)."""
    msg = " ".join(str(exc).split()) or type(exc).__name__
    msg = _NUMPY_REPR.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), msg)
    msg = _NUMPY_BOOL.sub(r"\1", msg)
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
        if getattr(args, "ledger", None) is not None or getattr(args, "label", None) is not None:
            from .ledger import check_ledger_flags  # start-up: only where a ledger flag is given

            check_ledger_flags(args)
        with scheduler(sched):
            code = _current(args.handler)(args)
    except (InputError, OptionalDependencyError) as exc:
        sys.stderr.write(f"lmforecast: error: {_one_line(exc)}\n")
        return 2
    except KeyboardInterrupt as exc:  # SIGINT or SIGTERM (`parallel.lifeline`): end every worker
        import logging

        from ..parallel import lifeline

        logging.getLogger("distributed").disabled = True  # a cluster torn down mid-task logs
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
        name = " ".join(str(getattr(exc, "filename", None) or "").split())  # one line, whole
        where = f"{name if len(name) <= 1000 else name[:997] + '...'}: " if name else ""
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


def _hoist_global_flags(
    argv: list[str], value_flags: tuple[str, ...] = ("--scheduler",)
) -> tuple[list[str], bool]:
    """Move the global flags that take a value (``--scheduler SPEC``, and ``--ledger PATH
    --label NAME`` on forecasting verbs; also written ``--flag=VALUE``) to the front of the line
    wherever they were given, and take ``--debug`` out (returned as a flag); nothing after
    ``--`` is touched."""
    rest, front, debug, i = [], [], False, 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest.extend(argv[i:])
            break
        if a == "--debug":
            debug = True
        elif a in value_flags and i + 1 < len(argv):
            front += argv[i : i + 2]
            i += 1
        elif a.split("=", 1)[0] in value_flags and "=" in a:
            front.append(a)
        else:
            rest.append(a)
        i += 1
    return front + rest, debug


def _command_word(argv: list[str]) -> str:
    """The command named on a line whose global flags were hoisted ("" when none is named)."""
    i = 0
    while i < len(argv):
        if argv[i] in ("--scheduler", *LEDGER_FLAGS):
            i += 2
            continue
        if not argv[i].startswith("-"):
            return argv[i]
        i += 1
    return ""


def main(argv: list[str] | None = None) -> int:
    real_process = argv is None  # the `lmforecast` command itself, not an in-process call
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = os.environ.get("LMFORECAST_DEBUG", "") not in ("", "0")
    word = _command_word(argv)
    value_flags = (
        ("--scheduler",) if word in OWN_LEDGER_COMMANDS else ("--scheduler", *LEDGER_FLAGS)
    )
    argv, debug_flag = _hoist_global_flags(argv, value_flags)  # accepted anywhere on the line
    debug = debug or debug_flag
    follow = "--follow-symlinks" in argv
    argv = [a for a in argv if a != "--follow-symlinks"]
    known = {name for name, _, _ in _command_table()}
    parser = _parser_for(word if word in known or not word else None)
    args = parser.parse_args(argv)
    if args.command is None:
        sys.stderr.write(
            f"usage: lmforecast [--version] [--debug] [--scheduler SPEC] COMMAND ...\n"
            f"commands: {_commands(parser)}\n"
            "run `lmforecast COMMAND --help` for a command's verbs and flags\n"
        )
        return 2
    warnings.showwarning = _one_line_warning
    from ..parallel import lifeline  # start-up: imported once the line has parsed
    from ..store.safe_write import set_follow_symlinks

    old = set_follow_symlinks(follow)
    try:
        with lifeline.signals_end_workers():
            code = run_handler(args, debug)
    finally:
        set_follow_symlinks(old)
    if code in (130, 143):
        lifeline.clear_interrupt_mark()  # else `python -m` may exit by SIGINT, not with `code`
        if real_process:
            # the workers were just ended: what joblib's exit handlers then print about them (a
            # relaunched resource tracker's traceback) is noise; "interrupted" is the last line
            lifeline.silence_stderr()
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
