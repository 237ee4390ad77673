"""The one page shell every part's ``report.html`` is built on.

A part supplies its title, a lead block and its sections; the shell supplies
the rest, the same for every part: one stylesheet, a title block, tables,
a figures block and a configuration/versions footer. The page is
self-contained (inline CSS, no JavaScript, no external assets, a Content
Security Policy that forbids requests), so it opens from the file system.

The page uses the whole window: prose keeps a reading width, while tables
and figures may take all of it, and a table wider still scrolls sideways
inside its own box (:func:`scroll_box`), never the page. A cell holds a
number or a short phrase; longer free text is a numbered note under its
table (:class:`TextNotes`), so no row grows tall around a paragraph.

Every piece of text that reaches the page goes through :func:`escape`
because model and user text is untrusted (``spec/reliability.md``,
"Security"); helpers that take HTML fragments say so. Undefined numbers are
shown as "n/a", never as a number. Figures are linked by paths relative to
the run folder; anything else (absolute, ``..``, a URL scheme) is refused.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from folkscope._io import atomic_write
from folkscope._json import to_jsonable
from folkscope.errors import ConfigError, MissingDependencyError
from folkscope.runs.manifest import package_versions

__all__ = [
    "bullet_list",
    "config_footer",
    "escape",
    "figure_block",
    "figure_src",
    "frame_table",
    "label",
    "number",
    "optional_figures",
    "render_page",
    "scroll_box",
    "section",
    "sentence",
    "table",
    "TextNotes",
    "total",
    "versions",
    "write_page",
]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;padding:1.5em 2em;
color:#222;line-height:1.4}
p,ul,ol,.sub{max-width:56em}pre{max-width:72em}
h1{font-size:1.5em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;
margin-top:1.8em}h3{margin-bottom:.3em}
.scroll{overflow-x:auto;max-width:100%;margin:.5em 0 1em}
table{border-collapse:collapse;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:right}td{white-space:nowrap}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}
.na{color:#999}.warn{color:#a40}.sub{color:#555;margin-top:0}.headline{font-size:1.15em}
.fn{color:#555;font-size:.85em;white-space:nowrap}ol.notes{font-size:.9em;color:#333;margin-top:-.5em}
figure{display:inline-block;margin:.5em;vertical-align:top;max-width:calc(100% - 1em)}
figure img{max-width:100%;height:auto;border:1px solid #ddd}figcaption{font-size:.9em;max-width:40em}
pre{background:#f7f7f7;padding:1em;overflow-x:auto;font-size:.85em;white-space:pre-wrap;word-break:break-word}
"""  # images from the run folder only, inline CSS, nothing else (no scripts, no requests)
_CSP = "default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'"


def escape(value: object) -> str:
    """``str(value)`` safe for HTML text and quoted attributes."""
    return html.escape(str(value), quote=True)


def number(value: Any, *, digits: int = 4) -> str:
    """A cell: None/NaN -> n/a (undefined), "inf" -> ∞, ints with separators, floats rounded, text escaped."""
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return '<span class="na" title="undefined">n/a</span>'
    if isinstance(value, str) and value in ("inf", "-inf"):
        return "∞" if value == "inf" else "−∞"
    if isinstance(value, (bool, np.bool_)):
        return escape(value)
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not np.isfinite(v):
            return "∞" if v > 0 else "−∞"
        return f"{v:.{digits}f}"
    return escape(value)


