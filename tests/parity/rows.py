"""Survey rows for the parity tests: PUMS-coded, drawn from the codes folktexts knows, with blanks and edge values.

Codes come from folktexts' own value maps (asked through the oracle), so a
code folktexts renders that folkscope refused would show as a failure;
numeric columns take values at the edges of their ranges and of folktexts'
binning; about one value in twelve is blank (NaN), which both tools must
render as folktexts does.
"""

from __future__ import annotations

import random
from typing import Any

#: numbers worth rendering per numeric column: range ends, bin edges and thresholds of the five tasks
EDGES: dict[str, list[Any]] = {
    "AGEP": [0, 15, 16, 17, 18, 35, 64, 65, 90, 99],
    "WKHP": [1, 20, 39, 40, 41, 99],
    "PINCP": [-19998, 0, 4, 100, 15000, 50000, 50001, 1423000],
    "JWMNP": [1, 10, 20, 21, 60, 200],
    "POVPIP": [0, 100, 249, 250, 501],
    "PUMA": [100, 101, 3700, 11801],
    "POWPUMA": [1, 100, 3700],
}


def draw_rows(
    codes: dict[str, list[Any] | None], n: int, *, seed: int = 0, blank: float = 1 / 12
) -> list[dict[str, Any]]:
    """``n`` rows over the columns of ``codes`` (folktexts' known codes per column; None for a number)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        row: dict[str, Any] = {}
        for column, known in codes.items():
            if rng.random() < blank:
                row[column] = None
            elif known:
                row[column] = rng.choice(known)
            else:
                row[column] = rng.choice(EDGES.get(column, [0, 1, 10, 100]))
        rows.append(row)
    return rows
