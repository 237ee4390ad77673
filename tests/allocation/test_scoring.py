"""Pointwise, pairwise and listwise scores through the engine, on a fake model whose answers are set by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from folkscope.allocation import CandidateSet, listwise_scores, load_template, pairwise_scores, pointwise_scores
from folkscope.engine import Engine
from folkscope.engine.backends.fake import FakeBackend

TEMPLATE = load_template("resumes")


def _candidates() -> CandidateSet:
    frame = pd.DataFrame(
        {
            "candidate_id": ["a", "b", "c"],
            "group": ["White men", "Black women", "Asian men"],
            "qualified": [1, 1, 0],
            "name": ["Ann Wu", "Bo Lee", "Cy Ng"],
            "text": ["Resume of X1", "Resume of X2", "Resume of X3"],
        }
    )
    return CandidateSet(
        task="resumes", subtask="test job", context="A job.", frame=frame, provenance={"source": "test"}
    )


def _engine(rule=None, responses=None) -> Engine:
    return Engine(FakeBackend("hand", next_token_probs=rule, responses=responses), cache=None)


def test_pointwise_is_the_expected_relevance_of_the_renormalised_labels():
    def rule(text):  # X1: P(Yes) = 0.6 of the label mass; X2: 0.2; X3: never a Yes
        if not text.endswith("Answer:"):
            return None
        yes = {"Resume of X1": 0.3, "Resume of X2": 0.1, "Resume of X3": 0.0}[
            next(k for k in ("Resume of X1", "Resume of X2", "Resume of X3") if k in text)
        ]
        return {" Yes": yes, "Yes": 0.0, " yes": 0.0, "yes": 0.0, " No": 0.5 - yes, "No": 0.0, " no": 0.0, "no": 0.0}

    out = pointwise_scores(_engine(_letters_as_words(rule)), _candidates(), TEMPLATE)
    assert np.allclose(out["score"], [0.6, 0.2, 0.0]) and np.allclose(out["label_mass"], 0.5)
    assert np.allclose(out["p_Yes"] + out["p_No"], 1.0)


def _letters_as_words(rule):
    """The fake tokenizer spells words byte by byte; score 'Yes'/'No' by their first byte-token, the rest certain."""

    def wrapped(text):
        base = rule(text)
        if base is not None:
            firsts: dict[str, float] = {}
            for word, p in base.items():
                firsts[word[:2] if word.startswith(" ") else word[:1]] = (
                    firsts.get(word[:2] if word.startswith(" ") else word[:1], 0.0) + p
                )
            return firsts
        for word in (" Yes", "Yes", " yes", "yes", " No", "No", " no", "no"):
            for cut in range(1, len(word)):
                if text.endswith("Answer:" + word[:cut]) and (cut > 1 or not word.startswith(" ")):
                    return {word[cut]: 1.0}
        return None

    return wrapped


def test_pairwise_points_follow_the_consistency_rules():
    # a beats everyone in both orders; b vs c: the first-shown candidate always wins (flipped -> 0.5 each)
    def rule(text):
        if not text.endswith("Answer:"):
            return None
        first = text.index("Candidate A:")
        a_text = text[first : text.index("Candidate B:")]
        if "X1" in text and ("X2" in text or "X3" in text):
            return (
                {" A": 0.9, " B": 0.05, " C": 0.05, "A": 0.0, "B": 0.0, "C": 0.0}
                if "X1" in a_text
                else {" A": 0.05, " B": 0.9, " C": 0.05, "A": 0.0, "B": 0.0, "C": 0.0}
            )
        return {" A": 0.8, " B": 0.1, " C": 0.1, "A": 0.0, "B": 0.0, "C": 0.0}

    pools = pd.DataFrame({"pool": [0, 0, 0], "candidate_id": ["a", "b", "c"]})
    scores, pairs, shares = pairwise_scores(_engine(rule), _candidates(), pools, TEMPLATE, answer="probability")
    assert scores.set_index("candidate_id")["score"].to_dict() == {"a": 2.0, "b": 0.5, "c": 0.5}
    assert pairs["answer_ab"].tolist() == ["a", "a", "a"] and pairs["answer_ba"].tolist() == ["a", "a", "b"]
    assert shares["regular"] == 1.0 and shares["tie"] == 0.0
    assert shares["flipped"] == pytest.approx(1 / 3) and shares["inconsistent"] == pytest.approx(1 / 3)


def test_pairwise_ties_give_half_a_point_each():
    def rule(text):
        return {" C": 0.9, " A": 0.05, " B": 0.05, "A": 0.0, "B": 0.0, "C": 0.0} if text.endswith("Answer:") else None

    pools = pd.DataFrame({"pool": [0, 0], "candidate_id": ["a", "b"]})
    scores, pairs, shares = pairwise_scores(_engine(rule), _candidates(), pools, TEMPLATE, answer="probability")
    assert scores["score"].tolist() == [0.5, 0.5] and shares["tie"] == 1.0 and shares["inconsistent"] == 0.0


def test_listwise_reads_the_stated_ranking_and_counts_unparseable_pools():
    def respond(prompt):
        return "1. Cy Ng\n2. Ann Wu" if "X1" in prompt and "X3" in prompt else "I cannot rank these people."

    pools = pd.DataFrame({"pool": [0, 0, 0, 1, 1], "candidate_id": ["a", "b", "c", "a", "b"]})
    scores, answers = listwise_scores(_engine(responses=respond), _candidates(), pools, TEMPLATE)
    pool0 = scores[scores["pool"] == 0].set_index("candidate_id")
    assert pool0["rank"].to_dict() == {"a": 2.0, "b": 3.0, "c": 1.0} and pool0["score"].to_dict() == {
        "a": 0.5,
        "b": 0.0,
        "c": 1.0,
    }
    assert scores[scores["pool"] == 1]["score"].isna().all()
    assert answers["parsed"].tolist() == [True, False]


def test_pairwise_answers_the_probabilities_cannot_give_are_read_from_a_generation():
    """A web API whose top log-probabilities miss the letters: the pair is asked for a short answer instead."""
    import dataclasses

    engine = _engine(
        responses=lambda prompt: (
            " B. The second candidate." if "Resume of X1" in prompt.split("Candidate B:")[1] else " I cannot say."
        )
    )
    real = engine.score

    def lossy(requests, **labels):
        return [
            dataclasses.replace(r, logprobs=tuple([float("nan")] * len(r.logprobs)), bound=None)
            for r in real(requests, **labels)
        ]

    engine.score = lossy
    pools = pd.DataFrame({"pool": [0, 0], "candidate_id": ["a", "b"]})
    scores, pairs, shares = pairwise_scores(engine, _candidates(), pools, TEMPLATE, answer="probability")
    # ordering 1 shows (b, a): "B" there is a (X1); ordering 0 shows X1 as A, and the model says nothing usable
    assert pairs[["answer_ab", "answer_ba"]].values.tolist() == [["unread", "a"]]
    assert (
        bool(pairs["generated_ab"].iloc[0])
        and bool(pairs["generated_ba"].iloc[0])
        and shares["read_from_generation"] == 2
    )
    assert scores["score"].tolist() == [0.5, 0.5] and shares["unread"] == 0.5
