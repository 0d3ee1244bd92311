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
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import InputError
from ..parallel.lifeline import worker_config
from ..store import to_jsonable
from .html import figure_html, page
from .summary import headline, headline_html, summary_html, summary_rows
from .summary import row as _verdict_row

SECTION_MODULES = [
    "lmforecast.report.sections.yours",
    "lmforecast.report.sections.zoo",
    "lmforecast.report.sections.supervised",
    "lmforecast.report.sections.trust",
    "lmforecast.report.sections.distill",
    "lmforecast.report.sections.flp",
    "lmforecast.report.sections.downstream",
    "lmforecast.report.sections.osl",
    "lmforecast.report.sections.salience",
    "lmforecast.report.sections.trust_downstream",
    "lmforecast.report.sections.dataconstrained",
    "lmforecast.report.sections.isoflop",
    "lmforecast.report.sections.recipes",
    "lmforecast.report.sections.shape",
    "lmforecast.report.sections.nextrun",
    "lmforecast.report.sections.curves",
    "lmforecast.report.sections.ledger",
    "lmforecast.report.sections.planner",
]

# Measured serial build time (s, full depth, one quiet core, process start-up excluded): only
# orders the parallel build, longest first (a section left out here counts as 1 s).
SECTION_SECONDS = {
    f"lmforecast.report.sections.{k}": v
    for k, v in {
        "distill": 16.0,
        "osl": 14.0,
        "trust": 10.5,
        "supervised": 9.5,
        "flp": 9.0,
        "trust_downstream": 8.5,
        "downstream": 8.5,
        "dataconstrained": 5.5,
        "salience": 5.0,
        "recipes": 5.0,
        "nextrun": 3.5,
        "isoflop": 3.0,
        "zoo": 3.0,
        "planner": 2.5,
        "curves": 2.2,
        "shape": 0.5,
        "yours": 20.0,
    }.items()
}


#: The user's own files a report reads (`lmforecast report --NAME PATH`): name -> what it holds.
#: A section reads them from `ReportContext.inputs`; `SECTION_INPUTS` says which section reads
#: which. Adding an input is a row here (the CLI adds its flag) and a row there.
USER_INPUTS = {
    "runs": "your final runs (columns N, D or C, loss): a fit with a held-out check, and the "
    "planner on that fit",
    "fit": "a saved supervised fit (`supervised fit --out`): the planner uses it",
    "evals": "your tidy evaluation table (columns model, task, metric, value, params, tokens "
    "or flops; docs/evals.md): the largest model's scores forecast from the others",
    "ledger": "a forecast ledger (docs/ledger.md): the Forecast record section",
    "curves": "your curves table (run, step, lr, loss; docs/curves.md): the loss-curves "
    "section fits and forecasts it instead of the bundled example",
}

#: section key -> (the inputs it reads, whether it has nothing to show without one of them).
#: A section that reads a given input is always built, named in --sections or not.
SECTION_INPUTS: dict[str, tuple[tuple[str, ...], bool]] = {
    "yours": (("runs", "fit", "evals"), True),
    "planner": (("fit", "runs"), False),
    "ledger": (("ledger",), True),
    "curves": (("curves",), False),
}


@dataclass
class ReportContext:
    """Options every section receives, and the user's input files (`inputs`, by name)."""

    seed: int = 0
    quick: bool = False  # smaller bootstrap / grids, for tests
    progress: bool = True
    jobs: int = 1  # sections built at once, in worker processes (numbers do not depend on it)
    ledger: str | None = None  # a forecast ledger: the "Forecast record" section (else skipped)
    inputs: dict[str, str] = field(default_factory=dict)  # USER_INPUTS name -> path

    def __post_init__(self) -> None:
        unknown = sorted(set(self.inputs) - set(USER_INPUTS))
        if unknown:
            raise InputError(f"unknown report input(s) {unknown}; known: {sorted(USER_INPUTS)}")
        self.inputs = {k: str(v) for k, v in self.inputs.items() if v is not None}
        if self.ledger is not None:
            self.inputs.setdefault("ledger", str(self.ledger))
        self.ledger = self.inputs.get("ledger")

    def input(self, name: str) -> str | None:
        """The path the user gave for input `name`, or None."""
        return self.inputs.get(name)


