"""The argument parser of every folkscope command: a usage error is one line, naming the command and where help is.

argparse answers a mistyped flag with the whole usage block (30-37 lines
for ``run``) and the one line that matters last. :class:`CommandParser`
prints only that line, ``folkscope run: error: ... (see folkscope run
--help)``, and exits 2 as argparse does. Sub-commands made with
``add_subparsers().add_parser`` inherit the class, so registering a command
is all it takes.

An unknown flag is noticed by the top-level parser after the sub-command
has parsed what it knows; each parser records its own name in the namespace
on the way out (the innermost first), so the line names the sub-command the
flag was given to, not ``folkscope``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

__all__ = ["CommandParser"]

#: where the innermost parser leaves its name (removed before the namespace is handed out)
_PROG = "_folkscope_command_prog"


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

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if not hasattr(parsed, _PROG):  # the innermost parser returns first: it keeps its name
            setattr(parsed, _PROG, self.prog)
        return parsed, extras

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        prog = getattr(parsed, _PROG, self.prog)
        delattr(parsed, _PROG)
        if extras:
            self._fail(prog, f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def error(self, message: str) -> NoReturn:
        self._fail(self.prog, message)

    def _fail(self, prog: str, message: str) -> NoReturn:
        line = message.replace("\r", "\\r").replace("\n", "\\n")  # a user's value never breaks the line
        self.exit(2, f"{prog}: error: {line} (see {prog} --help)\n")