def total(value: Any) -> str:
    """Counts and weight sums: thousands separators, decimals only when needed."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value):
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"
    return number(value)


#: free text longer than this leaves its table cell for a numbered note under the table, so a row stays one line
#: high and the numbers beside it stay readable (a 300-character reason made each row ~500 px tall)
LONG_TEXT = 48


def scroll_box(table_html: str) -> str:
    """``table_html`` in a box that scrolls sideways, so a wide table never makes the page wider than the window."""
    return f'<div class="scroll">{table_html}</div>'


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """An HTML table in its own sideways-scrolling box (:func:`scroll_box`).

    Header cells are escaped here; body cells are HTML fragments (escape or
    :func:`number` them).
    """
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return scroll_box(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def label(column: object, labels: Mapping[str, str] | None = None) -> str:
    """The reader's name of a column: its entry in ``labels``, else the key with ``_`` read as a space.

    >>> label("p_true", {"p_true": "survey share"}), label("dp_gap")
    ('survey share', 'dp gap')
    """
    key = str(column)
    return (labels or {}).get(key) or key.replace("_", " ")


class TextNotes:
    """Long free text taken out of table cells: each cell shows a numbered marker, the texts are listed under the table.

    Each note names its column, so it reads on its own under the table. The
    same text in the same column is one note. Numbers count on across tables
    given the same instance, so markers stay unique on a page.
    """

    def __init__(self) -> None:
        self._notes: dict[tuple[str, str], int] = {}
        self._listed = 0

    def cell(self, text: str, *, column: str = "") -> str:
        """The cell for ``text`` of ``column`` (its header): itself (escaped) when short, else its note's marker."""
        if len(text) <= LONG_TEXT:
            return escape(text)
        n = self._notes.setdefault((column, text), len(self._notes) + 1)
        return f'<span class="fn" title="{escape(text)}">note {n}</span>'

    def listing(self) -> str:
        """The notes not listed yet, as an ordered list (or "")."""
        fresh = list(self._notes)[self._listed :]
        if not fresh:
            return ""
        start = self._listed + 1
        self._listed = len(self._notes)
        items = "".join(f"<li>{f'<b>{escape(c)}</b>: ' if c else ''}{escape(t)}</li>" for c, t in fresh)
        return f'<ol class="notes" start="{start}">{items}</ol>'


def frame_table(
    frame: pd.DataFrame,
    *,
    digits: int = 4,
    labels: Mapping[str, str] | None = None,
    integers: Iterable[str] = (),
) -> str:
    """A DataFrame as a table: headers by :func:`label`, every cell escaped, numbers through :func:`number`.

    Text longer than :data:`LONG_TEXT` characters is listed under the table
    as a numbered note (:class:`TextNotes`), its cell holding the marker;
    true/false reads yes/no.
    Columns named in ``integers`` are counts stored as floats (``2.0``) and
    are shown as whole numbers.
    """
    notes = TextNotes()
    whole = set(integers)

    def cell(column: str, value: Any) -> str:
        if isinstance(value, str):
            return notes.cell(value, column=label(column, labels))
        if isinstance(value, (bool, np.bool_)):
            return "yes" if value else "no"
        if column in whole:
            return total(value)
        return number(value, digits=digits)

    columns = [str(c) for c in frame.columns]
    rows = [[cell(c, v) for c, v in zip(columns, row)] for row in frame.itertuples(index=False)]
    return table([label(c, labels) for c in columns], rows) + notes.listing()


def sentence(text: str) -> str:
    """``text`` with its first letter capitalised: a part's plain-text answer opens lower case so a terminal line can
    follow a label, while a page's headline starts a sentence.

    >>> sentence("mean score 41.2 of 100")
    'Mean score 41.2 of 100'
    """
    return text[:1].upper() + text[1:]


def bullet_list(items: Iterable[object], *, css_class: str | None = None) -> str:
    """An escaped ``<ul>`` of ``items``, or "" when there are none."""
    cells = "".join(f"<li>{escape(item)}</li>" for item in items)
    if not cells:
        return ""
    return (f'<ul class="{escape(css_class)}">' if css_class else "<ul>") + cells + "</ul>"


def section(title: str, *parts: str) -> str:
    """A titled section; ``parts`` are HTML fragments."""
    return f"<h2>{escape(title)}</h2>\n" + "\n".join(p for p in parts if p)


def figure_src(rel: str | os.PathLike[str]) -> str:
    """The URL-quoted ``src`` of a figure, which must be a path inside the run folder.

    Raises
    ------
    ConfigError
        An absolute path, a ``..`` component or a URL scheme (``javascript:``,
        ``http:``...): the page would reach outside its folder.
    """
    path = PurePosixPath(str(rel).replace(os.sep, "/"))
    if path.is_absolute() or ".." in path.parts or ":" in str(path):
        raise ConfigError(
            f"plot paths must be relative to the run folder, without '..' or a scheme; got {rel!r}.",
            parameter="plots",
            value=rel,
        )
    return quote(path.as_posix())