@dataclass
class Section:
    """One method's part of the report: prose/table HTML, figures and the numbers behind them."""

    key: str
    title: str
    blocks: list[str] = field(default_factory=list)  # HTML fragments, in order
    numbers: dict[str, Any] = field(default_factory=dict)
    tables: list[dict[str, Any]] = field(default_factory=list)  # every table shown, as data
    verdicts: list[dict[str, Any]] = field(default_factory=list)  # rows of the summary table

    def verdict(
        self,
        method: str,
        data: str,
        metric: str,
        error,
        baseline=None,
        baseline_error=None,
        coverage=None,
        n=None,
        simulated=False,
    ) -> None:
        """A row of the report's summary table (see `report.summary.row`)."""
        self.verdicts.append(
            _verdict_row(
                method,
                data,
                metric,
                error,
                baseline,
                baseline_error,
                coverage,
                n=n,
                simulated=simulated,
            )
        )

    def text(self, s: str) -> None:
        self.blocks.append(f"<p>{html.escape(s)}</p>")

    def html(self, fragment: str) -> None:
        self.blocks.append(fragment)

    def pre(self, s: str) -> None:
        self.blocks.append(f"<pre>{html.escape(s)}</pre>")

    def figure(self, fig, caption: str) -> None:
        """Embed a matplotlib figure (closed afterwards)."""
        self.blocks.append(figure_html(fig, caption))

    def table(self, df, caption: str = "", float_format: str = "{:.4g}", na_rep: str = "—") -> None:
        """A table; say what an empty cell means with `na_rep` (e.g. "not reached")."""
        from .html import table_html

        self.blocks.append(table_html(df, caption, float_format, na_rep))
        self.tables.append(
            {
                "caption": caption,
                "float_format": float_format,
                "na_rep": na_rep,
                "columns": [str(c) for c in df.columns],
                "rows": to_jsonable(df.to_numpy(dtype=object).tolist()),
            }
        )


REPORT_FILES = ("report.html", "report.json")


def write_report_files(out: Path, files: dict[str, str]) -> None:
    """Write the report's own files into folder `out`, touching nothing else there.

    The folder is created if missing. Other files in it are never moved or deleted; a symbolic
    link as `out` (or as one of the report files) is refused unless ``--follow-symlinks``. Each
    file is replaced atomically (`cli.common.atomic_write_text`); if the second replace fails,
    the first is restored from a hard-linked backup, so readers never see one new and one old.
    """
    from ..store import atomic_write_text
    from ..store.safe_write import check_writable_dir

    out = Path(out)
    check_writable_dir(out)  # refuses a symbolic link unless --follow-symlinks
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    backups: dict[str, Path] = {}
    done: list[str] = []
    try:
        for name in files:
            q = out / name
            if q.is_file() and not q.is_symlink():
                fd, b = tempfile.mkstemp(prefix=f".{name}-old-", dir=out)
                os.close(fd)
                backups[name] = Path(b)
                shutil.copy2(q, b)
        for name, text in files.items():
            atomic_write_text(out / name, text)
            done.append(name)
    except BaseException:
        for name in done:  # roll back: the previous pair, or no file where there was none
            if name in backups:
                os.replace(backups.pop(name), out / name)
            else:
                (out / name).unlink(missing_ok=True)
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        for b in backups.values():
            b.unlink(missing_ok=True)


def available_sections() -> list[str]:
    return [m for m in SECTION_MODULES if importlib.util.find_spec(m) is not None]


