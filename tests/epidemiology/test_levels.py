"""Every level of a task matches respondents, written in its column's type, checked before any model loads (issue 28, item 5).

Found by the third fault campaign: an outcome level matching no respondent
(``SEX = 3``) or written as text for a numeric column (``"1"``, which dropped
every man: the truth said P(woman) = 1) was scored without a word (3.46 and
0.0014). The oracle of the property test is built from the frame itself: a
level is refused exactly when its value is of the other kind than the
column's or no row holds it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.engine import EngineConfig
from folkscope.epidemiology import EpidemiologyConfig, list_tasks, load_dataset, run_epidemiology, task_truth
from folkscope.epidemiology.phrases import bundled_phrases, generate_tasks, load_phrases
from folkscope.epidemiology.tasks import Level, load_task_file, parse_task
from folkscope.errors import DataError


def _entry(outcome: list[dict], condition: dict | None = None, **extra) -> dict:
    entry = {
        "name": "sex_check",
        "outcome": {"column": "SEX", "levels": outcome},
        "qa": "Who is {condition}?",
        "likelihood": "Is {condition} {outcome}?",
        **extra,
    }
    if condition is not None:
        entry["condition"] = condition
    return entry


def _task(entry: dict):
    return parse_task(entry, dataset="nist-acs", population="people", weights="PWGTP", where="mine.json")


@pytest.fixture
def user_tasks(tmp_path, monkeypatch):
    """Run a task file of one's own: the bundled folder is replaced by one holding it."""

    def install(entry: dict) -> None:
        data = {"dataset": "nist-acs", "population": "people", "weights": "PWGTP", "tasks": [entry]}
        (tmp_path / "mine.json").write_text(json.dumps(data))
        monkeypatch.setattr("folkscope.epidemiology.tasks._BUNDLED", tmp_path)

    return install


@pytest.fixture
def no_model(monkeypatch):
    def boom(*_args, **_kwargs):
        raise AssertionError("the model loaded before the task's levels were checked")

    monkeypatch.setattr("folkscope.epidemiology.run.Engine.from_config", boom)


@pytest.mark.parametrize(
    ("levels", "message"),
    [
        (
            [{"value": "1", "text": "a man"}, {"value": 2, "text": "a woman"}],
            "task sex_check: outcome level 'a man' of SEX is the text \"1\", but SEX holds numbers (Int8): 1, 2",
        ),
        (
            [{"value": 1, "text": "a man"}, {"value": 2, "text": "a woman"}, {"value": 3, "text": "other"}],
            "task sex_check: outcome level 'other' of SEX (= 3) matches no respondent; SEX holds 1, 2; fix or drop the level",
        ),
    ],
)
def test_a_level_no_respondent_can_match_stops_the_run_before_the_model_loads(
    tmp_path, user_tasks, no_model, levels, message
):
    user_tasks(_entry(levels))
    with pytest.raises(DataError) as info:
        run_epidemiology(
            EpidemiologyConfig(tasks=("sex_check",), engine=EngineConfig(model="fk", backend="fake")),
            tmp_path / "results",
        )
    assert message in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "results").exists()


def test_condition_and_subset_levels_are_checked_too():
    data = load_dataset("nist-acs")
    two = [{"value": 1, "text": "a man"}, {"value": 2, "text": "a woman"}]
    rich = {"column": "PINCP", "levels": [{"max": 0, "text": "in debt"}, {"min": 20_000_000, "text": "very rich"}]}
    with pytest.raises(
        DataError,
        match=r"condition level 'very rich' of PINCP \(20000000 <= x\) matches no respondent; "
        r"PINCP holds [\d,]+ values from -?\d+ to \d+",
    ):
        task_truth(_task(_entry(two, rich)), data)
    with pytest.raises(DataError, match=r"subset level 'AGEP' of AGEP is the text \"18\", but AGEP holds numbers"):
        task_truth(_task(_entry(two, subset={"AGEP": {"values": ["18", 19]}})), data)
    puma = {"column": "PUMA", "levels": [{"value": 1301, "text": "one area"}]}
    with pytest.raises(
        DataError,
        match=r"condition level 'one area' of PUMA is the number 1301, but PUMA holds text \(category\): "
        r"\"01-01301\", .*\(20 in all\)",
    ):
        task_truth(_task(_entry(two, puma)), data)


@pytest.mark.parametrize(
    ("level", "message"),
    [
        ({"min": "18", "text": "adult"}, "'min' of level 'adult' must be a number, got \"18\""),
        ({"min": 65, "max": 18, "text": "odd"}, "level 'odd' is empty: 'min' 65 and 'max' 18 leave no number"),
        ({"over": 5, "upto": 5, "text": "none"}, "level 'none' is empty: 'over' 5 and 'upto' 5 leave no number"),
        ({"min": 1, "over": 2, "text": "both"}, "level 'both' needs exactly one of 'value', 'values', or a range"),
        ({"max": 1, "upto": 2, "text": "both"}, "level 'both' needs exactly one of 'value', 'values', or a range"),
        (
            {"value": None, "text": "blank"},
            "level 'blank' has the value null; a value is a number, a text or true/false",
        ),
        ({"values": [1, [2]], "text": "nested"}, "level 'nested' has the value [2]"),
    ],
)
def test_a_level_whose_values_cannot_be_compared_is_refused_when_the_file_is_read(level, message):
    with pytest.raises(DataError, match=message.replace("[", r"\[").replace("(", r"\(")):
        _task(_entry([level, {"value": 2, "text": "a woman"}]))


