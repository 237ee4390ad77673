"""A user's own task files and data: --task-file and --task-dir, a task file that names its own rows and weights."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from folkscope.cli.main import main
from folkscope.epidemiology import EpidemiologyConfig
from folkscope.errors import ConfigError, DataError
from folkscope.runs import read_table


def _survey(folder: Path, name: str = "clinic.csv") -> Path:
    """A small weighted survey: smokers by sex, with weights that move the shares away from the counts."""
    frame = pd.DataFrame(
        {
            "smokes": [1, 1, 0, 0, 0, 1, 0, 0],
            "sex": ["m", "m", "m", "m", "f", "f", "f", "f"],
            "wt": [3.0, 1.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0],
        }
    )
    path = folder / name
    frame.to_csv(path, index=False)
    return path


def _task_file(folder: Path, data: str | None = "clinic.csv", name: str = "clinic_smoking_by_sex") -> Path:
    spec = {
        "dataset": "clinic-survey",
        "about": "a test clinic's survey",
        "population": "patients",
        "weights": "wt",
        "tasks": [
            {
                "name": name,
                "outcome": {"column": "smokes", "levels": [{"value": 0, "text": "no"}, {"value": 1, "text": "yes"}]},
                "condition": {
                    "column": "sex",
                    "levels": [{"value": "m", "text": "a man"}, {"value": "f", "text": "a woman"}],
                },
                "qa": "Does {condition} at the clinic smoke?",
                "likelihood": "What is the probability that {condition} at the clinic answers {outcome}?",
            }
        ],
    }
    if data is not None:
        spec["data"] = data
    path = folder / f"{name}.json"
    path.write_text(json.dumps(spec))
    return path


def _run(tmp_path: Path, *flags: str) -> Path:
    results = tmp_path / "results"
    argv = ["epidemiology", "run", *flags, "--inference-backend", "fake", "--model", "m", "--results-dir", str(results)]
    assert main(argv) == 0
    (folder,) = {p.parent for p in results.rglob("references.json")}
    return folder


def test_a_task_file_with_its_own_data_runs_with_its_weights(tmp_path):
    _survey(tmp_path)
    folder = _run(tmp_path, "--task-file", str(_task_file(tmp_path)))
    truth = read_table(folder, "truth").set_index(["condition", "level"])
    # men: smokers weigh 3 + 1 of 6; women: 2 of 6; condition shares 6 and 6 of 12
    assert truth.loc[("a man", "yes"), "p_true"] == pytest.approx(4 / 6)
    assert truth.loc[("a woman", "yes"), "p_true"] == pytest.approx(2 / 6)
    assert truth.loc[("a man", "yes"), "share"] == pytest.approx(0.5)
    assert truth.loc[("a man", "yes"), "n"] == 4
    assert folder.parts[-3] == "epidemiology-clinic-survey"


def test_a_task_dir_runs_every_file_and_tasks_pick_among_them(tmp_path):
    _survey(tmp_path)
    _task_file(tmp_path)
    _task_file(tmp_path, name="clinic_smoking_by_sex_again")
    folder = _run(tmp_path, "--task-dir", str(tmp_path))
    assert set(read_table(folder, "scores")["task"]) == {"clinic_smoking_by_sex", "clinic_smoking_by_sex_again"}
    config = EpidemiologyConfig(task_dir=str(tmp_path), tasks=("clinic_smoking_by_sex", "acs_income_by_sex"))
    assert [t.name for t in config.selected()] == ["clinic_smoking_by_sex", "acs_income_by_sex"]


def test_the_same_tasks_from_another_path_share_the_run_folder(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        folder.mkdir()
        _survey(folder)
        _task_file(folder)
    first = _run(one, "--task-file", str(one / "clinic_smoking_by_sex.json"))
    second = _run(one, "--task-file", str(two / "clinic_smoking_by_sex.json"))
    assert first == second  # the paths are where the files live, not what was asked


@pytest.mark.parametrize(
    ("setup", "flags", "message"),
    [
        (
            lambda d: _task_file(d),
            ["--task-file", "{d}/clinic_smoking_by_sex.json"],
            "names .*clinic.csv, which does not exist",
        ),
        (
            lambda d: _task_file(d, data="rows.xlsx"),
            ["--task-file", "{d}/clinic_smoking_by_sex.json"],
            "neither CSV nor parquet",
        ),
        (lambda d: None, ["--task-file", "{d}/nothing.json"], "--task-file .*nothing.json does not exist"),
        (lambda d: None, ["--task-dir", "{d}"], "holds no task files"),
        (
            lambda d: (_survey(d), _task_file(d), _task_file(d, name="acs_income_by_sex")),
            ["--task-dir", "{d}"],
            "in both",
        ),
    ],
)
def test_bad_user_task_files_are_one_line_before_any_model_loads(tmp_path, capsys, setup, flags, message):
    setup(tmp_path)
    argv = ["epidemiology", "run", *[f.format(d=tmp_path) for f in flags], "--model", "no/such-model"]
    assert main(argv) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and re.search(message, err), err


def test_config_errors_name_the_option():
    with pytest.raises(ConfigError) as info:
        EpidemiologyConfig(task_dir="/no/such/folder")
    assert info.value.parameter == "task_dir"


def test_a_missing_weight_column_in_the_users_rows_is_refused(tmp_path):
    pd.DataFrame({"smokes": [0, 1], "sex": ["m", "f"]}).to_csv(tmp_path / "clinic.csv", index=False)
    config = EpidemiologyConfig(task_file=(str(_task_file(tmp_path)),), engine=EpidemiologyConfig().engine)
    from folkscope.epidemiology import run_epidemiology

    with pytest.raises(DataError, match="weight column 'wt' is not in the data"):
        run_epidemiology(config, tmp_path / "results")
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("references.json"))


def test_list_shows_the_users_task_files_beside_the_bundled_ones(tmp_path, capsys):
    _survey(tmp_path)
    path = _task_file(tmp_path)
    assert main(["epidemiology", "list", "--task-file", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"clinic-survey: 1 tasks, weights wt (your task file {path}, rows {tmp_path / 'clinic.csv'})" in out
    assert "clinic_smoking_by_sex" in out and "acs_income_by_sex" in out
