"""Caveats: why a run's numbers may not mean what they seem, in one shape for every part.

A run can finish and still measure little: the default model's risk scores
collapse to 0.50, so its ECE is small for no good reason; a listwise
allocation whose answers rank nothing; an epidemiology task no answer could
score; a group of four candidates. Each part decides what its caveats are
(``<part>/caveats.py``) when it analyses a run; this module gives them one
shape, records them in the run's ``manifest.json`` (``caveats``, rewritten
by every rescore) and carries them to where the numbers are shown: the
console summary, the leaderboard (which marks the run's cells), ``folkscope
compare`` (before the difference) and the Python API (a
:class:`~folkscope.errors.CaveatWarning` per caveat).

Examples
--------
>>> c = Caveat("scores-collapse", "Scores collapse: 90% of them lie in [0.497, 0.501].")
>>> Caveat.from_dict(c.to_dict()) == c
True
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folkscope.errors import CaveatWarning, DataError
from folkscope.runs.manifest import read_manifest

__all__ = ["Caveat", "caveat_lines", "read_caveats", "record_caveats", "warn_caveats"]


@dataclass(frozen=True)
class Caveat:
    """One reason a run's numbers may mislead.

    Attributes
    ----------
    code : str
        A stable short name (``scores-collapse``, ``unparsed-answers``...),
        for tools that filter or count caveats.
    message : str
        One sentence for a reader: what was seen, and what it does to the numbers.
    """

    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Caveat:
        """Inverse of :meth:`to_dict`; anything else is a damaged manifest, said in one line."""
        if not isinstance(data, Mapping) or not all(isinstance(data.get(k), str) for k in ("code", "message")):
            raise DataError(
                f"a manifest caveat must be {{'code': text, 'message': text}}, not {data!r}; rescore the run "
                "with `folkscope rescore RUN_DIR`"
            )
        return cls(code=data["code"], message=data["message"])


def record_caveats(folder: str | Path, caveats: Iterable[Caveat]) -> None:
    """Write ``caveats`` into ``folder``'s manifest, replacing the ones an earlier analysis recorded."""
    manifest = read_manifest(folder)
    dataclasses.replace(manifest, caveats=[c.to_dict() for c in caveats]).write(folder)


def read_caveats(folder: str | Path) -> list[Caveat]:
    """The caveats recorded in ``folder``'s manifest (none for a run from before caveats were recorded)."""
    return [Caveat.from_dict(c) for c in read_manifest(folder).caveats]


def warn_caveats(caveats: Iterable[Caveat], run: str | Path, *, stacklevel: int = 3) -> None:
    """One :class:`~folkscope.errors.CaveatWarning` per caveat, naming the run, for Python callers.

    ``stacklevel`` 3 points at the caller of the public function that calls this.
    """
    for caveat in caveats:
        warnings.warn(f"{Path(run).name}: {caveat.message}", CaveatWarning, stacklevel=stacklevel)


def caveat_lines(folder: str | Path) -> list[str]:
    """``caveat: <message>`` per caveat of the run in ``folder``, for console summaries (none when the manifest has none)."""
    return [f"caveat: {c.message}" for c in read_caveats(folder)]
