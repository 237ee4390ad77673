"""Task definitions: the five folktables tasks, custom tasks, targets and their errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from folkscope.errors import ConfigError, TargetError, UnknownColumnError, UnknownTaskError
from folkscope.tasks import Target, TaskMetadata, get_task, list_tasks

FOLKTABLES = {
    # name: (target name, features in order, filters) as folktexts 0.7.1 defines them (folktables' features and
    # filters; folktexts asks ACSMobility "has moved", MIG!=1, and ACSMobilityFolktables keeps folktables' MIG==1)
    "ACSIncome": (
        "PINCP>50000",
        "AGEP COW SCHL MAR OCCP POBP RELP WKHP SEX RAC1P",
        ["AGEP>16", "PINCP>100", "WKHP>0", "PWGTP>=1"],
    ),
    "ACSPublicCoverage": (
        "PUBCOV==1",
        "AGEP SCHL MAR SEX DIS ESP CIT MIG MIL ANC NATIVITY DEAR DEYE DREM PINCP ESR ST FER RAC1P",
        ["AGEP<65", "PINCP<=30000"],
    ),
    "ACSMobility": (
        "MIG!=1",
        "AGEP SCHL MAR SEX DIS ESP CIT MIL ANC NATIVITY RELP DEAR DEYE DREM RAC1P GCL COW ESR WKHP JWMNP PINCP",
        ["AGEP>18", "AGEP<35"],
    ),
    "ACSMobilityFolktables": (
        "MIG==1",
        "AGEP SCHL MAR SEX DIS ESP CIT MIL ANC NATIVITY RELP DEAR DEYE DREM RAC1P GCL COW ESR WKHP JWMNP PINCP",
        ["AGEP>18", "AGEP<35"],
    ),
    "ACSEmployment": (
        "ESR==1",
        "AGEP SCHL MAR RELP DIS ESP CIT MIG MIL ANC NATIVITY DEAR DEYE DREM SEX RAC1P",
        [],  # folktables' ACSEmployment has no filter (a blank ESR is label 0); see test_folktables_parity
    ),
    "ACSTravelTime": (
        "JWMNP>20",
        "AGEP SCHL MAR SEX DIS ESP MIG RELP RAC1P PUMA ST CIT OCCP JWTR POWPUMA POVPIP",
        ["AGEP>16", "PWGTP>=1", "ESR=1"],
    ),
}


@pytest.mark.parametrize("name", list(FOLKTABLES))
def test_folktables_tasks(name):
    target, features, filters = FOLKTABLES[name]
    task = get_task(name)
    assert task.target_name == target
    assert task.features == tuple(features.split())
    assert [f.to_string() for f in task.filters] == filters
    assert task.survey_year == 2018 and task.source == "pums"
    assert sorted(c.label for c in task.choices) == [0, 1]


def test_registry_lists_offline_tasks_and_is_immutable():
    assert {"NISTIncome", "NISTPoverty", *FOLKTABLES} <= set(list_tasks())
    task = get_task("ACSIncome")
    narrowed = task.with_features("AGEP,SEX")
    assert narrowed.features == ("AGEP", "SEX")
    assert get_task("ACSIncome").features == tuple(FOLKTABLES["ACSIncome"][1].split())
    with pytest.raises(AttributeError):
        task.name = "other"  # type: ignore[misc]
    assert get_task("ACSIncome").with_filters("SEX=2").filters[-1].to_string() == "SEX=2"
    assert len(get_task("ACSIncome").filters) == 4


def test_unknown_task():
    with pytest.raises(
        UnknownTaskError, match=r"unknown task 'ACSIncom' \(did you mean 'ACSIncome'\?\); known tasks: ACSIncome"
    ):
        get_task("ACSIncom")


def test_targets():
    frame = pd.DataFrame({"PINCP": [10, 50000, 50001], "MIG": [1, 2, 3], "Y": [0, 1, 1], "Z": [1, 2, 3]})
    assert Target("PINCP", op=">", value=50000).labels(frame).tolist() == [0, 0, 1]
    assert Target("MIG", positive=(1,)).labels(frame).tolist() == [1, 0, 0]
    assert Target("Y").labels(frame).tolist() == [0, 1, 1]
    with pytest.raises(TargetError, match="not binary .*give a threshold"):
        Target("Z").labels(frame)
    with pytest.raises(TargetError, match="blank values"):
        Target("PINCP", op=">", value=1).labels(pd.DataFrame({"PINCP": [1.0, np.nan]}))
    with pytest.raises(UnknownColumnError):
        Target("NOPE").labels(frame)
    with pytest.raises(ConfigError, match="operator"):
        Target("PINCP", op="~", value=1)
    with pytest.raises(ConfigError, match="both"):
        Target("PINCP", op=">")
    with pytest.raises(ConfigError, match="not both"):
        Target("PINCP", op=">", value=1, positive=(1,))


def test_custom_task_writes_its_question():
    task = TaskMetadata.make_task(
        "Older", features=["SEX", "SCHL"], target="AGEP", threshold=(">", 40), filters="AGEP>=18"
    )
    assert task.target_name == "AGEP>40"
    assert task.question == "Is this person's age above 40 years old?"
    assert task.numeric_question == "What is the probability that this person's age is above 40 years old?"
    assert [(c.text, c.label) for c in task.choices] == [("No", 0), ("Yes", 1)]
    assert task.filters[0].to_string() == "AGEP>=18"


def test_custom_task_errors():
    with pytest.raises(UnknownColumnError, match="no text mapping for feature"):
        TaskMetadata.make_task("T", features=["BOGUS"], target="AGEP", threshold=(">", 1))
    with pytest.raises(ConfigError, match="cannot also be a feature"):
        TaskMetadata.make_task("T", features=["AGEP"], target="AGEP", threshold=(">", 1))
    with pytest.raises(ConfigError, match="duplicate"):
        TaskMetadata.make_task("T", features=["SEX", "SEX"], target="AGEP", threshold=(">", 1))
    with pytest.raises(ConfigError, match="empty"):
        get_task("ACSIncome").with_features(" , ")


def test_to_dict_is_json_ready():
    import json

    data = get_task("ACSIncome").to_dict()
    assert json.loads(json.dumps(data))["filters"] == FOLKTABLES["ACSIncome"][2]
    assert data["target_name"] == "PINCP>50000"


@pytest.mark.parametrize("module", ["columns", "filters", "task"])
def test_examples_in_the_docstrings_hold(module):
    import doctest
    import importlib

    failures, _ = doctest.testmod(importlib.import_module(f"folkscope.tasks.{module}"), optionflags=doctest.ELLIPSIS)
    assert failures == 0
