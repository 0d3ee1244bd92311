"""Start-up imports only what the line needs; global flags anywhere on the line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lmforecast.cli.commands import COMMANDS
from lmforecast.cli.main import _command_table, build_parser, commands_in_source

HEAVY = ("numpy", "pandas", "scipy", "matplotlib", "lmforecast.supervised", "lmforecast.osl")


def _modules_after(argv: list[str]) -> set[str]:
    code = (
        "import json, sys\n"
        "from lmforecast.cli.main import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('\\nMODS' + json.dumps(sorted(sys.modules)))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return set(json.loads(r.stderr.rsplit("MODS", 1)[1]))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []])
def test_version_and_help_import_no_heavy_module(argv):
    mods = _modules_after(argv)
    assert not [m for m in HEAVY if m in mods], sorted(m for m in HEAVY if m in mods)


def test_a_verb_imports_only_its_own_command_module():
    mods = _modules_after(["supervised", "predict", "--preset", "hoffmann2022", "--params", "1e9",
                           "--tokens", "2e10"])  # fmt: skip
    assert "lmforecast.cli.supervised" in mods
    assert not {"lmforecast.cli.osl", "lmforecast.cli.flp", "lmforecast.osl"} & mods


def test_command_table_read_from_source_matches_the_registered_parsers():
    full = build_parser()
    sub = next(a for a in full._actions if a.__class__.__name__ == "_SubParsersAction")
    registered = {a.dest: a.help for a in sub._choices_actions}
    assert {name: text for name, text, _ in commands_in_source()} == registered
    assert {"supervised", "flp", "flpm", "osl", "report"} <= set(registered)


def test_command_table_matches_the_modules():
    # the static table the parser reads at start-up (so no module is parsed on every call) is
    # exactly what the modules' register() calls declare, in their order: editing a command's
    # name or help without the table fails here
    assert COMMANDS == commands_in_source()
    assert _command_table() == COMMANDS  # every command module is installed here


def test_top_level_help_lists_every_command_with_its_help(cli):
    code, out, _ = cli("--help")
    assert code == 0
    for name, _text, _ in _command_table():
        assert name in out
    assert "supervised pretraining-loss laws" in out


def test_global_flags_are_accepted_after_the_verb(cli):
    line = ["supervised", "predict", "--preset", "hoffmann2022", "--params", "7e10",
            "--tokens", "1.4e12", "--json"]  # fmt: skip
    code, ref, _ = cli(*line)
    assert code == 0
    for extra in (["--debug"], ["--scheduler", "joblib"], ["--scheduler=joblib", "--debug"]):
        code, out, err = cli(*line, *extra)
        assert code == 0, err
        assert json.loads(out) == json.loads(ref)
    # a bad scheduler given after the verb is still checked by the door
    code, _, err = cli(*line, "--scheduler", "nonsense:3")
    assert code == 2 and "--scheduler" in err


def test_debug_after_the_verb_shows_the_traceback(cli, monkeypatch):
    import lmforecast.cli.supervised as mod

    def boom(args):
        raise RuntimeError("planted")

    monkeypatch.setattr(mod, "_predict", boom)
    line = ["supervised", "predict", "--preset", "hoffmann2022", "--params", "1e9",
            "--tokens", "2e10"]  # fmt: skip
    code, _, err = cli(*line)
    assert code == 1 and "planted" in err and "Traceback" not in err
    code, _, err = cli(*line, "--debug")
    assert code == 1 and "Traceback" in err


def test_the_parser_is_built_once_and_runs_the_handler_its_module_holds_now(cli, monkeypatch):
    import lmforecast.cli.main as main_mod
    import lmforecast.cli.supervised as mod

    line = ["supervised", "predict", "--preset", "hoffmann2022", "--params", "1e9",
            "--tokens", "2e10", "--json"]  # fmt: skip
    code, first, err = cli(*line)
    assert code == 0, err
    assert main_mod._parser_for("supervised") is main_mod._parser_for("supervised")
    monkeypatch.setattr(mod, "_predict", lambda args: print("patched") or 0)
    code, out, _ = cli(*line)
    assert code == 0 and out.strip() == "patched"
    monkeypatch.undo()
    code, again, _ = cli(*line)
    assert code == 0 and again == first  # a cached parser parses the same line the same way


def test_require_all_names_the_missing_module_before_importing_the_others(monkeypatch):
    from lmforecast.errors import OptionalDependencyError, require_all

    monkeypatch.delitem(sys.modules, "json.tool", raising=False)
    with pytest.raises(OptionalDependencyError, match=r"'no_such_module_x'.*lmforecast\[hf\]"):
        require_all(("json.tool", "no_such_module_x"), "hf")
    assert "json.tool" not in sys.modules  # found, never imported: the missing one failed first
    assert require_all(("json",), "hf") == (json,)
