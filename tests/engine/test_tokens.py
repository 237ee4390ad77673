"""Answer-letter variants and continuation tokenization."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from folkscope.engine.backends.fake import FakeTokenizer
from folkscope.engine.tokens import encode_continuations, encode_texts, expand_variants, token_variants
from folkscope.errors import ConfigError


def test_token_variants():
    assert token_variants("A") == ("A", " A")
    assert token_variants(" A") == (" A", "A")
    assert token_variants("Yes") == ("Yes", " Yes")
    with pytest.raises(ConfigError):
        token_variants("  ")


def test_merge_sums_variant_probabilities_by_hand():
    vs = expand_variants(["A", "B"])
    assert vs.tokens == ("A", " A", "B", " B") and vs.owner == (0, 0, 1, 1)
    p = vs.merge_probs(np.log([0.1, 0.2, 0.3, 0.05]))
    np.testing.assert_allclose(p, [0.3, 0.35])


def test_merge_handles_zero_probabilities():
    vs = expand_variants(["A", "B"])
    lp = vs.merge_logprobs([-np.inf, -np.inf, np.log(0.5), -np.inf])
    assert lp[0] == -np.inf and lp[1] == pytest.approx(np.log(0.5))


def test_keep_filters_variants_and_rejects_empty_choices():
    vs = expand_variants(["A", "B"], keep=lambda v: not v.startswith(" "))
    assert vs.tokens == ("A", "B")
    with pytest.raises(ConfigError, match="no tokenization variant"):
        expand_variants(["A"], keep=lambda v: False)


def test_colliding_variants_are_rejected():
    with pytest.raises(ConfigError, match="share the variant"):
        expand_variants(["A", " A"])


def test_merge_checks_shape():
    with pytest.raises(ConfigError):
        expand_variants(["A"]).merge_logprobs([0.0])


@given(st.lists(st.floats(-30, 0), min_size=4, max_size=4))
def test_merge_equals_log_of_sum(values):
    vs = expand_variants(["x", "y"])
    merged = vs.merge_probs(values)
    p = np.exp(values)
    np.testing.assert_allclose(merged, [p[0] + p[1], p[2] + p[3]], rtol=1e-10)


def test_encode_texts_dedups_and_keeps_order():
    tok = FakeTokenizer()
    out = encode_texts(tok, ["ab", "c", "ab"], add_special_tokens=False)
    assert out == [(97, 98), (99,), (97, 98)]


def test_encode_continuations_with_locally_trained_bpe(locally_trained_tokenizer):
    tok = locally_trained_tokenizer
    ids = encode_continuations(tok, [" A", "A", " Below $50,000"])
    assert len(ids[0]) == 1 and len(ids[1]) == 1 and ids[0] != ids[1]
    assert tok.decode(list(ids[2])) == " Below $50,000"


class _PrefixSpaceTokenizer(FakeTokenizer):
    """Imitates SentencePiece: a text encoded alone gets a word-boundary space."""

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return super().encode(text if text.startswith((" ", "\n")) else " " + text)


def test_encode_continuations_anchors_sentencepiece_style_tokenizers():
    tok = _PrefixSpaceTokenizer()
    (ids,) = encode_continuations(tok, ["A"])
    assert tok.decode(list(ids)) == "A"
