"""Rows that bring their label, as folktexts and folktables write them (issue 29).

folktexts keeps a task's label in a column named by its rule (``PINCP>50000``)
and folktables writes True/False in the target's own column; such rows have
no raw target and no ``PWGTP``. They were refused ("task ACSIncome needs
column(s) PINCP, PWGTP").
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.data import load_bundled
from folkscope.data.dataset import Dataset
from folkscope.data.labels import FOLKTABLES_RULES, given_label
from folkscope.errors import DataError, UnknownColumnError
from folkscope.tasks import get_task

FOLKTEXTS_ROWS = load_bundled("acs-income-10")  # folktexts' own test rows: ten features and PINCP>50000, no PWGTP


def test_folktexts_rows_use_their_label_column_unweighted_and_say_so():
    ds = Dataset(FOLKTEXTS_ROWS, "ACSIncome", test_size=0.2)
    assert len(ds) == 10 and ds.data["PINCP>50000"].tolist() == FOLKTEXTS_ROWS["PINCP>50000"].tolist()
    assert np.array_equal(ds.weights("train"), np.ones(8))
    note = ds.describe()["population"]["note"]
    assert note == (
        "labels from column PINCP>50000 (folktexts' format); the task's filters PINCP>100, PWGTP>=1 taken as "
        "applied (the rows were written for it); no PWGTP column, so every metric is unweighted"
    )


def test_rows_with_raw_targets_and_weights_say_nothing_new():
    nist = Dataset(load_bundled("nist-national"), "NISTIncome")
    assert "note" not in nist.describe()["population"]
    unweighted = Dataset(load_bundled("nist-national").drop(columns="PWGTP"), "NISTIncome")
    assert unweighted.describe()["population"]["note"] == "no PWGTP column, so every metric is unweighted"


def _rows(task: str, raw: list[float]) -> pd.DataFrame:
    """Rows of a task with the raw target values given, every feature 1 (a code every column knows) and ages in range."""
    t = get_task(task)
    frame = pd.DataFrame({c: [1] * len(raw) for c in t.features})
    frame["AGEP"] = 30
    frame[t.target.column] = raw
    return frame


#: per task, raw target values around its rule
RAW = {
    "ACSIncome": [0, 50000, 50001, 120000],
    "ACSPublicCoverage": [1, 2, 1, 2],
    "ACSMobility": [1, 2, 3, 1],
    "ACSMobilityFolktables": [1, 2, 3, 1],
    "ACSEmployment": [1, 2, 3, 6],
    "ACSTravelTime": [5, 20, 21, 90],
}


@pytest.mark.parametrize("task", sorted(RAW))
def test_a_label_given_either_way_is_the_label_derived_from_the_raw_target(task):
    t = get_task(task)
    raw = _rows(task, RAW[task])
    expected = t.target.labels(raw).tolist()
    folktexts = raw.drop(columns=t.target.column).assign(**{t.target_name: expected})
    op, value = FOLKTABLES_RULES[t.target.column]
    folktables = raw.assign(
        **{t.target.column: (raw[t.target.column] > value) if op == ">" else (raw[t.target.column] == value)}
    )
    for rows in (folktexts, folktables):
        label = given_label(rows, t)
        assert label is not None and label.labels(rows).tolist() == expected, (task, label)


def test_a_label_column_of_the_complement_rule_is_read_as_its_complement():
    """folktexts' ACSMobility asks 'has moved' (MIG!=1); folktables' label, and the task ACSMobilityFolktables, are MIG==1."""
    rows = _rows("ACSMobility", [1, 2, 3]).drop(columns="MIG").assign(**{"MIG==1": [1, 0, 0]})
    ds = Dataset(rows, "ACSMobility", test_size=0.0)
    assert ds.data["MIG!=1"].tolist() == [0, 1, 1]
    assert (
        "labels from column MIG==1 (folktexts' format, read as its complement MIG!=1)"
        in ds.describe()["population"]["note"]
    )
    folktables = _rows("ACSMobility", [True, False, False])  # folktables writes MIG == 1 as True
    assert Dataset(folktables, "ACSMobility", test_size=0.0).data["MIG!=1"].tolist() == [0, 1, 1]


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        ("PINCP>30000", [0, 1], r"label column PINCP>30000 is another rule than task ACSIncome's label PINCP>50000"),
        ("PINCP>50000", [0, None], "label column PINCP>50000 has 1 blank values"),
        ("PINCP>50000", [0, 2], "label column PINCP>50000 must hold 0/1 or True/False, but it holds 2"),
    ],
)
def test_a_label_that_cannot_be_the_tasks_is_one_line(column, values, message):
    rows = _rows("ACSIncome", [0, 0]).drop(columns="PINCP").assign(**{column: values})
    with pytest.raises(DataError, match=message):
        Dataset(rows, "ACSIncome", test_size=0.0)


def test_true_false_in_a_threshold_target_of_another_rule_is_refused():
    """A custom PINCP>30000 task on folktables' True/False PINCP (PINCP > 50,000) would label every row 0."""
    task = get_task("ACSIncome").make_task("Over30k", features=["AGEP", "SEX"], target="PINCP", threshold=(">", 30000))
    rows = pd.DataFrame({"AGEP": [30, 40], "SEX": [1, 2], "PINCP": [True, False]})
    with pytest.raises(DataError, match=r"column PINCP holds True/False \(folktables' label PINCP>50000\)"):
        Dataset(rows, task, test_size=0.0)


def test_a_users_own_filter_on_a_column_the_rows_lack_still_counts():
    with pytest.raises(UnknownColumnError, match="PWGTP"):
        Dataset(FOLKTEXTS_ROWS, get_task("ACSIncome").with_filters("PWGTP>=5"), test_size=0.0)


def test_folktables_blanks_written_as_zero_are_blanks_again_in_coded_columns():
    rows = _rows("ACSPublicCoverage", [True, False, True]).assign(ESP=[0, 1, 0], PINCP=[0, 100, 200])
    ds = Dataset(rows, "ACSPublicCoverage", test_size=0.0)
    assert ds.data["ESP"].isna().tolist() == [True, False, True] and ds.data["PINCP"].tolist() == [0, 100, 200]
    assert "2 zeros in coded columns read as blanks" in ds.describe()["population"]["note"]


@settings(max_examples=300, deadline=None, database=None)
@given(
    st.sampled_from(sorted(RAW)),
    st.lists(st.integers(-5, 200_000), min_size=1, max_size=6),
    st.sampled_from(["bool", "text", "int"]),
)
def test_generated_labels_in_folktexts_format_read_back_as_the_raw_rule_gives_them(task, raw, kind):
    """Oracle: the task's own rule on the raw values; the label column may be bool, 0/1 or 'True'/'False' text (a CSV)."""
    t = get_task(task)
    frame = _rows(task, raw)
    expected = t.target.labels(frame)
    label = (
        expected.astype(bool) if kind == "bool" else expected.astype(bool).astype(str) if kind == "text" else expected
    )
    rows = frame.drop(columns=t.target.column).assign(**{t.target_name: label})
    assert given_label(rows, t).labels(rows).tolist() == expected.tolist()
