"""Few-shot prompts: composition, order, hidden questions, reuse, per-row seeding, errors."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from folkscope.data import ACSDataset, load_bundled
from folkscope.errors import ConfigError
from folkscope.prompting import (
    ExamplePool,
    FewShotConfig,
    PromptConfig,
    PromptRenderer,
    draw_for_rows,
    render_dataset,
)
from folkscope.tasks import get_task

FS_DESCRIPTION = (
    "The following data describes several survey respondents, each followed by a question about that respondent. "
    "The survey was conducted among US residents in 2018. The first respondents are solved examples; answer the "
    "question about the last respondent. Please answer the question based on the information provided. The data "
    "provided is enough to reach an approximate answer.\n\n"
)

EXPECTED_TWO_SHOT = """The following data describes several survey respondents, each followed by a question about that respondent. The survey was conducted among US residents in 2018. The first respondents are solved examples; answer the question about the last respondent. Please answer the question based on the information provided. The data provided is enough to reach an approximate answer.

Information:
- The age is: 18 years old.
- The sex is: Female.

Question: What is this person's estimated yearly income?
A. Below $50,000.
B. Above $50,000.
Answer: A

Information:
- The age is: 52 years old.
- The sex is: Male.

Question: What is this person's estimated yearly income?
A. Below $50,000.
B. Above $50,000.
Answer: B

Information:
- The age is: 53 years old.
- The sex is: Male.

Question: What is this person's estimated yearly income?
A. Below $50,000.
B. Above $50,000.
Answer:"""

EXPECTED_TWO_SHOT_FLIPPED_HIDDEN = """The following data describes several survey respondents, each followed by a question about that respondent. The survey was conducted among US residents in 2018. The first respondents are solved examples; answer the question about the last respondent. Please answer the question based on the information provided. The data provided is enough to reach an approximate answer.

Information:
- The age is: 52 years old.
- The sex is: Male.

Answer: A

Information:
- The age is: 18 years old.
- The sex is: Female.

Answer: B

Information:
- The age is: 53 years old.
- The sex is: Male.

