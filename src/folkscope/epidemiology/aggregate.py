"""Published tables of proportions as a task's truth (BLS, IPEDS, FBI publish shares, not microdata).

A task file whose dataset is such a publication cites it once (``"source"``:
publisher, title, table, year, url) and gives each task a ``"table"``: for
every condition level (its ``value`` is the row key) the population
``share`` and the ``proportions`` of the outcome levels (their ``value`` is
the column key); a task without a condition gives ``"proportions"`` alone.
Published percentages are rounded, so proportions (and shares) must sum to
1 within :data:`SUM_TOLERANCE` and are then rescaled to sum to exactly 1; a
missing or unknown level, or a sum further off, is refused.

With no microdata there is nothing to resample, so the best reference (the
distance a perfect model still has because the truth itself is uncertain)
cannot be bootstrapped: the task declares it, ``"best": {"distance": d,
"because": "why d"}`` (e.g. twice the rounding half-width, or a distance
derived from the publication's standard errors), and the run reports the
reason beside the score. The worst reference and the mean baseline need only
the proportions and shares, and are computed as for survey tasks
(:func:`folkscope.epidemiology.truth.aggregate_truth`).

Examples
--------
>>> table = parse_table({"rows": {"m": {"share": 0.5, "proportions": {"y": 0.105, "n": 0.895}},
...                              "w": {"share": 0.5, "proportions": {"y": 0.095, "n": 0.905}}},
...                      "best": {"distance": 0.001, "because": "rounded to 0.1 point"}},
...                     outcome=["y", "n"], condition=["m", "w"], where="demo")
>>> table.dist.tolist(), table.shares.tolist(), table.best
([[0.105, 0.895], [0.095, 0.905]], [0.5, 0.5], 0.001)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from folkscope.errors import DataError

__all__ = ["SOURCE_KEYS", "SUM_TOLERANCE", "AggregateTable", "parse_source", "parse_table"]

#: how far published (rounded) proportions or shares may sum from 1 before the table is refused
SUM_TOLERANCE = 0.005
#: what a citation of a published table must name
SOURCE_KEYS = ("publisher", "title", "table", "year", "url")


@dataclass(frozen=True, eq=False)
class AggregateTable:
    """A task's published truth.

    Attributes
    ----------
    dist : ndarray of shape (n_conditions, n_levels)
        P(outcome level | condition level), each row rescaled to sum to 1.
    shares : ndarray of shape (n_conditions,)
        Population share of each condition, rescaled to sum to 1.
    best : float
        The declared best-reference distance.
    best_because : str
        Why that distance (there is no microdata to bootstrap).
    source : Mapping
        The citation (:data:`SOURCE_KEYS`).
    shares_because : str or None
        Where the shares come from when the table does not print them directly.
    """

    dist: np.ndarray
    shares: np.ndarray
    best: float
    best_because: str
    source: Mapping[str, Any] = field(default_factory=dict)
    shares_because: str | None = None

    def key(self) -> dict[str, Any]:
        """What the table says, for a run's fingerprint (another edition or declared best: another run)."""
        return {
            "dist": self.dist.round(12).tolist(),
            "shares": self.shares.round(12).tolist(),
            "best": self.best,
            "best_because": self.best_because,
            "source": dict(self.source),
        }


def parse_source(data: Any, where: str) -> dict[str, Any]:
    """The file's citation: every key of :data:`SOURCE_KEYS`, non-empty (a truth nobody can look up is refused)."""
    if not isinstance(data, Mapping):
        raise DataError(
            f"{where}: a task with a published 'table' needs the file's 'source' citation with {', '.join(SOURCE_KEYS)}"
        )
    missing = [k for k in SOURCE_KEYS if not str(data.get(k) or "").strip()]
    if missing:
        raise DataError(
            f"{where}: the 'source' citation lacks {', '.join(missing)}; name the publication so the numbers can be checked"
        )
    if not str(data["url"]).startswith(("https://", "http://")):
        raise DataError(f"{where}: the source 'url' must be a web address, got {data['url']!r}")
    return dict(data)


