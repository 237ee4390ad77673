"""The ACSIncome prompt in the Census codebook wording (`--wording codebook`), character for character, for the 10 bundled real rows.

Expected texts are written by hand from the spec's prompt frame
(``shared/spec/risk-scores.md``) and the codebook labels in
``tasks/resources/acs_columns.json`` and ``codes/OCCP.txt`` / ``codes/POBP.txt``.
"""

from __future__ import annotations

import pytest

from folkscope.data import load_bundled
from folkscope.prompting import PromptConfig, PromptRenderer
from folkscope.tasks import get_task

HEAD = (
    "The following data corresponds to a survey respondent. The survey was conducted among US residents in 2018. "
    "Please answer the question based on the information provided. The data provided is enough to reach an "
    "approximate answer.\n"
    "\n"
    "Information:\n"
)
QUESTION = "\nQuestion: What is this person's estimated yearly income?\n"
ORDER_AB = "A. Below $50,000.\nB. Above $50,000.\nAnswer:"
ORDER_BA = "A. Above $50,000.\nB. Below $50,000.\nAnswer:"

FEATURES = {
    1: (
        "- The age is: 18 years old.\n"
        "- The class of worker is: Employee of a private for-profit company or business.\n"
        "- The highest educational attainment is: Some college, but less than 1 year.\n"
        "- The marital status is: Never married.\n"
        "- The occupation is: Cashiers.\n"
        "- The place of birth is: Georgia.\n"
        "- The relationship to the reference person in the household is: Living in non-institutional group quarters.\n"
        "- The usual number of hours worked per week is: 21 hours.\n"
        "- The sex is: Female.\n"
        "- The race is: Black or African American.\n"
    ),
    2: (
        "- The age is: 53 years old.\n"
        "- The class of worker is: Federal government employee.\n"
        "- The highest educational attainment is: GED or alternative credential.\n"
        "- The marital status is: Never married.\n"
        "- The occupation is: Orderlies and Psychiatric Aides.\n"
        "- The place of birth is: Indiana.\n"
        "- The relationship to the reference person in the household is: Living in institutional group quarters.\n"
        "- The usual number of hours worked per week is: 40 hours.\n"
        "- The sex is: Male.\n"
        "- The race is: White.\n"
    ),
    8: (
        "- The age is: 41 years old.\n"
        "- The class of worker is: Employee of a private for-profit company or business.\n"
        "- The highest educational attainment is: Regular high school diploma.\n"
        "- The marital status is: Never married.\n"
        "- The occupation is: Industrial And Refractory Machinery Mechanics.\n"
        "- The place of birth is: Alabama.\n"
        "- The relationship to the reference person in the household is: Living in non-institutional group quarters.\n"
        "- The usual number of hours worked per week is: 40 hours.\n"
        "- The sex is: Male.\n"
        "- The race is: White.\n"
    ),
    9: (
        "- The age is: 18 years old.\n"
        "- The class of worker is: Self-employed in own not incorporated business, professional practice or farm.\n"
        "- The highest educational attainment is: Some college, but less than 1 year.\n"
        "- The marital status is: Never married.\n"
        "- The occupation is: Coaches and Scouts.\n"
        "- The place of birth is: Alabama.\n"
        "- The relationship to the reference person in the household is: Living in non-institutional group quarters.\n"
        "- The usual number of hours worked per week is: 2 hours.\n"
        "- The sex is: Female.\n"
        "- The race is: White.\n"
    ),
    14: (
        "- The age is: 21 years old.\n"
        "- The class of worker is: Federal government employee.\n"
        "- The highest educational attainment is: 1 or more years of college credit, no degree.\n"
        "- The marital status is: Never married.\n"
        "- The occupation is: Police Officers.\n"
        "- The place of birth is: Florida.\n"
        "- The relationship to the reference person in the household is: Living in non-institutional group quarters.\n"
        "- The usual number of hours worked per week is: 50 hours.\n"
        "- The sex is: Male.\n"
        "- The race is: White.\n"
    ),
    424: (
        "- The age is: 52 years old.\n"
        "- The class of worker is: Employee of a private not-for-profit, tax-exempt or charitable organization.\n"
        "- The highest educational attainment is: 1 or more years of college credit, no degree.\n"
        "- The marital status is: Divorced.\n"
        "- The occupation is: Social And Community Service Managers.\n"
        "- The place of birth is: Alabama.\n"
        "- The relationship to the reference person in the household is: Living in non-institutional group quarters.\n"
        "- The usual number of hours worked per week is: 40 hours.\n"
        "- The sex is: Male.\n"
        "- The race is: Black or African American.\n"
    ),
    614: (
        "- The age is: 25 years old.\n"
        "- The class of worker is: Employee of a private for-profit company or business.\n"
        "- The highest educational attainment is: Grade 9.\n"
        "- The marital status is: Never married.\n"
        "- The occupation is: Door-To-Door Sales Workers, News And Street Vendors, And Related Workers.\n"
        "- The place of birth is: Mississippi.\n"
        "- The relationship to the reference person in the household is: Living in institutional group quarters.\n"
        "- The usual number of hours worked per week is: 40 hours.\n"
        "- The sex is: Male.\n"
        "- The race is: White.\n"
    ),
    623: (
        "- The age is: 52 years old.\n"
        "- The class of worker is: Employee of a private not-for-profit, tax-exempt or charitable organization.\n"
        "- The highest educational attainment is: 1 or more years of college credit, no degree.\n"
        "- The marital status is: Divorced.\n"
        "- The occupation is: Social And Community Service Managers.\n"
        "- The place of birth is: Alabama.\n"
        "- The relationship to the reference person in the household is: Living in non-institutional group quarters.\n"
        "- The usual number of hours worked per week is: 40 hours.\n"
        "- The sex is: Male.\n"
        "- The race is: Black or African American.\n"
    ),
    656: (
        "- The age is: 64 years old.\n"
        "- The class of worker is: Employee of a private for-profit company or business.\n"
        "- The highest educational attainment is: Some college, but less than 1 year.\n"
        "- The marital status is: Divorced.\n"
        "- The occupation is: First-Line Supervisors Of Production And Operating Workers.\n"
        "- The place of birth is: Mexico.\n"
        "- The relationship to the reference person in the household is: Living in institutional group quarters.\n"
        "- The usual number of hours worked per week is: 35 hours.\n"
        "- The sex is: Male.\n"
        "- The race is: White.\n"
    ),
    766: (
        "- The age is: 42 years old.\n"
        "- The class of worker is: Employee of a private for-profit company or business.\n"
        "- The highest educational attainment is: GED or alternative credential.\n"
        "- The marital status is: Divorced.\n"
        "- The occupation is: Electricians.\n"
        "- The place of birth is: Alabama.\n"
        "- The relationship to the reference person in the household is: Living in institutional group quarters.\n"
        "- The usual number of hours worked per week is: 40 hours.\n"
        "- The sex is: Male.\n"
        "- The race is: White.\n"
    ),
}
LABELS = {1: 0, 2: 0, 8: 0, 9: 0, 14: 0, 424: 1, 614: 1, 623: 1, 656: 1, 766: 1}

