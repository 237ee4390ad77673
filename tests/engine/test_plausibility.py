"""Cached answers with a valid checksum but impossible numbers are recomputed, never used (issue 28, item 10).

The four entries of the campaign (probabilities summing to about 2, every
candidate at -inf, NaN without a bound from a backend that scores every
candidate, -1e300) are written with a correct checksum, as a buggy writer
would; each must be recomputed and counted. Against an oracle: every answer
a real model (the fake backend's proper language model) or a web API's
top-k table gives is plausible, and every corruption known by construction
to be impossible is not.
"""

from __future__ import annotations

import json
import math
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.engine import Engine, NextTokenRequest, PrefixGroupRequest, ResultCache, ScoreRequest
from folkscope.engine.backends._api_wire import top_result
from folkscope.engine.backends.fake import FakeBackend
from folkscope.engine.cache import _checksum
from folkscope.engine.plausibility import implausible
from folkscope.engine.requests import GenerateRequest, GenerateResult, GenerationSettings, NextTokenResult, ScoreResult

SCORES = [ScoreRequest(f"Row {i}: works as clerk {i * 7 % 11}.\nAnswer:", (" A", " B")) for i in range(12)]
GROUPS = [
    PrefixGroupRequest(f"Row {i} is here.\n", ("Q: A or B?\nAnswer:", "Q: B or A?\nAnswer:"), (" A", " B"))
    for i in range(6)
]
TOKENS = [NextTokenRequest(f"Row {i}. Pick:", (" A", " B")) for i in range(6)]

#: the campaign's four entries, as the log-probabilities of a two-candidate answer
IMPLAUSIBLE = {
    "probabilities summing to about 2": [math.log(0.99), math.log(0.98)],
    "every candidate at -inf": [-math.inf, -math.inf],
    "NaN without a bound": [math.nan, -0.5],
    "-1e300": [-1e300, -0.2],
}


def engine_on(folder) -> Engine:
    return Engine(FakeBackend(), cache=ResultCache(folder), prompt_version="v1", progress=False)


def corrupt_one(folder, kind: str, logprobs: list[float]) -> None:
    """Overwrite one stored answer of ``kind`` with ``logprobs``, under a checksum that matches (a buggy writer)."""
    with sqlite3.connect(folder / "results.sqlite") as conn:
        key, text = conn.execute(
            "SELECT key, result FROM results WHERE kind = ? ORDER BY key LIMIT 1", (kind,)
        ).fetchone()
        data = json.loads(text)
        if kind == "prefix_group":
            data["results"][1]["logprobs"] = logprobs
        else:
            data["logprobs"] = logprobs
        text = json.dumps(data)  # NaN and -inf as JSON's NaN / -Infinity, which the cache reads back
        conn.execute("UPDATE results SET result = ?, checksum = ? WHERE key = ?", (text, _checksum(key, text), key))


@pytest.mark.parametrize("case", list(IMPLAUSIBLE))
@pytest.mark.parametrize(
    ("kind", "method", "requests"),
    [("score", "score", SCORES), ("prefix_group", "score_groups", GROUPS), ("next_token", "next_token", TOKENS)],
)
def test_an_implausible_entry_with_a_valid_checksum_is_recomputed_counted_and_logged(
    tmp_path, caplog, case, kind, method, requests
):
    first = engine_on(tmp_path)
    answers = getattr(first, method)(requests)
    first.close()
    corrupt_one(tmp_path, kind, IMPLAUSIBLE[case])
    again = engine_on(tmp_path)
    out = getattr(again, method)(requests)
    assert out == answers  # the right numbers, not the stored ones
    assert again.stats.damaged == 1 and again.stats.computed == 1 and again.stats.cached == len(requests) - 1
    assert "1 cached answers were implausible" in caplog.text
    again.close()
    third = engine_on(tmp_path)  # and the entry was replaced: nothing left to recompute
    assert getattr(third, method)(requests) == answers and third.stats.computed == 0 and third.stats.damaged == 0
    third.close()


