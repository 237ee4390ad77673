"""Datasets on real bundled rows: population, labels, weights, reproducible splits."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from folkscope.data import ACSDataset, Dataset, load_bundled, nist_data_dictionary
from folkscope.errors import ConfigError, EmptyPopulationError, UnknownColumnError
from folkscope.tasks import TaskMetadata, get_task


@pytest.fixture(scope="module")
def nist():
    return load_bundled("nist-national")


def test_bundled_rows_are_the_published_excerpts(nist):
    assert len(nist) == 27253 and nist.index.name == "row_id"
    assert int(nist["PWGTP"].sum()) == 2_848_507  # PROVENANCE.md's weighted total
    assert int(load_bundled("nist-ma")["PWGTP"].sum()) == 772_691
    fixture = load_bundled("acs-income-10")
    assert len(fixture) == 10 and "PINCP>50000" in fixture.columns
    assert nist_data_dictionary()["EDU"]["values"]["9"] == "Bachelors degree"
    with pytest.raises(ConfigError, match="unknown bundled dataset"):
        load_bundled("nist-tx")


def test_population_and_labels_follow_the_task(nist):
    ds = Dataset(nist, "NISTIncome")
    frame = ds.data
    assert (frame["AGEP"] > 16).all() and (frame["PINCP"] > 100).all()
    assert frame["INDP_CAT"].between(0, 17).all()
    assert ((frame["PINCP"] > 50000).astype(int) == frame["PINCP>50000"]).all()
    expected = ((nist["AGEP"] > 16) & (nist["PINCP"] > 100) & nist["INDP_CAT"].between(0, 17)).sum()
    assert len(ds) == int(expected)


def test_split_is_reproducible_and_disjoint(nist):
    a, b = Dataset(nist, "NISTIncome", seed=42), Dataset(nist, "NISTIncome", seed=42)
    for split in ("train", "test"):
        assert np.array_equal(a.split_ids(split), b.split_ids(split))
    test_ids = a.split_ids("test")
    # golden value: the same 10% test rows on every machine and numpy version (PCG64 is stable)
    assert len(test_ids) == 1542 and test_ids[:8].tolist() == [27, 57, 103, 150, 193, 205, 255, 283]
    assert hashlib.sha256(test_ids.astype("int64").tobytes()).hexdigest()[:16] == "6071aaab88440715"
    assert not set(test_ids) & set(a.split_ids("train"))
    assert len(test_ids) + len(a.split_ids("train")) == len(a)
    other = Dataset(nist, "NISTIncome", seed=7)
    assert not np.array_equal(other.split_ids("test"), test_ids)


def test_validation_split(nist):
    ds = Dataset(nist, "NISTIncome", test_size=0.2, val_size=0.1)
    sizes = {s: len(ds.split_ids(s)) for s in ("train", "val", "test")}
    assert sizes["test"] == round(len(ds) * 0.2) and sizes["val"] == round(len(ds) * 0.1)
    assert sum(sizes.values()) == len(ds)
    X, y = ds.get_val()
    assert len(X) == len(y) == sizes["val"]


def test_subsample_is_reproducible_and_nested_in_splits(nist):
    ds = Dataset(nist, "NISTIncome")
    small, again = ds.subsample(0.05), ds.subsample(0.05)
    assert np.array_equal(small.split_ids("test"), again.split_ids("test"))
    assert set(small.split_ids("test")) <= set(ds.split_ids("test"))
    assert set(small.split_ids("train")) <= set(ds.split_ids("train"))
    assert len(small.split_ids("test")) == round(1542 * 0.05)
    counted = ds.subsample(100)
    assert len(counted.split_ids("test")) == 100 and len(counted.split_ids("train")) == 100
    assert ds.subsample(0.05, seed=1).split_ids("test").tolist() != small.split_ids("test").tolist()
    assert len(ds) == 15423  # the original is untouched
    for bad in (0, 0.0, 1.5, -3, "half", True):
        with pytest.raises(ConfigError, match="subsample size"):
            ds.subsample(bad)


def test_weights_and_groups_travel_with_the_rows(nist):
    ds = Dataset(nist, "NISTIncome")
    test_frame = ds.get_frame("test")
    assert {"PWGTP", "RAC1P", "SEX", "PINCP>50000"} <= set(test_frame.columns)
    ids = ds.split_ids("test")
    assert np.array_equal(ds.weights("test"), nist.loc[ids, "PWGTP"].to_numpy(dtype=float))
    X, y = ds.get_test()
    assert list(X.columns) == list(get_task("NISTIncome").features)
    assert X.index.equals(y.index) and list(X.index) == ids.tolist()
    unweighted = Dataset(nist.drop(columns="PWGTP"), "NISTIncome")
    assert (unweighted.weights("test") == 1).all()


def test_getitem_indexes_training_rows(nist):
    ds = Dataset(nist, "NISTIncome")
    X, y = ds[0:100]
    assert len(X) == 100 and X.index[0] == ds.split_ids("train")[0]


def test_make_from_task_offline_and_feature_subset():
    ds = ACSDataset.make_from_task("NISTIncome", subsampling=0.1, seed=3)
    assert ds.provenance["source"] == "nist-national" and ds.provenance["survey_year"] == 2019
    assert ds.describe()["test_rows"] == len(ds.split_ids("test"))
    task = get_task("NISTIncome").with_features(["AGEP", "EDU"]).with_filters("SEX=2")
    ds = Dataset(load_bundled("nist-ma"), task)
    assert (ds.data["SEX"] == 2).all() and list(ds.get_test()[0].columns) == ["AGEP", "EDU"]


def test_errors_name_the_problem(nist):
    with pytest.raises(EmptyPopulationError, match="no row of 27253 passes"):
        Dataset(nist, get_task("NISTIncome").with_filters("AGEP>200"))
    with pytest.raises(UnknownColumnError, match="needs column\\(s\\) COW, SCHL"):
        Dataset(nist, "ACSIncome")
    with pytest.raises(ConfigError, match="test_size"):
        Dataset(nist, "NISTIncome", test_size=1.2)
    with pytest.raises(ConfigError, match="leave rows for training"):
        Dataset(nist, "NISTIncome", test_size=0.6, val_size=0.5)
    dup = pd.concat([nist.head(5), nist.head(5)])
    with pytest.raises(ConfigError, match="unique"):
        Dataset(dup, TaskMetadata.make_task("T", features=["SEX"], target="AGEP", threshold=(">", 40), columns="nist"))


def _edited(nist, column, value, dtype=object) -> pd.DataFrame:
    """The excerpt with one cell of a row inside NISTIncome's population set to ``value``."""
    data = nist.copy()
    row = Dataset(nist, get_task("NISTIncome")).data.index[3]
    data[column] = data[column].astype(dtype)
    data.loc[row, column] = value
    return data


