"""The readout layer against hand-computed values: variants merged, options renormalised, orderings averaged."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.engine import ChatPrompt, Engine, word_variants
from folkscope.engine.backends.fake import FakeBackend
from folkscope.errors import ConfigError
from folkscope.readout import most_likely, read_choices, read_two_digits, score_options

#: ordering 0 shows options (x, y, z) as A, B, C; ordering 1 shows (z, x, y)
ORDERINGS = [(0, 1, 2), (2, 0, 1)]
SHARED = "Which is it?\n"
PROMPTS = [[SHARED + "A. x\nB. y\nC. z\nAnswer:", SHARED + "A. z\nB. x\nC. y\nAnswer:"]]


def letters_rule(text: str):
    """A is always the favourite: P(A) = 0.3 + 0.1 (two variants), P(B) = 0.2, P(C) = 0.1 (space variant only)."""
    if text.endswith("Answer:"):
        return {" A": 0.3, "A": 0.1, " B": 0.2, "B": 0.0, " C": 0.1, "C": 0.0}
    return None


def engine_with(rule) -> Engine:
    return Engine(FakeBackend("hand", next_token_probs=rule), cache=None)


@pytest.mark.parametrize("shared", [None, [SHARED]], ids=["one request per ordering", "one prefix group"])
def test_letters_are_merged_mapped_back_renormalised_and_averaged(shared):
    out = read_choices(engine_with(letters_rule), PROMPTS, ("A", "B", "C"), orderings=ORDERINGS, shared=shared)
    # merged letters (A, B, C) = (0.4, 0.2, 0.1) in both orderings, mass 0.7
    # ordering 0 -> options (x, y, z) = (0.4, 0.2, 0.1); ordering 1: A = z, B = x, C = y -> (x, y, z) = (0.2, 0.1, 0.4)
    assert np.allclose(out.raw[0], [[0.4, 0.2, 0.1], [0.2, 0.1, 0.4]])
    assert np.allclose(out.mass, 0.7)
    assert np.allclose(out.per_ordering[0], np.array([[4, 2, 1], [2, 1, 4]]) / 7)
    assert np.allclose(out.probs[0], [3 / 7, 1.5 / 7, 2.5 / 7])  # order bias averaged out


def test_one_ordering_by_default_and_chat_prompts():
    chat = ChatPrompt([("user", "Heads (H) or tails (T)?")], prefill="Call:")

    def rule(text):  # word variants: as written, lower-case, with and without a space
        return (
            {" H": 0.3, "H": 0.1, " h": 0.0, "h": 0.0, " T": 0.05, "T": 0.0, " t": 0.05, "t": 0.0}
            if text.endswith("Call:")
            else None
        )

    out = read_choices(engine_with(rule), [[chat], [chat]], ("H", "T"), variants=word_variants)
    assert out.raw.shape == (2, 1, 2)
    assert np.allclose(out.probs, [[0.8, 0.2], [0.8, 0.2]]) and np.allclose(out.mass, 0.5)


def test_unscored_orderings_are_nan_never_a_guess_and_zero_mass_is_nan_too():
    engine = engine_with(letters_rule)
    real = engine.score

    def lossy(requests, **labels):  # the web-API case: variants missing from the top log-probabilities, no bound
        out = real(requests, **labels)
        return [
            dataclasses.replace(r, logprobs=tuple([float("nan")] * len(r.logprobs)), bound=None)
            if "z\nB" in str(q.prompt)
            else r
            for q, r in zip(requests, out)
        ]

    engine.score = lossy
    out = read_choices(engine, PROMPTS, ("A", "B", "C"), orderings=ORDERINGS)
    assert np.isfinite(out.per_ordering[0, 0]).all() and np.isnan(out.per_ordering[0, 1]).all()
    assert np.isnan(out.probs).all()  # one lost ordering and the item has no averaged answer

    zero = read_choices(engine_with(lambda t: {" A": 0.0, "A": 0.0, " B": 0.0, "B": 0.0}), [["Q"]], ("A", "B"))
    assert zero.mass[0, 0] == 0.0 and np.isnan(zero.probs).all()


def test_bad_input_is_one_clear_error():
    engine = engine_with(letters_rule)
    with pytest.raises(ConfigError, match="permutations"):
        read_choices(engine, PROMPTS, ("A", "B", "C"), orderings=[(0, 1, 1), (2, 0, 1)])
    with pytest.raises(ConfigError, match="one prompt per ordering"):
        read_choices(engine, [PROMPTS[0][:1]], ("A", "B", "C"), orderings=ORDERINGS)
    with pytest.raises(ConfigError, match="shared text"):
        read_choices(engine, PROMPTS, ("A", "B", "C"), orderings=ORDERINGS, shared=["Other\n"])
    with pytest.raises(ConfigError, match="share the variant"):
        read_choices(engine, [["Q"]], ("A", " A"))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.01, 1.0), min_size=3, max_size=3), st.permutations([0, 1, 2]))
def test_the_averaged_answer_does_not_depend_on_how_the_orderings_are_listed(weights, perm):
    """Reading the same orderings in another order (or renaming which is first) gives the same averaged probabilities."""
    total = sum(weights) * 1.5
    rule = {" A": weights[0] / total, " B": weights[1] / total, " C": weights[2] / total, "A": 0.0, "B": 0.0, "C": 0.0}
    engine = engine_with(lambda t: rule if t.endswith("Answer:") else None)
    orderings = [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    texts = {
        o: "Q\n" + "".join(f"{letter}. {'xyz'[i]}\n" for letter, i in zip("ABC", o)) + "Answer:" for o in orderings
    }
    listed = [orderings[i] for i in perm]
    a = read_choices(engine, [[texts[o] for o in orderings]], ("A", "B", "C"), orderings=orderings)
    b = read_choices(engine, [[texts[o] for o in listed]], ("A", "B", "C"), orderings=listed, shared=["Q\n"])
    assert np.allclose(a.probs, b.probs)
    assert np.allclose(a.probs.sum(axis=1), 1.0)
    # with every cyclic ordering each option sits under each letter once: the letters' bias averages to 1/3 each
    assert np.allclose(a.probs, 1 / 3)


def test_score_options_reads_each_items_own_options_raw_and_counts_variants():
    def rule(text):  # one-letter colour words, so each variant is one fake token
        return (
            {" r": 0.5, "r": 0.1, " R": 0.05, "R": 0.0, " b": 0.2, "b": 0.0, " B": 0.0, "B": 0.0}
            if text.endswith("it is")
            else None
        )

    engine = engine_with(rule)
    prompts = ["The marble is r or b; it is", "The coin is r, b or g; it is"]
    options = [("r", "b"), ("r", "b", "g")]
    scored = score_options(engine, prompts, options, variants=word_variants)
    assert np.allclose(scored[0].probs, [0.65, 0.2])  # r + R variants, not renormalised
    assert scored[1].probs.shape == (3,) and scored[1].probs[2] < 0.05  # g only gets the hashed leftovers
    assert scored[0].n_variants.tolist() == [4, 4] and scored[0].min_tokens.tolist() == [1, 1]
    chunked = score_options(engine, prompts, options, variants=word_variants, chunk=1)
    assert all(np.allclose(a.probs, b.probs) for a, b in zip(scored, chunked))
    with pytest.raises(ConfigError, match="option lists"):
        score_options(engine, prompts, options[:1])


def test_most_likely_takes_the_argmax_options_value():
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.3, 0.2], [np.nan, 0.5, 0.5]])
    assert np.allclose(most_likely(p, [0.0, 0.025, 1.0])[:2], [1.0, 0.0]) and np.isnan(most_likely(p, [0, 1, 2])[2])
    with pytest.raises(ConfigError):
        most_likely(p, [0.0, 1.0])


def digits_rule(text: str):
    if text.endswith("0."):
        return {str(d): p for d, p in zip(range(10), [0, 0, 0.1, 0.6, 0.3, 0, 0, 0, 0, 0])}
    if text.endswith("0.3"):
        return {"5": 0.7, "1": 0.3}
    if text[-3:-1] == "0." and text[-1].isdigit():
        return {"0": 1.0}
    return None


def test_two_digits_greedy_and_expected_by_hand():
    engine = engine_with(digits_rule)
    greedy = read_two_digits(engine, ["Risk: 0."])
    assert np.allclose(greedy.values, 0.35) and greedy.first_digit.tolist() == [3]
    expected = read_two_digits(engine, ["Risk: 0."], how="expected")
    # 0.1 * 0.20 + 0.6 * (0.30 + (0.7 * 5 + 0.3 * 1) / 100) + 0.3 * 0.40
    assert np.allclose(expected.values, 0.1 * 0.2 + 0.6 * 0.338 + 0.3 * 0.4)
    with pytest.raises(ConfigError, match="greedy"):
        read_two_digits(engine, ["Risk: 0."], how="mean")
