"""Risk extraction from model probabilities, checked against hand computations on the fake backend."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from folkscope.data import load_bundled
from folkscope.engine import Engine
from folkscope.engine.backends.fake import FakeBackend
from folkscope.errors import ConfigError, DataError
from folkscope.prompting import PromptConfig
from folkscope.risk.classifier import LLMClassifier

X10 = load_bundled("acs-income-10").drop(columns="PINCP>50000")
Y10 = load_bundled("acs-income-10")["PINCP>50000"]


def engine_with(rule=None, responses=None) -> Engine:
    return Engine(FakeBackend("hand", next_token_probs=rule, responses=responses), cache=None)


def letter_rule(text: str):
    """After 'Answer:', 'A' is 3x as likely as 'B' (split over ' A' and 'A'); the options decide what A means."""
    if text.endswith("Answer:"):
        return {" A": 0.45, "A": 0.15, " B": 0.15, "B": 0.05}
    return None


def test_multiple_choice_sums_variants_renormalises_and_averages_orderings():
    clf = LLMClassifier(engine_with(letter_rule), "ACSIncome")
    scores = clf.predict_proba(X10)[:, 1]
    # P(A) = 0.45 + 0.15 = 0.6, P(B) = 0.2 -> P(first letter) = 0.75 whatever the row.
    # Ordering 0: A = Below $50,000 (label 0) -> risk 0.25; ordering 1: A = Above -> risk 0.75.
    assert np.allclose(clf.last_details["score_ordering_0"], 0.25)
    assert np.allclose(clf.last_details["score_ordering_1"], 0.75)
    assert np.allclose(scores, 0.5)
    assert np.allclose(clf.last_details["answer_mass"], 0.8)
    assert clf.last_report.orderings == 2 and clf.last_report.nan_scores == 0


def test_without_order_bias_correction_one_ordering_is_scored():
    clf = LLMClassifier(engine_with(letter_rule), "ACSIncome", prompt_config=PromptConfig(correct_order_bias=False))
    assert np.allclose(clf.predict_proba(X10)[:, 1], 0.25)
    assert clf.last_report.orderings == 1


def test_chat_prompts_score_the_same_way():
    def rule(text):
        prefill = "<|assistant|>\nIf had to select one of the options, my answer would be"  # folktexts' default
        return {" A": 0.2, "A": 0.05, " B": 0.6, "B": 0.15} if text.endswith(prefill) else None

    clf = LLMClassifier(engine_with(rule), "ACSIncome", prompt_config=PromptConfig(use_chat_template=True))
    clf.predict_proba(X10)[:, 1]
    assert np.allclose(clf.last_details["score_ordering_0"], 0.75)  # B = Above in ordering 0
    assert np.allclose(clf.last_details["score_ordering_1"], 0.25)


def numeric_rule(text: str):
    if text.endswith("0."):
        return {str(d): p for d, p in zip(range(10), [0, 0, 0.1, 0.6, 0.3, 0, 0, 0, 0, 0])}
    if text.endswith("0.3"):
        return {"5": 0.7, "1": 0.3}
    if text.endswith(("0.2", "0.4")) or text[-3:-1] == "0." and text[-1].isdigit():
        return {"0": 1.0}
    return None


def test_numeric_greedy_reads_two_most_likely_digits():
    clf = LLMClassifier(engine_with(numeric_rule), "ACSIncome", prompt_config=PromptConfig(numeric_risk_prompting=True))
    assert np.allclose(clf.predict_proba(X10)[:, 1], 0.35)


def test_numeric_expected_value_is_the_two_digit_expectation():
    cfg = PromptConfig(numeric_risk_prompting=True)
    clf = LLMClassifier(engine_with(numeric_rule), "ACSIncome", prompt_config=cfg, numeric_readout="expected")
    # E = 0.1*(0.2 + 0.00) + 0.6*(0.3 + (0.7*5 + 0.3*1)/100) + 0.3*(0.4 + 0.00)
    expected = 0.1 * 0.2 + 0.6 * (0.3 + 0.038) + 0.3 * 0.4
    assert np.allclose(clf.predict_proba(X10)[:, 1], expected)


def test_chain_of_thought_parses_and_counts_unparseable_answers():
    def answer(prompt: str) -> str:  # women's rows get a parseable answer, men's do not
        return "Reasoning... Probability: 80%" if "The sex is: Female." in prompt else "I cannot say."

    clf = LLMClassifier(engine_with(responses=answer), "ACSIncome", prompt_config=PromptConfig(cot_prompting=True))
    scores = clf.predict_proba(X10)[:, 1]
    men = int((X10["SEX"] == 1).sum())
    assert np.array_equal(np.isnan(scores), (X10["SEX"] == 1).to_numpy())
    assert np.allclose(scores[~np.isnan(scores)], 0.8)
    assert clf.last_report.unparseable == men and clf.last_report.nan_scores == men
    assert "no parseable" in clf.last_report.notes[0]


def test_fit_learns_the_accuracy_maximising_threshold_and_predict_uses_it():
    engine = Engine.from_model("seeded", backend="fake", use_cache=False)
    clf = LLMClassifier(engine, "ACSIncome").fit(X10, Y10, method="accuracy")
    scores = clf.predict_proba(X10)[:, 1]
    assert 0.0 <= clf.threshold <= 1.0
    assert np.array_equal(clf.predict(X10), (scores >= clf.threshold).astype(int))
    accuracy = ((scores >= clf.threshold) == Y10.to_numpy()).mean()
    assert accuracy >= ((scores >= 0.5) == Y10.to_numpy()).mean()


def test_fit_by_default_takes_folktexts_roc_threshold():
    from folkscope.metrics import compute_best_threshold

    engine = Engine.from_model("seeded", backend="fake", use_cache=False)
    clf = LLMClassifier(engine, "ACSIncome").fit(X10, Y10)
    scores = clf.predict_proba(X10)[:, 1]
    assert (
        clf.threshold == min(compute_best_threshold(Y10, scores), 1.0) and clf._threshold_fitted_on == 10
    )  # inf: none positive, clipped to 1 as folktexts does
    with pytest.raises(DataError, match="both labels"):
        clf.fit(X10, np.ones(10, dtype=int))


def test_prompts_longer_than_the_context_size_are_cut_counted_and_said(caplog):
    """They were refused; folktexts cuts them to their last context_size tokens (600 by default), so folkscope does, and says so."""

    def classifier(size, *, cut=True):
        return LLMClassifier(
            Engine(FakeBackend("hand", cut_prompts=cut), cache=None, progress=False), "ACSIncome", context_size=size
        )

    whole = classifier(None).predict_proba(X10)
    short = classifier(50)
    assert not np.allclose(
        short.predict_proba(X10), whole
    )  # the fake model sees every token: a cut prompt answers otherwise
    assert short.last_report.truncated_prompts == 10 and short.last_report.to_dict()["context_size"] == 50
    assert "10 of 10 rows had prompts longer than the context size (50 tokens" in caplog.text
    roomy = classifier(10_000)
    assert np.array_equal(roomy.predict_proba(X10), whole) and roomy.last_report.truncated_prompts == 0
    uncut = classifier(50, cut=False)  # a backend that takes whole prompts (a web API): nothing cut, nothing counted
    assert np.array_equal(uncut.predict_proba(X10), whole) and uncut.last_report.to_dict()["context_size"] is None
    assert LLMClassifier(engine_with(), "ACSIncome").context_size == 600  # folktexts' default
    with pytest.raises(ConfigError, match="context_size must be a positive number of tokens or None"):
        classifier(0)


def test_bad_options():
    with pytest.raises(ConfigError, match="numeric_readout"):
        LLMClassifier(engine_with(), "ACSIncome", numeric_readout="mean")
    with pytest.raises(ConfigError, match="threshold"):
        LLMClassifier(engine_with(), "ACSIncome", threshold=1.5)


def test_scores_keep_row_order_for_a_shuffled_table():
    engine = Engine.from_model("seeded", backend="fake", use_cache=False)
    clf = LLMClassifier(engine, "ACSIncome")
    base = pd.Series(clf.predict_proba(X10)[:, 1], index=X10.index)
    shuffled = X10.sample(frac=1.0, random_state=3)
    assert np.allclose(clf.predict_proba(shuffled)[:, 1], base.loc[shuffled.index].to_numpy())


@pytest.mark.slow
def test_default_model_scores_the_fixture_rows_in_both_modes():
    """SmolLM2-135M-Instruct on the 10 real ACSIncome rows: real scores, no NaN, in range."""
    engine = Engine.from_model("default", use_cache=False)
    proba = LLMClassifier(engine, "ACSIncome").predict_proba(X10)
    mc = proba[:, 1]
    assert (
        proba.shape == (10, 2) and np.allclose(proba.sum(axis=1), 1) and ((mc > 0) & (mc < 1)).all()
    )  # letter probabilities never reach 0 or 1
    numeric = LLMClassifier(engine, "ACSIncome", prompt_config=PromptConfig(numeric_risk_prompting=True)).predict_proba(
        X10
    )[:, 1]
    assert not np.isnan(numeric).any() and ((numeric >= 0) & (numeric <= 0.99)).all()  # two digits after "0."


def engine_missing(rule, missing):
    """The fake engine, except that next-token answers for prompts where ``missing(prompt)`` holds have no probabilities (NaN, no bound).

    This is what a web API's top-k gives when none of the digits is among its top tokens.
    """
    import dataclasses

    engine = engine_with(rule)
    real = engine.next_token

    def next_token(requests, **labels):
        out = real(requests, **labels)
        return [
            dataclasses.replace(res, logprobs=tuple([float("nan")] * len(res.logprobs)), bound=None)
            if missing(str(req.prompt))
            else res
            for req, res in zip(requests, out)
        ]

    engine.next_token = next_token
    return engine


def second_step(prompt: str) -> bool:
    return prompt[-2:-1] == "." and prompt[-1].isdigit()


@pytest.mark.parametrize("readout", ["greedy", "expected"])
def test_numeric_rows_without_second_digit_probabilities_are_nan_not_zero(readout):
    """The greedy readout used to take argmax of an all-NaN row: digit 0, scores 0.3 with 0 NaN reported."""
    cfg = PromptConfig(numeric_risk_prompting=True)
    clf = LLMClassifier(
        engine_missing(numeric_rule, second_step), "ACSIncome", prompt_config=cfg, numeric_readout=readout
    )
    scores = clf.predict_proba(X10)[:, 1]
    assert np.isnan(scores).all() and clf.last_report.nan_scores == 10
    assert any("10 rows had no usable probabilities for the second digit" in note for note in clf.last_report.notes)


def test_expected_readout_ignores_missing_second_digits_that_cannot_matter():
    """P(first digit = 7) = 0, so a missing distribution after '0.7' changes nothing; after '0.2' (P = 0.1) it does."""
    cfg = PromptConfig(numeric_risk_prompting=True)
    harmless = LLMClassifier(
        engine_missing(numeric_rule, lambda p: p.endswith("0.7")),
        "ACSIncome",
        prompt_config=cfg,
        numeric_readout="expected",
    )
    assert np.allclose(harmless.predict_proba(X10)[:, 1], 0.1 * 0.2 + 0.6 * (0.3 + 0.038) + 0.3 * 0.4)
    harmful = LLMClassifier(
        engine_missing(numeric_rule, lambda p: p.endswith("0.2")),
        "ACSIncome",
        prompt_config=cfg,
        numeric_readout="expected",
    )
    assert np.isnan(harmful.predict_proba(X10)[:, 1]).all()


def test_numeric_rows_without_first_digit_probabilities_are_nan():
    cfg = PromptConfig(numeric_risk_prompting=True)
    clf = LLMClassifier(engine_missing(numeric_rule, lambda p: p.endswith("0.")), "ACSIncome", prompt_config=cfg)
    assert np.isnan(clf.predict_proba(X10)[:, 1]).all()
    assert (clf.last_details["first_digit"] == -1).all() and clf.last_details["first_digit_prob"].isna().all()


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(st.lists(st.booleans(), min_size=10, max_size=10), st.lists(st.booleans(), min_size=10, max_size=10))
def test_a_score_is_finite_only_when_both_digits_had_probabilities(first_missing, second_missing):
    """Random rows lose their first- or second-step probabilities: exactly those rows are NaN, and counted."""
    cfg = PromptConfig(numeric_risk_prompting=True)
    texts = [
        str(p) for p in LLMClassifier(engine_with(), "ACSIncome", prompt_config=cfg).renderer.render(X10).prompts(0)
    ]
    distinct = sorted(set(texts))  # two fixture rows are the same person: they share a prompt

    def missing(prompt: str) -> bool:
        k = next(k for k, t in enumerate(distinct) if prompt.startswith(t))
        return first_missing[k] if prompt.endswith("0.") else second_missing[k]

    clf = LLMClassifier(engine_missing(numeric_rule, missing), "ACSIncome", prompt_config=cfg)
    scores = clf.predict_proba(X10)[:, 1]
    want_nan = np.array([first_missing[distinct.index(t)] or second_missing[distinct.index(t)] for t in texts])
    assert (np.isnan(scores) == want_nan).all() and clf.last_report.nan_scores == int(want_nan.sum())
    assert np.allclose(scores[~want_nan], 0.35)


def test_the_classifier_is_a_scikit_learn_estimator():
    """folktexts' classifiers are scikit-learn estimators; before issue 29 get_params, set_params, score and clone were missing."""
    from sklearn.base import clone, is_classifier

    engine = Engine.from_model("seeded", backend="fake", use_cache=False)
    clf = LLMClassifier(engine, "ACSIncome", threshold=0.4)
    assert is_classifier(clf) and list(clf.classes_) == [0, 1]
    params = clf.get_params()
    assert params["threshold"] == 0.4 and params["engine"] is engine and params["threshold_rule"] == ">="
    copy = clone(clf)
    assert copy is not clf and copy.engine is engine and copy.get_params() == params  # the engine is shared, not copied
    np.testing.assert_array_equal(copy.predict_proba(X10), clf.predict_proba(X10))
    proba = clf.predict_proba(X10)
    assert proba.shape == (10, 2) and np.allclose(proba[:, 0], 1 - proba[:, 1])
    clf.set_params(threshold=0.7, threshold_rule=">")
    assert clf.threshold == 0.7 and np.array_equal(clf.predict(X10), (proba[:, 1] > 0.7).astype(int))
    assert clf.score(X10, Y10) == pytest.approx(float(np.mean(clf.predict(X10) == Y10.to_numpy())))
    clf.set_params(
        prompt_config=PromptConfig(numeric_risk_prompting=True)
    )  # the classifier is rebuilt: numeric prompts
    assert clf.prompt_config.mode == "numeric" and clf.renderer.config.mode == "numeric"
    with pytest.raises(ConfigError, match="threshold must be in"):
        clf.set_params(threshold=2)
    with pytest.raises(ConfigError, match="unknown parameter"):
        clf.set_params(thresold=0.1)


