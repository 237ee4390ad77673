"""Report layer: the page shell and figure helpers every part's run page is built on, and the leaderboard site.

It knows no part by name: a part builds its sections with :mod:`folkscope.report.page`
and draws its figures with :mod:`folkscope.report.figures`, so every run page
shares one look and one set of safety rules (escaping, figure paths inside the
run folder, atomic writes). The leaderboard (:func:`write_leaderboard`) reaches
each part through the registry and lays out the tables it returns
(:class:`BoardTable`). In Jupyter, a finished run (:func:`open_result`), a
comparison and a leaderboard table display themselves as HTML
(:mod:`folkscope.report.notebook`). ``import folkscope.report`` does not import
matplotlib; the figure helpers import it when called (``pip install
'folkscope[plots]'``).
"""

from __future__ import annotations

from folkscope.report.board import BoardFigure, BoardTable, PartBoard, RunMetrics, estimate, run_metrics, slug
from folkscope.report.figures import (
    drawn_figure,
    new_figure,
    place_point_labels,
    plain_text,
    save_png,
    subplots_grid,
    subplots_row,
)
from folkscope.report.leaderboard import Site, find_runs, write_leaderboard
from folkscope.report.notebook import RunResult, open_result
from folkscope.report.numbers import fixed, format_number
from folkscope.report.page import (
    TextNotes,
    bold,
    bullet_list,
    config_footer,
    escape,
    figure_block,
    figure_src,
    frame_table,
    heading,
    interval,
    label,
    no_interval,
    number,
    optional_figures,
    para,
    phrase,
    preformatted,
    render_page,
    scroll_box,
    section,
    sentence,
    span,
    table,
    total,
    versions,
    write_page,
)

__all__ = [
    "BoardFigure",
    "BoardTable",
    "PartBoard",
    "RunMetrics",
    "RunResult",
    "Site",
    "TextNotes",
    "bold",
    "bullet_list",
    "config_footer",
    "drawn_figure",
    "escape",
    "estimate",
    "figure_block",
    "figure_src",
    "find_runs",
    "fixed",
    "format_number",
    "frame_table",
    "heading",
    "interval",
    "label",
    "new_figure",
    "no_interval",
    "number",
    "open_result",
    "optional_figures",
    "para",
    "phrase",
    "place_point_labels",
    "plain_text",
    "preformatted",
    "render_page",
    "run_metrics",
    "save_png",
    "scroll_box",
    "section",
    "sentence",
    "slug",
    "span",
    "subplots_grid",
    "subplots_row",
    "table",
    "total",
    "versions",
    "write_leaderboard",
    "write_page",
]
