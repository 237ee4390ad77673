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

Every helper here renders a partial of the one template engine
(:mod:`folkscope.report.templating`, ``report/templates/macros.html``) and
returns markup; any text it is given is escaped by the engine, because model
and user text is untrusted (``spec/reliability.md``, "Security"). A part
composes its page from these pieces and never writes a tag itself. Undefined numbers are
shown as "n/a", never as a number. Figures are linked by paths relative to
the run folder; anything else (absolute, ``..``, a URL scheme) is refused.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd
from markupsafe import Markup
from markupsafe import escape as markup_escape

from folkscope._io import atomic_write
from folkscope._json import to_jsonable
from folkscope.errors import ConfigError, MissingDependencyError
from folkscope.report.templating import macro, render
from folkscope.runs.manifest import package_versions

__all__ = [
    "bold",
    "bullet_list",
    "config_footer",
    "escape",
    "figure_block",
    "figure_src",
    "frame_table",
    "heading",
    "interval",
    "label",
    "no_interval",
    "number",
    "optional_figures",
    "para",
    "phrase",
    "preformatted",
    "render_page",
    "scroll_box",
    "section",
    "sentence",
    "span",
    "table",
    "TextNotes",
    "total",
    "versions",
    "write_page",
]

#: images from the run folder only, the inline stylesheet, nothing else (no scripts, no requests)
_CSP = "default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'"
#: the page template (:mod:`folkscope.report.templating`); it includes the stylesheet ``page.css``
PAGE = "report/templates/page.html"


def escape(value: object) -> Markup:
    """``str(value)`` safe for HTML text and quoted attributes (markup from a template stays as it is)."""
    return markup_escape(value)


def number(value: Any, *, digits: int = 4) -> Markup:
    """A cell: None/NaN -> n/a (undefined), "inf" -> ∞, ints with separators, floats rounded, text escaped."""
    return macro("num")(value, digits)


def total(value: Any) -> Markup:
    """Counts and weight sums: thousands separators, decimals only when needed."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value):
        return escape(f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}")
    return number(value)


def interval(low: Any, high: Any, *, digits: int = 4) -> Markup:
    """``[low, high]``, each through :func:`number`."""
    return macro("interval")(low, high, digits)


def no_interval() -> Markup:
    """The dash of a metric that has no interval."""
    return macro("no_interval")()


def para(*pieces: object, css_class: str | None = None) -> Markup:
    """A paragraph: text pieces are escaped, markup pieces (:func:`bold`, :func:`number`...) kept."""
    return macro("para")(pieces, css_class)


def phrase(*pieces: object) -> Markup:
    """Pieces side by side (a number and its interval in one cell): text pieces escaped, markup pieces kept."""
    return macro("phrase")(pieces)


def bold(text: object) -> Markup:
    """``text`` in bold, as a piece of a :func:`para`."""
    return macro("bold")(text)


def span(text: object, css_class: str) -> Markup:
    """``text`` styled by ``css_class`` (``warn``, ``headline``...), as a piece of a :func:`para`."""
    return macro("span")(text, css_class)


def heading(text: object, *, css_class: str | None = None) -> Markup:
    """A sub-heading (``<h3>``) inside a section."""
    return macro("heading")(text, css_class)


def preformatted(text: object) -> Markup:
    """``text`` as it is, in a ``<pre>`` block."""
    return macro("preformatted")(text)


#: free text longer than this leaves its table cell for a numbered note under the table, so a row stays one line
#: high and the numbers beside it stay readable (a 300-character reason made each row ~500 px tall)
LONG_TEXT = 48


def scroll_box(table_html: Markup) -> Markup:
    """``table_html`` (markup) in a box that scrolls sideways, so a wide table never makes the page wider than the window."""
    return macro("scroll_box")(table_html)


def table(header: Sequence[object], rows: Iterable[Sequence[object]]) -> Markup:
    """An HTML table in its own sideways-scrolling box (:func:`scroll_box`).

    Every cell is escaped unless it is markup already (:func:`number`,
    :func:`interval`, a note marker), so a cell holds either text or one of those.
    """
    return macro("table")(list(header), [list(row) for row in rows])


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

    def cell(self, text: str, *, column: str = "") -> Markup:
        """The cell for ``text`` of ``column`` (its header): itself (escaped) when short, else its note's marker."""
        if len(text) <= LONG_TEXT:
            return escape(text)
        n = self._notes.setdefault((column, text), len(self._notes) + 1)
        return macro("note_marker")(n, text)

    def listing(self) -> Markup:
        """The notes not listed yet, as an ordered list (or empty)."""
        fresh = list(self._notes)[self._listed :]
        if not fresh:
            return escape("")
        start = self._listed + 1
        self._listed = len(self._notes)
        return macro("notes")(start, fresh)


