"""Number-frequency tables and the frequency-effects analysis."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.errors import ConfigError
from folkscope.numeric import (
    NumberFrequencies,
    frequency_effect,
    generate_problems,
    load_number_frequencies,
    problems_frame,
)


def test_bundled_table_says_what_it_measures():
    table = load_number_frequencies("bundled")
    assert sorted(table.values) == list(range(0, 1001))
    assert table.measured == frozenset(range(10))
    # multi-digit numerals are wordfreq estimates by length and first digit
    assert table.get(51) == table.get(59) and table.get(51) > table.get(61)
    assert table.get(7) > table.get(8) > 0
    assert "CC-BY-SA" in table.note and "estimate" in table.note
    assert table.summary()["measured_range"] == [0, 9]


def test_user_csv_with_comments_and_optional_measured(tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text("# counts of ' N ' in my corpus\nnumber,frequency\n1,100\n2,50\n10,7\n")
    table = load_number_frequencies(path)
    assert table.values == {1: 100.0, 2: 50.0, 10: 7.0} and table.measured == {1, 2, 10}
    assert table.note == "counts of ' N ' in my corpus" and table.source == str(path)
    path.write_text("number, frequency ,measured\n1,3,yes\n2,4,no\n")
    assert load_number_frequencies(path).measured == {1}
    edited = tmp_path / "edited.csv"
    edited.write_text("number,frequency,measured\n1,3,yes\n2,5,no\n")
    assert load_number_frequencies(edited).fingerprint() != load_number_frequencies(path).fingerprint()


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no rows"),
        ("# only a comment\n", "no rows"),
        ("n,freq\n1,2\n", "columns"),
        ("number,frequency\none,2\n3,4\n", "non-negative integer"),
        ("number,frequency\n-1,2\n3,4\n", "non-negative"),
        ("number,frequency\n1,2\n1,3\n", "twice"),
        ("number,frequency\n1,abc\n2,3\n", "must be a number"),
        ("number,frequency\n1,nan\n2,3\n", "finite"),
        ("number,frequency\n1,inf\n2,3\n", "finite"),
        ("number,frequency\n1,-5\n2,3\n", "finite and >= 0"),
        ("number,frequency,measured\n1,2,maybe\n2,3,true\n", "true or false"),
        ("number,frequency\n1,2\n", "at least two"),
    ],
)
def test_bad_tables_are_rejected(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_number_frequencies(path)
    assert info.value.parameter == "frequency_table"


def test_unreadable_tables(tmp_path):
    with pytest.raises(ConfigError, match="cannot be read"):
        load_number_frequencies(tmp_path / "missing.csv")
    binary = tmp_path / "table.parquet"
    binary.write_bytes(b"PAR1\xff\xfe\x00")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_number_frequencies(binary)


def _frame():
    problems = generate_problems("colors", numbers=[1, 2, 3, 40], words=["red", "blue"], templates=["marbles"])
    return problems_frame(problems)


def test_missing_and_estimated_numbers_are_counted():
    frame = _frame()
    metrics = pd.DataFrame({"problem_id": frame["problem_id"], "calibration_distance": np.linspace(0, 1, len(frame))})
    table = NumberFrequencies({1: 10.0, 2: 20.0, 3: 35.0}, frozenset({1, 2}), "t")
    res = frequency_effect(metrics, frame, table)
    pairs = list(zip(frame["number_1"], frame["number_2"]))
    with_40 = sum(40 in p for p in pairs)
    ties = sum(a == b and a != 40 for a, b in pairs)
    assert res["n_missing"] == with_40 and res["n_equal"] == ties
    assert res["n"] == len(frame) - with_40 - ties and res["n_estimated"] == 0
    only = frequency_effect(metrics, frame, table, measured_only=True)
    assert only["n_estimated"] == sum(3 in p and 40 not in p for p in pairs)
    assert only["n"] == sum(a != b and {a, b} <= {1, 2} for a, b in pairs)


def test_distributions_use_the_interval_ends():
    problems = generate_problems("distributions", n_intervals=6, templates=["closed"])
    frame = problems_frame(problems)
    assert [(p.numbers[0], p.numbers[1]) for p in problems] == list(zip(frame["number_1"], frame["number_2"]))
    assert all(int(p.options[0]) == p.numbers[0] for p in problems)  # closed: both ends included
    metrics = pd.DataFrame(
        {"problem_id": frame["problem_id"], "calibration_distance": np.arange(len(frame), dtype=float)}
    )
    table = NumberFrequencies({n: float(n * n) for n in range(0, 1100)}, frozenset(), "squares")
    res = frequency_effect(metrics, frame, table)
    assert res["n"] == len(frame) and np.isfinite(res["spearman_rho"])


_FRAME = _frame()


@settings(max_examples=30, deadline=None, database=None)
@given(
    st.lists(st.integers(1, 10**6), min_size=4, max_size=4, unique=True),
    st.integers(1, 1000),
    st.randoms(use_true_random=False),
)
def test_correlation_ignores_the_scale_of_the_table(freqs, scale, rnd):
    """Counts in any unit give the same answer: log-gap ranks do not change with a
    positive factor, so rho and p are invariant (integer counts keep it exact)."""
    frame = _FRAME
    wd = [rnd.random() for _ in range(len(frame))]
    metrics = pd.DataFrame({"problem_id": frame["problem_id"], "calibration_distance": wd})
    base = {k: float(v) for k, v in zip((1, 2, 3, 40), freqs)}
    a = frequency_effect(metrics, frame, NumberFrequencies(base, frozenset(base), "a"))
    b = frequency_effect(
        metrics, frame, NumberFrequencies({k: v * scale for k, v in base.items()}, frozenset(base), "b")
    )
    assert a["n"] == b["n"]
    assert np.isclose(a["spearman_rho"], b["spearman_rho"], equal_nan=True)