# ---------------------------------------------------------------------- the oracle: real answers pass, impossible ones fail
candidate_sets = st.lists(
    st.sampled_from([" A", " B", " C", "A", " 1", " 10", " 12", " yes", " yes please", " no"]),
    min_size=1,
    max_size=5,
    unique=True,
)
prompts = st.text(alphabet="abc 12:\n", min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(prompts, candidate_sets, st.floats(0.01, 0.99))
def test_every_answer_of_a_real_language_model_is_plausible(prompt, candidates, share):
    """The fake backend is a proper language model: whatever it answers, prefixes of candidates included, passes.

    (A share of 0 or 1 gives some token probability 0, which no softmax over real logits does.)"""
    fake = FakeBackend(next_token_probs={"A": share})
    engine = Engine(fake, cache=None, progress=False)
    request = ScoreRequest(prompt, tuple(candidates))
    (result,) = engine.score([request])
    assert implausible(request, result) is None
    singles = tuple(c for c in candidates if engine.is_single_token(c))
    if singles:
        next_request = NextTokenRequest(prompt, singles)
        (next_result,) = engine.next_token([next_request])
        assert implausible(next_request, next_result) is None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
    st.lists(st.sampled_from(["A", " A", "B", " B", " AB", "C"]), min_size=1, max_size=4, unique=True),
    st.booleans(),
)
def test_a_web_apis_top_k_reading_is_plausible_from_that_backend_only(weights, candidates, prefixes):
    """NaN with or without a bound is how the web-API backend marks what it could not score: plausible from it alone."""
    vocab = ["A", " A", "B", " B", "x", "y"][: len(weights)]
    total = sum(weights) or 1.0
    table = {
        t: math.log(w / total) for t, w in zip(vocab, weights) if w / total > 0
    }  # a top-k table: probabilities summing to <= 1
    lps, ntok, bound = top_result(table, 7, candidates, prefixes=prefixes)
    request = ScoreRequest("Q:", tuple(candidates))
    result = ScoreResult(tuple(lps), tuple(ntok), 7, bound)
    assert implausible(request, result, marks_unscored=True) is None
    if any(math.isnan(v) for v in lps):
        assert implausible(request, result) is not None  # a local backend never leaves a candidate unscored
    next_result = NextTokenResult(tuple(lps), 7, bound)
    assert implausible(NextTokenRequest("Q:", tuple(candidates)), next_result, marks_unscored=True) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0.05, 1.0), min_size=2, max_size=5), st.floats(1.2, 50.0))
def test_exclusive_candidates_more_than_certain_together_are_refused(weights, excess):
    """Scaled up past a sum of 1 (by 20 % or more), a true distribution over distinct single letters is impossible."""
    candidates = tuple(f" {chr(65 + i)}" for i in range(len(weights)))
    total = sum(weights)
    lps = tuple(math.log(w / total * excess) for w in weights)
    if max(lps) > 0:
        return  # refused as a log-probability above 0 instead, also right
    why = implausible(ScoreRequest("Q:", candidates), ScoreResult(lps, (1,) * len(weights), 3))
    assert why is not None and "sum to" in why


def test_a_candidate_that_is_the_prefix_of_another_may_share_its_mass():
    """' 1' and ' 10' can both follow (the second starts with the first): together they may exceed 1; ' 1' and ' 2' cannot."""
    both = ScoreResult((math.log(0.9), math.log(0.85)), (1, 2), 3)
    assert implausible(ScoreRequest("Q:", (" 1", " 10")), both) is None
    assert "sum to 1.75" in implausible(ScoreRequest("Q:", (" 1", " 2")), both)


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        (ScoreResult((-0.1, -2.0), (1,), 3), "1 token counts for 2 candidates"),
        (ScoreResult((-0.1, -2.0), (1, 0), 3), "candidate of 0 tokens"),
        (ScoreResult((0.5, -2.0), (1, 1), 3), "above 0"),
        (ScoreResult((-0.1, math.nan), (1, 0), 3, bound=math.nan), "not a log-probability"),
        (ScoreResult((-0.1, math.nan), (1, 2), 3), "NaN for a candidate scored over 2 tokens"),
    ],
)
def test_other_impossible_shapes_are_named(result, reason):
    why = implausible(ScoreRequest("Q:", (" A", " B")), result, marks_unscored=True)
    assert why is not None and reason in why


def test_generations_keep_no_stop_string_and_a_known_finish_reason():
    request = GenerateRequest("Say:", GenerationSettings(max_new_tokens=8, stop=("\n",)))
    assert implausible(request, GenerateResult("yes", "stop", 3, 2)) is None
    assert "stop string" in implausible(request, GenerateResult("yes\nno", "length", 3, 8))
    assert "finish reason" in implausible(request, GenerateResult("yes", "tired", 3, 2))
    assert "below 0" in implausible(request, GenerateResult("yes", "eos", 3, -1))


def test_module_examples():
    import doctest

    from folkscope.engine import plausibility

    assert doctest.testmod(plausibility).failed == 0
