"""Hypothesis invariants of the numeric analysis."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.numeric import problem_metrics, summarize_metrics, word_variants

_FAST = settings(max_examples=30, deadline=None, database=None)


@_FAST
@given(st.text(alphabet="abcdefghijKLMNOP0123456789", min_size=1, max_size=12))
def test_word_variants_are_distinct_and_cover_the_spaced_word(word):
    v = word_variants(word)
    assert len(v) == len(set(v)) and word in v and " " + word in v
    assert all(x.strip().lower() == word.lower() for x in v)


@_FAST
@given(
    st.lists(
        st.tuples(st.floats(0, 0.5), st.floats(0, 0.5), st.integers(1, 99), st.integers(1, 99), st.sampled_from("abc")),
        min_size=2,
        max_size=20,
    ),
    st.randoms(use_true_random=False),
)
def test_summary_ignores_row_order(rows, rnd):
    probs = pd.DataFrame(
        [
            {"problem_id": f"p{i}", "position": j, "ideal_prob": (n1, n2)[j] / (n1 + n2), "model_prob": (a, b)[j]}
            for i, (a, b, n1, n2, _) in enumerate(rows)
            for j in (0, 1)
        ]
    )
    clusters = pd.Series({f"p{i}": r[4] for i, r in enumerate(rows)})
    m = problem_metrics(probs)
    order = list(range(len(rows)))
    rnd.shuffle(order)
    shuffled = pd.concat([probs.iloc[2 * k : 2 * k + 2] for k in order])
    m2 = problem_metrics(shuffled)
    s1 = summarize_metrics(m, clusters.loc[m["problem_id"]].to_numpy())
    s2 = summarize_metrics(m2, clusters.loc[m2["problem_id"]].to_numpy())
    for name in s1:
        for key in ("mean", "std_error", "n", "n_undefined"):
            assert np.isclose(s1[name][key], s2[name][key], equal_nan=True)