def frame_table(
    frame: pd.DataFrame,
    *,
    digits: int = 4,
    labels: Mapping[str, str] | None = None,
    integers: Iterable[str] = (),
) -> Markup:
    """A DataFrame as a table: headers by :func:`label`, every cell escaped, numbers through :func:`number`.

    Text longer than :data:`LONG_TEXT` characters is listed under the table
    as a numbered note (:class:`TextNotes`), its cell holding the marker;
    true/false reads yes/no.
    Columns named in ``integers`` are counts stored as floats (``2.0``) and
    are shown as whole numbers.
    """
    notes = TextNotes()
    whole = set(integers)

    def cell(column: str, value: Any) -> object:
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


def bullet_list(items: Iterable[object], *, css_class: str | None = None) -> Markup:
    """An escaped ``<ul>`` of ``items``, or empty markup when there are none."""
    return macro("bullets")(list(items), css_class)


def section(title: str, *parts: object) -> Markup:
    """A titled section; ``parts`` are markup (tables, paragraphs...) or text, which is escaped; empty ones are left out."""
    return macro("section")(title, parts)


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
) -> Markup:
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
    items = [
        {
            "src": figure_src(rel),
            "caption": (captions or {}).get(name) or name,
            "missing": run_dir is not None and not (Path(run_dir) / rel).is_file(),
        }
        for name, rel in plots.items()
    ]
    return macro("figures")(items)


def optional_figures(
    draw: Callable[[], Mapping[str, str]],
    *,
    run_dir: str | os.PathLike[str],
    captions: Mapping[str, str] | None = None,
) -> Markup:
    """The figures ``draw`` writes into the run folder, as a :func:`figure_block`; without matplotlib (the
    ``plots`` extra) one line saying so instead, so a page's tables never depend on it."""
    try:
        return figure_block(draw(), run_dir=run_dir, captions=captions)
    except MissingDependencyError as exc:
        return para(f"No figures: {exc}")


def versions() -> dict[str, str]:
    """The software a page was made with, for its footer (:func:`folkscope.runs.package_versions` and the platform)."""
    return {**package_versions(), "platform": platform.platform()}


def config_footer(config: Mapping[str, Any]) -> Markup:
    """The run's configuration as JSON and the software versions, so a page says how it was made."""
    cfg = json.dumps(to_jsonable(config), indent=2, ensure_ascii=False)
    return macro("config_footer")(cfg, [[k, v] for k, v in versions().items()])


def _csp(script: str | None) -> str:
    """The page's Content Security Policy: with ``script`` (its text), that one inline script (by its SHA-256) may
    run, nothing else."""
    if script is None:
        return _CSP
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return f"{_CSP}; script-src 'sha256-{digest}'"


def render_page(
    title: str,
    *,
    heading: str,
    body: Sequence[object],
    subtitle: str | None = None,
    config: Mapping[str, Any] | None = None,
    script: str | None = None,
    styles: Sequence[str] = (),
) -> str:
    """A whole HTML page, rendered from the page template.

    Parameters
    ----------
    title, heading : str
        The browser title and the ``<h1>`` (both escaped).
    body : sequence
        Page parts in order: markup (:func:`section`, :func:`para`, a part's
        own template...), or text, which is escaped; empty ones are left out.
    subtitle : str, optional
        A line under the heading (escaped).
    config : mapping, optional
        Shown with the software versions at the end (:func:`config_footer`).
    script : str, optional
        The template name of one inline script (trusted code in a ``.js``
        file of the package, never data), allowed by its hash in the page's
        Content Security Policy; still no request leaves the page.
    styles : sequence of str
        Template names of extra stylesheets (``.css`` files), after the shared one.
    """
    footer = config_footer(config) if config is not None else ""
    code = render(script) if script is not None else None
    return render(
        PAGE,
        title=title,
        heading=heading,
        subtitle=subtitle,
        content=[part for part in (*body, footer) if part],
        csp=_csp(code),
        styles=list(styles),
        script=script,
    )


def write_page(path: str | os.PathLike[str], page: str) -> Path:
    """Write ``page`` to ``path`` atomically (a reader never sees half a page); return the path."""
    return atomic_write(path, lambda fh: fh.write(page.encode("utf-8")))
