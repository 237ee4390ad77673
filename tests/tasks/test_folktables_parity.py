"""The ACS tasks keep the rows folktables 0.0.12 keeps and label them as folktexts 0.7.1 does, blanks included.

folktables (which folktexts 0.7.1 uses to build its datasets) applies each
task's filter to the raw rows; folktables and folktexts then apply the
target rule to the raw target column. A blank compares false in both, so: a
filter that keeps the rows passing a condition drops a blank; ACSMobility's
filter, which *drops* the rows failing it, keeps a blank age; and a blank
target is label 0, e.g. a worker at work who works from home (ESR = 1,
blank commute JWMNP) in ACSTravelTime, or a child under 16 (blank ESR) in
ACSEmployment, whose folktables definition has no filter at all. Except
folktexts' ACSMobility, which asks "has moved" (MIG != 1): a blank is not
1, so it is label 1 (folktables' own MIG == 1 is ACSMobilityFolktables, where
a blank is 0). The frames below are written by hand from those rules
(folktables is not a folkscope dependency and is not imported here;
tests/parity/test_tasks.py compares with folktexts itself).

Measured with folktables 0.0.12 itself (scratch script, not part of the
suite: random PUMS-like rows with 5-30% blanks in every column and values at
every threshold edge, compared with ``folktables.<Task>._preprocess`` /
``target_transform`` and ``df_to_numpy`` against ``Dataset(frame, task)``):

- 5,000 synthetic rows (seed 0): rows kept by folktables / folkscope and label
  disagreements: ACSIncome 1,450 / 1,450, 0; ACSPublicCoverage 609 / 609, 0;
  ACSMobility 2,008 / 2,008, 0; ACSEmployment 5,000 / 5,000, 0;
  ACSTravelTime 603 / 603, 0. The same with nullable ``Int64`` columns (the
  PUMS loader's dtypes), and on three frames of 20,000 rows (seeds 1-3): the
  same rows and 0 disagreements per task.
- 2,000 real ACS 2012 person rows (openintro ``acs12``: age, income, hours,
  commute, employment mapped to AGEP, PINCP, WKHP, JWMNP, ESR; 60 employed
  people with a blank commute, 395 blank ESR): ACSIncome 888 / 888,
  ACSEmployment 2,000 / 2,000, ACSTravelTime 840 / 840, 0 disagreements.
- Before this fix, on the 5,000 synthetic rows: ACSPublicCoverage,
  ACSMobility, ACSEmployment and ACSTravelTime raised TargetError on blank
  targets (97 PUBCOV, 33 MIG, 122 ESR, 359 JWMNP; 59 JWMNP on the real
  rows); ACSMobility kept 570 rows, not 2,008 (the 1,438 blank ages);
  ACSEmployment kept 2,637, not 5,000 (its filter AGEP=16..90 left out 1,438
  blank ages, 557 under 16 and 368 over 90; 413 real rows). ACSIncome already
  agreed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from folkscope.data import Dataset
from folkscope.errors import ConfigError, TargetError
from folkscope.tasks import Target, TaskMetadata, get_task

nan = np.nan
DROP = None  # expected: the row is not in the population

# Each case: columns, then rows of (values..., expected label or DROP).
CASES = {
    # folktables adult_filter: AGEP>16, PINCP>100, WKHP>0, PWGTP>=1 (a blank passes none);
    # target PINCP>50000 (PINCP is never blank once PINCP>100 holds)
    "ACSIncome": (
        ["AGEP", "PINCP", "WKHP", "PWGTP"],
        [
            (30, 60000, 40, 10, 1),
            (30, 50000, 40, 10, 0),  # not above 50,000
            (17, 101, 1, 1, 0),  # every filter at its edge, passing
            (16, 60000, 40, 10, DROP),
            (nan, 60000, 40, 10, DROP),
            (30, nan, 40, 10, DROP),
            (30, 100, 40, 10, DROP),
            (30, 60000, nan, 10, DROP),
            (30, 60000, 0, 10, DROP),
            (30, 60000, 40, nan, DROP),
            (30, 60000, 40, 0, DROP),
        ],
    ),
    # folktables public_coverage_filter: AGEP<65, PINCP<=30000 (a blank passes neither);
    # target PUBCOV==1, so a blank PUBCOV -> 0
    "ACSPublicCoverage": (
        ["AGEP", "PINCP", "PUBCOV"],
        [
            (40, 20000, 1, 1),
            (40, 30000, 2, 0),
            (64, -5000, nan, 0),  # blank target -> 0
            (65, 20000, 1, DROP),
            (nan, 20000, 1, DROP),
            (10, nan, 1, DROP),  # children under 15 have a blank income
            (40, 30001, 1, DROP),
        ],
    ),
    # folktables ACSMobility preprocess: drop rows with AGEP<=18 or AGEP>=35, so a blank age stays;
    # folktexts' target MIG!=1 ("has moved"), so a blank MIG -> 1
    "ACSMobility": (
        ["AGEP", "MIG"],
        [
            (19, 1, 0),
            (34, 2, 1),
            (25, 3, 1),
            (25, nan, 1),  # blank target is not 1 -> 1
            (nan, 1, 0),  # blank age is neither <=18 nor >=35: kept
            (nan, nan, 1),
            (18, 1, DROP),
            (35, 1, DROP),
            (0, nan, DROP),
        ],
    ),
    # folktables' own target MIG==1 (same house), so a blank MIG -> 0
    "ACSMobilityFolktables": (
        ["AGEP", "MIG"],
        [
            (19, 1, 1),
            (34, 2, 0),
            (25, 3, 0),
            (25, nan, 0),  # blank target -> 0
            (nan, 1, 1),  # blank age is neither <=18 nor >=35: kept
            (nan, nan, 0),
            (18, 1, DROP),
            (35, 1, DROP),
            (0, nan, DROP),
        ],
    ),
    # folktables ACSEmployment: no filter (preprocess is the identity), every row stays;
    # target ESR==1, so a blank ESR (under 16) -> 0
    "ACSEmployment": (
        ["AGEP", "ESR"],
        [
            (40, 1, 1),
            (40, 2, 0),  # employed, with a job but not at work
            (20, 4, 0),  # armed forces, at work
            (10, nan, 0),  # under 16: blank ESR -> 0
            (0, nan, 0),
            (95, 6, 0),
            (nan, 1, 1),
        ],
    ),
    # folktables travel_time_filter: AGEP>16, PWGTP>=1, ESR==1 (a blank passes none);
    # target JWMNP>20 with a blank commute (works from home) -> 0
    "ACSTravelTime": (
        ["AGEP", "PWGTP", "ESR", "JWMNP"],
        [
            (30, 5, 1, 45, 1),
            (30, 5, 1, 20, 0),
            (17, 1, 1, 21, 1),
            (30, 5, 1, nan, 0),  # at work, works from home: blank JWMNP -> 0
            (30, 5, 2, nan, DROP),  # with a job but not at work
            (30, 5, nan, 45, DROP),
            (16, 5, 1, 45, DROP),
            (nan, 5, 1, 45, DROP),
            (30, 0, 1, 45, DROP),
            (30, nan, 1, 45, DROP),
        ],
    ),
}


def _case(name: str, dtype: str = "float64") -> tuple[pd.DataFrame, pd.Series]:
    columns, rows = CASES[name]
    table = pd.DataFrame([r[:-1] for r in rows], columns=columns, dtype=float).astype(dtype)
    expected = pd.Series([r[-1] for r in rows], dtype=object)
    return table, expected


def _with_features(name: str, table: pd.DataFrame) -> pd.DataFrame:
    """The case's rows plus every other feature the task reads, at a valid value."""
    task = get_task(name)
    frame = table.copy()
    for col in task.features:
        if col not in frame:
            column = task.column_texts[col]
            frame[col] = min(column.values) if column.kind == "categorical" else 40
    return frame


