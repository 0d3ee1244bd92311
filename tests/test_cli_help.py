"""Help that teaches (issue 14): every option described with its default, every verb an example."""

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
    assert "(default: chinchilla-gamma)" in text and "(default: 0.001)" in text


@pytest.mark.slow
def test_every_help_example_runs_as_written(tmp_path):
    # in the order of EXAMPLES (fits are saved before the verbs that load them); lines with a
    # trailing comment naming an extra or a local model are shown, not run
    import os
    import subprocess
    import sys

    from lmforecast.examples import copy

    copy(tmp_path)
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    for name, lines in EXAMPLES.items():
        for line in lines:
            if "#" in line or name.startswith("zoo build") or name == "report":
                continue
            r = subprocess.run(
                ["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True
            )
            assert r.returncode == 0, f"{name}: {line}\n{r.stderr[-2000:]}"
