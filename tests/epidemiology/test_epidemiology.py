"""Part 3: task files, weighted truth, references and scores against hand values, elicitation readings, a run end to end."""

from __future__ import annotations

import doctest
import gzip
import importlib
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from folkscope.cli.main import main
from folkscope.engine import Engine, EngineConfig
from folkscope.engine.backends.fake import FakeBackend
from folkscope.epidemiology import (
    MAX_ORDERINGS,
    EpidemiologyConfig,
    elicit,
    get_task,
    load_dataset,
    load_task_file,
    rescore,
    run_epidemiology,
    score_table,
    task_truth,
)
from folkscope.errors import ConfigError, DataError
from folkscope.runs import read_manifest, read_table

SHARED_DATA = Path(os.environ.get("FOLKSCOPE_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))


@pytest.mark.parametrize(
    "name", ["epidemiology.tasks", "epidemiology.truth", "data.surveys", "epidemiology.elicit", "data.cache"]
)
def test_docstring_examples_run(name):
    assert doctest.testmod(importlib.import_module(f"folkscope.{name}")).failed == 0


def test_every_bundled_task_has_a_truth_and_declared_weights():
    tasks = EpidemiologyConfig().selected()  # a default run asks the bundled tasks only
    assert {t.dataset for t in tasks} == {"nist-acs", "anes96", "randhie"} and len(tasks) == 12
    assert sum(t.dimension == "high" for t in tasks) == 2
    for task in (t for t in tasks if t.dimension == "low"):
        truth = task_truth(task, load_dataset(task.dataset))
        assert np.allclose(truth.dist.sum(axis=1), 1.0) and math.isclose(truth.shares.sum(), 1.0)
        assert task.weights == ("PWGTP" if task.dataset == "nist-acs" else None)


def test_weighted_truth_equals_a_pandas_weighted_crosstab():
    task = get_task("acs_income_by_age")
    data = load_dataset("nist-acs")
    adults = data[data["AGEP"] >= 18]
    age = pd.cut(adults["AGEP"], [18, 30, 45, 65, 200], right=False, labels=False)
    rich = (adults["PINCP"] >= 50000).astype(int)
    table = pd.crosstab(age, rich, values=adults["PWGTP"], aggfunc="sum", normalize="index")
    truth = task_truth(task, data)
    np.testing.assert_allclose(truth.dist, table.to_numpy(dtype=float), atol=1e-12)
    shares = adults.groupby(age)["PWGTP"].sum()
    np.testing.assert_allclose(truth.shares, (shares / shares.sum()).to_numpy(dtype=float))
    assert truth.n.tolist() == age.value_counts().sort_index().tolist() and (truth.effective_n <= truth.n).all()


def test_unweighted_data_use_the_samples_own_shares():
    truth = task_truth(get_task("anes96_vote_by_party"), load_dataset("anes96"))
    anes = load_dataset("anes96")
    democrats = anes[anes["PID"].isin([0, 1])]
    assert truth.dist[0, 1] == pytest.approx((democrats["vote"] == 1).mean())
    assert (truth.effective_n == truth.n).all()


def test_bundled_tables_are_the_public_domain_statsmodels_files():
    for name in ("anes96", "randhie"):
        bundled = (
            Path(importlib.import_module("folkscope.data").__file__).with_name("resources")
            / "surveys"
            / f"{name}.csv.gz"
        )
        source = SHARED_DATA / "statsmodels-datasets" / f"{name}.csv.gz"
        if source.is_file():
            assert gzip.decompress(bundled.read_bytes()) == gzip.decompress(source.read_bytes())
    health = load_dataset("randhie")["health"].value_counts()
    assert set(health.index) == {"excellent", "good", "fair", "poor"}


def test_scores_references_and_interval_by_hand():
    truth = pd.DataFrame(
        {
            "task": "t",
            "condition": ["x", "x", "y", "y"],
            "level": ["a", "b", "a", "b"],
            "p_true": [0.8, 0.2, 0.4, 0.6],
            "share": [0.75, 0.75, 0.25, 0.25],
            "n": 10**6,
            "effective_n": 10**6,
        }
    )
    model = truth[["task", "condition", "level"]].assign(p_model=[0.6, 0.4, 0.4, 0.6])
    refs = {"t": {"dataset": "d", "dimension": "low", "worst": 0.55, "best": 0.05, "mean_baseline": 0.2}}
    row = score_table(truth, model, refs, n_resamples=200, seed=0).iloc[0]
    # distance = 0.75 * |0.8-0.6|*2 + 0.25 * 0 = 0.3; score = 100 * (0.3 - 0.55) / (0.05 - 0.55) = 50
    assert row["distance"] == pytest.approx(0.3) and row["score"] == pytest.approx(50.0)
    assert (
        row["score_low"] <= 50.0 <= row["score_high"] and row["score_high"] - row["score_low"] < 1.0
    )  # 10^6 answers: tight
    far = score_table(
        truth, truth[["task", "condition", "level"]].assign(p_model=[0.0, 1.0, 1.0, 0.0]), refs, n_resamples=50, seed=0
    )
    assert far["score"].iloc[0] == 0.0  # beyond the uniform guess: clipped at 0
    unread = score_table(truth, model.assign(p_model=[np.nan, np.nan, 0.4, 0.6]), refs, n_resamples=50, seed=0)
    assert unread["unread_conditions"].iloc[0] == 1 and math.isnan(unread["score"].iloc[0])


def test_qa_orderings_all_up_to_128_else_128_seeded(tmp_path):
    seen = []

    class Spy(FakeBackend):
        def score_groups(self, requests, **kwargs):
            seen.extend(len(r.suffixes) for r in requests)
            return super().score_groups(requests, **kwargs)

    engine = Engine(Spy(), cache=None)
    elicit(
        engine, get_task("acs_education_by_sex"), mode="qa"
    )  # 5 answers: 5! = 120 orderings, one prefix group per condition
    assert seen == [120, 120]
    six = _task_file(tmp_path, levels=6)
    seen.clear()
    elicit(engine, load_task_file(six).tasks[0], mode="qa")
    assert seen == [MAX_ORDERINGS] and MAX_ORDERINGS == 128  # 6! = 720 > 128: 128 seeded orderings


def _task_file(tmp_path: Path, *, levels: int = 2, **changes) -> Path:
    spec = {
        "dataset": "nist-acs",
        "population": "people",
        "weights": "PWGTP",
        "tasks": [
            {
                "name": "t",
                "outcome": {
                    "column": "AGEP",
                    "levels": [{"min": 15 * i, "max": 15 * (i + 1), "text": f"band {i}"} for i in range(levels)],
                },
                "condition": None,
                "qa": "How old is a person?",
                "likelihood": "What is the probability that a person is in {outcome}?",
            }
        ],
    }
    for key, value in changes.items():
        if key in spec:
            spec[key] = value
        else:
            spec["tasks"][0][key] = value
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({k: v for k, v in spec.items() if v is not ...}))
    return path


def test_the_22_bins_read_as_their_midpoints_or_their_expectation():
    def rule(text):  # always "C" (5-10%) with 0.6, else "B" (0-5%) with 0.4
        return {" C": 0.6, " B": 0.4, "C": 0.0, "B": 0.0} if text.endswith("Answer:") else None

    engine = Engine(FakeBackend(next_token_probs=rule), cache=None)
    task = get_task("acs_income_by_sex")
    argmax = elicit(engine, task, mode="likelihood")
    assert np.allclose(argmax, [0.075, 0.925])  # the first answer states 7.5%, the last gets the rest (the paper)
    argmax_all = elicit(engine, task, mode="likelihood", likelihood_levels="all")
    assert np.allclose(argmax_all, 0.5)  # both answers state 7.5%: renormalised to one half each
    expected = elicit(engine, task, mode="likelihood", likelihood_readout="expected", likelihood_levels="all")
    assert np.allclose(expected, 0.5)  # both state 0.6 * 0.075 + 0.4 * 0.025 (plus hashed leftovers, equal for both)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"weights": ...}, "declare the survey-weight column"),
        ({"weights": None}, "unweighted_because"),
        ({"outcome": {"column": "AGEP", "levels": [{"text": "x", "value": 1, "min": 3}]}}, "exactly one of"),
        ({"qa": "How old is {person}?"}, "may use only {condition}"),
        ({"likelihood": "What is the probability that a person is old?"}, "must name the answer"),
        ({"condition": {"column": "SEX", "levels": [{"value": 1, "text": "a man"}]}}, "must name the condition"),
    ],
)
def test_bad_task_files_are_one_clear_error(tmp_path, changes, message):
    with pytest.raises(DataError, match=message):
        load_task_file(_task_file(tmp_path, **changes))


