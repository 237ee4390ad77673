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

__all__ = ["drawn_figure", "new_figure", "plain_text", "save_png", "subplots_row"]

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
