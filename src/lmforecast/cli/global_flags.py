"""The global flags that take a value on a forecasting verb's line (`--ledger PATH --label
NAME`), kept in a module that imports nothing heavy: `lmforecast --version` and `--help` read it."""

from __future__ import annotations

import argparse

from .options import add

#: (command, verb) that forecast and so accept the global --ledger/--label.
FORECAST_VERBS = {
    ("supervised", "predict"),
    ("supervised", "allocate"),
    ("distill", "predict"),
    ("flp", "predict"),
    ("flpm", "predict"),
    ("downstream", "predict"),
    ("osl", "predict"),
    ("salience", "predict"),
    ("curves", "predict"),
}
GLOBAL_FLAGS = ("--ledger", "--label")
OWN_LEDGER_COMMANDS = ("ledger", "report")  # commands whose own --ledger means something else


def add_global_flags(parser: argparse.ArgumentParser) -> None:
    add(parser, "--ledger", "--label")
