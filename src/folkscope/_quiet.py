"""Third-party chatter kept off the terminal while results leave: progress bars, banners, "view run at" lines.

``datasets`` draws a bar for every split it saves ("Saving the dataset
(1/1 shards): 100%|..."), ``huggingface_hub`` one per upload, MLflow logs
"Creating a new experiment" on its own handler, W&B prints banners and
sync hints. A user of ``folkscope export`` should see folkscope's lines
only (spec: third-party progress and chatter never reach the terminal), so
while :func:`quiet_libraries` is active the bars are switched off through
the libraries' own switches (restored afterwards, for a Python caller's
later work), their loggers are raised to ERROR, and anything they still
write to Python's stdout or stderr goes to folkscope's log at DEBUG
(shown with ``--logger-level DEBUG``, kept in a run's log) instead.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
from collections.abc import Iterator

__all__ = ["quiet_libraries"]

_LOGGERS = ("datasets", "huggingface_hub", "mlflow", "wandb", "fsspec", "filelock")
_log = logging.getLogger(__name__)


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    restore = []
    with contextlib.suppress(ImportError):
        from datasets.utils import logging as ds_logging

        if ds_logging.is_progress_bar_enabled():
            ds_logging.disable_progress_bar()
            restore.append(ds_logging.enable_progress_bar)
    with contextlib.suppress(ImportError):
        from huggingface_hub import utils as hub_utils

        if not hub_utils.are_progress_bars_disabled():
            hub_utils.disable_progress_bars()
            restore.append(hub_utils.enable_progress_bars)
    try:
        yield
    finally:
        for undo in restore:
            undo()


@contextlib.contextmanager
def quiet_libraries() -> Iterator[None]:
    """Run the block with the libraries' bars off, their loggers at ERROR and their prints sent to the log."""
    levels = {name: logging.getLogger(name).level for name in _LOGGERS}
    saved_env = {k: os.environ.get(k) for k in ("WANDB_SILENT", "WANDB_CONSOLE")}
    os.environ["WANDB_SILENT"] = "true"  # no banner, no "View run at" line, no sync hint
    os.environ["WANDB_CONSOLE"] = "off"  # W&B must not capture and echo the terminal
    for name in _LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    printed = io.StringIO()
    try:
        with _no_progress_bars(), contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            yield
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for line in printed.getvalue().splitlines():
            if line.strip():
                _log.debug("third-party output: %s", line)
