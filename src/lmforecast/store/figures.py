"""Figures written under the output policy of `store.safe_write`.

The format is the one the file name's extension names (PNG when the name has none), checked
before any work; the bytes are rendered in memory and land at exactly the name given, through
`safe_write.write_bytes` (atomic for files, in place for devices and FIFOs, symbolic links
refused unless followed). The plotting library never chooses the name: ``savefig("s")`` would
write ``s.png``, a different file from the one the checks looked at.
"""

from __future__ import annotations

import io
from pathlib import Path

from ..errors import InputError
from . import safe_write


def figure_format(path: str | Path, flag: str = "--out", html_ok: bool = False) -> str:
    """The figure format `path`'s extension names (``png`` when it has none): one matplotlib
    writes, or ``html`` where an HTML page is offered (`html_ok`)."""
    from matplotlib.backend_bases import FigureCanvasBase

    out = Path(path)
    suffix = out.suffix.lower().lstrip(".") or "png"
    known = set(FigureCanvasBase.get_supported_filetypes())
    if suffix in known or (html_ok and suffix in ("html", "htm")):
        return suffix
    extra = ", html" if html_ok else ""
    raise InputError(
        f"{flag} {out}: unknown figure format {suffix!r}; use one of "
        f"{', '.join(sorted(known))}{extra}"
    )


def figure_bytes(fig, fmt: str = "png", dpi: int = 110, tight: bool = False) -> bytes:
    """`fig` rendered in format `fmt`, in memory."""
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi, bbox_inches="tight" if tight else None)
    return buf.getvalue()


def write_figure(
    fig, path: str | Path, flag: str = "--out", dpi: int = 110, tight: bool = False
) -> None:
    """Render `fig` in the format `path` names and write it to exactly `path` under the output
    policy."""
    fmt = figure_format(path, flag)
    safe_write.target_kind(path, flag)  # a refused target fails before rendering
    safe_write.write_bytes(path, figure_bytes(fig, fmt, dpi, tight), flag)
