import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("LMFORECAST_SHARED", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.exists():
        pytest.skip(f"shared data folder {SHARED} not present")
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
