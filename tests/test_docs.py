"""Every Python block and shell line in docs/*.md runs as written (issue 26).

Like tests/test_readme.py for the README: each doc page runs in its own fresh folder prepared
with ``lmforecast examples copy .``; each fenced ``bash``/``sh`` block line by line (backslash
continuations joined), each ``python`` block as its own script, in order. Blocks that document
a command's synopsis are fenced as ``text``; a block that needs what a test cannot have (a
Dask cluster on another host, a local Hugging Face model, ten minutes) is fenced ``bash notest``
or ``python notest`` and `test_skipped_blocks_say_why` checks that its first line says why.
Pages do not name internal data paths (``/work/...``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli_lines import in_process, run_main
from test_readme import commands  # the README's line splitter, shared

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(p for p in DOCS.glob("*.md"))
FENCE = re.compile(r"```([^\n]*)\n(.*?)```", re.S)


def blocks(page: Path) -> list[tuple[str, str]]:
    """(info string, text) of every fenced block of a page, in order."""
    return [(m.group(1).strip(), m.group(2)) for m in FENCE.finditer(page.read_text())]


def _runnable_pages() -> list[Path]:
    return [p for p in PAGES if any(i in ("bash", "sh", "python") for i, _ in blocks(p))]


def test_every_block_is_labelled():
    for page in PAGES:
        for info, text in blocks(page):
            assert info, f"{page.name}: unlabelled block (python, bash, text, ...):\n{text[:200]}"


def test_skipped_blocks_say_why():
    for page in PAGES:
        for info, text in blocks(page):
            if info.endswith("notest"):
                assert text.lstrip().startswith("#"), f"{page.name}: say why it is not run:\n{text}"


def test_no_internal_paths():
    for page in PAGES:
        assert "/work/" not in page.read_text(), f"{page.name} names an internal path"


@pytest.mark.slow
@pytest.mark.parametrize("page", _runnable_pages(), ids=lambda p: p.name)
def test_every_doc_block_runs_as_written(page, tmp_path, monkeypatch, capsys):
    # plain `lmforecast` lines run in-process through the CLI's `main` (tests/cli_lines.py);
    # lines using the shell, and Python blocks, in a subprocess
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    r = subprocess.run(
        [sys.executable, "-m", "lmforecast", "examples", "copy", "."],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    ran = 0
    for info, block in blocks(page):
        if info in ("bash", "sh"):
            for cmd in commands(block):
                argv = in_process(cmd)
                if argv is not None:
                    monkeypatch.chdir(tmp_path)
                    code = run_main(argv)
                    err = capsys.readouterr().err
                    assert code == 0, f"{page.name}: {cmd}\n{err[-2000:]}"
                    ran += 1
                    continue
                r = subprocess.run(
                    ["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True
                )
                assert r.returncode == 0, f"{page.name}: {cmd}\n{r.stdout[-2000:]}\n{r.stderr}"
                ran += 1
        elif info == "python":
            r = subprocess.run(
                [sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True,
                text=True,
            )  # fmt: skip
            assert r.returncode == 0, f"{page.name} Python block failed:\n{block}\n{r.stderr}"
            ran += 1
    assert ran
