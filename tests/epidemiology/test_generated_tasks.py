"""Generated high-dimensional tasks: seeded and byte-reproducible, distinct, valid on the bundled data, kept out of a default run."""

from __future__ import annotations

import copy
import doctest
import json
from math import prod
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import folkscope.epidemiology.phrases as phrases_module
from folkscope._json import read_json
from folkscope.cli.main import main
from folkscope.engine import Engine, EngineConfig
from folkscope.engine.backends.fake import FakeBackend
from folkscope.epidemiology import (
    EpidemiologyConfig,
    list_tasks,
    load_dataset,
    load_task_file,
    run_epidemiology,
)
from folkscope.epidemiology.phrases import (
    bundled_phrases,
    generate_task_file,
    generate_tasks,
    load_phrases,
)
from folkscope.epidemiology.truth import high_truth
from folkscope.errors import ConfigError, DataError

TASKS = Path(phrases_module.__file__).with_name("resources") / "tasks"
SHIPPED = {"nist-acs": TASKS / "nist-acs-generated.json", "anes96": TASKS / "anes96-generated.json"}


def test_docstring_examples_run():
    assert doctest.testmod(phrases_module).failed == 0


def _generate(tmp_path: Path, name: str, *args: str) -> bytes:
    out = tmp_path / name
    assert main(["epidemiology", "generate", *args, "--output", str(out)]) == 0
    return out.read_bytes()


def test_the_same_seed_writes_the_same_bytes_and_another_seed_other_tasks(tmp_path, capsys):
    first = _generate(tmp_path, "a.json", "--dataset", "anes96", "--n", "5", "--seed", "3")
    assert _generate(tmp_path, "b.json", "--dataset", "anes96", "--n", "5", "--seed", "3") == first
    assert capsys.readouterr().out.startswith(f"wrote 5 anes96 tasks to {tmp_path / 'a.json'} (")
    other = json.loads(_generate(tmp_path, "c.json", "--dataset", "anes96", "--n", "5", "--seed", "4"))
    names = [t["name"] for t in json.loads(first)["tasks"]]
    assert [t["name"] for t in other["tasks"]] != names and len(set(names)) == 5
    assert load_task_file(tmp_path / "a.json").tasks[0].generated  # the file reads back as ordinary, flagged tasks


@pytest.mark.parametrize("dataset", sorted(SHIPPED))
def test_the_shipped_files_are_what_their_recorded_command_writes(tmp_path, dataset):
    """The bundled files are reproducible: the phrase table, seed and settings recorded in them give the same bytes."""
    record = read_json(SHIPPED[dataset])["generated"]
    phrases = load_phrases(bundled_phrases(dataset))
    assert record["phrases_fingerprint"] == phrases.fingerprint  # the phrase table has not changed since
    args = [
        "--dataset",
        dataset,
        "--n",
        str(record["n"]),
        "--seed",
        str(record["seed"]),
        "--dims",
        ",".join(map(str, record["dims"])),
        "--min-persons",
        str(record["min_persons"]),
    ]
    assert _generate(tmp_path, "again.json", *args) == SHIPPED[dataset].read_bytes()


@pytest.mark.parametrize("dataset", sorted(SHIPPED))
def test_every_shipped_task_is_distinct_complete_and_has_a_truth(dataset):
    file = load_task_file(SHIPPED[dataset])
    data = load_dataset(dataset)
    keys = [(t.outcome.column, frozenset(v.column for v in t.conditions)) for t in file.tasks]
    assert len(set(keys)) == len(keys)  # no task twice, whatever its name
    hand = {
        (t.outcome.column, frozenset(v.column for v in t.conditions))
        for t in list_tasks(dataset=dataset)
        if not t.generated
    }
    assert hand.isdisjoint(keys)  # nor a hand-written one (ACS has two)
    for task in file.tasks:
        assert task.generated and task.dimension == "high" and 2 <= len(task.conditions) <= 5
        assert task.outcome.column not in {v.column for v in task.conditions}
        truth = high_truth(task, data)
        assert len(truth.cell_texts) == prod(len(v.levels) for v in task.conditions)  # every combination has people
        assert np.all((truth.p >= 0) & (truth.p <= 1)) and len(truth.p) == len(truth.weights)
        assert len(set(truth.cell_texts)) == len(truth.cell_texts)  # every cell described differently


