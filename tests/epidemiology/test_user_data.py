"""Datasets read from the user's copy: loaders on the project's test copy, truths against pandas, the --data-dir errors.

The copy is ``../shared/data`` beside the repository (or ``$FOLKSCOPE_SHARED_DATA``);
tests that need a file skip, saying which, when it is absent.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from folkscope.cli.main import main
from folkscope.data.user_data import USER_DATASETS
from folkscope.epidemiology import (
    DATASETS,
    EpidemiologyConfig,
    get_task,
    list_tasks,
    load_dataset,
    task_files,
    task_truth,
)
from folkscope.errors import ConfigError, DataError

SHARED = Path(os.environ.get("FOLKSCOPE_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))


def _load(name: str) -> pd.DataFrame:
    """The user dataset ``name`` read from the shared copy, or a skip naming the missing file."""
    file = SHARED / USER_DATASETS[name].path
    if not file.is_file():
        pytest.skip(f"no shared copy of {name} at {file} (set FOLKSCOPE_SHARED_DATA to the data folder)")
    return load_dataset(name, data_dir=SHARED)


def _crosstab(rows: pd.DataFrame, x: pd.Series, y: pd.Series, w: pd.Series | None = None) -> np.ndarray:
    """P(y | x) by pandas, weighted when ``w`` is given, rows in the order of x's sorted codes."""
    if w is None:
        return pd.crosstab(x, y, normalize="index").to_numpy(dtype=float)
    return pd.crosstab(x, y, values=w, aggfunc="sum", normalize="index").to_numpy(dtype=float)


def test_every_user_dataset_has_a_task_file_and_the_file_states_its_weights():
    files = {f.dataset: f for f in task_files()}
    assert set(USER_DATASETS) == {"nhanes", "gss", "yrbss", "nhis", "meps96", "brfss"} and not set(USER_DATASETS) & set(
        DATASETS
    )
    for name, data in USER_DATASETS.items():
        assert name in files and 2 <= len(files[name].tasks) <= 4
        assert not data.path.startswith("/") and data.source and data.about
        assert files[name].weights is not None or files[name].unweighted_because
    assert {n: files[n].weights for n in USER_DATASETS} == {
        "nhanes": "WTINT4YR",
        "nhis": "perweight",
        "gss": None,
        "yrbss": None,
        "meps96": None,
        "brfss": None,
    }


@pytest.mark.parametrize("name", ["nhanes", "gss", "yrbss", "nhis", "meps96", "brfss"])
def test_loader_and_every_task_truth_on_the_shared_copy(name):
    frame = _load(name)
    rows = {"nhanes": 20293, "gss": 2044, "yrbss": 13583, "nhis": 18790, "meps96": 8802, "brfss": 20000}[name]
    assert len(frame) == rows and "rownames" not in frame
    for task in list_tasks(dataset=name):
        truth = task_truth(task, frame)
        assert np.allclose(truth.dist.sum(axis=1), 1.0) and math.isclose(truth.shares.sum(), 1.0)
        assert (truth.n >= 50).all() and (truth.effective_n <= truth.n).all()


def test_nhanes_pools_two_cycles_and_weights_by_the_interview_weight():
    data = _load("nhanes")
    assert data["SurveyYr"].nunique() == 2
    np.testing.assert_allclose(data["WTINT4YR"], data["WTINT2YR"] / 2)
    assert 2.9e8 < data["WTINT4YR"].sum() < 3.2e8  # about the US population of 2009-2012
    assert (data["Depressed"] == "None").sum() > 7000  # the answer "None" is a level, not a missing value
    task = get_task("nhanes_smoking_by_sex")
    adults = data[(data["Age"] >= 20) & data["Smoke100"].notna()]
    status = np.where(adults["Smoke100"] == "No", 0, np.where(adults["SmokeNow"] == "No", 1, 2))
    kept = adults[(adults["Smoke100"] == "No") | adults["SmokeNow"].notna()]
    status = pd.Series(status, index=adults.index).loc[kept.index]
    sex = (kept["Gender"] == "female").astype(int)
    truth = task_truth(task, data)
    np.testing.assert_allclose(truth.dist, _crosstab(kept, sex, status, kept["WTINT2YR"]), atol=1e-12)
    shares = kept.groupby(sex)["WTINT2YR"].sum()
    np.testing.assert_allclose(truth.shares, (shares / shares.sum()).to_numpy())
    unweighted = _crosstab(kept, sex, status)
    assert np.abs(truth.dist - unweighted).max() > 0.01  # the weights matter here


