"""Small HTML helpers: a page shell, tables from DataFrames, figures as embedded PNG."""

from __future__ import annotations

import base64
import html
import io

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{border-bottom:2px solid #444}h2{border-bottom:1px solid #bbb;margin-top:2.2em}
table{border-collapse:collapse;margin:.8em 0;font-size:.92em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}th{background:#f3f3f3}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0}
figure{margin:1em 0}figcaption{font-size:.9em;color:#444}
pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.88em;white-space:pre-wrap;
overflow-wrap:anywhere}
.meta{color:#666;font-size:.85em}
td.l{text-align:left}#summary a{text-decoration:none}
.warnings{border-left:3px solid #c90;padding:.1em .8em;background:#fffaf0;font-size:.9em}
"""


def page(title: str, body: str, meta: dict) -> str:
    m = " · ".join(f"{html.escape(str(k))}: {html.escape(str(v))}" for k, v in meta.items())
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"
        f"<p class='meta'>{m}</p>{body}</body></html>"
    )


def figure_png(fig, dpi: int = 110) -> bytes:
    buf = io.BytesIO()
    fig.set_dpi(dpi)
    if fig.get_layout_engine() is not None:
        # constrained layout (plots.style.new_figure) places every title, label and legend
        # inside the figure when it draws: one draw, no box to compute (a box computed before
        # that draw would cut off what the layout moves, such as a title at the top)
        fig.savefig(buf, format="png", dpi=dpi)
        return buf.getvalue()
    # the tight box computed once: bbox_inches="tight" draws the figure twice (a dry run for
    # the box); the same pixels on every report figure, ~15% less time
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(0.1)
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches=box)
    return buf.getvalue()


def figure_html(fig, caption: str) -> str:
    data = base64.b64encode(figure_png(fig)).decode("ascii")
    return (
        f"<figure><img src='data:image/png;base64,{data}' style='max-width:100%'>"
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


def table_html(df, caption: str = "", float_format: str = "{:.4g}", na_rep: str = "—") -> str:
    """An HTML table; missing numbers (NaN, None) show as `na_rep`, never as "nan"."""
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = []
    for _, r in df.iterrows():
        cells = []
        for v in r.to_numpy():
            if v is None or (isinstance(v, float) and v != v):
                s = na_rep
            elif isinstance(v, float):
                s = float_format.format(v)
            else:
                s = str(v)
            cells.append(f"<td>{html.escape(s)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
