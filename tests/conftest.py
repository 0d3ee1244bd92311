import os
from pathlib import Path

import pytest
from hypothesis import settings

os.environ.setdefault("MPLBACKEND", "Agg")

# Property tests draw the same examples on every run (a red CI run reproduces locally);
# `python -m pytest --hypothesis-profile explore` draws new ones.
settings.register_profile("repro", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("repro")

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("LMFORECAST_SHARED", REPO.parent / "shared"))


_SKIPPED_FOR_SHARED: list[str] = []  # test ids skipped because the shared data is missing
_SKIP_REASON = "shared data folder"


def _where_shared() -> str:
    how = "LMFORECAST_SHARED" if "LMFORECAST_SHARED" in os.environ else "../shared beside the repo"
    return f"{SHARED} (from {how})"


def pytest_report_header(config):
    """Once per run: where the real-data tests look for the shared data, and whether it is there."""
    if SHARED.exists():
        return f"lmforecast shared data: {_where_shared()}"
    return (
        f"lmforecast shared data: NOT FOUND at {_where_shared()}; the tests that read it will "
        "skip. Set LMFORECAST_SHARED=/path/to/shared to run them."
    )


def pytest_terminal_summary(terminalreporter):
    if _SKIPPED_FOR_SHARED:  # printed even with -q, which hides the header
        terminalreporter.write_line(
            f"{len(_SKIPPED_FOR_SHARED)} test(s) needing the shared data skipped: not found at "
            f"{_where_shared()}; set LMFORECAST_SHARED=/path/to/shared to run them"
        )


def pytest_runtest_logreport(report):
    if report.skipped and _SKIP_REASON in str(report.longrepr):
        _SKIPPED_FOR_SHARED.append(report.nodeid)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.exists():
        pytest.skip(f"{_SKIP_REASON} {SHARED} not present (set LMFORECAST_SHARED)")
    return SHARED


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process: returns (exit_code, stdout, stderr)."""
    from lmforecast.cli.main import main

    def run(*argv):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse errors
            code = exc.code
        out = capsys.readouterr()
        return code, out.out, out.err

    return run
