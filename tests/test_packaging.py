"""Every data file the package reads ships with a non-editable install (`pip install .`).

An editable install reads files from the source tree, so a data file missing from
`[tool.setuptools.package-data]` passes every other test and then fails the README's first
command on a fresh machine (found with the supervised trust prior)."""

from __future__ import annotations

import fnmatch
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "lmforecast"


def _globs() -> list[str]:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return conf["tool"]["setuptools"]["package-data"]["lmforecast"]


def _tracked_data_files() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "src/lmforecast"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        pytest.skip("git not available")
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    rel = [Path(f).relative_to("src/lmforecast").as_posix() for f in out.stdout.split()]
    return [f for f in rel if not f.endswith(".py")]


def _covered(path: str, globs: list[str]) -> bool:
    for g in globs:
        if fnmatch.fnmatch(path, g) or fnmatch.fnmatch(path, g.replace("**/", "")):
            return True
        if g.endswith("/**/*") and path.startswith(g[: -len("**/*")]):
            return True
    return False


def test_every_data_file_is_package_data():
    globs = _globs()
    missing = [f for f in _tracked_data_files() if not _covered(f, globs)]
    assert not missing, f"add to [tool.setuptools.package-data]: {missing}"


def test_the_check_catches_a_file_outside_the_globs():
    assert not _covered("supervised/new_prior.json", ["data/bundled/**/*", "py.typed"])
    assert _covered("supervised/trust_prior.json", ["supervised/*.json"])
    assert _covered("data/bundled/pythia/x.csv", ["data/bundled/**/*"])
