"""Tasks on published tables (BLS): the proportions are the truth, the best reference is declared, a run scores them end to end."""

from __future__ import annotations

import doctest
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.cli.main import main
from folkscope.epidemiology import (
    EpidemiologyConfig,
    aggregate,
    get_task,
    load_task_file,
    score_table,
)
from folkscope.epidemiology.aggregate import SUM_TOLERANCE, parse_table
from folkscope.epidemiology.truth import (
    aggregate_references,
    aggregate_truth,
    task_truth,
)
from folkscope.errors import DataError
from folkscope.runs import read_table


def test_docstring_examples_run():
    assert doctest.testmod(aggregate).failed == 0


def test_the_bls_table_is_the_truth_and_its_references_by_hand():
    task = get_task("bls_union_membership_by_sex")
    truth = aggregate_truth(task)
    np.testing.assert_allclose(truth.dist, [[0.105, 0.895], [0.095, 0.905]])
    np.testing.assert_allclose(truth.shares, [0.517, 0.483])
    assert truth.n.tolist() == [0, 0] and task_truth(task, pd.DataFrame()).dist.tolist() == truth.dist.tolist()
    refs = aggregate_references(task)
    # uniform: men |0.105-0.5| + |0.895-0.5| = 0.79, women 0.81; 0.517 * 0.79 + 0.483 * 0.81 = 0.79966
    assert refs.worst == pytest.approx(0.79966)
    # marginal 0.517 * 0.105 + 0.483 * 0.095 = 0.10017: men 2 * 0.00483, women 2 * 0.00517, weighted 2 * 0.00499422
    assert refs.mean_baseline == pytest.approx(0.00998844)
    # the paper's code takes a published table as exact: best 0; the declared best is the design-effect variant's
    assert refs.best == 0.0 and "published table" in refs.best_from
    declared = aggregate_references(task, best_reference="design-effect")
    assert declared.best == 0.001 and declared.best_from.startswith(
        "declared: the published rates (10.5 and 9.5 percent) are rounded"
    )
    assert (declared.worst, declared.mean_baseline) == (refs.worst, refs.mean_baseline)
    assert task.table.source["publisher"] == "U.S. Bureau of Labor Statistics" and task.table.source["year"] == 2023


def test_distance_and_score_by_hand_on_a_published_table():
    truth = pd.DataFrame(
        {
            "task": "t",
            "condition": ["a man", "a man", "a woman", "a woman"],
            "level": ["member", "not", "member", "not"],
            "p_true": [0.105, 0.895, 0.095, 0.905],
            "share": [0.517, 0.517, 0.483, 0.483],
            "n": 0,
            "effective_n": 0,
        }
    )
    model = truth[["task", "condition", "level"]].assign(p_model=[0.2, 0.8, 0.2, 0.8])
    refs = {
        "t": {
            "dataset": "bls",
            "dimension": "low",
            "worst": 0.79966,
            "best": 0.001,
            "mean_baseline": 0.0099884,
            "best_from": "declared: rounding",
        }
    }
    row = score_table(truth, model, refs, n_resamples=50, seed=0).iloc[0]
    # distance: 0.517 * 2 * 0.095 + 0.483 * 2 * 0.105 = 0.09823 + 0.10143 = 0.19966
    assert row["distance"] == pytest.approx(0.19966)
    # score: 100 * (0.19966 - 0.79966) / (0.001 - 0.79966) = 100 * 0.6 / 0.79866
    assert row["score"] == pytest.approx(100 * 0.6 / 0.79866)
    assert math.isnan(row["score_low"]) and math.isnan(row["score_high"])  # no respondents: no sampling interval
    assert row["best_from"] == "declared: rounding"


def test_a_run_scores_the_published_table_end_to_end(tmp_path, capsys):
    argv = [
        "epidemiology",
        "run",
        "--tasks",
        "bls_union_membership_by_sex",
        "--inference-backend",
        "fake",
        "--model",
        "m",
        "--results-dir",
        str(tmp_path),
    ]
    assert main(argv) == 0
    assert "mean score" in capsys.readouterr().out
    (folder,) = {p.parent for p in tmp_path.rglob("references.json")}
    model = read_table(folder, "model").set_index(["condition", "level"])["p_model"]
    q_men, q_women = (
        model.loc[("a man", "a member of a labor union")],
        model.loc[("a woman", "a member of a labor union")],
    )
    by_hand = 0.517 * 2 * abs(0.105 - q_men) + 0.483 * 2 * abs(0.095 - q_women)
    (row,) = json.loads((folder / "metrics.json").read_text())["scores"]
    assert row["distance"] == pytest.approx(by_hand)
    # the paper's best for a published table is 0 (the declared 0.001 is --best-reference design-effect's)
    assert row["score"] == pytest.approx(100 * min(max((by_hand - 0.79966) / (0.0 - 0.79966), 0), 1))
    assert 0 < row["score"] < 100 or by_hand >= 0.79966  # the score is pinned where it is not clipped
    refs = json.loads((folder / "references.json").read_text())["tasks"]["bls_union_membership_by_sex"]
    assert refs["weights"] == "published table" and refs["source"]["url"].startswith("https://www.bls.gov/")
    assert read_table(folder, "truth")["n"].eq(0).all()


