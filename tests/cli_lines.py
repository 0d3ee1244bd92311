"""Run a documented `lmforecast ...` line in-process when it needs no shell (helper for the
README, docs and help-example tests: a subprocess costs ~1 s of imports per line)."""

from __future__ import annotations

import shlex

SHELL_CHARS = "*?|<>&;$`"


def in_process(cmd: str) -> list[str] | None:
    """argv for `lmforecast.cli.main.main` when `cmd` is a plain `lmforecast` line (no shell
    syntax); None when it needs bash."""
    if not cmd.startswith("lmforecast ") or any(c in cmd for c in SHELL_CHARS):
        return None
    return shlex.split(cmd)[1:]


def run_main(argv: list[str]) -> int:
    from lmforecast.cli.main import main

    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return 0 if code is None else int(code)


def run_in_examples(folder, monkeypatch, line: str) -> int:
    """Copy the bundled examples into `folder`, work there, and run the plain `lmforecast`
    line `line` (without its `lmforecast` prefix) in-process; its exit status."""
    from lmforecast.examples import copy as copy_examples

    copy_examples(folder)
    monkeypatch.chdir(folder)
    return run_main(line.split())
