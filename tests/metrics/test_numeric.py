"""PM, WD, RE against the paper's reference values; behaviours, baselines, mode metrics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from folkscope.errors import ConfigError, DataError, UndefinedMetricWarning
from folkscope.metrics import (
    REFERENCE_BEHAVIOURS,
    calibration_distance,
    classify_behaviour,
    ideal_distribution,
    mode_frequency,
    mode_probability,
    mode_stability,
    numeric_calibration_table,
    pick_higher_baseline,
    probability_mass,
    random_baseline,
    reference_behaviour,
    relative_entropy,
)

from .strategies import PROPERTY

P_51_98 = ideal_distribution([51, 98])  # (0.342, 0.658)

# Table 2 / appendix table of Lovering et al. for the counts 51 and 98: (Π, PM, RE, WD)
PUBLISHED = {
    "pick_first": ([1.0, 0.0], 1.0, -0.927, 0.930),
    "pick_lower": ([1.0, 0.0], 1.0, -0.927, 0.930),
    "pick_second": ([0.0, 1.0], 1.0, -0.927, 0.484),
    "pick_higher": ([0.0, 1.0], 1.0, -0.927, 0.484),
    "pick_higher_0.7": ([0.3, 0.7], 1.0, -0.046, 0.060),
    "pick_higher_0.6": ([0.4, 0.6], 1.0, 0.044, 0.082),
    "pick_higher_0.8": ([0.2, 0.8], 1.0, -0.205, 0.201),
    "pick_higher_0.9": ([0.1, 0.9], 1.0, -0.458, 0.343),
}


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_published_reference_values(name):
    pi, pm, re, wd = PUBLISHED[name]
    if name.startswith("pick_higher_"):
        built = pick_higher_baseline(P_51_98, q=float(name.rsplit("_", 1)[1]))[0]
    else:
        built = reference_behaviour(name, P_51_98)[0]
    assert built == pytest.approx(pi)
    assert probability_mass(pi) == pytest.approx(pm)
    assert relative_entropy(pi, P_51_98) == pytest.approx(re, abs=5e-4)
    assert calibration_distance(pi, P_51_98) == pytest.approx(wd, abs=5e-4)


def test_published_null_and_calibrated():
    # Null: PM 0, RE n/a, WD 0.74 (table 2 gives two decimals)
    assert calibration_distance([0.0, 0.0], P_51_98) == pytest.approx(0.74, abs=5e-3)
    with pytest.warns(UndefinedMetricWarning, match="probability mass 0"):
        assert np.isnan(relative_entropy([0.0, 0.0], P_51_98))
    assert calibration_distance(P_51_98, P_51_98) == 0.0
    assert relative_entropy(P_51_98, P_51_98) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(
    ("pi", "re", "wd"),
    [
        ([0.938, 0.000], -0.926, 0.887),  # Mistral-7B-v0.3 on 51/98 (appendix C)
        ([0.027, 0.955], -0.747, 0.433),  # Meta-Llama-3.1-8B
        ([0.304, 0.361], 0.068, 0.299),  # Mistral-7B-v0.1
    ],
)
def test_published_model_rows(pi, re, wd):
    # inputs are rounded to 3 decimals in the paper, hence the tolerance
    assert relative_entropy(pi, P_51_98) == pytest.approx(re, abs=3e-3)
    assert calibration_distance(pi, P_51_98) == pytest.approx(wd, abs=2e-3)


def test_wd_equals_scipy_wasserstein_nd_of_single_points():
    rng = np.random.default_rng(0)
    for _ in range(5):
        p = rng.dirichlet(np.ones(3))
        pi = rng.dirichlet(np.ones(4))[:3]
        ref = stats.wasserstein_distance_nd(p[None, :], pi[None, :])
        assert calibration_distance(pi, p) == pytest.approx(ref)


def test_vectorised_shapes_and_table_reasons():
    pi = np.array([[0.0, 0.0], [0.3, 0.7], [0.5, 0.2]])
    p = np.array([[0.5, 0.5], [0.5, 0.5], [0.25, 0.75]])
    assert probability_mass(pi).tolist() == pytest.approx([0.0, 1.0, 0.7])
    with pytest.warns(UndefinedMetricWarning, match="1 problem"):
        re = relative_entropy(pi, p)
    assert np.isnan(re[0]) and not np.isnan(re[1:]).any()
    table = numeric_calibration_table(pi, p)
    assert table["undefined_reason"].tolist() == ["probability mass is 0: relative entropy undefined", "", ""]
    assert table["relative_entropy"].iloc[1:].tolist() == pytest.approx(re[1:].tolist())
    # RE renormalises by PM: (0.5, 0.2) -> (5/7, 2/7)
    h = -(5 / 7 * np.log2(5 / 7) + 2 / 7 * np.log2(2 / 7))
    h_p = -(0.25 * np.log2(0.25) + 0.75 * np.log2(0.75))
    assert re[2] == pytest.approx(h - h_p)


def test_ties_and_multi_option_behaviours():
    p = [[0.5, 0.5]]
    assert reference_behaviour("pick_higher", p).tolist() == [[0.5, 0.5]]
    assert pick_higher_baseline([[0.2, 0.5, 0.3]], q=0.6)[0].tolist() == pytest.approx([0.2, 0.6, 0.2])
    assert reference_behaviour("pick_second", [[0.2, 0.5, 0.3]]).tolist() == [[0, 1, 0]]
    assert reference_behaviour("pick_lower", [[0.2, 0.5, 0.3]]).tolist() == [[1, 0, 0]]
    with pytest.raises(ConfigError) as info:
        reference_behaviour("pick_random", p)
    assert info.value.parameter == "name"


def _balanced_cell(n=100):
    """Half the problems have the larger count first, half second."""
    rng = np.random.default_rng(0)
    small = rng.uniform(0.1, 0.4, n)
    first_higher = np.arange(n) % 2 == 0
    return np.column_stack([np.where(first_higher, 1 - small, small), np.where(first_higher, small, 1 - small)])


@pytest.mark.parametrize("behaviour", ["calibrated", "pick_higher", "pick_lower", "pick_first", "pick_second"])
def test_classify_recovers_each_behaviour(behaviour):
    ideal = _balanced_cell()
    outputs = reference_behaviour(behaviour, ideal) * 0.95  # a little mass elsewhere
    res = classify_behaviour(outputs, ideal)
    assert res.behaviour == behaviour
    assert res.rates[behaviour] == 1.0
    assert res.mean_probability_mass == pytest.approx(0.95)
    if behaviour in ("pick_first", "pick_second", "pick_higher", "pick_lower"):
        # exclusive over a balanced cell: the overlapping behaviours match half the time
        assert sorted(res.rates.values())[-2] == 0.5


def test_classify_null_by_mass():
    ideal = _balanced_cell()
    res = classify_behaviour(reference_behaviour("pick_first", ideal) * 0.4, ideal)
    assert res.behaviour == "null" and res.mean_probability_mass == pytest.approx(0.4)
    assert set(res.rates) == set(REFERENCE_BEHAVIOURS)


def test_random_baseline():
    a = random_baseline(1000, tau=1.0, random_state=0)
    assert a.shape == (1000, 2) and np.allclose(a.sum(axis=1), 1)
    assert np.array_equal(a, random_baseline(1000, tau=1.0, random_state=0))
    # tau = 1 keeps probabilities between e^-1 / (1 + e^-1) and its complement
    assert a.min() >= 1 / (1 + np.e) - 1e-12
    sharp = random_baseline(1000, tau=0.01, random_state=0)
    assert np.mean(sharp.max(axis=1) > 0.99) > 0.7


def test_mode_metrics_by_hand():
    assert mode_probability([[0.2, 0.5, 0.1], [0.3, 0.3, 0.3]]) == pytest.approx(0.4)
    assert mode_stability([[0.6, 0.4], [0.2, 0.8]], [[0.9, 0.1], [0.7, 0.3]]) == 0.5
    # group a: modes 0, 0 -> 1.0 ; group b: modes 1, 0 -> 0.5
    assert mode_frequency([[0.6, 0.4], [0.7, 0.3], [0.1, 0.9], [0.8, 0.2]], ["a", "a", "b", "b"]) == 0.75


@PROPERTY
@given(
    hnp.arrays(np.float64, (5, 3), elements=st.floats(0.0, 0.33)),
    hnp.arrays(np.float64, (5, 3), elements=st.floats(0.01, 1.0)),
)
def test_metric_properties(pi, raw):
    p = raw / raw.sum(axis=1, keepdims=True)
    wd = calibration_distance(pi, p)
    assert np.all(wd >= 0)
    # Euclidean: WD never exceeds L1 distance and is symmetric in its arguments
    assert np.all(wd <= np.abs(pi - p).sum(axis=1) + 1e-12)
    pm = probability_mass(pi)
    if (pm > 0).all():
        re = relative_entropy(pi, p)
        # bounded by the entropies of the simplex
        assert np.all(re <= np.log2(3) + 1e-9) and np.all(re >= -np.log2(3) - 1e-9)


def test_bad_inputs():
    with pytest.raises(DataError, match="rows must sum to 1"):
        calibration_distance([0.5, 0.5], [0.5, 0.6])
    with pytest.raises(DataError, match="sum to more than 1"):
        probability_mass([0.7, 0.6])
    with pytest.raises(DataError, match="shape"):
        calibration_distance([[0.5, 0.5]], [[0.2, 0.3, 0.5]])
    with pytest.raises(ConfigError):
        random_baseline(3, tau=0)
