"""Report layer: the page shell and figure helpers every part's run page is built on.

It knows no part: a part builds its sections with :mod:`folkscope.report.page`
and draws its figures with :mod:`folkscope.report.figures`, so every run page
shares one look and one set of safety rules (escaping, figure paths inside the
run folder, atomic writes). ``import folkscope.report`` does not import
matplotlib; the figure helpers import it when called (``pip install
'folkscope[plots]'``).
"""

from __future__ import annotations

from folkscope.report.figures import new_figure, plain_text, save_png, subplots_row
from folkscope.report.page import (
    bullet_list,
    config_footer,
    escape,
    figure_block,
    figure_src,
    frame_table,
    number,
    optional_figures,
    render_page,
    section,
    table,
    total,
    versions,
    write_page,
)

__all__ = [
    "bullet_list",
    "config_footer",
    "escape",
    "figure_block",
    "figure_src",
    "frame_table",
    "new_figure",
    "number",
    "optional_figures",
    "plain_text",
    "render_page",
    "save_png",
    "section",
    "subplots_row",
    "table",
    "total",
    "versions",
    "write_page",
]