Question: What is this person's estimated yearly income?
A. Above $50,000.
B. Below $50,000.
Answer:"""


@pytest.fixture(scope="module")
def fixture():
    frame = load_bundled("acs-income-10")
    return frame.drop(columns="PINCP>50000"), frame["PINCP>50000"]


@pytest.fixture(scope="module")
def small_task():
    return get_task("ACSIncome").with_features(["AGEP", "SEX"])


@pytest.fixture(scope="module")
def nist():
    return ACSDataset.make_from_task("NISTIncome", subsampling=0.1, seed=3)


def letters(block: str) -> list[str]:
    return re.findall(r"^Answer: ([A-Z])$", block, flags=re.M)


def test_two_shot_prompt_literal(fixture, small_task):
    X, y = fixture
    pool = (X.loc[[1, 424]], y.loc[[1, 424]])  # one row of each class: 18 F (0), 52 M (1)
    fs = FewShotConfig(n_shots=2, composition=(1, 1), example_order=(0, 1), reuse_examples=True)
    batch = PromptRenderer(small_task, PromptConfig(few_shot=fs), examples=pool).render(X.loc[[2]], y.loc[[2]])
    rendered = batch[0]
    assert rendered.full_text(0) == EXPECTED_TWO_SHOT
    # examples follow the final question's ordering, so letters keep one meaning per prompt
    assert letters(rendered.full_text(1)) == ["B", "A"]
    assert rendered.examples_shared and batch.examples_shared
    assert rendered.rows_shared_text(0) == rendered.prefix + rendered.examples[0]
    assert rendered.row_shared_text == rendered.prefix
    assert rendered.prefix == FS_DESCRIPTION
    shared, rests = rendered.ordering_split()
    assert shared == FS_DESCRIPTION and shared + rests[0] == EXPECTED_TWO_SHOT


def test_example_order_and_hidden_question_literal(fixture, small_task):
    X, y = fixture
    pool = (X.loc[[1, 424]], y.loc[[1, 424]])
    fs = FewShotConfig(n_shots=2, composition=(1, 1), example_order=(1, 0), hide_question=True, reuse_examples=True)
    rendered = PromptRenderer(small_task, PromptConfig(few_shot=fs), examples=pool).render(X.loc[[2]])[0]
    assert rendered.full_text(1) == EXPECTED_TWO_SHOT_FLIPPED_HIDDEN


@pytest.mark.parametrize(
    ("composition", "order", "expected"),
    [
        ((2, 2), (0, 1, 2, 3), ["A", "A", "B", "B"]),
        ((2, 2), (2, 3, 0, 1), ["B", "B", "A", "A"]),
        ((3, 1), (3, 0, 1, 2), ["B", "A", "A", "A"]),
        ((0, 4), None, ["B", "B", "B", "B"]),
    ],
)
def test_per_class_counts_and_example_order(fixture, composition, order, expected):
    X, y = fixture
    fs = FewShotConfig(n_shots=4, composition=composition, example_order=order, reuse_examples=True)
    rendered = PromptRenderer("ACSIncome", PromptConfig(few_shot=fs), examples=(X, y)).render(X.loc[[1]])[0]
    assert letters(rendered.examples[0]) == expected
    assert letters(rendered.examples[1]) == ["AB"["BA".index(c)] for c in expected]


def test_balanced_composition_per_row(nist):
    fs = FewShotConfig(n_shots=6, composition="balanced")
    batch = render_dataset(nist, PromptConfig(few_shot=fs), split="test")
    assert not batch.examples_shared
    for i in range(0, len(batch), 17):
        got = letters(batch[i].examples[0])
        assert sorted(got) == ["A"] * 3 + ["B"] * 3


def test_balanced_with_odd_count_gives_the_remainder_to_the_lowest_label(fixture):
    X, y = fixture
    fs = FewShotConfig(n_shots=3, composition="balanced", reuse_examples=True)
    rendered = PromptRenderer("ACSIncome", PromptConfig(few_shot=fs), examples=(X, y)).render(X.loc[[1]])[0]
    assert sorted(letters(rendered.examples[0])) == ["A", "A", "B"]


def test_reused_examples_are_one_shared_block(nist):
    fs = FewShotConfig(n_shots=3, reuse_examples=True)
    batch = render_dataset(nist, PromptConfig(few_shot=fs), split="test")
    heads = {batch[i].rows_shared_text(0) for i in range(len(batch))}
    assert len(heads) == 1
    (head,) = heads
    assert letters(head) and all(t.startswith(head) for t in batch.full_texts(0))


def test_per_row_draws_are_seeded_by_seed_and_row_id(nist):
    fs = FewShotConfig(n_shots=3, seed=11)
    cfg = PromptConfig(few_shot=fs)
    X, y = nist.get_test()
    renderer = PromptRenderer(nist.task, cfg, examples=nist.get_train())
    full = renderer.render(X, y)
    part = renderer.render(X.iloc[[5, 2]], y.iloc[[5, 2]])  # other rows, other order: same draws per row
    assert part.full_texts(1)[0] == full.full_texts(1)[5]
    assert part.full_texts(0)[1] == full.full_texts(0)[2]
    again = PromptRenderer(nist.task, cfg, examples=nist.get_train()).render(X, y)
    assert list(again.full_texts(0)) == list(full.full_texts(0))
    distinct = {full[i].examples[0] for i in range(len(full))}
    assert len(distinct) > len(full) * 0.9  # rows get their own examples
    other_seed = PromptRenderer(nist.task, PromptConfig(few_shot=FewShotConfig(n_shots=3, seed=12)), examples=nist.get_train()).render(X, y)
    assert list(other_seed.full_texts(0)) != list(full.full_texts(0))


def test_a_pool_row_is_never_its_own_example():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"AGEP": rng.integers(17, 90, 30)}, index=pd.Index(range(100, 130)))
    y = rng.integers(0, 2, 30)
    pool = ExamplePool.make(X, y)
    for comp in ("random", "balanced"):
        positions = draw_for_rows(pool, FewShotConfig(n_shots=6, composition=comp), (0, 1), X.index.to_numpy())
        for own, drawn in enumerate(positions):
            assert own not in drawn
            assert len(set(drawn)) == 6


def test_numeric_few_shot_answers(fixture):
    X, y = fixture
    fs = FewShotConfig(n_shots=2, composition=(1, 1), example_order=(0, 1), reuse_examples=True)
    rendered = PromptRenderer("ACSIncome", PromptConfig(few_shot=fs, numeric_risk_prompting=True), examples=(X, y)).render(X.loc[[2]])[0]
    answers = re.findall(r"^Answer \(between 0 and 1\): (.*)$", rendered.full_text(), flags=re.M)
    assert answers == ["0.0", "1.0", "0."]
    assert rendered.n_slots == 1 and rendered.orderings == ()


def test_few_shot_more_than_available_rows_raises(fixture):
    X, y = fixture
    with pytest.raises(ConfigError, match="only 3 rows") as info:
        PromptRenderer("ACSIncome", PromptConfig(few_shot=FewShotConfig(n_shots=4)), examples=(X.iloc[:3], y.iloc[:3]))
    assert info.value.parameter == "few_shot"


def test_per_class_count_more_than_available_raises(fixture):
    X, y = fixture
    with pytest.raises(ConfigError, match="class 1") as info:
        PromptRenderer(
            "ACSIncome", PromptConfig(few_shot=FewShotConfig(n_shots=6, composition=(0, 6))), examples=(X, y)
        )
    assert info.value.parameter == "composition"


def test_counts_must_match_the_number_of_classes(fixture):
    X, y = fixture
    with pytest.raises(ConfigError, match="2 classes"):
        PromptRenderer("ACSIncome", PromptConfig(few_shot=FewShotConfig(n_shots=3, composition=(1, 1, 1))), examples=(X, y))


def test_few_shot_needs_examples():
    with pytest.raises(ConfigError, match="training rows") as info:
        PromptRenderer("ACSIncome", PromptConfig(few_shot=FewShotConfig(n_shots=2)))
    assert info.value.parameter == "examples"


def test_per_row_draws_are_uniform_over_the_pool():
    X = pd.DataFrame({"AGEP": np.arange(20) + 20}, index=pd.RangeIndex(1000, 1020))
    pool = ExamplePool.make(X, np.arange(20) % 2)
    positions = draw_for_rows(pool, FewShotConfig(n_shots=3), (0, 1), np.arange(6000))
    counts = np.bincount(positions.ravel(), minlength=20)
    assert counts.sum() == 18000 and np.all(np.abs(counts - 900) < 150)  # ~5 standard deviations
    assert np.all(np.sort(positions, axis=1)[:, 1:] != np.sort(positions, axis=1)[:, :-1])  # distinct per row
    first = np.bincount(positions[:, 0], minlength=20)
    assert np.all(np.abs(first - 300) < 90)  # every position of the list is uniform too


def test_row_streams_extend_without_changing_earlier_numbers():
    from folkscope.prompting import row_uniforms

    ids = np.array([3, 99, 12345])
    short = row_uniforms(7, ids, 2, 5)
    long = row_uniforms(7, ids, 2, 50)
    assert np.array_equal(long[:, :5], short) and np.all((long >= 0) & (long < 1))
    assert np.array_equal(row_uniforms(7, ids[[1]], 2, 5), short[[1]])
    assert not np.array_equal(row_uniforms(8, ids, 2, 5), short)
    assert not np.array_equal(row_uniforms(7, ids, 3, 5), short)
    text_ids = row_uniforms(7, np.array(["a", "b"], dtype=object), 0, 3)
    assert text_ids.shape == (2, 3) and not np.array_equal(text_ids[0], text_ids[1])
