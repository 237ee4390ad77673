"""The linear AUC path for presorted scores equals the general path and scikit-learn."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score as sk_auc

from folkscope.metrics._classification import _auc


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 300), st.booleans())
def test_presorted_equals_unsorted_and_sklearn(seed, n, weighted):
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(n), 1)  # coarse scores: many ties
    y = (rng.random(n) < 0.5).astype(float)
    y[:2] = [0.0, 1.0]  # both classes
    w = rng.random(n) + 0.1 if weighted else None
    order = np.argsort(p, kind="stable")
    sorted_auc = _auc(y[order], p[order], None if w is None else w[order])
    assert np.isclose(sorted_auc, _auc(y[::-1], p[::-1], None if w is None else w[::-1]))  # unsorted path
    assert np.isclose(sorted_auc, sk_auc(y, p, sample_weight=w))
