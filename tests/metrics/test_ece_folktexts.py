"""``ece`` and ``ece_quantile`` are folktexts' numbers (folktexts computes both with netcal).

Reference values: ``data/netcal_ece_reference.json``, netcal 1.4.0's ECE on
four score sets (beta scores at n = 100, scores on a 0.01 grid at n = 100, 12
hand-made rows, and 57 scores collapsed around 0.5 as the default model gives).
On main (2026-11-25) the quantile ECE used inverted-CDF edges and (a, b]
bins: it differed from folktexts' by up to 1.3e-2 at n ~ 100. That rule is
kept as ``strategy="equal_count"`` (integer weights = repeated rows).

Equal-width bins use netcal's ``linspace`` edges by default (issue 29), whose
0.30000000000000004 keeps a score of exactly 0.3 one bin down; exact edges
m/M are ``strategy="uniform_exact"``, which differs on scores on a 0.01 grid
(measured below). tests/parity/test_metrics.py asks netcal itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from folkscope.metrics import expected_calibration_error

CASES = json.loads((Path(__file__).parent / "data" / "netcal_ece_reference.json").read_text())["cases"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_quantile_ece_is_folktexts_netcal_number(case):
    y, p = np.asarray(CASES[case]["y"]), np.asarray(CASES[case]["p"])
    assert expected_calibration_error(y, p, strategy="quantile") == pytest.approx(
        CASES[case]["ece_quantile"], abs=1e-12
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_equal_width_ece_is_folktexts_number(case):
    y, p = np.asarray(CASES[case]["y"]), np.asarray(CASES[case]["p"])
    assert expected_calibration_error(y, p) == pytest.approx(CASES[case]["ece"], abs=1e-12)


def _netcal_equal_width(y: np.ndarray, p: np.ndarray) -> float:
    """netcal's equal-width rule (linspace edges, [a, b) bins): checked against netcal itself on the 0.01 grid below."""
    idx = np.clip(np.searchsorted(np.linspace(0, 1, 11), p, side="right") - 1, 0, 9)
    return float(np.abs(np.bincount(idx, y, 10) - np.bincount(idx, p, 10)).sum() / len(p))


def test_exact_width_ece_differs_from_netcal_only_at_its_float_edges():
    y, p = np.asarray(CASES["grid001_n100"]["y"]), np.asarray(CASES["grid001_n100"]["p"])
    assert _netcal_equal_width(y, p) == pytest.approx(CASES["grid001_n100"]["ece"], abs=1e-12)
    exact = expected_calibration_error(y, p, strategy="uniform_exact")
    assert exact == pytest.approx(CASES["grid001_n100"]["ece"], abs=1e-12)  # no score sat on 0.3, 0.6 or 0.7
    # scores exactly at 0.3: netcal's edge 0.30000000000000004 puts them in [0.2, 0.3), exact edges in [0.3, 0.4)
    y, p = np.array([1, 0, 0, 1]), np.array([0.3, 0.3, 0.25, 0.35])
    exact, theirs = expected_calibration_error(y, p, strategy="uniform_exact"), _netcal_equal_width(y, p)
    # exact: {0.25} |0 - 0.25| + {0.3, 0.3, 0.35} |2 - 0.95| = 1.3 -> 0.325; netcal: {0.25, 0.3, 0.3} |1 - 0.85| + {0.35} |1 - 0.35| = 0.8 -> 0.2
    assert exact == pytest.approx(0.325) and theirs == pytest.approx(0.2)
    assert expected_calibration_error(y, p) == pytest.approx(0.2)  # the default is folktexts'


def test_equal_count_is_the_old_rule_and_differs_from_folktexts_quantile():
    y, p = np.asarray(CASES["collapsed_n57"]["y"]), np.asarray(CASES["collapsed_n57"]["p"])
    equal_count = expected_calibration_error(y, p, strategy="equal_count")
    assert equal_count == pytest.approx(0.13222256711924482, abs=1e-12)  # what main reported as ece_quantile
    assert abs(equal_count - CASES["collapsed_n57"]["ece_quantile"]) > 1e-2
