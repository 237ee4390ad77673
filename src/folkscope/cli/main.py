"""The ``folkscope`` command: thin argument parsing around the Python API.

Each sub-command lives in its own module under ``folkscope.cli`` exposing
``register(subparsers)``, which adds its parser and sets ``func`` to a
callable taking the parsed namespace and returning an exit code. Errors that
folkscope raises on purpose print as one line (``folkscope: error: ...``)
without a traceback and exit with status 2; ``--debug`` shows the traceback.
Warnings and log lines follow :func:`folkscope.logs.configure_cli`: folkscope's
own on the terminal as sentences, third-party ones in the log. A usage error
(an unknown flag, a bad value) is one line too (:class:`~folkscope.cli.parser.CommandParser`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import select
import sys
import warnings
from collections.abc import Sequence

from folkscope import __version__
from folkscope.cli.parser import CommandParser
from folkscope.errors import CaveatWarning, FolkscopeError
from folkscope.logs import configure_cli

__all__ = ["build_parser", "download_models_main", "main", "run_acs_benchmark_main"]

#: sub-command modules, in the order ``folkscope --help`` lists them
_COMMANDS = (
    "run",
    "evidence",
    "rescore",
    "leaderboard",
    "compare",
    "numeric",
    "allocation",
    "epidemiology",
    "study",
    "export",
    "lmeval",
    "tasks",
    "data",
    "prompts",
    "download_models",
)


def build_parser() -> argparse.ArgumentParser:
    """The full ``folkscope`` parser with every sub-command registered."""
    parser = CommandParser(
        prog="folkscope",
        description="Evaluate language models as statistical instruments on real population data.",
    )
    parser.add_argument("--version", action="version", version=f"folkscope {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        module = importlib.import_module(f"folkscope.cli.{name}_cmd")
        module.register(subparsers)
    return parser


def _dispatch(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    configure_cli(getattr(args, "logger_level", None) or "WARNING", prog=parser.prog)
    try:
        with warnings.catch_warnings():  # the summaries print a run's caveats as lines of their own
            warnings.simplefilter("ignore", CaveatWarning)
            return int(args.func(args) or 0)
    except FolkscopeError as exc:
        if getattr(args, "debug", False):
            raise
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted; finished work is saved and a rerun resumes it", file=sys.stderr)
        return 130
    except BrokenPipeError:
        if not _reader_gone():
            raise
        return 1  # the reader stopped reading (`folkscope tasks | head`): nothing more to say, and no traceback


def _reader_gone() -> bool:
    """Whether stdout is a pipe whose reader has closed it (poll says so; a broken socket elsewhere is not it);
    if so, stdout goes to the null device, so the interpreter's own flush at exit does not fail a second time."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        gone = any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll() here, or stdout is not a file
        return False
    if gone:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return gone


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``folkscope`` command."""
    return _dispatch(build_parser(), argv)


def run_acs_benchmark_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``run_acs_benchmark``: the folktexts-compatible alias of ``folkscope run``."""
    from folkscope.cli import run_cmd

    parser = CommandParser(prog="run_acs_benchmark", description=run_cmd.DESCRIPTION)
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    run_cmd.add_arguments(parser)
    parser.set_defaults(func=run_cmd.run)
    return _dispatch(parser, argv)


def download_models_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``download_models`` (folktexts' name for ``folkscope download-models``)."""
    from folkscope.cli import download_models_cmd

    parser = CommandParser(prog="download_models", description=download_models_cmd.DESCRIPTION)
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    download_models_cmd.add_arguments(parser)
    parser.set_defaults(func=download_models_cmd.run)
    return _dispatch(parser, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
