"""Help that teaches: every option described with its default, every verb an example."""

from __future__ import annotations

import pytest

from lmforecast.cli.help import EXAMPLES, leaf_verbs
from lmforecast.cli.main import build_parser

VERBS = leaf_verbs(build_parser())


def test_every_verb_is_known():
    assert {"supervised fit", "distill plan", "osl fit", "report", "examples copy"} <= set(VERBS)


@pytest.mark.parametrize("name", sorted(VERBS))
def test_every_option_has_help_and_every_verb_an_example(name):
    p = VERBS[name]
    undocumented = [
        a.option_strings[0] if a.option_strings else a.dest for a in p._actions if not a.help
    ]
    assert not undocumented, f"{name}: options without help: {undocumented}"
    text = p.format_help()
    assert "examples" in text and f"lmforecast {name}" in text, name
    assert name in EXAMPLES


def test_defaults_are_shown():
    text = " ".join(VERBS["supervised fit"].format_help().split())
    assert "(default: auto)" in text and "(default: 0.001)" in text


@pytest.mark.slow
def test_every_help_example_runs_as_written(tmp_path, monkeypatch, capsys):
    # in the order of EXAMPLES (fits are saved before the verbs that load them); lines with a
    # trailing comment naming an extra or a local model are shown, not run. Plain lines run
    # in-process through the same `main` as the console script (a subprocess costs ~1 s of
    # imports per line, 50 s over the examples); lines using the shell (globs, pipes,
    # redirections), and the first line (the installed `lmforecast` entry point), in bash.
    import os
    import subprocess
    import sys

    from cli_lines import in_process, run_main
    from lmforecast.examples import copy

    copy(tmp_path)
    monkeypatch.chdir(tmp_path)
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    first = True
    for name, lines in EXAMPLES.items():
        for line in lines:
            if "#" in line or name.startswith("zoo build") or name == "report":
                continue
            if first or in_process(line) is None:
                r = subprocess.run(
                    ["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True
                )
                assert r.returncode == 0, f"{name}: {line}\n{r.stderr[-2000:]}"
                first = False
                continue
            argv = in_process(line)
            assert argv is not None, line
            code = run_main(argv)
            err = capsys.readouterr().err
            assert code == 0, f"{name}: {line}\n{err[-2000:]}"


def test_runs_tables_are_named_runs_everywhere(cli, tmp_path):
    # one spelling for a runs table across methods: --runs; a table given by
    # position, or none, is a one-line error
    from lmforecast.examples import path

    runs = path("supervised/runs.csv")
    for name in ("supervised fit", "distill fit", "backtest", "flp fit", "flpm fit"):
        assert "--runs" in VERBS[name].format_help(), name
    assert "RUNS" not in VERBS["supervised fit"].format_usage()
    base = ["supervised", "fit", "--no-intervals", "--json"]
    code, _, err = cli(*base, "--runs", runs)
    assert code == 0, err
    code, _, err = cli(*base)
    assert code == 2 and "--runs" in err and err.count("\n") == 1
    code, out, err = cli(*base, runs)
    assert code == 2 and out == "" and err.count("\n") == 1 and "runs.csv" in err
    code, _, err = cli(*base, "--runs", runs, tmp_path / "other.csv")
    assert code == 2 and "other.csv" in err and err.count("\n") == 1


def test_top_level_and_group_help_show_examples_that_run(tmp_path, monkeypatch):
    """Every first command of `lmforecast --help` runs; a line the README shows as written (the
    `report` and `examples` lines, `backtest --suite`) is left to tests/test_readme.py, which
    runs every README command in order, so it is not run twice."""
    from pathlib import Path

    from cli_lines import run_main
    from lmforecast.cli.help import GETTING_STARTED
    from lmforecast.examples import copy

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text().splitlines()

    top = build_parser().format_help()
    assert all(line in top for line in GETTING_STARTED)
    group = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices)
    assert "lmforecast supervised predict" in group.choices["supervised"].format_help()
    copy(tmp_path)
    monkeypatch.chdir(tmp_path)
    ran = 0
    for line in GETTING_STARTED:
        cmd = line.split("#")[0].split()
        if any(r.split("&&")[-1].split() == cmd for r in readme):  # the README test runs it
            continue
        assert cmd[1] not in ("report", "examples"), line  # those are in the README
        assert run_main(cmd[1:]) == 0, line
        ran += 1
    assert ran >= 3
