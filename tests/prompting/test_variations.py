"""Every --variation key: parsing (with fuzzing) and its effect on the rendered text.

The layouts are folktexts 0.7.1's (checked against folktexts itself in
tests/parity/test_prompts.py): bullet and comma show the label as written
("- age is: ..."), only the connector ":" attaches to the label, the custom
prefix stands on its own line under the task description, the custom suffix
follows the answer prefill, and without the question there are no options.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.data import load_bundled
from folkscope.errors import ConfigError
from folkscope.prompting import (
    VARIATION_KEYS,
    PromptConfig,
    PromptRenderer,
    format_variations,
    parse_variations,
)
from folkscope.tasks import get_task

DESCRIPTION = (
    "The following data corresponds to a survey respondent. The survey was conducted among US residents in 2018. "
    "Please answer the question based on the information provided. The data provided is enough to reach an "
    "approximate answer.\n\n"
)
QUESTION = "Question: What is this person's estimated yearly income?\n"
OPTIONS = "A. Below $50,000.\nB. Above $50,000.\n"


@pytest.fixture(scope="module")
def row_1():
    frame = load_bundled("acs-income-10")
    return frame.loc[[1]].drop(columns="PINCP>50000")


@pytest.fixture(scope="module")
def small_task():
    # row 1: AGEP 18, COW 1, SEX 2
    return get_task("ACSIncome").with_wording("codebook").with_features(["AGEP", "COW", "SEX"])


def render(task, X, **cfg):
    return PromptRenderer(task, PromptConfig(**cfg)).render(X)[0]


# -- parsing ---------------------------------------------------------------------------
def test_parse_every_key():
    parsed = parse_variations(
        [
            "format=comma",
            "connector==",
            "granularity=low",
            "order=AGEP,SCHL",
            "custom_prompt_prefix=Be careful.",
            "custom_prompt_suffix=Answer with one letter.",
            "show_question=false",
        ]
    )
    assert parsed == {
        "format": "comma",
        "connector": "=",
        "granularity": "low",
        "order": ("AGEP", "SCHL"),
        "custom_prompt_prefix": "Be careful.",
        "custom_prompt_suffix": "Answer with one letter.",
        "show_question": False,
    }
    assert set(parsed) == set(VARIATION_KEYS)
    cfg = PromptConfig().with_variations(format_variations(parsed))
    assert cfg.variations() == parsed


@pytest.mark.parametrize(
    ("item", "parameter"),
    [
        ("colour=red", "variation"),  # unknown key
        ("format", "variation"),  # no '='
        ("format=table", "variation.format"),
        ("granularity=high", "variation.granularity"),
        ("show_question=maybe", "variation.show_question"),
        ("order=", "variation.order"),
        ("order=AGEP,,SCHL", "variation.order"),
        ("order=AGE P", "variation.order"),
        ("connector=", "variation.connector"),
        ("connector= is", "variation.connector"),
    ],
)
def test_malformed_variations_raise_config_error(item, parameter):
    with pytest.raises(ConfigError) as info:
        parse_variations([item])
    assert info.value.parameter == parameter


def test_repeated_key_raises():
    with pytest.raises(ConfigError, match="twice"):
        parse_variations(["format=bullet", "format=comma"])


@pytest.mark.parametrize("text,value", [("true", True), ("False", False), ("1", True), ("no", False), ("ON", True)])
def test_show_question_spellings(text, value):
    assert parse_variations([f"show_question={text}"]) == {"show_question": value}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=5))
def test_fuzz_parser_only_raises_config_error(items):
    try:
        parsed = parse_variations(items)
    except ConfigError:
        return
    assert set(parsed) <= set(VARIATION_KEYS)
    PromptConfig(**parsed)  # whatever parses builds a valid config


_names = st.from_regex(r"[A-Z][A-Z0-9_]{0,6}", fullmatch=True)
_values = st.fixed_dictionaries(
    {},
    optional={
        "format": st.sampled_from(["textbullet", "bullet", "comma", "text"]),
        "connector": st.text(min_size=1, max_size=5).filter(
            lambda s: s == s.strip() and "\n" not in s and "\r" not in s
        ),
        "granularity": st.sampled_from(["original", "low"]),
        "order": st.lists(_names, min_size=1, max_size=4, unique=True).map(tuple),
        "custom_prompt_prefix": st.text(max_size=20),
        "custom_prompt_suffix": st.text(max_size=20),
        "show_question": st.booleans(),
    },
)


@settings(max_examples=200, deadline=None)
@given(_values)
def test_fuzz_format_then_parse_round_trips(values):
    assert parse_variations(format_variations(values)) == values


# -- rendering ---------------------------------------------------------------------------
def test_format_textbullet_default(small_task, row_1):
    assert render(small_task, row_1).row_text == (
        "Information:\n"
        "- The age is: 18 years old.\n"
        "- The class of worker is: Employee of a private for-profit company or business.\n"
        "- The sex is: Female.\n"
        "\n" + QUESTION
    )


def test_format_bullet(small_task, row_1):
    assert render(small_task, row_1, format="bullet").row_text == (
        "Information:\n"
        "- age is: 18 years old\n"
        "- class of worker is: Employee of a private for-profit company or business\n"
        "- sex is: Female\n"
        "\n" + QUESTION
    )


def test_format_comma(small_task, row_1):
    assert render(small_task, row_1, format="comma").row_text == (
        "Information:\n"
        "age is: 18 years old, class of worker is: Employee of a private for-profit company or business, "
        "sex is: Female\n"
        "\n" + QUESTION
    )


def test_format_text(small_task, row_1):
    assert render(small_task, row_1, format="text").row_text == (
        "Information:\n"
        "The age is: 18 years old. The class of worker is: Employee of a private for-profit company or business. "
        "The sex is: Female.\n"
        "\n" + QUESTION
    )


@pytest.mark.parametrize(
    ("connector", "fmt", "line"),
    [
        ("=", "textbullet", "- The age = 18 years old."),
        ("is", "textbullet", "- The age is 18 years old."),
        (":", "textbullet", "- The age: 18 years old."),
        ("=", "bullet", "- age = 18 years old"),
        ("->", "comma", "age -> 18 years old, "),
        (",", "textbullet", "- The age , 18 years old."),  # only ":" attaches to the label, as in folktexts
        (":-", "bullet", "- age :- 18 years old"),
        ("equals", "text", "The age equals 18 years old. "),
    ],
)
def test_connector(small_task, row_1, connector, fmt, line):
    text = render(small_task, row_1, connector=connector, format=fmt).row_text
    assert text.splitlines()[1].startswith(line)


def test_granularity_low_every_acsincome_column(row_1):
    text = render(get_task("ACSIncome").with_wording("codebook"), row_1, granularity="low").row_text
    assert text == (
        "Information:\n"
        "- The age is: 18 to 24 years old.\n"
        "- The class of worker is: Private sector employee.\n"
        "- The highest educational attainment is: Some college, no degree.\n"
        "- The marital status is: Never married.\n"
        "- The occupation is: Sales.\n"
        "- The place of birth is: United States.\n"
        "- The relationship to the reference person in the household is: Group quarters.\n"
        "- The usual number of hours worked per week is: 20 to 34 hours.\n"
        "- The sex is: Female.\n"
        "- The race is: Black or African American.\n"
        "\n" + QUESTION
    )


def test_order_puts_named_columns_first(small_task, row_1):
    lines = render(small_task, row_1, order=("SEX", "AGEP")).row_text.splitlines()
    assert lines[1:4] == [
        "- The sex is: Female.",
        "- The age is: 18 years old.",
        "- The class of worker is: Employee of a private for-profit company or business.",
    ]


def test_order_with_unknown_column_raises_when_bound_to_the_task(small_task):
    with pytest.raises(ConfigError, match="SCHL") as info:
        PromptRenderer(small_task, PromptConfig(order=("SCHL",)))
    assert info.value.parameter == "order"


def test_custom_prompt_prefix_and_suffix(small_task, row_1):
    rendered = render(
        small_task, row_1, custom_prompt_prefix="Think like an economist.", custom_prompt_suffix="Reply with A or B."
    )
    head = DESCRIPTION.removesuffix("\n")  # the prefix is on the line after the description, then one blank line
    assert rendered.prefix == head + "Think like an economist.\n\n"
    assert rendered.suffix(0) == OPTIONS + "Answer:Reply with A or B."  # folktexts: right after the prefill
    assert rendered.full_text(0).startswith(head + "Think like an economist.\n\nInformation:\n- The age is")
    assert rendered.user_text(0).endswith("B. Above $50,000.Reply with A or B.")  # chat: it ends the user turn
    two_lines = render(small_task, row_1, custom_prompt_prefix="Line one.\nLine two.\n")
    assert two_lines.prefix == head + "Line one.\nLine two.\n\n"  # a prefix ending its line gets no second break


def test_show_question_false_drops_question_and_options(small_task, row_1):
    rendered = render(small_task, row_1, show_question=False)
    assert "Question:" not in rendered.full_text(0) and "A. " not in rendered.full_text(1)
    assert rendered.full_text(0).endswith("- The sex is: Female.\n\nAnswer:")
    assert rendered.user_text(0).endswith(
        "- The sex is: Female.\n\nAnswer:"
    )  # chat: the prefill stays in the user turn


def test_show_question_false_numeric(small_task, row_1):
    rendered = render(small_task, row_1, show_question=False, numeric_risk_prompting=True)
    assert rendered.full_text().endswith("- The sex is: Female.\n\nAnswer (between 0 and 1): 0.")
