"""The argument parser of every folkscope command: a usage error is one line, naming the command and where help is.

argparse answers a mistyped flag with the whole usage block (30-37 lines
for ``run``) and the one line that matters last. :class:`CommandParser`
prints only that line, ``folkscope run: error: ... (see folkscope run
--help)``, and exits 2 as argparse does. Sub-commands made with
``add_subparsers().add_parser`` inherit the class, so registering a command
is all it takes.

An unknown flag is noticed by the top-level parser after the sub-command
has parsed what it knows; each parser records itself in the namespace
on the way out (the innermost first), so the line names the sub-command the
flag was given to, not ``folkscope``, and suggests the closest of its flags
(``did you mean '--task'?``); a value outside an option's choices gets the
closest choice too.

``--help`` states every option's default (``(default: ACSIncome)``) unless
its help already says it: a hidden default (a task that downloads 51 state
files, a seed) is a surprise.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from folkscope._names import did_you_mean

__all__ = ["CommandParser", "add_logger_level"]

#: where the innermost parser leaves itself (removed before the namespace is handed out)
_PROG = "_folkscope_command_parser"


class _DefaultsHelp(argparse.HelpFormatter):
    """Help that ends each option's text with its default, where the text does not already state one."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text.lower():
            return text
        if isinstance(action, argparse.BooleanOptionalAction) and isinstance(
            action.default, bool
        ):  # --chat / --no-chat
            return f"{text} (default: {'on' if action.default else 'off'})"
        quiet = (
            action.default is None
            or action.default is False
            or action.default == []
            or action.default is argparse.SUPPRESS
            or not action.option_strings
            or action.nargs == 0
        )
        return text if quiet else f"{text} (default: %(default)s)"


class CommandParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose errors are one line on stderr, exit status 2.

    Examples
    --------
    >>> import contextlib, io
    >>> parser = CommandParser(prog="folkscope demo")
    >>> _ = parser.add_argument("--n", type=int)
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     try:
    ...         parser.parse_args(["--n", "x"])
    ...     except SystemExit as exc:
    ...         print(exc.code)
    2
    >>> err.getvalue()
    "folkscope demo: error: argument --n: invalid int value: 'x' (see folkscope demo --help)\\n"
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _DefaultsHelp)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if not hasattr(parsed, _PROG):  # the innermost parser returns first: it keeps itself
            setattr(parsed, _PROG, self)
        return parsed, extras

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        inner = getattr(parsed, _PROG, self)
        delattr(parsed, _PROG)
        if extras:
            flag = next((e.split("=", 1)[0] for e in extras if e.startswith("-")), "")
            hint = did_you_mean(flag, [o for o in inner._option_string_actions if o.startswith("--")]) if flag else ""
            self._fail(inner.prog, f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """argparse's check of ``choices``, with the closest choice suggested."""
        if action.choices is not None and value not in action.choices:
            listed = ", ".join(map(repr, action.choices))
            hint = did_you_mean(value, map(str, action.choices))
            if (
                not hint and isinstance(action, argparse._SubParsersAction) and "run" in action.choices
            ):  # flags before `run`
                hint = f" (the subcommand comes first: {self.prog} run ...)"
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}{hint} (choose from {listed})")

    def error(self, message: str) -> NoReturn:
        self._fail(self.prog, message)

    def _fail(self, prog: str, message: str) -> NoReturn:
        line = message.replace("\r", "\\r").replace("\n", "\\n")  # a user's value never breaks the line
        self.exit(2, f"{prog}: error: {line} (see {prog} --help)\n")


def add_logger_level(parser: argparse.ArgumentParser) -> None:
    """``--logger-level``, the same on every command that runs a model (read by the CLI's entry point)."""
    parser.add_argument(
        "--logger-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
        help="logging level on the terminal (DEBUG also shows third-party warnings; a run's run.log keeps everything)",
    )
