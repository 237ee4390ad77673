"""What a person sees while a command runs: one terminal stream, one log file per run.

A command-line run shows the user folkscope's own messages and progress,
and nothing else: the warnings and log lines of torch, transformers,
litellm, pydantic and friends are written to the log at DEBUG (shown on the
terminal only with ``--logger-level DEBUG``), never between progress bars.
folkscope's own warnings read as sentences (``folkscope: warning: ...``)
instead of Python's ``<string>:20: PromptConfigWarning: ...``.

:func:`configure_cli` sets this up once per command; :func:`log_to_file`
adds a part's ``run.log`` for the duration of a run, which receives
everything (progress lines included) whatever the terminal shows. Library
users who never call :func:`configure_cli` keep Python's own warning and
logging behaviour.

Examples
--------
>>> import logging, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> with log_to_file(folder / "run.log"):
...     logging.getLogger("folkscope.example").warning("kept in the run's log")
>>> "kept in the run's log" in (folder / "run.log").read_text()
True
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

__all__ = ["adopt_library_loggers", "configure_cli", "log_to_file"]

#: a record with this attribute set is for the log file only (e.g. progress lines a bar already shows)
FILE_ONLY = "folkscope_file_only"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_OWN = "folkscope"
_LIBRARY_LOGGERS = ("transformers", "torch", "accelerate", "datasets", "huggingface_hub", "vllm", "LiteLLM", "ray")


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler that writes to whatever ``sys.stderr`` is at the time, so a live progress bar can redirect it."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:  # logging assigns it in __init__; the property always reads sys.stderr
        pass


class _ConsoleFormatter(logging.Formatter):
    """``folkscope: warning: ...`` for messages at WARNING and above, ``LEVEL name: ...`` for diagnostics."""

    def __init__(self, prog: str) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")
        self.prog = prog

    def format(self, record: logging.LogRecord) -> str:
        if record.levelno >= logging.WARNING and record.name.split(".")[0] == _OWN:
            return f"{self.prog}: {record.levelname.lower()}: {record.getMessage()}"
        return super().format(record)


class _ConsoleFilter(logging.Filter):
    """Keep third-party records off the terminal (below ERROR) unless the user asked for DEBUG, and file-only records always."""

    def __init__(self, show_third_party: bool) -> None:
        super().__init__()
        self.show_third_party = show_third_party

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, FILE_ONLY, False):
            return False
        own = record.name.split(".")[0] == _OWN
        return own or self.show_third_party or record.levelno >= logging.ERROR


def _is_own(category: type[Warning]) -> bool:
    return category.__module__.split(".")[0] == _OWN


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """``warnings.showwarning`` under the CLI: folkscope's warnings as sentences, everyone else's to the log at DEBUG."""
    if _is_own(category):
        logging.getLogger(f"{_OWN}.warnings").warning("%s", message)
    else:
        logging.getLogger("py.warnings").debug("%s: %s (%s:%s)", category.__name__, message, filename, lineno)


def _adopt_library_logger(name: str) -> None:
    """Send a library's log records through ours (its own stderr handler removed), so they obey the console filter."""
    if name == "transformers":  # it adds its handler lazily; its own switches make that stick
        tf_logging = getattr(getattr(sys.modules.get("transformers"), "utils", None), "logging", None)
        if tf_logging is not None:
            tf_logging.disable_default_handler()
            tf_logging.enable_propagation()
    logger = logging.getLogger(name)
    for handler in list(logger.handlers):
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            logger.removeHandler(handler)
    logger.propagate = True


def adopt_library_loggers() -> None:
    """Route the loggers of already-imported libraries through ours, if :func:`configure_cli` ran.

    transformers (and vLLM) install their own stderr handler on import and
    stop propagation; a backend calls this right after importing them.
    Outside the command line it does nothing.
    """
    if not _CONFIGURED:
        return
    for name in _LIBRARY_LOGGERS:
        if name in sys.modules or name in logging.Logger.manager.loggerDict:
            _adopt_library_logger(name)


_CONFIGURED = False


def configure_cli(level: str = "WARNING", *, prog: str = "folkscope") -> None:
    """Set up the terminal for a command: one stderr handler, warnings routed, library loggers adopted.

    Parameters
    ----------
    level : str
        ``--logger-level``: the least severe folkscope message shown. At
        DEBUG, third-party warnings and log lines are shown too.
    prog : str
        The command's name, which starts folkscope's warnings.
    """
    global _CONFIGURED
    numeric = getattr(logging, str(level).upper(), logging.WARNING)
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _Stderr)]:
        root.removeHandler(handler)
    console = _Stderr()
    console.setLevel(numeric)
    console.setFormatter(_ConsoleFormatter(prog))
    console.addFilter(_ConsoleFilter(show_third_party=numeric <= logging.DEBUG))
    root.addHandler(console)
    root.setLevel(min(numeric, logging.WARNING))
    # folkscope's INFO lines (progress, cache reuse) reach the run log whatever the terminal shows
    logging.getLogger(_OWN).setLevel(min(numeric, logging.INFO))
    logging.getLogger("py.warnings").setLevel(logging.DEBUG)
    warnings.showwarning = _show_warning  # only how warnings are shown: the filters (and -W options) stay the user's
    _CONFIGURED = True
    adopt_library_loggers()


@contextlib.contextmanager
def log_to_file(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Append every log record (folkscope's INFO and up, third-party warnings) to ``path`` while the block runs.

    The file is opened in append mode, so a resumed run adds to the log of
    the interrupted one instead of replacing it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter(_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    own = logging.getLogger(_OWN)
    previous = own.level
    if own.getEffectiveLevel() > logging.INFO:
        own.setLevel(logging.INFO)
    try:
        yield path
    finally:
        root.removeHandler(handler)
        own.setLevel(previous)
        handler.close()
