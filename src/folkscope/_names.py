"""The closest known name to a mistyped one, for messages that say what to type instead.

Every "unknown X" message (a task, a dataset, a flag, a choice) ends the same
way: ``(did you mean 'ACSIncome'?)``, found by :func:`difflib.get_close_matches`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(value: object, known: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` for the known name closest to a mistyped one, or ``""`` when none is close.

    Case is ignored in the comparison (``acsincome`` finds ``ACSIncome``),
    so the suggestion is what to type.

    >>> did_you_mean("ACSIncom", ["ACSIncome", "ACSMobility"]), did_you_mean("--taks", ["--task", "--model"])
    (" (did you mean 'ACSIncome'?)", " (did you mean '--task'?)")
    >>> did_you_mean("zzz", ["ACSIncome"])
    ''
    """
    names = {str(k).lower(): str(k) for k in known}
    close = difflib.get_close_matches(str(value).lower(), names, n=1, cutoff=0.6)
    return f" (did you mean {names[close[0]]!r}?)" if close else ""
