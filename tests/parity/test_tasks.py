"""The five ACS tasks are folktexts 0.7.1's: features in its order, target column and rule, labels blanks included.

On HEAD before this change (0e62943): ACSEmployment's features in another
order, ACSTravelTime without PUMA and POWPUMA, ACSMobility without GCL and
with folktables' target MIG == 1, the complement of folktexts' MIG != 1 on
every row (a blank MIG included).
"""

from __future__ import annotations

import pandas as pd
import pytest

from folkscope.tasks import get_task

ACS_TASKS = ("ACSIncome", "ACSPublicCoverage", "ACSMobility", "ACSEmployment", "ACSTravelTime")
#: raw target values worth labelling: every code, thresholds and their neighbours, a blank
TARGET_VALUES = [None, -1, 0, 1, 2, 3, 4, 5, 6, 19, 20, 20.5, 21, 49999, 50000, 50000.5, 50001]


@pytest.mark.parametrize("task", ACS_TASKS)
def test_task_definition_is_folktexts(folktexts, task):
    theirs = folktexts("task_metadata", task=task)
    ours = get_task(task)
    assert list(ours.features) == theirs["features"]
    assert ours.target_name == theirs["target"] == ours.target.column + theirs["target_threshold"]  # e.g. MIG!=1


@pytest.mark.parametrize("task", ACS_TASKS)
def test_labels_are_folktexts(folktexts, task):
    target = get_task(task).target
    ours = target.labels(pd.DataFrame({target.column: [float("nan") if v is None else v for v in TARGET_VALUES]}))
    assert ours.tolist() == folktexts("target_labels", task=task, values=TARGET_VALUES)


def test_folktables_mobility_target_stays_available():
    """folktables' own ACSMobility (MIG == 1, same house one year ago) is the task ACSMobilityFolktables."""
    ours, theirs = get_task("ACSMobilityFolktables"), get_task("ACSMobility")
    assert ours.target_name == "MIG==1" and ours.features == theirs.features and ours.filters == theirs.filters
    frame = pd.DataFrame({"MIG": [1.0, 2.0, 3.0]})
    assert ours.labels(frame).tolist() == [1, 0, 0] and theirs.labels(frame).tolist() == [0, 1, 1]
    assert ours.question == "Has this person moved in the last year?"
    assert {c.label: c.text for c in ours.choices}[1] == "No, this person lived in the same house one year ago"