def test_predictions_csv_is_folktexts_and_read_back(tmp_path):
    engine = Engine.from_model("seeded", backend="fake", use_cache=False)
    clf = LLMClassifier(engine, "ACSIncome")
    path = tmp_path / "ACSIncome.test_predictions.csv"
    proba = clf.predict_proba(X10, predictions_save_path=path, labels=Y10)
    saved = pd.read_csv(path, index_col=0)
    assert list(saved.columns) == ["risk_score", "label"] and list(saved.index) == list(X10.index)
    assert np.allclose(saved["risk_score"], proba[:, 1]) and (saved["label"] == Y10.to_numpy()).all()
    saved["risk_score"] = 0.25  # a saved file for these rows is read, not recomputed
    saved.to_csv(path)
    assert np.allclose(clf.predict_proba(X10, predictions_save_path=path)[:, 1], 0.25)
    assert not np.allclose(
        clf.predict_proba(X10.iloc[:5], predictions_save_path=path)[:, 1], 0.25
    )  # other rows: scored anew
    with pytest.raises(ConfigError, match="predictions_save_path"):
        clf.predict_proba(X10, labels=Y10)


def test_predict_refuses_rows_without_a_score():
    clf = LLMClassifier(
        engine_with(responses=lambda prompt: "I cannot say."),
        "ACSIncome",
        prompt_config=PromptConfig(cot_prompting=True),
    )
    assert np.isnan(clf.predict_proba(X10)).all()
    with pytest.raises(DataError, match="10 of 10 rows have no risk score"):
        clf.predict(X10)
