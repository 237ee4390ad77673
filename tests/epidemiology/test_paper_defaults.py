"""The defaults reproduce the paper's definitions (Plečko et al., the authors' code dplecko/llm-epidemia), pinned
on fixed data: best reference at the raw n, crossed references scored 0 or 100, likelihood decoding of k - 1
levels with the last getting the rest. The better variants stay reachable by name."""

from __future__ import annotations

import html
import json

import numpy as np
import pandas as pd
import pytest

from folkscope.cli.main import main
from folkscope.engine import Engine
from folkscope.engine.backends.fake import FakeBackend
from folkscope.epidemiology import EpidemiologyConfig, task_truth
from folkscope.epidemiology.analysis import score_table
from folkscope.epidemiology.elicit import elicit, likelihood_answers
from folkscope.epidemiology.tasks import Level, Task, Variable, get_task
from folkscope.epidemiology.truth import references
from folkscope.errors import ConfigError, UndefinedMetricWarning
from folkscope.metrics import epidemiology_score
from folkscope.runs import read_table


def _weighted_frame() -> pd.DataFrame:
    """Two conditions of 40 and 10 respondents with very unequal weights (Kish's n far below the raw n)."""
    rng = np.random.default_rng(7)
    x = np.repeat([1, 2], [40, 10])
    y = np.concatenate([rng.integers(0, 2, 40), rng.integers(0, 2, 10)])
    w = np.where(np.arange(50) % 5 == 0, 20.0, 1.0)
    return pd.DataFrame({"y": y, "x": x, "w": w})


def _task(levels: int = 2) -> Task:
    outcome = Variable("y", tuple(Level(f"level{i}", i) for i in range(levels)))
    condition = Variable("x", (Level("one", 1), Level("two", 2)))
    return Task("t", "d", "p", "w", outcome, condition, "Q {condition}?", "Is {condition} in {outcome}?", {})


def _authors_best(frame: pd.DataFrame, n_boot: int, seed: int) -> float:
    """The authors' procedure, written from its definition: per condition, draw its raw n respondents with
    probability w / sum(w), tabulate, take the L1 to the weighted truth; average over conditions by total weight
    per replicate; the 0.975 quantile of the replicates."""
    rng = np.random.default_rng(seed)
    per_condition, weights = [], []
    for _, rows in frame.groupby("x"):
        y, w = rows["y"].to_numpy(), rows["w"].to_numpy()
        truth = np.bincount(y, weights=w, minlength=2) / w.sum()
        draws = rng.choice(y, size=(n_boot, len(y)), p=w / w.sum())
        redrawn = np.stack([(draws == k).mean(axis=1) for k in range(2)], axis=1)
        per_condition.append(np.abs(redrawn - truth).sum(axis=1))
        weights.append(w.sum())
    return float(np.quantile(np.average(np.stack(per_condition), axis=0, weights=weights), 0.975))


def test_the_best_reference_redraws_the_raw_n_as_the_authors_code_and_kish_n_by_name():
    frame = _weighted_frame()
    truth = task_truth(_task(), frame)
    assert truth.n.tolist() == [40, 10] and truth.effective_n.tolist() == [
        11,
        2,
    ]  # 192^2 / 3232 and 48^2 / 808, floored
    paper = references(truth, n_resamples=4000, seed=1)
    kish = references(truth, n_resamples=4000, seed=1, best_reference="design-effect")
    by_definition = _authors_best(frame, 4000, seed=2)  # another generator: equal within Monte Carlo error
    assert paper.best == pytest.approx(by_definition, rel=0.06)
    assert kish.best > 1.3 * paper.best  # fewer effective answers: more noise, a larger best
    assert paper.best_from == "sampling noise at the raw n" and "Kish" in kish.best_from
    assert (paper.worst, paper.mean_baseline) == (kish.worst, kish.mean_baseline)


def test_crossed_references_score_0_or_100_as_the_authors_code_or_nan_by_name():
    # best 0.3 >= worst 0.2: the authors move the worst to best + 0.0001 and clip
    assert epidemiology_score([0.1, 0.3, 0.30005, 0.5], worst=0.2, best=0.3).tolist() == pytest.approx(
        [100.0, 100.0, 50.0, 0.0]
    )
    with pytest.warns(UndefinedMetricWarning, match="best .* >= worst"):
        assert np.isnan(epidemiology_score(0.1, worst=0.2, best=0.3, crossed="nan"))
    with pytest.raises(ConfigError, match="crossed must be one of"):
        epidemiology_score(0.1, worst=0.2, best=0.3, crossed="zero")


def test_a_crossed_task_is_flagged_in_its_row_whatever_the_rule():
    truth = pd.DataFrame(
        {
            "task": "t",
            "condition": ["c", "c"],
            "level": ["a", "b"],
            "p_true": [0.5, 0.5],
            "share": [1.0, 1.0],
            "n": [3, 3],
            "effective_n": [3, 3],
        }
    )
    model = truth[["task", "condition", "level"]].assign(p_model=[0.5, 0.5])
    refs = {"t": {"dataset": "d", "dimension": "low", "worst": 0.0, "best": 0.4, "mean_baseline": 0.0}}
    paper = score_table(truth, model, refs, n_resamples=20, seed=0).iloc[0]
    assert paper["score"] == 100.0 and bool(paper["references_crossed"])
    undefined = score_table(truth, model, refs, n_resamples=20, seed=0, crossed="nan").iloc[0]
    assert np.isnan(undefined["score"]) and bool(undefined["references_crossed"])


