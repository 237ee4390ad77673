"""matplotlib helpers shared by every part's figures: make a figure, save it atomically, keep text literal.

matplotlib is imported inside the functions (``pip install 'folkscope[plots]'``)
through :func:`folkscope._deps.require`, so importing a part costs nothing
and a missing extra fails with its pip line. Figures use the
object-oriented ``Figure`` API on the Agg canvas: no pyplot state, no GUI
backend, nothing left open. Each PNG is written atomically (temporary file,
then :func:`os.replace`), so a run folder never holds half a figure.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from folkscope._deps import require
from folkscope._io import atomic_write
from folkscope.errors import MissingDependencyError

__all__ = [
    "drawn_figure",
    "new_figure",
    "place_point_labels",
    "plain_text",
    "save_png",
    "subplots_grid",
    "subplots_row",
]

#: Resolution of every PNG, so all parts' figures read at the same size on a page.
_DPI = 110


def new_figure(*, width: float, height: float, feature: str, layout: str | None = "constrained") -> Any:
    """An empty matplotlib ``Figure`` (inches) on the Agg canvas.

    Parameters
    ----------
    width, height : float
        Size in inches.
    feature : str
        What the figure is for, named in the error when matplotlib is missing.
    layout : {"constrained", None}, default "constrained"
        None when the caller places its axes itself (``subplots_adjust``).

    Raises
    ------
    MissingDependencyError
        matplotlib is not installed; the message has the pip line.
    """
    figure = require("matplotlib.figure", feature=feature)
    agg = require("matplotlib.backends.backend_agg", feature=feature)
    fig = figure.Figure(figsize=(width, height), layout=layout)
    agg.FigureCanvasAgg(fig)
    return fig


def subplots_row(ncols: int = 1, *, width: float = 5.0, height: float = 4.2, feature: str) -> tuple[Any, Any]:
    """A figure of ``ncols`` axes side by side, each ``width`` x ``height`` inches; returns ``(fig, axes)``."""
    fig = new_figure(width=width * ncols, height=height, feature=feature)
    return fig, fig.subplots(1, ncols, squeeze=False)[0]


def subplots_grid(
    n: int, *, max_cols: int = 4, width: float = 3.2, height: float = 3.0, feature: str
) -> tuple[Any, list[Any]]:
    """Small multiples: ``n`` axes in rows of at most ``max_cols``, each ``width`` x ``height`` inches, on shared
    axes; returns ``(fig, axes)`` with the unused cells of the last row removed.

    One panel per run reads where one overlaid panel of five curves and bands does not.
    """
    ncols = max(1, min(n, max_cols))
    nrows = -(-n // ncols)
    fig = new_figure(width=width * ncols, height=height * nrows, feature=feature)
    grid = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    axes = list(grid.ravel())
    for ax in axes[n:]:
        ax.remove()
    return fig, axes[:n]


#: where a point's label may go, in points from the point: the nearest ring first, eight directions each
_RINGS = (5, 11, 18, 27, 38, 52)
_DIRECTIONS = ((1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1))


def place_point_labels(ax: Any, xs: Any, ys: Any, texts: Any, *, fontsize: float = 7) -> list[Any]:
    """Label each point ``(x, y)`` of ``ax`` with its text, nudged so that no two labels overlap.

    Each label tries positions around its point, nearest first, and takes the
    first whose box (measured by the renderer) meets no label already placed
    and stays inside the figure. The figure's layout is settled first and then
    fixed, so the boxes measured here are the boxes saved. Returns the text
    artists; a label's box is its text's, without the leader line drawn from rings further out.
    """
    from matplotlib.text import Text

    fig = ax.figure
    fig.canvas.draw()  # let constrained layout place the axes, then keep them there
    fig.set_layout_engine("none")
    renderer = fig.canvas.get_renderer()
    frame = fig.bbox
    placed: list[Any] = []
    boxes: list[Any] = []
    for x, y, text in zip(xs, ys, texts):
        artist = None
        for radius in _RINGS:
            for dx, dy in _DIRECTIONS:
                candidate = ax.annotate(
                    text,
                    (x, y),
                    xytext=(dx * radius, dy * radius),
                    textcoords="offset points",
                    fontsize=fontsize,
                    ha="left" if dx > 0 else "right" if dx < 0 else "center",
                    va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                    arrowprops={"arrowstyle": "-", "lw": 0.4, "color": "#888"} if radius > _RINGS[1] else None,
                )
                candidate.update_positions(renderer)  # where the offset puts it, before measuring
                box = Text.get_window_extent(candidate, renderer)  # the text alone, not its leader line
                inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
                if inside and not any(box.overlaps(other) for other in boxes):
                    artist = candidate
                    break
                candidate.remove()
            if artist is not None:
                break
        if artist is None:  # nowhere free within reach: the farthest spot up and right, still drawn
            artist = ax.annotate(
                text, (x, y), xytext=(_RINGS[-1], _RINGS[-1]), textcoords="offset points", fontsize=fontsize
            )
        placed.append(artist)
        boxes.append(Text.get_window_extent(artist, renderer))
    return placed


def plain_text(value: object) -> str:
    """Literal text for matplotlib: a ``$`` in a model or group name must not start mathtext."""
    return str(value).replace("$", r"\$")


def save_png(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` as a PNG at ``path`` atomically; return the path."""
    return atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=_DPI))


def drawn_figure(site: str | os.PathLike[str], name: str, draw: Callable[[Path], object]) -> str | None:
    """Draw ``site/figures/<name>.png`` with ``draw(path)``; its path relative to ``site``, or None without matplotlib.

    The leaderboard's tables never depend on the plots extra: a part asks for
    each figure through here and simply leaves out the ones that could not be drawn.
    """
    path = Path(site) / "figures" / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        draw(path)
    except MissingDependencyError:
        return None
    return f"figures/{name}.png"