@pytest.mark.parametrize(
    ("column", "value", "dtype", "message"),
    [
        ("AGEP", "forty", object, r"column AGEP \(age\) holds text in 1 row, e.g. 'forty' at row"),
        ("AGEP", 1e12, float, r"column AGEP \(age\) has values outside 0..130 years_old in 1 row, e.g. 1e\+12"),
        ("AGEP", float("inf"), float, r"column AGEP .* outside 0..130"),
        ("PWGTP", -3, float, "survey weight column PWGTP has 1 missing, negative or non-numeric values, e.g. -3.0"),
        ("PWGTP", "heavy", object, "survey weight column PWGTP has 1 missing"),
    ],
)
def test_bad_values_are_one_data_error_before_any_scoring(nist, column, value, dtype, message):
    """Text in AGEP was a pandas TypeError, an age of 1e12 went into a prompt, bad weights surfaced after scoring."""
    from folkscope.errors import DataError

    with pytest.raises(DataError, match=message):
        Dataset(_edited(nist, column, value, dtype), get_task("NISTIncome"))


def test_all_zero_weights_are_refused(nist):
    from folkscope.errors import DataError

    with pytest.raises(DataError, match="survey weight column PWGTP is zero in every row"):
        Dataset(nist.assign(PWGTP=0), get_task("NISTIncome"))


def test_numeric_text_converts_and_blank_filter_columns_are_counted(nist):
    """800 rows became 312 without a word: now the population report says how many left for a blank filter column."""
    data = nist.assign(AGEP=lambda d: d["AGEP"].astype(str))  # numbers stored as text convert
    data.loc[data.index[:40], "PINCP"] = np.nan
    ds = Dataset(data, get_task("NISTIncome"))
    report = ds.describe()["population"]
    assert ds.data["AGEP"].dtype.kind == "i"
    assert report["rows_in"] == len(data) and report["rows_kept"] == len(ds)
    assert report["left_out_for_blank_filter_column"]["PINCP"] == int(data["PINCP"].isna().sum())
    from folkscope.risk.summary import population_line

    assert "left out with a blank filter column: " in population_line(report)