@pytest.mark.parametrize("dtype", ["float64", "Int64"])  # Int64: the PUMS loader's nullable integers
@pytest.mark.parametrize("name", list(CASES))
def test_population_and_labels_match_folktables_rules(name, dtype):
    task = get_task(name)
    table, expected = _case(name, dtype)
    mask = task.population_mask(table)
    assert mask.tolist() == [e is not DROP for e in expected]
    assert task.labels(table[mask]).tolist() == [e for e in expected if e is not DROP]


@pytest.mark.parametrize("name", list(CASES))
def test_dataset_keeps_folktables_rows_and_labels(name):
    task = get_task(name)
    table, expected = _case(name)
    ds = Dataset(_with_features(name, table), task, test_size=0.0)
    kept = expected[expected.map(lambda e: e is not DROP)]
    assert ds.data.index.tolist() == kept.index.tolist()
    assert ds.data[task.target_name].tolist() == kept.tolist()


def test_travel_time_dataset_labels_people_working_from_home_0():
    # real PUMS: a worker at work (ESR=1) who works from home (JWTR=11) has a blank commute
    n = 12
    frame = _with_features(
        "ACSTravelTime",
        pd.DataFrame(
            {
                "AGEP": [25.0 + i for i in range(n)],
                "PWGTP": 7.0,
                "ESR": 1.0,
                "JWMNP": [nan, 45.0, nan, 10.0] * (n // 4),
            }
        ),
    )
    frame["JWTR"] = np.where(frame["JWMNP"].isna(), 11, 1)
    ds = Dataset(frame, "ACSTravelTime", test_size=0.25)
    labels = ds.data["JWMNP>20"]
    assert len(ds.data) == n
    assert (labels[frame["JWMNP"].isna()] == 0).all() and int(labels.sum()) == 3
    _, y = ds.get_test()
    assert set(y.unique()) <= {0, 1}


def test_blank_target_declared_only_by_the_folktables_tasks():
    for name in CASES:
        blank = 1 if name == "ACSMobility" else 0  # folktexts' MIG != 1: a blank is not 1
        assert get_task(name).target.blank_label == blank
        assert get_task(name).to_dict()["target"]["blank_label"] == blank
    for name in ("NISTIncome", "NISTPoverty"):
        assert get_task(name).target.blank_label is None
        assert "blank_label" not in get_task(name).to_dict()["target"]
    mobility = get_task("ACSMobility")
    assert [f.to_string() for f in mobility.filters] == ["AGEP>18", "AGEP<35"]
    assert mobility.to_dict()["filters"] == ["AGEP>18 (or blank)", "AGEP<35 (or blank)"]
    assert get_task("ACSEmployment").filters == ()
    # a filter a user adds still drops blanks
    narrowed = mobility.with_filters("AGEP>20")
    assert narrowed.population_mask(pd.DataFrame({"AGEP": [nan, 21.0, 19.0]})).tolist() == [False, True, False]


def test_custom_task_blank_target_is_still_an_error():
    frame = pd.DataFrame({"SEX": [1, 2, 1], "JWMNP": [45.0, nan, 10.0]})
    custom = TaskMetadata.make_task("Commute", features=["SEX"], target="JWMNP", threshold=(">", 20))
    with pytest.raises(TargetError, match="JWMNP has 1 blank values"):
        Dataset(frame, custom, test_size=0.0)
    declared = TaskMetadata.make_task("Commute", features=["SEX"], target="JWMNP", threshold=(">", 20), blank_label=0)
    assert Dataset(frame, declared, test_size=0.0).data["JWMNP>20"].tolist() == [1, 0, 0]
    assert Target("Y", blank_label=1).labels(pd.DataFrame({"Y": [0.0, nan, 1.0]})).tolist() == [0, 1, 1]
    with pytest.raises(TargetError, match="not binary"):
        Target("Y", blank_label=0).labels(pd.DataFrame({"Y": [0.0, nan, 2.0]}))
    for bad in (2, -1, True, "0"):
        with pytest.raises(ConfigError, match="blank_label"):
            Target("JWMNP", op=">", value=20, blank_label=bad)  # type: ignore[arg-type]
