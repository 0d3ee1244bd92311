"""The documentation site builds strictly from docs/ (mkdocs, mkdocstrings for the API pages).

`mkdocs build --strict` turns every warning into an error: a broken link or anchor between pages,
a page missing from the navigation or a navigation entry without its page, and an API reference
entry (``::: lmforecast...``) that no longer names a public object. So the pages, the navigation
and the code cannot drift apart. The docs-build packages come with the ``test`` extra; without
them the build test skips and says which package is missing.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CONFIG = ROOT / "mkdocs.yml"


def _missing_build_packages() -> list[str]:
    wanted = {
        "mkdocs": "mkdocs",
        "mkdocstrings": "mkdocstrings",
        "mkdocstrings_handlers": "mkdocstrings-python",
    }
    return [pkg for mod, pkg in wanted.items() if importlib.util.find_spec(mod) is None]


def _nav_pages() -> list[str]:
    return re.findall(r":\s*([\w./-]+\.md)\s*$", CONFIG.read_text(), re.M)


def test_every_page_is_in_the_navigation_once():
    nav = _nav_pages()
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    assert sorted(set(nav)) == sorted(nav), "a page listed twice in mkdocs.yml"
    missing = set(pages) - set(nav)
    assert not missing, f"pages missing from mkdocs.yml's nav: {missing}"
    assert not set(nav) - set(pages), f"nav entries without a page: {set(nav) - set(pages)}"


def test_api_reference_names_public_objects():
    import importlib

    names = re.findall(r"^::: ([\w.]+)$", (DOCS / "api.md").read_text(), re.M)
    assert len(names) >= 10
    for name in names:
        mod, _, attr = name.rpartition(".")
        module = importlib.import_module(mod)
        assert attr in getattr(module, "__all__", dir(module)), f"{name} is not public"
        assert getattr(module, attr).__doc__, f"{name} has no docstring"


@pytest.mark.slow
def test_site_builds_strictly(tmp_path):
    missing = _missing_build_packages()
    if missing:
        pytest.skip(
            f"docs-build packages not installed ({', '.join(missing)}); "
            'pip install -e ".[test]" installs them'
        )
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(CONFIG),
         "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, f"mkdocs build --strict failed:\n{r.stderr[-4000:]}"
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    # the API page carries the docstrings themselves, not only the headings
    assert "predict_interval" in api and "SupervisedScalingLaw" in api
    for page in DOCS.glob("*.md"):
        assert (tmp_path / "site" / page.stem / "index.html").exists() or page.stem == "index"
