"""A part's run command, run in this process: what the lm-eval bridge runs to learn or replay a run's questions.

Both directions start from one ordinary ``folkscope <part> run ...`` command:
the export runs it on the stand-in model to record what it asks, the import
runs it again on the answers lm-eval computed. Parsing goes through the
command's own parser, so every check of the command applies here too, and
its config is built before anything loads.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from folkscope.errors import CaveatWarning, ConfigError, FolkscopeError
from folkscope.registry import PARTS
from folkscope.runs import published_runs

__all__ = ["OWN_FLAGS", "check_command", "parse_command", "run_command"]

#: flags the bridge sets itself: the model and where the throw-away or replayed run goes
OWN_FLAGS = (
    "--model",
    "--inference-backend",
    "--use-web-api-model",
    "--results-dir",
    "--data-parallel",
    "--ray-address",
)


def check_command(argv: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The part a ``<part> run ...`` command runs and the command itself; one line naming the fix otherwise."""
    argv = tuple(str(a) for a in argv)
    heads = {p.commands[0]: p.name for p in PARTS.values()}
    if len(argv) >= 2 and argv[0] in heads and argv[1] == "run":
        part = heads[argv[0]]
    elif argv and argv[0] == "run":  # folktexts' spelling of `risk run`
        part = "risk"
    else:
        raise ConfigError(
            f"give a part's run command after '--', e.g. -- risk run --task ACSIncome --limit 50 (parts: "
            f"{', '.join(sorted(heads))}); got {' '.join(argv) or 'nothing'}",
            parameter="command",
        )
    taken = sorted({a.split("=")[0] for a in argv if a.split("=")[0] in OWN_FLAGS})
    if taken:
        raise ConfigError(
            f"drop {', '.join(taken)} from the command: the task holds the questions, lm_eval picks the model, "
            "and folkscope lm-eval sets where runs go",
            parameter="command",
        )
    return part, argv


def parse_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` parsed by the ``folkscope`` parser and its config built (every check), or one :class:`ConfigError` line."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = parser.parse_args(list(argv))
    except SystemExit:
        lines = err.getvalue().strip().splitlines()
        raise ConfigError(f"the command {' '.join(argv)!r}: {lines[-1] if lines else 'invalid arguments'}") from None
    module = sys.modules[args.func.__module__]
    try:
        module.config_from_args(args)
    except FolkscopeError as exc:
        raise ConfigError(f"the command {' '.join(argv)!r}: {exc}") from None
    return args


def run_command(parser: argparse.ArgumentParser, argv: Sequence[str], *, quiet: bool) -> tuple[Path, str]:
    """Run the command here; returns the run folder it published and what it printed.

    ``quiet`` keeps its output, progress and caveat warnings off the terminal
    (the export's stand-in run says nothing true about any model).
    """
    args = parse_command(parser, argv)
    out = io.StringIO()
    with contextlib.ExitStack() as stack:
        folders = stack.enter_context(published_runs())
        if quiet:
            stack.enter_context(contextlib.redirect_stdout(out))
            stack.enter_context(contextlib.redirect_stderr(out))
            stack.enter_context(warnings.catch_warnings())
            warnings.simplefilter("ignore", CaveatWarning)
        code = args.func(args)
    if code or not folders:
        raise ConfigError(f"the command {' '.join(argv)!r} ended with status {code} and published no run folder")
    return folders[-1], out.getvalue()
