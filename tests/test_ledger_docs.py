"""docs/ledger.md runs as written: its Python blocks and command lines, in order, in one
folder; the worked Pythia example prints the numbers the page shows."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "ledger.md"


@pytest.mark.slow
def test_ledger_doc_runs_as_written(tmp_path, monkeypatch):
    from lmforecast.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    text = DOC.read_text()
    shown = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    for lang, block in re.findall(r"```(\w+)\n(.*?)```", text, re.S):
        if lang == "python":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(block, str(DOC), "exec"), {"__name__": "__doc__"})
            if "pythia" in block:
                assert out.getvalue().split() == shown.split()  # the page shows what it prints
        elif lang == "bash":
            for line in block.strip().splitlines():
                argv = shlex.split(line)
                assert argv[0] == "lmforecast", line
                with contextlib.redirect_stdout(io.StringIO()):
                    assert main(argv[1:]) == 0, line
    assert (tmp_path / "scores.png").stat().st_size > 1000
    # the command-line example scores the piqa line of the Python block's table
    from lmforecast.ledger import Ledger, score_records

    piqa = next(ln.split() for ln in shown.splitlines() if ln.split()[:1] == ["piqa"])
    with Ledger(tmp_path / "pythia-cli.db") as L:
        cli = score_records(L.records())["overall"]
    assert f"{cli['mean_abs_error']:.6f}" == piqa[7] and f"{cli['winkler']:.6f}" == piqa[9]


@pytest.mark.slow
def test_logs_doc_commands_run_as_written(tmp_path, monkeypatch):
    import glob

    from lmforecast.cli.main import main

    monkeypatch.chdir(tmp_path)
    text = (DOC.parent / "logs.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    for line in block.strip().splitlines():
        argv = []
        for a in shlex.split(line)[1:]:
            argv += sorted(glob.glob(a)) if "*" in a else [a]
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(argv) == 0, line
    assert len(pd.read_csv(tmp_path / "log_runs.csv")) == 8


def test_worked_example_resolves_with_the_shared_harness_numbers(shared_dir, tmp_path):
    # the doc resolves from the bundled table; the observations must be the 2.8B's final
    # scores in the EleutherAI harness file of the shared data
    from lmforecast.data.evals import load_pythia, read_harness

    f = shared_dir / "data/pythia/zero-shot/pythia-2.8b/2.8b_step143000.json"
    if not f.exists():
        pytest.skip(f"{f} not present")
    tasks = ["piqa", "sciq", "arc_easy", "winogrande"]
    raw = read_harness([f], tasks=tasks)
    raw = raw[raw["metric"] == "acc"].set_index("task")["value"]
    b = load_pythia()
    b = b[(b["model"] == "pythia-2.8b") & (b["step"] == 143000) & (b["metric"] == "acc")]
    b = b.set_index("task")["value"]
    for t in tasks:
        assert b[t] == pytest.approx(raw[t], abs=1e-12), t
