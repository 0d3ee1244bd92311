"""Assemble report sections into one self-contained HTML file (figures embedded) plus JSON.

Each method contributes a module exposing `build_section(ctx: ReportContext) -> Section`; modules
missing from an installation are skipped. Nothing is written until every section has been built,
and files are moved into place atomically.
"""

from __future__ import annotations

import datetime as _dt
import html
import importlib
import importlib.util
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..cli.common import to_jsonable
from ..errors import InputError
from .html import figure_html, page

SECTION_MODULES = [
    "lmforecast.report.sections.zoo",
    "lmforecast.report.sections.supervised",
    "lmforecast.report.sections.trust",
    "lmforecast.report.sections.distill",
    "lmforecast.report.sections.flp",
    "lmforecast.report.sections.osl",
    "lmforecast.report.sections.salience",
]


@dataclass
class ReportContext:
    """Options every section receives."""

    seed: int = 0
    quick: bool = False  # smaller bootstrap / grids, for tests
    progress: bool = True


@dataclass
class Section:
    """One method's part of the report: prose/table HTML, figures and the numbers behind them."""

    key: str
    title: str
    blocks: list[str] = field(default_factory=list)  # HTML fragments, in order
    numbers: dict[str, Any] = field(default_factory=dict)

    def text(self, s: str) -> None:
        self.blocks.append(f"<p>{html.escape(s)}</p>")

    def html(self, fragment: str) -> None:
        self.blocks.append(fragment)

    def pre(self, s: str) -> None:
        self.blocks.append(f"<pre>{html.escape(s)}</pre>")

    def figure(self, fig, caption: str) -> None:
        """Embed a matplotlib figure (closed afterwards)."""
        self.blocks.append(figure_html(fig, caption))

    def table(self, df, caption: str = "", float_format: str = "{:.4g}") -> None:
        from .html import table_html

        self.blocks.append(table_html(df, caption, float_format))


def available_sections() -> list[str]:
    return [m for m in SECTION_MODULES if importlib.util.find_spec(m) is not None]


def build_report(
    out_dir: str | Path, *, sections: list[str] | None = None, ctx: ReportContext | None = None
) -> dict[str, Any]:
    """Build every available section and write `report.html` and `report.json` into out_dir."""
    ctx = ctx or ReportContext()
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder")
    mods = available_sections()
    if sections:
        keys = {m.rsplit(".", 1)[1]: m for m in mods}
        unknown = [s for s in sections if s not in keys]
        if unknown:
            raise InputError(f"unknown report section(s) {unknown}; available: {sorted(keys)}")
        mods = [keys[s] for s in sections]
    built: list[Section] = []
    it = mods
    if ctx.progress:
        from tqdm.auto import tqdm

        it = tqdm(mods, desc="report", unit="section")
    for m in it:
        built.append(importlib.import_module(m).build_section(ctx))
    meta = {
        "lmforecast_version": __version__,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "seed": ctx.seed,
        "quick": ctx.quick,
    }
    numbers = {"meta": meta, "sections": {s.key: to_jsonable(s.numbers) for s in built}}
    body = []
    toc = "".join(f'<li><a href="#{s.key}">{html.escape(s.title)}</a></li>' for s in built)
    body.append(f"<nav><ol>{toc}</ol></nav>")
    for s in built:
        body.append(f'<section id="{s.key}"><h2>{html.escape(s.title)}</h2>')
        body.extend(s.blocks)
        body.append("</section>")
    text = page("lmforecast report", "\n".join(body), meta)

    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".report-", dir=out))
    try:
        (tmp / "report.html").write_text(text)
        (tmp / "report.json").write_text(json.dumps(numbers, indent=1))
        for name in ("report.html", "report.json"):
            os.replace(tmp / name, out / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return numbers
