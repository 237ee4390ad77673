"""``--use-population-filter`` keeps the rows folktexts 0.7.1 keeps, for folktexts' own syntax (issue 29).

folktexts reads ``SEX=2,RAC1P=1`` as a comma list of ``COLUMN=VALUE``
equalities (values read as a boolean, an int, a float or else text) and keeps
the rows where all hold; folkscope refused the comma list. Generated lists
are asked of folktexts itself (its argument parser, ``cmd_line_args_to_kwargs``
and ``Dataset.filter``, in the oracle worker) and of folkscope's
``parse_filters``/``apply_filters``; the kept rows must be the same.

Left out on purpose, where folkscope refuses or reads more than folktexts: a
text value for a numeric column (folktexts keeps no row and fails later;
folkscope names the problem), a column named twice (folktexts keeps the last
condition; folkscope keeps both), a column whose name holds an operator
(``PINCP>50000``, outside folkscope's column names), and a text cell spelled ``true``/``false``
(folktexts compares it with a boolean and keeps none; folkscope reads it as
1/0, as it reads the filter's own value).
"""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.tasks import apply_filters, parse_filters

FEATURES = ["AGEP", "COW", "SCHL", "MAR", "OCCP", "POBP", "RELP", "WKHP", "SEX", "RAC1P"]
COLUMNS = [*FEATURES, "PINCP>50000", "NAME"]
NAMES = ["a", "b", "c d", "Boston, MA"]


def _rows(n: int = 60, seed: int = 0) -> list[dict[str, object]]:
    """ACSIncome rows with small codes (so equalities hit), blanks, and a text column."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        row: dict[str, object] = {c: (None if rng.random() < 0.1 else rng.randint(1, 3)) for c in FEATURES}
        row["PINCP>50000"] = rng.randint(0, 1)
        row["NAME"] = rng.choice(NAMES)
        rows.append(row)
    return rows


ROWS = _rows()
FRAME = pd.DataFrame(ROWS, columns=COLUMNS)


def _number_text(value: int) -> st.SearchStrategy[str]:
    return st.sampled_from([str(value), f"{value}.0", f"{value}e0"])


BOOLEAN = st.sampled_from(["true", "True", "TRUE", "false", "False"])
NUMBER = st.integers(0, 5).flatmap(_number_text) | BOOLEAN


@st.composite
def _specs(draw) -> str:
    columns = draw(st.lists(st.sampled_from([*FEATURES, "NAME"]), min_size=1, max_size=3, unique=True))
    conditions = []
    for column in columns:
        value = draw(st.sampled_from([n for n in NAMES if "," not in n]) | NUMBER) if column == "NAME" else draw(NUMBER)
        conditions.append(f"{column}={value}")
    return ",".join(conditions)


@settings(max_examples=300, deadline=None, database=None)
@given(_specs())
def test_folktexts_filter_lists_keep_the_rows_folktexts_keeps(folktexts, spec):
    expected = folktexts("population_filter_rows", spec=spec, rows=ROWS, columns=COLUMNS)
    kept = np.flatnonzero(apply_filters(FRAME, parse_filters(spec))).tolist()
    assert kept == expected, spec


def test_the_generated_lists_keep_some_rows_and_not_others(folktexts):
    """Guard against a comparison that only ever sees empty or full populations."""
    kept = folktexts("population_filter_rows", spec="SEX=2,RAC1P=1", rows=ROWS, columns=COLUMNS)
    assert 0 < len(kept) < len(ROWS)
    assert kept == np.flatnonzero(apply_filters(FRAME, parse_filters("SEX=2,RAC1P=1"))).tolist()
