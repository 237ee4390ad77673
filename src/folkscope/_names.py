"""Names: the closest known one to a mistyped one, and a name made safe for paths, ids and keys.

Every "unknown X" message (a task, a dataset, a flag, a choice) ends the same
way: ``(did you mean 'ACSIncome'?)``, found by :func:`difflib.get_close_matches`.
Every folder name, candidate id, template id and page key is made by one
rule, :func:`slug`, with the characters its use allows.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

__all__ = ["did_you_mean", "slug"]


def slug(text: object, *, keep: str = "A-Za-z0-9._-", sep: str = "-", lower: bool = False, fallback: str = "") -> str:
    """``text`` with each run of characters outside ``keep`` (a regex class body) replaced by ``sep``.

    Leading and trailing separators and dots go (no hidden files, no ``..``);
    what is left empty becomes ``fallback``.

    >>> slug("meta-llama/Llama-3 8B"), slug("../.."), slug("HR specialist", lower=True)
    ('meta-llama-Llama-3-8B', '', 'hr-specialist')
    >>> slug("risk: NISTIncome (mc-zeroshot)", keep="a-z0-9", lower=True), slug(" my id! ", keep="A-Za-z0-9_", sep="_")
    ('risk-nistincome-mc-zeroshot', 'my_id')
    """
    text = str(text).lower() if lower else str(text)
    return re.sub(f"[^{keep}]+", sep, text).strip(sep + ".") or fallback


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