def _bins_by_level(answers: dict[str, str]):
    """A fake model that answers each likelihood question with the bin named for the level it asks about."""

    def rule(text: str):
        if not text.endswith("Answer:"):
            return None
        for level, letter in answers.items():
            if f"in {level}?" in text:
                return {f" {letter}": 1.0}
        return None

    return Engine(FakeBackend(next_token_probs=rule), cache=None)


def test_likelihood_asks_k_minus_1_levels_and_gives_the_last_the_rest():
    # bins: C = 5-10% (0.075), K = 45-50% (0.475), V = 100%
    engine = _bins_by_level({"level0": "C", "level1": "K", "level2": "V"})
    three = _task(levels=3)
    answers = likelihood_answers(engine, three, ["one", "two"])
    assert answers["level"].tolist() == [0, 1, 0, 1]  # the last level is never asked
    assert answers["bin"].tolist() == ["C", "K", "C", "K"]
    np.testing.assert_allclose(elicit(engine, three, mode="likelihood"), [[0.075, 0.475, 0.45]] * 2)
    # every level asked and renormalised, by name
    np.testing.assert_allclose(
        elicit(engine, three, mode="likelihood", likelihood_levels="all"), [[0.075, 0.475, 1.0]] * 2 / np.float64(1.55)
    )
    binary = _task(levels=2)
    assert len(likelihood_answers(engine, binary, ["one", "two"])) == 2  # one question per condition
    np.testing.assert_allclose(elicit(engine, binary, mode="likelihood"), [[0.075, 0.925]] * 2)


def test_an_unknown_readout_is_refused_by_the_answers_themselves():
    with pytest.raises(ConfigError, match="likelihood_readout must be one of argmax, expected, got 'mean'"):
        likelihood_answers(_bins_by_level({}), _task(), ["one"], readout="mean")


def test_a_negative_remainder_is_kept_as_the_authors_keep_it_and_counted():
    engine = _bins_by_level({"level0": "P", "level1": "P"})  # P = 70-75%: 0.725 twice, the rest -0.45
    dist = elicit(engine, _task(levels=3), mode="likelihood")
    np.testing.assert_allclose(dist, [[0.725, 0.725, -0.45]] * 2)
    truth = pd.DataFrame(
        {
            "task": "t",
            "condition": ["c"] * 3,
            "level": ["a", "b", "z"],
            "p_true": [0.2, 0.3, 0.5],
            "share": 1.0,
            "n": 100,
            "effective_n": 100,
        }
    )
    model = truth[["task", "condition", "level"]].assign(p_model=dist[0])
    refs = {"t": {"dataset": "d", "dimension": "low", "worst": 0.4, "best": 0.05, "mean_baseline": 0.0}}
    row = score_table(truth, model, refs, n_resamples=20, seed=0).iloc[0]
    assert row["distance"] == pytest.approx(0.525 + 0.425 + 0.95)  # the authors' L1, above 2
    assert row["negative_remainders"] == 1 and row["score"] == 0.0


def test_unknown_choices_are_refused_before_any_model_loads():
    with pytest.raises(ConfigError, match="best_reference must be one of paper, design-effect"):
        EpidemiologyConfig(best_reference="kish")
    with pytest.raises(ConfigError, match="likelihood_levels must be one of paper, all"):
        EpidemiologyConfig(likelihood_levels="some")


def test_a_likelihood_run_keeps_every_chosen_bin_and_says_the_defaults(tmp_path):
    argv = ["epidemiology", "run", "--tasks", "acs_income_by_sex", "--mode", "likelihood"]
    argv += ["--inference-backend", "fake", "--model", "m", "--results-dir", str(tmp_path)]
    assert main(argv) == 0
    (folder,) = {p.parent for p in tmp_path.rglob("references.json")}
    bins = read_table(folder, "bins")
    task = get_task("acs_income_by_sex")
    assert len(bins) == len(task.condition.levels)  # binary: one question per condition
    assert set(bins.columns) >= {"task", "condition", "level", "bin", "bin_probability", "stated"}
    assert set(bins["level"]) == {task.outcome.levels[0].text}
    config = json.loads((folder / "config.json").read_text())
    assert (config["best_reference"], config["best_above_worst"], config["likelihood_levels"]) == ("paper",) * 3
    model = read_table(folder, "model")
    sums = model.groupby("condition")["p_model"].sum()
    np.testing.assert_allclose(sums, 1.0)  # the rest makes every condition sum to 1, never NaN
    page = html.unescape((folder / "report.html").read_text())
    assert "the last answer's share is what remains" in page
    assert f"of {len(bins)}" in page  # the bins the model chose, counted on the page


def test_compare_redraws_at_the_runs_sample_sizes_and_keeps_negative_remainders(tmp_path):
    from folkscope.epidemiology.compare import _replicate_distances

    truth = pd.DataFrame(
        {
            "task": "t",
            "condition": ["c"] * 3,
            "level": ["a", "b", "z"],
            "p_true": [0.2, 0.3, 0.5],
            "share": 1.0,
            "n": 1_000_000,
            "effective_n": 2,
        }
    )
    model = truth[["task", "condition", "level"]].assign(p_model=[0.725, 0.725, -0.45])
    args = (truth, [model, model], None, "low", 50)
    full, paper = _replicate_distances(*args, np.random.default_rng(0), "n")
    assert full == pytest.approx([1.9, 1.9])  # the authors' L1 with the negative remainder, as the run's own
    _, kish = _replicate_distances(*args, np.random.default_rng(0), "effective_n")
    assert np.ptp(paper) < 0.01 < np.ptp(kish)  # a million answers barely move; two move a lot
