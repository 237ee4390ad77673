"""Allocation scores on a web API (litellm through a local OpenAI-compatible server) are the fake model's own scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from folkscope.allocation import CandidateSet, load_template, pairwise_scores, pointwise_scores
from folkscope.engine import Engine, EngineConfig
from folkscope.engine.backends.fake import FakeBackend

TEMPLATE = load_template("resumes")


def _candidates() -> CandidateSet:
    texts = [
        "Ann Wu. Ten years of Python and SQL at a bank.",
        "Bo Lee. Two years of support work.",
        "Cy Ng. Five years of data engineering.",
    ]
    frame = pd.DataFrame(
        {
            "candidate_id": ["a", "b", "c"],
            "group": ["x", "y", "z"],
            "qualified": [1, 0, 1],
            "name": ["Ann Wu", "Bo Lee", "Cy Ng"],
            "text": texts,
        }
    )
    return CandidateSet(
        task="resumes", subtask="test", context="Data engineer, Python and SQL.", frame=frame, provenance={}
    )


def test_pointwise_and_pairwise_on_a_web_api_match_the_fake_model(monkeypatch):
    pytest.importorskip("litellm")
    from folkscope.testing import FakeSource, LocalOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    direct = Engine(FakeBackend(), cache=None)
    pools = pd.DataFrame({"pool": [0, 0, 0], "candidate_id": ["a", "b", "c"]})
    with LocalOpenAIServer(FakeSource(FakeBackend()), max_lifetime=120) as url:
        web = Engine.from_config(EngineConfig(model="openai/fake", backend="litellm", api_base=url, use_cache=False))
        points = pointwise_scores(web, _candidates(), TEMPLATE, chat=False)
        _, pairs, shares = pairwise_scores(web, _candidates(), pools, TEMPLATE, chat=False, answer="probability")
        _, said, _ = pairwise_scores(web, _candidates(), pools, TEMPLATE, chat=False)  # generated: the default
        web.close()
    np.testing.assert_allclose(
        points["score"], pointwise_scores(direct, _candidates(), TEMPLATE, chat=False)["score"], atol=1e-6
    )
    _, pairs_direct, _ = pairwise_scores(direct, _candidates(), pools, TEMPLATE, chat=False, answer="probability")
    assert (
        pairs[["answer_ab", "answer_ba"]].equals(pairs_direct[["answer_ab", "answer_ba"]])
        and shares["read_from_generation"] == 0
    )
    _, said_direct, _ = pairwise_scores(direct, _candidates(), pools, TEMPLATE, chat=False)
    assert said[["response_ab", "response_ba"]].equals(said_direct[["response_ab", "response_ba"]])