def test_the_person_sentence_follows_the_grammar():
    table = load_phrases(bundled_phrases("nist-acs"))
    by_name = {c.name: c for c in table.conditions}
    entry = phrases_module._entry(table, table.outcomes[0], [by_name["sex"], by_name["age"], by_name["race"]])
    assert entry["person"] == "{SEX} {AGEP}, {RAC1P}" and entry["name"] == "acs_gen_income_by_sex_age_race"
    texts = {c["column"]: c["levels"][0]["text"] for c in entry["conditions"]}
    assert entry["person"].format(**texts) == "a man aged 18 to 34, who is White"
    no_subject = phrases_module._entry(table, table.outcomes[0], [by_name["age"], by_name["marital_status"]])
    assert (
        no_subject["person"].format(AGEP="aged 65 or over", MSP="who has never married")
        == "a person aged 65 or over, who has never married"
    )
    assert entry["subset"] == {"AGEP": {"min": 18}}
    home = next(o for o in table.outcomes if o.name == "home_ownership")  # an outcome's own subset joins the table's
    assert phrases_module._entry(table, home, [by_name["sex"], by_name["age"]])["subset"] == {
        "AGEP": {"min": 18},
        "OWN_RENT": {"values": [1, 2]},
    }


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**9), n=st.integers(1, 12), low=st.integers(2, 5), width=st.integers(0, 3))
def test_any_seed_gives_distinct_valid_entries_within_dims(seed, n, low, width):
    table = load_phrases(bundled_phrases("nist-acs"))
    high = min(5, low + width)
    entries = generate_tasks(table, n, seed, (low, high))
    assert entries == generate_tasks(table, n, seed, (low, high))
    assert len({e["name"] for e in entries}) == n
    poverty = next(o for o in table.outcomes if o.name == "poverty")
    for e in entries:
        columns = [c["column"] for c in e["conditions"]]
        assert (
            low <= len(columns) <= high and len(set(columns)) == len(columns) and e["outcome"]["column"] not in columns
        )
        if e["outcome"]["column"] == poverty.column:
            assert "PINCP" not in columns  # excluded by the poverty outcome


def _bundled() -> dict:
    return json.loads(bundled_phrases("nist-acs").read_text())


def _broken(path: str, value: object) -> dict:
    data = copy.deepcopy(_bundled())
    *head, last = path.split(".")
    where = data
    for key in head:
        where = where[int(key)] if key.isdigit() else where[key]
    if value is ...:
        del where[int(last) if last.isdigit() else last]
    else:
        where[int(last) if last.isdigit() else last] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            "outcomes.0.levels",
            [{"max": 1, "text": "a"}, {"min": 1, "max": 2, "text": "b"}, {"min": 2, "text": "c"}],
            "exactly two levels",
        ),
        ("conditions.1.phrase", "aged", "give a 'phrase' with {level}"),
        ("conditions.1.levels.0", {"min": 18, "value": 3, "text": "x"}, "exactly one of 'value'"),
        (
            "conditions.1",
            {"name": "age", "column": "AGEP", "subject": True, "levels": [{"min": 18, "text": "an adult"}]},
            "at most one condition is the subject",
        ),
        ("conditions.1.subject", True, "the subject's level texts are the noun phrase itself"),
        ("conditions.2.column", "SEX", "two conditions share a column"),
        ("conditions.2.name", "Age Group", "lower-case letters"),
        ("outcomes.1.exclude", ["nope"], "'exclude' names unknown condition"),
        ("outcomes.0.qa", ..., "needs a non-empty 'qa'"),
        ("weights", ..., "declare 'weights'"),
        ("person.join", "{", "plain text, without braces"),
    ],
)
def test_a_bad_phrase_table_entry_is_one_clear_error(tmp_path, path, value, message):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_broken(path, value)))
    with pytest.raises(DataError, match=message):
        load_phrases(bad)
    assert main(["epidemiology", "generate", "--phrases", str(bad), "--output", str(tmp_path / "out.json")]) == 2