def test_published_tables_stay_out_of_a_default_run_but_run_by_dataset():
    assert not any(t.table is not None for t in EpidemiologyConfig().selected())
    assert [t.name for t in EpidemiologyConfig(dataset="bls-union-2023").selected()] == [
        "bls_union_membership",
        "bls_union_membership_by_sex",
    ]


BLS_FILE = Path(aggregate.__file__).with_name("resources") / "tasks" / "bls-union-2023.json"


def _file(**changes: object) -> dict:
    """The BLS file with its by-sex task only, edited: ``"a.b.c": value`` sets (``...`` deletes) a key of the task, or of
    the file for a path starting with ``file.``."""
    data = json.loads(BLS_FILE.read_text())
    data["tasks"] = [data["tasks"][1]]
    for path, value in changes.items():
        keys = path.split(".")
        where = data if keys[0] == "file" else data["tasks"][0]
        keys = keys[1:] if keys[0] == "file" else keys
        for key in keys[:-1]:
            where = where[key]
        if value is ...:
            del where[keys[-1]]
        else:
            where[keys[-1]] = value
    return data


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"table.rows.men.proportions.member": 0.2}, r"the proportions of row men sum to 1.0950, not 1"),
        ({"table.rows.men.proportions.member": 10.5}, "give a proportion between 0 and 1"),
        ({"table.rows.women.proportions.nonmember": ...}, "lack level\\(s\\) nonmember"),
        ({"table.rows.women": ...}, "the table's rows lack level\\(s\\) women"),
        (
            {"table.rows.children": {"share": 0.1, "proportions": {"member": 0.0, "nonmember": 1.0}}},
            "name children, which no level has",
        ),
        ({"table.rows.men.share": 0.6}, "the rows' shares sum to 1.0830"),
        ({"table.best": ...}, "declare the best reference"),
        ({"table.best.distance": 2.5}, "in \\[0, 2\\)"),
        ({"file.source": ...}, "needs the file's 'source' citation"),
        ({"file.source.url": ""}, "citation lacks url"),
        (
            {"condition.levels": [{"values": ["men"], "text": "a man"}, {"value": "women", "text": "a woman"}]},
            "named by one 'value'",
        ),
        ({"subset": {"age": {"min": 16}}}, "no 'subset'"),
    ],
)
def test_a_bad_table_is_refused_with_a_clear_error(tmp_path, changes, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_file(**changes)))
    with pytest.raises(DataError, match=message):
        load_task_file(path)


def test_a_declared_best_above_the_uniform_guess_is_refused(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_file(**{"table.best.distance": 1.5})))
    task = load_task_file(path).tasks[0]
    with pytest.raises(DataError, match="not below the uniform guess's 0.7997"):
        aggregate_references(task, best_reference="design-effect")
    assert aggregate_references(task).best == 0.0  # the paper's best ignores the declared one


@settings(max_examples=100, deadline=None)
@given(
    rows=st.dictionaries(
        st.sampled_from(["men", "women", "other"]),
        st.fixed_dictionaries(
            {
                "share": st.floats(0, 1),
                "proportions": st.dictionaries(
                    st.sampled_from(["member", "nonmember", "x"]),
                    st.floats(-0.5, 1.5) | st.text(max_size=2),
                    max_size=3,
                ),
            }
        ),
        max_size=3,
    )
)
def test_fuzzed_tables_are_read_or_refused(rows):
    try:
        table = parse_table(
            {"rows": rows, "best": {"distance": 0.01, "because": "test"}},
            outcome=["member", "nonmember"],
            condition=["men", "women"],
            where="fuzz",
        )
    except DataError:
        return
    assert set(rows) == {"men", "women"}  # only a complete table is read
    np.testing.assert_allclose(table.dist.sum(axis=1), 1.0)
    assert math.isclose(table.shares.sum(), 1.0)
    raw = np.array([[rows[k]["proportions"][o] for o in ("member", "nonmember")] for k in ("men", "women")])
    assert np.all(np.abs(raw.sum(axis=1) - 1) <= SUM_TOLERANCE) and np.all(np.abs(table.dist - raw) <= SUM_TOLERANCE)
