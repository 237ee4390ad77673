"""Few-shot prompts: composition, order, hidden questions, reuse, per-row seeding, errors."""

from __future__ import annotations

import re
from dataclasses import replace

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
    first_examples,
    render_dataset,
    render_feature_block,
    shuffled_pool,
)
from folkscope.tasks import get_task

FS_DESCRIPTION = (  # folktexts' few-shot description
    "The following data corresponds to different survey respondents. The survey was conducted among US residents "
    "in 2018. Please answer each question based on the information provided. The data provided is enough to reach "
    "an approximate answer for each person.\n\n"
)

EXPECTED_TWO_SHOT = """The following data corresponds to different survey respondents. The survey was conducted among US residents in 2018. Please answer each question based on the information provided. The data provided is enough to reach an approximate answer for each person.

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

EXPECTED_TWO_SHOT_FLIPPED_HIDDEN = """The following data corresponds to different survey respondents. The survey was conducted among US residents in 2018. Please answer each question based on the information provided. The data provided is enough to reach an approximate answer for each person.

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
    # the answer letters follow the final question's ordering; folktexts shows the examples' options in the task's
    # own order all the same (so in ordering 1 they point at the wrong option), the other wordings in that ordering
    assert letters(rendered.full_text(1)) == ["B", "A"]
    assert rendered.full_text(1).count("A. Below $50,000.\nB. Above $50,000.\nAnswer: ") == 2
    codebook = PromptRenderer(small_task.with_wording("codebook"), PromptConfig(few_shot=fs), examples=pool).render(
        X.loc[[2]]
    )[0]
    assert codebook.full_text(1).count("A. Above $50,000.\nB. Below $50,000.\nAnswer: ") == 2
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
    fs = FewShotConfig(n_shots=6, composition="balanced", draw="seeded")
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
    fs = FewShotConfig(
        n_shots=3, seed=11, draw="seeded"
    )  # folktexts' rule would reuse them under order-bias correction
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
    other_seed = PromptRenderer(
        nist.task, replace(cfg, few_shot=replace(fs, seed=12)), examples=nist.get_train()
    ).render(X, y)
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
    rendered = PromptRenderer(
        "ACSIncome", PromptConfig(few_shot=fs, numeric_risk_prompting=True), examples=(X, y)
    ).render(X.loc[[2]])[0]
    answers = re.findall(r"^Answer \(between 0 and 1\): (.*)$", rendered.full_text(), flags=re.M)
    assert answers == ["0. 0", "0. 1", "0."]  # folktexts writes the label after the prefill
    assert rendered.n_slots == 1 and rendered.orderings == ()
    task = get_task("ACSIncome").with_wording("codebook")  # the other wordings write the probability
    corrected = PromptRenderer(task, PromptConfig(few_shot=fs, numeric_risk_prompting=True), examples=(X, y)).render(
        X.loc[[2]]
    )[0]
    assert re.findall(r"^Answer \(between 0 and 1\): (.*)$", corrected.full_text(), flags=re.M) == ["0.0", "1.0", "0."]


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
        PromptRenderer(
            "ACSIncome", PromptConfig(few_shot=FewShotConfig(n_shots=3, composition=(1, 1, 1))), examples=(X, y)
        )


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


def test_folktexts_draw_reuses_the_first_rows_under_order_bias_correction(fixture):
    """folktexts' Benchmark forces reuse when it corrects answer-order bias and then shows the first training rows."""
    X, y = fixture
    pool = ExamplePool.make(X, y)
    ids = np.array([9001, 9002, 9003])
    fs = FewShotConfig(n_shots=3)
    assert not fs.reuse_examples and fs.reused(True) and not fs.reused(False)
    assert draw_for_rows(pool, fs, (0, 1), ids, correct_order_bias=True).tolist() == [[0, 1, 2]]
    assert draw_for_rows(pool, replace(fs, reuse_examples=True), (0, 1), ids).tolist() == [[0, 1, 2]]
    assert draw_for_rows(pool, replace(fs, example_order=(2, 0, 1)), (0, 1), ids, correct_order_bias=True).tolist() == [
        [2, 0, 1]
    ]
    per_row = draw_for_rows(pool, fs, (0, 1), ids, correct_order_bias=False)  # no reuse: a seeded draw per row
    assert per_row.shape == (3, 3) and len({tuple(r) for r in per_row.tolist()}) > 1
    seeded = replace(fs, draw="seeded")  # folkscope's draw: order-bias correction does not force reuse
    assert not seeded.reused(True)
    assert draw_for_rows(pool, seeded, (0, 1), ids, correct_order_bias=True).shape == (3, 3)
    assert draw_for_rows(pool, replace(seeded, reuse_examples=True), (0, 1), ids).tolist() != [[0, 1, 2]]


def test_folktexts_draw_takes_the_first_rows_of_each_class(fixture):
    X, y = fixture
    pool = ExamplePool.make(X, y)
    fs = FewShotConfig(n_shots=3, composition=(1, 2), example_order=(0, 1, 2), reuse_examples=True)
    zeros, ones = np.flatnonzero(pool.y == 0), np.flatnonzero(pool.y == 1)
    assert first_examples(pool, fs, (0, 1)).tolist() == [zeros[0], ones[0], ones[1]]
    shuffled = first_examples(pool, replace(fs, example_order=None), (0, 1))  # shuffled once, by the seed
    assert sorted(shuffled.tolist()) == sorted([zeros[0], ones[0], ones[1]])
    assert shuffled.tolist() == first_examples(pool, replace(fs, example_order=None), (0, 1)).tolist()


def test_draw_is_checked_named_and_saved():
    with pytest.raises(ConfigError, match="draw must be one of folktexts, seeded") as info:
        FewShotConfig(n_shots=2, draw="random")
    assert info.value.parameter == "draw"
    seeded = FewShotConfig(n_shots=2, draw="seeded")
    assert seeded.short_name == "fs2-seeded" and FewShotConfig(n_shots=2).short_name == "fs2"
    assert FewShotConfig.from_dict(seeded.to_dict()) == seeded
    assert PromptConfig(few_shot=seeded).fingerprint() != PromptConfig(few_shot=FewShotConfig(n_shots=2)).fingerprint()


def test_datasets_give_their_training_rows_in_a_seeded_random_order(nist):
    """folktexts' first training rows are a random sample (its split is in random order); folkscope's split lists
    rows by id, so render_dataset and the benchmark shuffle the pool by the few-shot seed first."""
    X, y = nist.get_train()
    shuffled, labels = shuffled_pool(X, y, seed=42)
    assert sorted(shuffled.index) == sorted(X.index) and list(shuffled.index) != list(X.index)
    assert (labels == y.loc[shuffled.index].to_numpy()).all()
    batch = render_dataset(nist, PromptConfig(few_shot=FewShotConfig(n_shots=2)), split="test")
    first = render_feature_block(shuffled.iloc[:1], nist.task, PromptConfig(), head="Information:\n", tail="\n")[0]
    assert batch.examples_shared and batch.examples[0].startswith(first)