def test_impossible_requests_are_refused():
    table = load_phrases(bundled_phrases("anes96"))  # one outcome, five conditions: 26 tasks with 2-5 conditions
    with pytest.raises(ConfigError, match="allows only 26 distinct tasks"):
        generate_tasks(table, 27, 0)
    with pytest.raises(ConfigError, match="2 <= low <= high <= 5"):
        generate_tasks(table, 2, 0, (1, 3))
    with pytest.raises(ConfigError, match="too many combinations of levels are empty"):
        generate_tasks(table, 3, 0, (2, 3), data=load_dataset("anes96"), min_persons=10**6)
    assert len(generate_task_file(table, 26, 0)["tasks"]) == 26  # without data every combination is possible
    with pytest.raises(ConfigError, match="no bundled phrase table for dataset 'gss'"):
        bundled_phrases("gss")


@settings(max_examples=60, deadline=None)
@given(
    path=st.sampled_from(
        [
            "outcomes.0",
            "outcomes.0.levels.1",
            "conditions.0",
            "conditions.3.levels",
            "conditions.4.phrase",
            "person",
            "subset",
            "name_prefix",
            "outcomes.2.subset",
        ]
    ),
    value=st.recursive(
        st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=6),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(["text", "value", "min", "phrase", "name", "column", "levels"]), inner, max_size=3
            )
        ),
        max_leaves=6,
    ),
)
def test_fuzzed_phrase_tables_load_or_fail_with_a_data_error(path, value):
    try:
        table = load_phrases(_broken(path, value))
    except DataError:
        return
    assert table.outcomes and len(table.conditions) >= 2


def test_a_default_run_leaves_generated_tasks_out_and_names_them_on_request():
    default = EpidemiologyConfig().selected()
    assert default and not any(t.generated for t in default)
    high = EpidemiologyConfig(dimension="high").selected()
    assert {t.dimension for t in high} == {"high"} and sum(t.generated for t in high) == 28
    acs = EpidemiologyConfig(dataset="nist-acs").selected()
    assert sum(t.generated for t in acs) == 20 and len(acs) == 28
    assert [t.dimension for t in EpidemiologyConfig(dataset="anes96", dimension="low").selected()] == ["low", "low"]
    name = load_task_file(SHIPPED["anes96"]).tasks[0].name
    assert [t.name for t in EpidemiologyConfig(tasks=(name,)).selected()] == [name]
    with pytest.raises(ConfigError, match="not low-dimensional"):
        EpidemiologyConfig(tasks=(name,), dimension="low")
    with pytest.raises(ConfigError, match="no high-dimensional tasks of dataset 'bls-union-2023'"):
        EpidemiologyConfig(dataset="bls-union-2023", dimension="high")


def test_a_generated_task_runs_by_name(tmp_path):
    task = next(t for t in load_task_file(SHIPPED["anes96"]).tasks if len(t.conditions) == 2)
    config = EpidemiologyConfig(
        tasks=(task.name,), engine=EngineConfig(model="m", backend="fake"), n_resamples=20, refits=2
    )
    result = run_epidemiology(config, tmp_path, engine=Engine(FakeBackend(), cache=None))
    (row,) = result.metrics["scores"]
    assert row["task"] == task.name and row["dimension"] == "high" and 0 <= row["score"] <= 100
    assert row["n_conditions"] == prod(len(v.levels) for v in task.conditions)