def test_missing_weight_column_and_empty_condition_are_refused(tmp_path):
    task = load_task_file(_task_file(tmp_path, weights="NOT_A_COLUMN")).tasks[0]
    with pytest.raises(DataError, match="weight column 'NOT_A_COLUMN' is not in the data"):
        task_truth(task, load_dataset("nist-acs"))
    condition = {"column": "AGEP", "levels": [{"min": 300, "text": "a person aged 300 or over"}]}
    task = load_task_file(_task_file(tmp_path, condition=condition, qa="How old is {condition}?")).tasks[0]
    with pytest.raises(DataError, match="condition level 'a person aged 300 or over' of AGEP .* matches no respondent"):
        task_truth(task, load_dataset("nist-acs"))
    with pytest.raises(ConfigError, match="unknown epidemiology task 'nope'"):
        EpidemiologyConfig(tasks=("nope",))


def test_default_model_runs_tasks_end_to_end(tmp_path, capsys):
    argv = [
        "epidemiology",
        "run",
        "--tasks",
        "acs_income_by_sex,anes96_vote_by_party",
        "--n-resamples",
        "50",
        "--results-dir",
        str(tmp_path),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("run folder: ") and out[-1].startswith("report: ")
    assert any(line.startswith("answer: mean score ") for line in out)
    (manifest,) = tmp_path.rglob("manifest.json")
    folder = manifest.parent
    assert read_manifest(folder).part == "epidemiology"
    scores = read_table(folder, "scores")
    assert (
        scores["task"].tolist() == ["acs_income_by_sex", "anes96_vote_by_party"]
        and scores["score"].between(0, 100).all()
    )
    model = read_table(folder, "model")
    assert np.allclose(model.groupby(["task", "condition"])["p_model"].sum(), 1.0)
    page = (folder / "report.html").read_text()
    assert page.index("Mean score") < page.index("Scores by task") < page.index("Configuration")
    before = json.loads((folder / "metrics.json").read_text())
    assert rescore(folder)["scores"] == before["scores"]
    assert main(["rescore", str(folder)]) == 0 and "mean score" in capsys.readouterr().out


def test_the_list_command_and_one_line_errors(capsys):
    assert main(["epidemiology", "list", "--dataset", "anes96"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "anes96: 10 tasks, weights unweighted (declared); 8 generated, asked with --dataset or --dimension high"
    )
    assert out.splitlines()[1].split()[0] == "anes96_vote_by_party"  # the hand-written tasks first
    assert main(["epidemiology", "run", "--tasks", "nope", "--model", "/never/loaded"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown epidemiology task 'nope'" in err


def test_sampling_counts_the_answers_generations_state():
    """For models without log-probabilities: each sample asked in the next ordering, its stated letter counted."""
    import re

    def respond(prompt: str) -> str:  # a model that always picks the higher income, whatever letter it has
        letter = re.search(r"^([A-Z])\. \$50,000 or more", prompt, re.MULTILINE).group(1)
        return f" {letter}"

    engine = Engine(FakeBackend(responses=respond), cache=None)
    task = get_task("acs_income_by_sex")
    assert np.allclose(elicit(engine, task, mode="sampling", n_samples=6), [[0.0, 1.0], [0.0, 1.0]])
    biased = Engine(FakeBackend(responses=lambda prompt: " A, I think"), cache=None)  # letter position only
    assert np.allclose(
        elicit(biased, task, mode="sampling", n_samples=6), 0.5
    )  # orderings alternate: A is each answer half the time
    silent = Engine(FakeBackend(responses=lambda prompt: " I would rather not say."), cache=None)
    assert np.isnan(elicit(silent, task, mode="sampling", n_samples=4)).all()


def test_another_copy_of_the_data_is_another_run(tmp_path, monkeypatch):
    """The folder path of the data is not hashed, what the data say is: an edited copy gets its own run folder."""
    import folkscope.epidemiology.run as run_module

    config = EpidemiologyConfig(
        tasks=("anes96_vote_by_party",), engine=EngineConfig(model="m", backend="fake"), n_resamples=20
    )
    engine = Engine(FakeBackend(), cache=None)
    first = run_epidemiology(config, tmp_path, engine=engine).folder
    assert run_epidemiology(config, tmp_path, engine=engine).folder == first  # the same data: the same run
    real = run_module.load_dataset

    def edited(name, **kwargs):
        frame = real(name, **kwargs)
        frame.loc[frame.index[:50], "vote"] = 1 - frame.loc[frame.index[:50], "vote"]
        return frame

    monkeypatch.setattr(run_module, "load_dataset", edited)
    assert run_epidemiology(config, tmp_path, engine=engine).folder != first
    assert read_manifest(first).data["rows"] == {"anes96": 944}