def _build_one(module: str, ctx: ReportContext) -> Section:
    """Build one section; the warnings its fits raise go into the section, not the terminal."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sec = importlib.import_module(module).build_section(ctx)
    if sec is not None:
        add_warnings(sec, caught)
    return sec


def add_warnings(sec: Section, caught: list) -> None:
    """List each distinct warning once at the end of the section (and in its numbers)."""
    msgs = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    if not msgs:
        return
    sec.numbers["warnings"] = msgs
    items = "".join(f"<li>{html.escape(m)}</li>" for m in msgs)
    sec.html(
        f'<div class="warnings"><p>Warnings raised while building this section:</p>'
        f"<ul>{items}</ul></div>"
    )


def _build_indexed(i: int, module: str, ctx: ReportContext) -> tuple[int, Section]:
    return i, _build_one(module, ctx)


def _build_sections(mods: list[str], ctx: ReportContext) -> list[Section]:
    """Every section, in the listed order; ``ctx.jobs > 1`` builds them in worker processes.

    Each section seeds its own randomness from ``ctx.seed``, so the numbers are the same
    serially or in parallel; only the wall time changes.
    """
    bar = None
    if ctx.progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(mods), desc="report", unit="section")
    try:
        if ctx.jobs == 1 or len(mods) < 2:
            out = []
            for m in mods:
                out.append(_build_one(m, ctx))
                if bar is not None:
                    bar.update(1)
            return out
        from joblib import Parallel, delayed

        jobs = min(len(mods), ctx.jobs) if ctx.jobs > 0 else ctx.jobs
        # longest first, so that no long section starts last on an otherwise idle worker
        order = sorted(range(len(mods)), key=lambda i: -SECTION_SECONDS.get(mods[i], 1.0))
        done: dict[int, Section] = {}
        with worker_config():
            results = Parallel(n_jobs=jobs, return_as="generator_unordered")(
                delayed(_build_indexed)(i, mods[i], ctx) for i in order
            )
            for i, sec in results:
                done[i] = sec
                if bar is not None:
                    bar.update(1)
        return [done[i] for i in range(len(mods))]
    finally:
        if bar is not None:
            bar.close()


def _with_inputs(
    mods: list[str], available: list[str], ctx: ReportContext, *, explicit: bool
) -> tuple[list[str], list[str]]:
    """The sections to build given the user's inputs, and notes saying what was added or left
    out: a section that reads a given input is added (your data is never silently dropped); a
    section with nothing to show without one is left out with a note where it was asked for."""
    given = set(ctx.inputs)
    keys = {m.rsplit(".", 1)[1]: m for m in available}
    out, notes = list(mods), []
    for key, (reads, needs) in SECTION_INPUTS.items():
        m = keys.get(key)
        if m is None:
            continue
        used = [r for r in reads if r in given]
        if used and m not in out:
            out.append(m)
            notes.append(f"section {key!r} added: it reads --{', --'.join(used)}")
        elif needs and not used and m in out:
            out.remove(m)
            if explicit:
                flags = " or ".join(f"--{r}" for r in reads)
                notes.append(f"section {key!r} left out: give {flags} (it reads your data)")
    out.sort(key=available.index)
    return out, notes


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
    mods, notes = _with_inputs(mods, available_sections(), ctx, explicit=bool(sections))
    built = [s for s in _build_sections(mods, ctx) if s is not None]  # None: section skipped
    meta = {
        "lmforecast_version": __version__,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "seed": ctx.seed,
        "quick": ctx.quick,
        "inputs": dict(ctx.inputs),
    }
    summary = [r for s in built for r in summary_rows(s.key, s.numbers, s.verdicts)]
    summary = [r for r in summary if not r["simulated"]] + [r for r in summary if r["simulated"]]
    head = headline(summary, ctx.inputs, notes)
    numbers = {
        "meta": meta,
        "headline": to_jsonable(head),
        "summary": to_jsonable(summary),
        "sections": {s.key: to_jsonable(s.numbers) for s in built},
        "tables": {s.key: s.tables for s in built},
    }
    titles = {s.key: s.title for s in built}
    body = [headline_html(head, titles), summary_html(summary, titles)]
    toc = "".join(f'<li><a href="#{s.key}">{html.escape(s.title)}</a></li>' for s in built)
    body.append(f"<nav><ol>{toc}</ol></nav>")
    for s in built:
        body.append(f'<section id="{s.key}"><h2>{html.escape(s.title)}</h2>')
        body.extend(s.blocks)
        body.append("</section>")
    text = page("lmforecast report", "\n".join(body), meta)

    write_report_files(
        out,
        {
            "report.html": text,
            "report.json": json.dumps(to_jsonable(numbers), indent=1, allow_nan=False),
        },
    )
    return numbers