def test_nhis_truth_is_the_perweight_weighted_share():
    data = _load("nhis")
    truth = task_truth(get_task("nhis_insurance_by_schooling"), data)
    school = pd.cut(data["yedu"], [-1, 11, 12, 15, 99], labels=False)
    uninsured = 1 - data["hi"]  # levels: insured first
    np.testing.assert_allclose(truth.dist, _crosstab(data, school, uninsured, data["perweight"]), atol=1e-12)
    assert sorted(data["health"].unique()) == ["excellent", "fair", "good", "poor", "very good"]


def test_gss_truth_is_the_respondents_own_share():
    data = _load("gss")
    truth = task_truth(get_task("gss_marijuana_legal_by_degree"), data)
    asked = data[data["grass"].notna()]
    order = ["LT HIGH SCHOOL", "HIGH SCHOOL", "JUNIOR COLLEGE", "BACHELOR", "GRADUATE"]
    legal = asked.groupby("degree")["grass"].apply(lambda s: (s == "LEGAL").mean()).loc[order]
    np.testing.assert_allclose(truth.dist[:, 0], legal.to_numpy())
    assert (truth.effective_n == truth.n).all()


def test_yrbss_truth_is_the_students_own_share():
    data = _load("yrbss")
    assert set(data["grade"].dropna().unique()) == {9, 10, 11, 12}  # "other" dropped to missing
    truth = task_truth(get_task("yrbss_school_night_sleep_by_grade"), data)
    sleep = data["school_night_hours_sleep"].map({"<5": 0, "5": 0, "6": 0, "7": 1, "8": 2, "9": 2, "10+": 2})
    kept = data[sleep.notna() & data["grade"].notna()]
    np.testing.assert_allclose(truth.dist, _crosstab(kept, kept["grade"], sleep.loc[kept.index]), atol=1e-12)


def test_meps96_truth_is_the_subsets_own_share():
    data = _load("meps96")
    truth = task_truth(get_task("meps96_insurance_by_self_employment"), data)
    np.testing.assert_allclose(truth.dist, _crosstab(data, data["selfemp"], data["insurance"] == "no"), atol=1e-12)


def test_brfss_truth_is_the_tables_own_share():
    data = _load("brfss")
    truth = task_truth(get_task("brfss_coverage"), data)
    assert truth.dist[0, 0] == pytest.approx((data["coverage"] == "Yes").mean()) and truth.n.tolist() == [20000]


def test_a_missing_data_dir_or_a_wrong_folder_is_one_clear_error(tmp_path, capsys):
    with pytest.raises(ConfigError, match="dataset nhanes is read from your copy .* pass --data-dir"):
        load_dataset("nhanes")
    with pytest.raises(DataError, match=r"no gss file at .*openintro__gss2010\.csv\.gz; get it from Rdatasets"):
        load_dataset("gss", data_dir=tmp_path)
    wrong = tmp_path / "rdatasets-surveys" / "csv"
    wrong.mkdir(parents=True)
    pd.DataFrame({"rownames": [1], "x": [2]}).to_csv(wrong / "openintro__yrbss.csv.gz", index=False)
    with pytest.raises(DataError, match="lacks the column.*not the expected table"):
        load_dataset("yrbss", data_dir=tmp_path)
    (wrong / "openintro__gss2010.csv.gz").write_bytes(b"not gzip at all")
    with pytest.raises(DataError, match="cannot be read as the gss table"):
        load_dataset("gss", data_dir=tmp_path)
    argv = ["epidemiology", "run", "--dataset", "brfss", "--model", "/never/loaded", "--results-dir", str(tmp_path)]
    assert main(argv) == 2  # the truth is computed before any model loads
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pass --data-dir" in err


def test_a_default_run_asks_only_the_bundled_tasks(capsys):
    assert {t.dataset for t in EpidemiologyConfig().selected()} == set(DATASETS)
    assert {t.dataset for t in EpidemiologyConfig(dataset="nhanes").selected()} == {"nhanes"}
    assert EpidemiologyConfig(data_dir=str(SHARED)).data_dir == str(SHARED)
    assert main(["epidemiology", "list"]) == 0
    out = capsys.readouterr().out
    assert "nhanes: 4 tasks, weights WTINT4YR (your copy: --data-dir)" in out
    assert (
        "anes96: 10 tasks, weights unweighted (declared); 8 generated, asked with --dataset or --dimension high\n"
        in out
    )
