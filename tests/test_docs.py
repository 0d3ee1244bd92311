"""Every Python block and shell line in docs/*.md runs as written; every table of numbers says
what regenerates it.

Like tests/test_readme.py for the README: each doc page runs in its own fresh folder prepared
with ``lmforecast examples copy .``; each fenced ``bash``/``sh`` block line by line (backslash
continuations joined), each ``python`` block as its own script, in order. Plain ``lmforecast``
lines and Python blocks run in the test's process (a fresh namespace per block, as a script has),
lines using the shell in bash; a repeated ``pip install`` line runs once. Blocks that document
a command's synopsis are fenced as ``text``; a block that needs what a test cannot have (a
Dask cluster on another host, a local Hugging Face model, ten minutes) is fenced ``bash notest``
or ``python notest`` and `test_skipped_blocks_say_why` checks that its first line says why.
Pages do not name internal data paths (``/work/...``).
"""

from __future__ import annotations

import builtins
import os
import re
import subprocess
import sys
import traceback
import warnings
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


def run_python_block(block: str, name: str) -> None:
    """Run a Python block as its own script, in-process: compiled on its own and executed in a
    fresh ``__main__`` namespace from the current folder, warnings ignored, figures closed after
    it (what ``python -c block`` did, without a new interpreter's ~1-2 s of imports per block)."""
    code = compile(block, name, "exec")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(code, {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        assert exc.code in (None, 0), f"{name} exited with {exc.code}:\n{block}"
    except Exception:
        pytest.fail(f"{name} failed:\n{block}\n{traceback.format_exc()[-3000:]}")
    finally:
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close("all")


@pytest.mark.slow
@pytest.mark.parametrize("page", _runnable_pages(), ids=lambda p: p.name)
def test_every_doc_block_runs_as_written(page, tmp_path, monkeypatch, capsys):
    # plain `lmforecast` lines run in-process through the CLI's `main` (tests/cli_lines.py) and
    # Python blocks in-process by `run_python_block`; only lines using the shell in a subprocess
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"  # no check for a newer pip (a network call)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setattr(sys, "argv", ["-c"])  # what a `python -c` script sees
    monkeypatch.chdir(tmp_path)
    assert run_main(["examples", "copy", "."]) == 0, capsys.readouterr().err
    ran, installed = 0, set()
    for i, (info, block) in enumerate(blocks(page)):
        if info in ("bash", "sh"):
            for cmd in commands(block):
                if cmd.startswith("pip install "):
                    if cmd in installed:
                        continue  # the same install again on the page: a no-op already checked
                    installed.add(cmd)
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
            monkeypatch.chdir(tmp_path)
            run_python_block(block, f"{page.name} block {i + 1} (python)")
            capsys.readouterr()
            ran += 1
    assert ran


NUMBER_CELL = re.compile(r"[\s*`~<>=+\-\[\](),./%x×0-9e]*\d[\s*`~<>=+\-\[\](),./%x×0-9e]*")
NAMES_A_SCRIPT = re.compile(
    r"(?:benchmarks|scripts)/\w+\.py|\btest_\w+\.py|docs/examples/\S+\.py|`lmforecast [a-z]"
    r"|lmforecast report|\w+\([^)]*\)+`? \(?which regenerates|transcribed from"
)
GENERATED_PAGE = re.compile(r"generated by `?(?:PYTHONPATH=src )?python benchmarks/", re.I)


def number_tables(text: str) -> list[tuple[int, str]]:
    """(line, context) of every table that is mostly measured numbers; the context is its level-2
    section up to a few lines after the table."""
    lines, out, fence, section = text.split("\n"), [], False, 0
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,2} ", lines[i]):
            section = i
        elif (
            not fence
            and lines[i].startswith("|")
            and re.match(r"\|\s*:?-", lines[i + 1] if i + 1 < len(lines) else "")
        ):
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            cells = [c.strip() for row in lines[i + 2 : j] for c in row.strip("|").split("|")]
            numbers = sum(bool(NUMBER_CELL.fullmatch(c)) for c in cells if c)
            if numbers >= 4 and numbers >= 0.3 * len(cells):
                out.append((i + 1, "\n".join(lines[section : j + 4])))
            i = j
            continue
        i += 1
    return out


def test_every_table_of_numbers_names_what_regenerates_it():
    missing = []
    for page in PAGES:
        text = page.read_text()
        if GENERATED_PAGE.search("\n".join(text.split("\n")[:5])):
            continue  # the whole page is a script's output and says which
        missing += [
            f"{page.name}:{line}"
            for line, context in number_tables(text)
            if not NAMES_A_SCRIPT.search(context)
        ]
    assert not missing, f"tables of numbers naming no script, test or command: {missing}"


def test_readme_and_limitations_stay_short():
    # the README is an entry point and limitations.md a list: the detail lives on the method pages
    readme = (DOCS.parent / "README.md").read_text().splitlines()
    assert len(readme) < 200, f"README.md has {len(readme)} lines"
    limits = (DOCS / "limitations.md").read_text()
    assert len(limits.splitlines()) < 120, "docs/limitations.md has 120 lines or more"
    # every limitation links to the page that explains it
    items = [b for b in re.split(r"\n(?=- )", limits.split("\n## ", 1)[1]) if b.startswith("- ")]
    assert items and all("](" in item for item in items), [i[:80] for i in items if "](" not in i]