def _proportions(data: Any, keys: Sequence[str], what: str, where: str) -> np.ndarray:
    """One row of proportions keyed by ``keys``, every key present, each in [0, 1], summing to 1 within tolerance."""
    if not isinstance(data, Mapping):
        raise DataError(f"{where}: {what} must map each level's value to its proportion")
    values = _keyed(data, keys, what, where)
    total = values.sum()
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise DataError(
            f"{where}: {what} sum to {total:.4f}, not 1 (published rounding allows ±{SUM_TOLERANCE}); "
            "give proportions (0.105, not 10.5) that cover every level"
        )
    return values / total


def _keyed(data: Mapping[str, Any], keys: Sequence[str], what: str, where: str) -> np.ndarray:
    given = {str(k) for k in data}
    missing = [k for k in keys if k not in given]
    if missing:
        raise DataError(
            f"{where}: {what} lack level(s) {', '.join(missing)}; give a number for every level ({', '.join(keys)})"
        )
    unknown = sorted(given - set(keys))
    if unknown:
        raise DataError(
            f"{where}: {what} name {', '.join(unknown)}, which no level has as its 'value' (levels: {', '.join(keys)})"
        )
    values = {str(k): v for k, v in data.items()}
    out = []
    for k in keys:
        v = values[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= float(v) <= 1.0:
            raise DataError(f"{where}: {what}: {k} is {v!r}; give a proportion between 0 and 1")
        out.append(float(v))
    return np.asarray(out)


def parse_table(
    data: Any,
    *,
    outcome: Sequence[str],
    condition: Sequence[str] | None,
    where: str,
    source: Mapping[str, Any] | None = None,
) -> AggregateTable:
    """Check a task's ``"table"`` against its outcome (and condition) level values and read it.

    Raises
    ------
    DataError
        A level without a row or proportion, an unknown key, a number outside
        [0, 1], proportions or shares that do not sum to 1, or no declared
        best reference.
    """
    if not isinstance(data, Mapping):
        raise DataError(f"{where}: 'table' must be an object with the published proportions")
    if condition is None:
        if "rows" in data:
            raise DataError(f"{where}: a task without a condition gives 'proportions' only, not 'rows'")
        dist, shares = _proportions(data.get("proportions"), outcome, "the proportions", where)[None, :], np.ones(1)
    else:
        rows = data.get("rows")
        if not isinstance(rows, Mapping):
            raise DataError(
                f"{where}: the table needs 'rows': for each condition level's value, its 'share' and 'proportions'"
            )
        _keyed({k: 0.0 for k in rows}, condition, "the table's rows", where)  # every condition level, nothing else
        dist = np.stack(
            [
                _proportions(
                    (rows[k] or {}).get("proportions") if isinstance(rows[k], Mapping) else None,
                    outcome,
                    f"the proportions of row {k}",
                    where,
                )
                for k in condition
            ]
        )
        shares = _proportions({k: rows[k].get("share") for k in condition}, condition, "the rows' shares", where)
    best = data.get("best")
    if not isinstance(best, Mapping) or not isinstance(best.get("because"), str) or not best["because"].strip():
        raise DataError(
            f'{where}: declare the best reference, \'best\': {{"distance": D, "because": "why D"}}: a published '
            "table has no microdata to resample"
        )
    distance = best.get("distance")
    if isinstance(distance, bool) or not isinstance(distance, (int, float)) or not 0.0 <= float(distance) < 2.0:
        raise DataError(f"{where}: the best reference distance must be a number in [0, 2), got {distance!r}")
    because = data.get("shares_because")
    return AggregateTable(
        dist=dist,
        shares=shares,
        best=float(distance),
        best_because=best["because"].strip(),
        source=dict(source or {}),
        shares_because=str(because) if because else None,
    )
