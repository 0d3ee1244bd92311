"""Every command and Python block in README.md runs as written.

The README's quick starts work from a folder prepared with ``lmforecast examples copy .``. Each
fenced ``bash`` block is run line by line (backslash continuations joined), each ``python`` block
as one script, in order, in one temporary folder; a failing line fails this test with its output.
The two install commands are run without their ``pip install ... &&`` prefix (the package under
test is already installed), and the test command itself is not re-run from inside the tests.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli_lines import in_process, run_main

README = Path(__file__).resolve().parents[1] / "README.md"
pytestmark = pytest.mark.slow


def readme_blocks() -> list[tuple[str, str]]:
    """(language, text) of every fenced block in the README, in order."""
    text = README.read_text()
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w*)\n(.*?)```", text, re.S)]


def commands(block: str) -> list[str]:
    joined = block.replace("\\\n", " ")
    out = []
    for line in joined.splitlines():
        line = line.split("  #")[0].strip() if not line.lstrip().startswith("#") else ""
        if line:
            out.append(line)
    return out


def runnable(cmd: str) -> str | None:
    """The command as the test runs it: without a leading pip install; None to skip it."""
    cmd = re.sub(r"^pip install [^&]*&&\s*", "", cmd)
    if cmd.startswith("pip install") or cmd.startswith("python -m pytest"):
        return None
    return cmd


def test_readme_has_the_documented_blocks():
    langs = [lang for lang, _ in readme_blocks()]
    assert "bash" in langs and "python" in langs
    all_cmds = [c for lang, b in readme_blocks() if lang == "bash" for c in commands(b)]
    # the two commands of the brief, exactly as .ci/run runs the second
    ci = (README.parent / ".ci" / "run").read_text()
    test_cmd = next(c for c in all_cmds if "python -m pytest" in c)
    assert test_cmd in ci
    assert any(c.startswith("pip install . && lmforecast report") for c in all_cmds)


def test_every_readme_block_runs_as_written(tmp_path, monkeypatch, capsys):
    # the main job (the first command) and any line using the shell run in bash through the
    # installed entry point; plain `lmforecast` lines run in-process through the same `main`
    # (a subprocess costs ~1 s of imports per line)
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    monkeypatch.chdir(tmp_path)
    ran = 0
    for lang, block in readme_blocks():
        if lang == "bash":
            for cmd in commands(block):
                cmd = runnable(cmd)
                if cmd is None:
                    continue
                argv = in_process(cmd) if ran else None
                if argv is not None:
                    code = run_main(argv)
                    err = capsys.readouterr().err
                    assert code == 0, f"README line failed: {cmd}\n{err[-3000:]}"
                    ran += 1
                    continue
                r = subprocess.run(
                    ["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True
                )
                assert r.returncode == 0, f"README line failed: {cmd}\n{r.stdout}\n{r.stderr}"
                ran += 1
        elif lang == "python":
            # in-process, as tests/test_docs.py runs a page's blocks: compiled on its own and run
            # in a fresh `__main__` namespace from the folder (a new interpreter costs ~1-3 s)
            from test_docs import run_python_block

            monkeypatch.setattr(sys, "argv", ["-c"])  # what a `python -c` script sees
            monkeypatch.setenv("MPLBACKEND", "Agg")
            run_python_block(block, f"README Python block {ran + 1}")
            capsys.readouterr()
            ran += 1
    assert ran >= 10