def figure_block(
    plots: Mapping[str, str],
    *,
    run_dir: str | os.PathLike[str] | None = None,
    captions: Mapping[str, str] | None = None,
) -> str:
    """Each figure shown and linked, with a caption saying what it shows; with ``run_dir``, missing files are flagged.

    Parameters
    ----------
    plots : mapping of name -> path relative to the run folder
        Checked by :func:`figure_src`.
    run_dir : path-like, optional
        The run folder, to mark figures whose file is not there.
    captions : mapping of name -> str, optional
        What each figure shows, written where it is drawn; a figure without
        one is captioned by its name, which must then be a readable title.
    """
    if not plots:
        return "<p>No plots.</p>"
    out = []
    for name, rel in plots.items():
        src = escape(figure_src(rel))
        missing = (
            "" if run_dir is None or (Path(run_dir) / rel).is_file() else ' <span class="warn">(file missing)</span>'
        )
        caption = (captions or {}).get(name) or name
        out.append(
            f'<figure><a href="{src}"><img src="{src}" alt="{escape(caption)}" '
            f'loading="lazy"></a><figcaption>{escape(caption)}{missing}</figcaption></figure>'
        )
    return "\n".join(out)


def optional_figures(
    draw: Callable[[], Mapping[str, str]],
    *,
    run_dir: str | os.PathLike[str],
    captions: Mapping[str, str] | None = None,
) -> str:
    """The figures ``draw`` writes into the run folder, as a :func:`figure_block`; without matplotlib (the
    ``plots`` extra) one line saying so instead, so a page's tables never depend on it."""
    try:
        return figure_block(draw(), run_dir=run_dir, captions=captions)
    except MissingDependencyError as exc:
        return f"<p>No figures: {escape(exc)}</p>"


def versions() -> dict[str, str]:
    """The software a page was made with, for its footer (:func:`folkscope.runs.package_versions` and the platform)."""
    return {**package_versions(), "platform": platform.platform()}


def config_footer(config: Mapping[str, Any]) -> str:
    """The run's configuration as JSON and the software versions, so a page says how it was made."""
    cfg = json.dumps(to_jsonable(config), indent=2, ensure_ascii=False)
    software = table(["package", "version"], [[escape(k), escape(v)] for k, v in versions().items()])
    return section("Configuration", f"<pre>{escape(cfg)}</pre>", "<h3>Software</h3>", software)


def _csp(script: str | None) -> str:
    """The page's Content Security Policy: with ``script``, that one inline script (by its SHA-256) may run, nothing else."""
    if script is None:
        return _CSP
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return f"{_CSP}; script-src 'sha256-{digest}'"


def render_page(
    title: str,
    *,
    heading: str,
    body: Sequence[str],
    subtitle: str | None = None,
    config: Mapping[str, Any] | None = None,
    script: str | None = None,
    css: str = "",
) -> str:
    """A whole HTML page.

    Parameters
    ----------
    title, heading : str
        The browser title and the ``<h1>`` (both escaped).
    body : sequence of str
        HTML fragments in page order (lead paragraphs, :func:`section` blocks...).
    subtitle : str, optional
        A line under the heading (escaped).
    config : mapping, optional
        Shown with the software versions at the end (:func:`config_footer`).
    script : str, optional
        One inline script (trusted code, never data), allowed by its hash in
        the page's Content Security Policy; still no request leaves the page.
    css : str
        Extra style rules after the shared stylesheet.
    """
    sub = f'<p class="sub">{escape(subtitle)}</p>\n' if subtitle else ""
    footer = config_footer(config) if config is not None else ""
    content = "\n".join(part for part in (*body, footer) if part)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{escape(_csp(script))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{_CSS}{css}</style>
</head>
<body>
<h1>{escape(heading)}</h1>
{sub}{content}
{f"<script>{script}</script>" if script is not None else ""}
</body>
</html>
"""


def write_page(path: str | os.PathLike[str], page: str) -> Path:
    """Write ``page`` to ``path`` atomically (a reader never sees half a page); return the path."""
    return atomic_write(path, lambda fh: fh.write(page.encode("utf-8")))