def test_every_shipped_task_passes_on_its_data():
    """No false refusals: every task of the bundled datasets (hand-written and generated) matches its data."""
    frames = {name: load_dataset(name) for name in ("nist-acs", "anes96", "randhie")}
    checked = [t for t in list_tasks() if t.dataset in frames]
    for task in checked:
        task.check_levels(frames[task.dataset])
    assert len(checked) >= 40


def test_a_phrase_table_level_of_the_wrong_type_stops_the_generator():
    table = load_phrases(bundled_phrases("nist-acs"))
    data = load_dataset("nist-acs").astype({"SEX": "string"})  # a copy whose SEX codes are text
    with pytest.raises(DataError, match=r"level '.*' of SEX is the number 1, but SEX holds text"):
        generate_tasks(table, 5, seed=0, data=data)


# ----------------------------------------------------------------------------- the oracle, on generated frames
_KINDS = {
    "int64": lambda codes: pd.Series(codes, dtype="int64"),
    "Int8": lambda codes: pd.Series(codes, dtype="Int8"),
    "float": lambda codes: pd.Series(codes, dtype="float64"),
    "text": lambda codes: pd.Series([f"c{c}" for c in codes], dtype="object"),
    "string": lambda codes: pd.Series([f"c{c}" for c in codes], dtype="string"),
    "category": lambda codes: pd.Series([f"c{c}" for c in codes], dtype="category"),
}


def _value(kind: str, code: int, as_text: bool):
    numeric = kind in ("int64", "Int8", "float")
    if numeric:
        return str(code) if as_text else code
    return code if as_text else f"c{code}"  # "as_text" flips to the other kind: a number for a text column


@settings(max_examples=2000, deadline=None, database=None)
@given(
    kind=st.sampled_from(sorted(_KINDS)),
    codes=st.lists(st.integers(0, 3), min_size=1, max_size=30),
    levels=st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=2, max_size=4, unique_by=lambda t: t[0]),
)
def test_a_level_is_refused_exactly_when_it_is_of_the_other_type_or_matches_nobody(kind, codes, levels):
    frame = pd.DataFrame({"Y": _KINDS[kind](codes), "w": 1.0})
    task = parse_task(
        {
            "name": "t",
            "outcome": {
                "column": "Y",
                "levels": [{"value": _value(kind, c, flip), "text": f"l{c}"} for c, flip in levels],
            },
            "qa": "?",
            "likelihood": "{outcome}?",
        },
        dataset="d",
        population="p",
        weights="w",
        where="gen",
    )
    bad = [(c, flip) for c, flip in levels if flip or c not in codes]
    if bad:
        with pytest.raises(DataError) as info:
            task_truth(task, frame)
        code, flipped = bad[0]  # levels are checked in the file's order
        message = str(info.value)
        assert f"outcome level 'l{code}' of Y" in message and "\n" not in message
        assert ("matches no respondent" in message) == (not flipped)
        return
    truth = task_truth(task, frame)
    counts = np.array([codes.count(c) for c, _ in levels], dtype=float)
    assert np.allclose(truth.dist[0], counts / counts.sum())


def test_the_bundled_task_files_still_read():
    folder = Path(__file__).resolve().parents[2] / "src/folkscope/epidemiology/resources/tasks"
    assert all(load_task_file(p).tasks for p in sorted(folder.glob("*.json")))


@settings(max_examples=200, deadline=None)
@given(
    bounds=st.tuples(st.one_of(st.none(), st.integers(-50, 50)), st.one_of(st.none(), st.integers(-50, 50))).filter(
        lambda b: b != (None, None) and (None in b or b[0] < b[1])
    ),
    closed=st.booleans(),
    values=st.lists(st.one_of(st.integers(-60, 60), st.floats(-60, 60, allow_nan=False)), min_size=1, max_size=40),
)
def test_a_range_level_matches_exactly_the_numbers_its_bounds_say(bounds, closed, values):
    """Oracle: the interval by hand; 'over'/'upto' is pandas.cut's right-closed (a, b], 'min'/'max' is [a, b)."""
    low, high = bounds
    keys = ("over", "upto") if closed else ("min", "max")
    spec = {k: v for k, v in zip(keys, (low, high)) if v is not None}
    level = Level.from_dict({**spec, "text": "range"}, "test")
    x = pd.Series(values, name="x")
    if closed:
        expected = [(low is None or v > low) and (high is None or v <= high) for v in values]
    else:
        expected = [(low is None or v >= low) and (high is None or v < high) for v in values]
    assert level.mask(x).tolist() == expected
