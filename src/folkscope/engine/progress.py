"""Progress of long engine work, counted in the caller's unit (rows, problems, ...), for a terminal, a pipe and a log.

Three ways to show it, chosen by where stderr goes:

- ``"bar"``: an interactive terminal (outside CI) gets a live rich bar on
  stderr with units/s and the time left;
- ``"lines"``: a pipe, a file, ``nohup`` or a cluster log gets one plain line
  every ``interval`` seconds (``FOLKSCOPE_PROGRESS_INTERVAL``, default 10),
  plus one at the start and one at the end;
- ``"off"``: nothing on the terminal (``progress=False``).

In every mode the same plain lines go to the ``folkscope.progress`` logger
at INFO, marked for the log file only, so a run's ``run.log`` records its
progress while the terminal shows the bar. The count is what is saved:
answers are saved batch by batch, and a backend that can say how far it is
inside a batch reports it through :meth:`Progress.partial`, shown apart as
units of the running batch not saved yet (``scoring: 0/31 rows (0%), 20
more in the running batch (not saved yet), ...``), so a line never counts
what a kill would lose.

The bar's time left is this class's own estimate, the whole run's rate since
the start (as in the lines), never rich's: rich estimates speed from the
updates of its last 30 seconds only, and a bar that moves once per batch of
a slow model gets fewer than two of those, so it showed ``-:--:--`` for a
whole run while ``run.log`` had an ETA. For the same reason the bar redraws
when the count moves (at most a few times a second), not only on rich's
timer.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any, Literal

__all__ = ["Mode", "Progress", "clock_time", "format_duration", "interactive_terminal", "progress_mode"]

log = logging.getLogger("folkscope.progress")
Mode = Literal["bar", "lines", "off"]
#: seconds between two plain progress lines when not on a terminal
DEFAULT_INTERVAL = 10.0
#: least seconds between two redraws the bar asks for itself (rich's timer redraws it too)
_REDRAW = 0.2


def interactive_terminal() -> bool:
    """True only on an interactive stderr outside CI (where live bars and loading bars make sense)."""
    if os.environ.get("CI"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def progress_mode(explicit: bool | None = None) -> Mode:
    """``"off"`` when ``explicit`` is False, else ``"bar"`` on an interactive terminal and ``"lines"`` anywhere else.

    Examples
    --------
    >>> progress_mode(False)
    'off'
    """
    if explicit is False:
        return "off"
    return "bar" if interactive_terminal() else "lines"


def format_duration(seconds: float) -> str:
    """``"45s"``, ``"3m05s"``, ``"2h07m"``; ``"?"`` when unknown.

    Examples
    --------
    >>> format_duration(45.2), format_duration(185), format_duration(7620), format_duration(float("inf"))
    ('45s', '3m05s', '2h07m', '?')
    """
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def clock_time(seconds: float) -> str:
    """``"0:00:09"``, ``"1:02:03"`` (hours:minutes:seconds, rounded up, as a bar shows it); ``"?"`` when unknown.

    Examples
    --------
    >>> clock_time(8.2), clock_time(3723), clock_time(float("nan"))
    ('0:00:09', '1:02:03', '?')
    """
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    s = math.ceil(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _interval() -> float:
    raw = os.environ.get("FOLKSCOPE_PROGRESS_INTERVAL")
    try:
        value = float(raw) if raw else DEFAULT_INTERVAL
    except ValueError:
        return DEFAULT_INTERVAL
    return value if math.isfinite(value) and value >= 0 else DEFAULT_INTERVAL


class Progress:
    """Context manager counting finished units and tokens, shown as a bar or as timed plain lines.

    Parameters
    ----------
    total : int
        Units to compute in this call (those already answered are not counted).
    description : str
        What is being done, e.g. ``"scoring"``.
    unit : str, default "requests"
        The caller's unit, plural: ``"rows"``, ``"problems"``...
    enabled : bool, optional
        False: no terminal output (the log still gets the lines). Default
        (None) or True: a bar on a terminal, plain lines elsewhere.
    interval : float, optional
        Seconds between plain lines (default ``FOLKSCOPE_PROGRESS_INTERVAL`` or 10).
    clock : callable, default time.monotonic
        Seconds now; every rate, ETA and interval is read from it (a test
        drives time with its own clock instead of hoping for speed).

    Examples
    --------
    >>> with Progress(3, description="scoring", unit="rows", enabled=False) as bar:
    ...     bar.advance(3, tokens=120)
    >>> bar.done, bar.tokens, bar.line().split(",")[0]
    (3, 120, 'scoring: 3/3 rows (100%)')
    """

    def __init__(
        self,
        total: int,
        *,
        description: str,
        unit: str = "requests",
        enabled: bool | None = None,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = int(total)
        self.description = description
        self.unit = unit
        self.mode: Mode = progress_mode(enabled) if self.total > 0 else "off"
        self.interval = _interval() if interval is None else float(interval)
        self.done = 0
        self.tokens = 0
        self._partial = 0.0
        self._clock = clock
        self._start = clock()
        self._last_line = self._last_draw = self._start
        self._bar: Any = None
        self._task: Any = None

    # ------------------------------------------------------------------ what is shown
    @property
    def completed(self) -> float:
        """Units finished, plus the share of the running batch a backend reported."""
        return min(self.done + self._partial, self.total)

    def rate(self) -> float:
        """Units per second over the whole run so far (the running batch's share counted)."""
        elapsed = self._clock() - self._start
        return self.completed / elapsed if elapsed > 0 else 0.0

    @property
    def running(self) -> int:
        """Units of the running batch as good as done but not saved yet (a kill now would lose them)."""
        return int(self.completed) - self.done

    def line(self) -> str:
        """``scoring: 120/463 rows (26%), 3.1 rows/s, ETA 1m50s``, or ``..., done in 2m13s`` at the end.

        The count is what is saved (answers are saved batch by batch); units
        of the running batch already computed are named apart, so a killed
        run never turns out to have saved less than its last line said.
        """
        done, total = self.done, self.total
        pct = 100.0 * done / total if total else 100.0
        head = f"{self.description}: {done:,}/{total:,} {self.unit} ({pct:.0f}%)"
        elapsed = self._clock() - self._start
        rate = self.rate()
        if done >= total:
            return f"{head}, {rate:,.2f} {self.unit}/s, done in {format_duration(elapsed)}"
        if self.running > 0:
            head = f"{head}, {self.running:,} more in the running batch (not saved yet)"
        if self.completed <= 0:
            return f"{head}, starting"
        return f"{head}, {rate:,.2f} {self.unit}/s, ETA {format_duration(self.seconds_left())}"

    def seconds_left(self) -> float:
        """The units left at the whole run's rate so far; infinite before anything is done."""
        rate = self.rate()
        return (self.total - self.completed) / rate if rate > 0 else float("inf")

    def _bar_fields(self) -> dict[str, Any]:
        """What the bar's own columns show, all read from this object's clock."""
        elapsed = self._clock() - self._start
        if self.done >= self.total:
            left = f"done in {clock_time(elapsed)}"
        elif self.completed <= 0:
            left = "starting"
        else:
            left = f"{clock_time(self.seconds_left())} left"
        return {
            "running": self.running,
            "rate": self.rate(),
            "tokens_rate": self.tokens / elapsed if elapsed > 0 else 0.0,
            "left": left,
        }

    def _emit(self) -> None:
        """One plain line: to the log always (file only), to stderr in ``"lines"`` mode."""
        self._last_line = self._clock()
        text = self.line()
        log.info("%s", text, extra={"folkscope_file_only": True})
        if self.mode == "lines":
            print(text, file=sys.stderr, flush=True)

    def _refresh(self) -> None:
        now = self._clock()
        if self._bar is not None:
            redraw = now - self._last_draw >= _REDRAW
            if redraw:
                self._last_draw = now
            self._bar.update(self._task, completed=self.done, refresh=redraw, **self._bar_fields())
        if now - self._last_line >= self.interval:
            self._emit()

    # ------------------------------------------------------------------ what callers report
    def advance(self, units: int, *, tokens: int = 0) -> None:
        """``units`` more finished (a completed batch); the running batch's partial share is reset."""
        self.done += units
        self.tokens += tokens
        self._partial = 0.0
        self._refresh()

    def partial(self, units: float) -> None:
        """How many units of the running batch are as good as done (a backend's estimate, e.g. by tokens run)."""
        self._partial = max(0.0, float(units))
        self._refresh()

    # ------------------------------------------------------------------ context
    def __enter__(self) -> Progress:
        self._start = self._last_line = self._last_draw = self._clock()
        if self.mode == "bar":
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn
            from rich.progress import Progress as RichProgress
            from rich.text import Text

            unit = self.unit

            class Rate(ProgressColumn):  # type: ignore[misc]
                """Units/s (the running batch's share counted), tokens/s, and the units computed but not saved yet."""

                def render(self, task: Any) -> Text:
                    running = task.fields.get("running", 0)
                    extra = f"  +{running:,} not saved yet" if running > 0 else ""
                    rate = task.fields.get("rate", 0.0)
                    if rate <= 0:
                        return Text(f"-- {unit}/s{extra}")
                    return Text(f"{rate:,.2f} {unit}/s  {task.fields.get('tokens_rate', 0.0):,.0f} tok/s{extra}")

            class Left(ProgressColumn):  # type: ignore[misc]
                """The time left at the whole run's rate (see the module's docstring: not rich's 30-second window)."""

                def render(self, task: Any) -> Text:
                    return Text(task.fields.get("left", ""), style="progress.remaining")

            self._bar = RichProgress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                unit,
                Rate(),
                Left(),
                console=Console(stderr=True),  # where interactive_terminal() looked; stdout keeps the summary
                transient=False,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total, **self._bar_fields())
        if self.total > 0:
            self._emit()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, **self._bar_fields())
            self._bar.__exit__(*exc)
            self._bar = None
        if self.total > 0:
            self._emit()
