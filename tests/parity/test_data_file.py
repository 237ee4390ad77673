"""``--data-file`` rows as folktables writes them give folktexts' labels and prompts (issue 29).

folktables' ``df_to_pandas`` (asked in the oracle worker) keeps a task's
population, writes its features with a blank as 0 and its label as
True/False in the target's own column, and drops ``PWGTP``. folkscope refused
such rows (no raw target, no weights). Now the label must be folktexts' label
of the raw target (for ACSMobility's "has moved", the complement of
folktables' ``MIG == 1``), and the prompts of the written rows must be
folktexts' prompts of the raw rows: a 0 folktables wrote for a blank code is
a blank again. Numeric columns keep their values here: folktables' 0 for a
blank number cannot be told from a real 0 (said in the module docs of
:mod:`folkscope.data.labels`), nor is a blank code whose codebook has a 0.
"""

from __future__ import annotations

import random

import pandas as pd
import pytest
from tests.parity.rows import EDGES, draw_rows

from folkscope.data.dataset import Dataset
from folkscope.prompting import PromptConfig, render_prompts
from folkscope.tasks import get_task

ACS_TASKS = ("ACSIncome", "ACSPublicCoverage", "ACSMobility", "ACSEmployment", "ACSTravelTime")
N_ROWS = 150
#: raw values of each target and of the columns folktables' filters read, blanks (None) included
TARGETS = {
    "PINCP": [*EDGES["PINCP"], None],
    "PUBCOV": [1, 2, None],
    "MIG": [1, 2, 3, None],
    "ESR": [1, 2, 3, 4, 5, 6, None],
    "JWMNP": [*EDGES["JWMNP"], None],
}


def _raw_rows(folktexts, task: str, seed: int) -> tuple[list[dict], list[str]]:
    """PUMS-coded rows with the target, weights and filter columns; blanks only where folktables' 0 can be read back."""
    codes = folktexts("column_values", task=task)
    rows = draw_rows(codes, N_ROWS, seed=seed)
    rng = random.Random(seed)
    for row in rows:
        for column, known in codes.items():
            if row[column] is None and (not known or 0 in known or column == "AGEP"):
                row[column] = rng.choice(known or EDGES.get(column, [1, 10]))
        row.update(
            {
                "PWGTP": rng.choice([0, 1, 20]),
                "WKHP": row.get("WKHP") or rng.choice(EDGES["WKHP"]),
                "AGEP": rng.choice([*EDGES["AGEP"], 19, 25, 30, 34]),
            }
        )  # ACSMobility keeps ages 19 to 34
        for column, values in TARGETS.items():
            if column == get_task(task).target.column or column not in row:
                row[column] = rng.choice(values)
    columns = list(dict.fromkeys([*codes, "PWGTP", "WKHP", *TARGETS]))
    return rows, columns


@pytest.mark.parametrize("task", ACS_TASKS)
def test_folktables_rows_give_folktexts_labels_and_prompts(folktexts, task):
    raw, columns = _raw_rows(folktexts, task, seed=ACS_TASKS.index(task))
    written = folktexts("folktables_rows", task=task, rows=raw, columns=columns)
    kept = [raw[i] for i in written["kept"]]
    assert len(kept) > 10  # folktables kept rows (its filter: ACSEmployment has none)
    t = get_task(task)
    frame = pd.DataFrame(written["rows"])
    assert "PWGTP" not in frame.columns and frame[t.target.column].dtype == bool  # as folktables writes them
    ds = Dataset(frame, task, test_size=0.0)
    assert len(ds) == len(kept)
    assert ds.data[t.target_name].tolist() == folktexts(
        "target_labels", task=task, values=[r[t.target.column] for r in kept]
    )
    ours = [str(p) for p in render_prompts(task, ds.data[list(t.features)], PromptConfig()).full_texts(0)]
    theirs = [row[0] for row in folktexts("question_prompts", task=task, rows=kept, question="multiple_choice")]
    assert ours == theirs
