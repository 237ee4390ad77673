"""Hypothesis strategies shared by the metrics tests."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

#: Settings for every property test here: enough examples to find edge cases,
#: few enough that the whole metrics suite stays well under a minute on 2 cores.
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# scores on a coarse grid produce ties and exact bin edges, the hard cases
_grid_scores = st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.75, 0.9, 1.0])
_any_scores = st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=False)
scores_elements = st.one_of(_grid_scores, _any_scores)


@st.composite
def binary_data(
    draw: st.DrawFn, min_size: int = 2, max_size: int = 40, both_classes: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(y_true, y_prob) of equal length; labels 0/1, scores in [0, 1] with ties."""
    n = draw(st.integers(min_size, max_size))
    y = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 1)))
    if both_classes:
        y[0], y[-1] = 0, 1
    p = draw(hnp.arrays(np.float64, n, elements=scores_elements))
    return y, p


@st.composite
def int_weights(draw: st.DrawFn, n: int) -> np.ndarray:
    """Integer weights in 0..4 with at least one positive."""
    w = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 4)))
    if w.sum() == 0:
        w[0] = 1
    return w


def real_scores(min_size: int = 1, max_size: int = 30) -> st.SearchStrategy[np.ndarray]:
    """Real-valued scores (any sign) on a coarse grid so that ties are common."""
    return hnp.arrays(
        np.float64,
        st.integers(min_size, max_size),
        elements=st.sampled_from([-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
        | st.floats(-5, 5, allow_nan=False, allow_subnormal=False),
    )
