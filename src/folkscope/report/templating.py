"""The one template engine every page is rendered with: jinja2, autoescaping, strict about missing values.

Pages and their parts are template files under ``folkscope/<layer>/templates/``
(the shared layout, stylesheet and partials in ``report/templates``; a part
may keep its own page's templates in its package), all found by one loader
rooted at the ``folkscope`` package, so a template is named by its path there
(``"report/templates/page.html"``). The report layer names no part: a part
hands its own template names in.

Why jinja2 and not f-strings: every value a template prints is escaped unless
it is already markup, so model names, prompts and notes cannot inject HTML
by a forgotten ``escape`` (``spec/reliability.md``, "Security"). Markup comes
only from templates: a rendered macro (a table, a note marker, a figure) is
markupsafe's ``Markup`` and is embedded as it is; anything else is text. A
value a template does not receive is an error (``StrictUndefined``), not an
empty string that would hide a broken page. Files ending ``.html`` are
escaped; the stylesheets and the one script (``.css``, ``.js``) hold no
values and are included verbatim.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

__all__ = ["environment", "macro", "render", "text_of"]

#: the partials every page shares (tables, notes, figures, sections), as macros
MACROS = "report/templates/macros.html"
#: the displays of results in Jupyter (``_repr_html_``), as macros
NOTEBOOK = "report/templates/notebook.html"


@cache
def environment() -> jinja2.Environment:
    """The engine, built once: autoescaping for HTML templates, strict undefined values, templates from the package."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("folkscope", "."),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # package files: no stat per macro call (a page calls one per table cell)
    )
    env.filters["text_of"] = text_of
    return env


def render(name: str, **context: Any) -> str:
    """The template ``name`` (a path under the ``folkscope`` package) rendered with ``context``."""
    return environment().get_template(name).render(**context)


def macro(name: str, template: str = MACROS) -> Callable[..., Any]:
    """The macro ``name`` of ``template`` as a function; it returns escaped ``Markup``, so its result can be placed
    in another template or macro as it is."""
    return getattr(environment().get_template(template).module, name)


def text_of(value: Any, digits: int = 4) -> str | None:
    """A value as a cell shows it, as plain text (the template escapes it); None when it is undefined (None, NaN),
    which the templates show as "n/a", never as a number.

    >>> text_of(1234567), text_of(0.123456), text_of(float("inf")), text_of(float("nan"))
    ('1,234,567', '0.1235', '∞', None)
    """
    import numpy as np

    if value is None or (isinstance(value, (float, np.floating)) and math.isnan(value)):
        return None
    if isinstance(value, str) and value in ("inf", "-inf"):
        return "∞" if value == "inf" else "−∞"
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            return "∞" if v > 0 else "−∞"
        return f"{v:.{digits}f}"
    return str(value)
