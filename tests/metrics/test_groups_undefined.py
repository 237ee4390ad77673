"""Group gaps when a metric is undefined in every group but others are defined."""

import numpy as np
import pytest

from folkscope.errors import UndefinedMetricWarning
from folkscope.metrics import groupwise_metrics


def test_gaps_skip_metrics_undefined_in_every_group():
    with pytest.warns(UndefinedMetricWarning):
        result = groupwise_metrics([1, 1, 1, 1], [0.2, 0.8, 0.3, 0.6], ["a", "a", "b", "b"])
    assert np.isnan(result.gaps.loc["roc_auc", "max_minus_min"])
    assert result.gaps.loc["roc_auc", "max_group"] is None or np.isnan(result.gaps.loc["roc_auc", "max_group"])
    # ECE per group: a = |2 - 1.0| / 2 = 0.5, b = |2 - 0.9| / 2 = 0.55
    assert result.gaps.loc["ece", "max_group"] == "b"
    assert result.gaps.loc["ece", "max_minus_min"] == pytest.approx(0.05)
