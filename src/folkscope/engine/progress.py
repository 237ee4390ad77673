"""A progress bar for long engine work: requests/s, tokens/s and ETA.

Quiet when stderr is not a terminal or the ``CI`` environment variable is
set, unless forced on; rich is imported only when a bar is shown.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["Progress", "progress_enabled"]


def progress_enabled(explicit: bool | None = None) -> bool:
    """``explicit`` if given, else True only on an interactive stderr outside CI."""
    if explicit is not None:
        return bool(explicit)
    if os.environ.get("CI"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """Context manager counting requests and tokens.

    Parameters
    ----------
    total : int
        Requests to compute.
    description : str
    enabled : bool, optional
        Default: :func:`progress_enabled`.

    Examples
    --------
    >>> with Progress(3, description="scoring", enabled=False) as bar:
    ...     bar.advance(3, tokens=120)
    >>> bar.done, bar.tokens
    (3, 120)
    """

    def __init__(self, total: int, *, description: str, enabled: bool | None = None) -> None:
        self.total = int(total)
        self.description = description
        self.enabled = progress_enabled(enabled) and self.total > 0
        self.done = 0
        self.tokens = 0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress
            from rich.text import Text

            class Rates(ProgressColumn):  # type: ignore[misc]
                def render(self, task: Any) -> Text:
                    elapsed = task.elapsed or 0.0
                    if elapsed <= 0:
                        return Text("-- req/s  -- tok/s")
                    return Text(f"{task.completed / elapsed:,.1f} req/s  {task.fields.get('tokens', 0) / elapsed:,.0f} tok/s")

            self._bar = RichProgress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                Rates(),
                TimeRemainingColumn(),
                transient=False,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total, tokens=0)
        return self

    def advance(self, requests: int, *, tokens: int = 0) -> None:
        self.done += requests
        self.tokens += tokens
        if self._bar is not None:
            self._bar.update(self._task, advance=requests, tokens=self.tokens)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None