ROW_1_LITERAL = """The following data corresponds to a survey respondent. The survey was conducted among US residents in 2018. Please answer the question based on the information provided. The data provided is enough to reach an approximate answer.

Information:
- The age is: 18 years old.
- The class of worker is: Employee of a private for-profit company or business.
- The highest educational attainment is: Some college, but less than 1 year.
- The marital status is: Never married.
- The occupation is: Cashiers.
- The place of birth is: Georgia.
- The relationship to the reference person in the household is: Living in non-institutional group quarters.
- The usual number of hours worked per week is: 21 hours.
- The sex is: Female.
- The race is: Black or African American.

Question: What is this person's estimated yearly income?
A. Below $50,000.
B. Above $50,000.
Answer:"""


@pytest.fixture(scope="module")
def fixture_rows():
    frame = load_bundled("acs-income-10")
    return frame.drop(columns="PINCP>50000"), frame["PINCP>50000"]


@pytest.fixture(scope="module")
def batch(fixture_rows):
    X, y = fixture_rows
    return PromptRenderer(get_task("ACSIncome").with_wording("codebook"), PromptConfig()).render(X, y)


def test_row_1_matches_the_spec_frame_literally(batch):
    assert batch.full_texts(0)[0] == ROW_1_LITERAL
    assert batch[0].full_text() == ROW_1_LITERAL


@pytest.mark.parametrize("row_id", sorted(FEATURES))
def test_default_prompt_of_each_fixture_row(batch, row_id):
    i = list(batch.row_ids).index(row_id)
    rendered = batch[i]
    assert rendered.row_id == row_id
    assert rendered.full_text(0) == HEAD + FEATURES[row_id] + QUESTION + ORDER_AB
    assert rendered.full_text(1) == HEAD + FEATURES[row_id] + QUESTION + ORDER_BA
    assert rendered.label == LABELS[row_id]
    # the answer letter follows the ordering: label 0 is "Below" (A in the task's order)
    assert rendered.answer(0) == "AB"[LABELS[row_id]]
    assert rendered.answer(1) == "BA"[LABELS[row_id]]


def test_sharing_split_points(batch):
    rendered = batch[0]
    prefix = HEAD[: -len("Information:\n")]
    assert rendered.prefix == prefix  # task description, shared by every row
    assert rendered.row_text == "Information:\n" + FEATURES[1] + QUESTION  # shared by both orderings
    assert rendered.suffixes == (ORDER_AB, ORDER_BA) == batch.suffixes
    assert batch.prefix == prefix and batch.row_texts[0] == rendered.row_text
    assert rendered.row_shared_text == prefix + rendered.row_text
    assert rendered.rows_shared_text(1) == prefix
    for o in (0, 1):
        assert rendered.full_text(o) == rendered.prefix + rendered.row_text + rendered.suffix(o)
    shared, rests = rendered.ordering_split()
    assert shared == prefix + rendered.row_text and shared.endswith("\n") and rests == (ORDER_AB, ORDER_BA)
    assert [o.candidates for o in rendered.orderings] == [(" A", " B"), (" A", " B")]
    assert [o.labels for o in rendered.orderings] == [(0, 1), (1, 0)]


def test_prompt_ends_on_answer_prefill_without_trailing_space(batch):
    for text in batch.full_texts(0):
        assert text.endswith("\nAnswer:")


def test_without_order_bias_correction_there_is_one_ordering(fixture_rows):
    X, y = fixture_rows
    batch = PromptRenderer(
        get_task("ACSIncome").with_wording("codebook"), PromptConfig(correct_order_bias=False)
    ).render(X, y)
    assert batch.n_slots == 1 and len(batch.orderings) == 1
    assert batch.full_texts(0)[0] == ROW_1_LITERAL


def test_render_row_equals_bulk_render(fixture_rows, batch):
    X, _ = fixture_rows
    renderer = PromptRenderer(get_task("ACSIncome").with_wording("codebook"))
    for i in range(len(X)):
        single = renderer.render_row(X.iloc[i])
        assert single.row_id == X.index[i]
        assert single.full_text(1) == batch.full_texts(1)[i]
