"""Question modes (numeric, chain-of-thought), answer parsing, orderings and other parts' prompt shapes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.data import load_bundled
from folkscope.engine import ChatPrompt
from folkscope.engine import Message as ChatMessage
from folkscope.errors import ConfigError
from folkscope.prompting import (
    LIKELIHOOD_BINS,
    PromptConfig,
    PromptRenderer,
    answer_orderings,
    likelihood_prompt,
    numeric_problem_prompt,
    plain_text,
    qa_prompt,
)
from folkscope.readout import parse_probability, strip_thinking
from folkscope.tasks import get_task

ROW_1_FEATURES_TAIL = "- The race is: Black or African American.\n\n"


@pytest.fixture(scope="module")
def X():
    return load_bundled("acs-income-10").drop(columns="PINCP>50000")


def test_numeric_prompt_ends_with_prefilled_zero_point(X):
    rendered = PromptRenderer(
        get_task("ACSIncome").with_wording("codebook"), PromptConfig(numeric_risk_prompting=True)
    ).render(X)[0]
    assert rendered.full_text().endswith(
        ROW_1_FEATURES_TAIL
        + "Question: What is the probability that this person's estimated yearly income is above $50,000?\n"
        + "Answer (between 0 and 1): 0."
    )
    assert rendered.orderings == () and rendered.n_slots == 1 and rendered.mode == "numeric"
    assert rendered.to_prompt() == rendered.full_text()


def test_cot_prompt_asks_for_a_final_probability_line(X):
    cfg = PromptConfig(cot_prompting=True, system_prompt="You are a careful demographer.")
    rendered = PromptRenderer(get_task("ACSIncome").with_wording("codebook"), cfg).render(X)[0]
    text = rendered.full_text()
    assert text.endswith(
        ROW_1_FEATURES_TAIL
        + "Question: What is the probability that this person's estimated yearly income is above $50,000?\n\n"
        + "Think step-by-step about the factors that could influence the answer to this question. After reasoning "
        + "through the relevant information, provide your final probability estimate.\n\nYour response MUST end with "
        + "your probability estimate in the following format:\nProbability: X%\nwhere X is a number between 0 and 100."
        + "\n\nReasoning:"
    )
    prompt = rendered.to_prompt()
    assert isinstance(prompt, ChatPrompt) and prompt.prefill == "" and prompt.enable_thinking is False
    assert prompt.messages == (
        ChatMessage("system", "You are a careful demographer."),
        ChatMessage("user", text.rstrip("\n")),
    )
    # folktexts' chain of thought has no system prompt of its own
    default = PromptRenderer(get_task("ACSIncome"), PromptConfig(cot_prompting=True)).render(X)[0].to_prompt()
    assert [m.role for m in default.messages] == ["user"] and default.prefill == ""


def test_enable_thinking_is_carried_to_the_prompt(X):
    with pytest.warns(UserWarning):
        cfg = PromptConfig(enable_thinking=True)
    prompt = PromptRenderer(get_task("ACSIncome").with_wording("codebook"), cfg).render(X)[0].to_prompt()
    assert prompt.enable_thinking is True


def test_chat_multiple_choice_prompt_structure(X):
    cfg = PromptConfig(use_chat_template=True, system_prompt="Be a demographer.")
    batch = PromptRenderer(get_task("ACSIncome").with_wording("codebook"), cfg).render(X)
    prompt = batch[0].to_prompt(1)
    assert [m.role for m in prompt.messages] == ["system", "user"]
    user = prompt.messages[1].content
    assert user.endswith(
        "Question: What is this person's estimated yearly income?\nA. Above $50,000.\nB. Below $50,000."
    )
    assert prompt.prefill == "If had to select one of the options, my answer would be"  # folktexts' (sic)
    assert batch.user_texts(1)[0] == user
    assert (
        PromptRenderer(
            get_task("ACSIncome").with_wording("codebook"),
            PromptConfig(use_chat_template=True, chat_prompt="My answer is"),
        )
        .render(X)[0]
        .to_prompt()
        .prefill
        == "My answer is"
    )


def test_chat_numeric_user_turn_has_no_trailing_newline(X):
    batch = PromptRenderer(
        get_task("ACSIncome").with_wording("codebook"),
        PromptConfig(use_chat_template=True, numeric_risk_prompting=True),
    ).render(X)
    prompt = batch[0].to_prompt()
    assert prompt.messages[-1].content.endswith("above $50,000?")
    assert prompt.prefill == "Answer (between 0 and 1): 0."
    assert batch.user_texts()[0] == prompt.messages[-1].content


def test_other_task_uses_its_own_question_choices_and_year():
    task = get_task("NISTPoverty").with_features(["AGEP"])
    import pandas as pd

    rendered = PromptRenderer(task).render(pd.DataFrame({"AGEP": [30]}))[0]
    assert "conducted among US residents in 2019." in rendered.prefix
    assert rendered.suffix(0) == (
        "A. No, this person's income is at or above the poverty line.\n"
        "B. Yes, this person's income is below the poverty line.\n"
        "Answer:"
    )


# -- answers ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>It could be 90%.</think>\nProbability: 40%", "Probability: 40%"),
        ("I think.\n</think>\n\nProbability: 12%", "Probability: 12%"),  # opening tag was in the prompt
        ("<think>a</think> b <think>c</think> Probability: 5%", "Probability: 5%"),
        ("Answer first. <think>never closed", "Answer first."),
        ("No thinking. Probability: 3%", "No thinking. Probability: 3%"),
    ],
)
def test_strip_thinking(text, expected):
    assert strip_thinking(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Reasoning...\nProbability: 35%", 0.35),
        ("Probability: 35 %", 0.35),
        ("**Probability:** 7.5%", 0.075),
        ("probability = 0.8", 0.8),
        ("Probability: 62 percent", 0.62),
        ("Probability: 10%\nOn reflection, Probability: 20%", 0.20),
        ("<think>Probability: 90%</think>Probability: 30%", 0.30),
        ("Probability: 100%", 1.0),
        ("Probability: 0%", 0.0),
        ("Probability: 150%", None),
        ("I cannot say.", None),
        ("<think>Probability: 90%", None),  # cut off while thinking
        ("Probability -30%", None),  # a negative probability is no answer (was read as 0.30)
        ("Probability: \u221230%", None),
        ("Probability - 30%", 0.30),  # a dash as separator
        ("Probability: 3/4", 0.75),  # a fraction (was read as 0.03)
        ("Probability: 1 / 8", 0.125),
        ("Probability: 3/0", None),
        ("The probability is 40%.", 0.40),
        ("probability of 12 %", 0.12),
        ("Probability: 45%, though the probability could change", 0.45),
        ("Probability: isolated 5", None),
    ],
)
def test_parse_probability(text, expected):
    got = parse_probability(text)
    assert got == pytest.approx(expected) if expected is not None else got is None


#: text built from the pieces the parser reacts to, so the fuzzer reaches its branches instead of plain noise
_PIECES = st.sampled_from(
    [
        "Probability",
        "probability",
        "PROBABILITY",
        " ",
        "  ",
        "\n",
        "\t",
        "*",
        "**",
        ":",
        "=",
        "-",
        "is",
        "of",
        "%",
        "percent",
        "/",
        ".",
        ",",
        "0",
        "3",
        "45",
        "100",
        "150",
        "x",
        "\u2212",
        "<think>",
        "</think>",
    ]
)


@settings(max_examples=2000, deadline=200)
@given(st.one_of(st.text(max_size=300), st.lists(_PIECES, max_size=120).map("".join)))
def test_parse_probability_never_raises_and_stays_in_range(text):
    """2,000 fuzzed answers, each read within 200 ms (the old regex backtracked for minutes on some)."""
    got = parse_probability(text)
    assert got is None or 0.0 <= got <= 1.0


@pytest.mark.parametrize(
    "blowup",
    [
        "Probability" + " " * 100_000 + "x",
        "probability " * 50_000,
        "Probability: " + "1" * 100_000 + "x",
        "Probability is is is " * 20_000,
        "**" * 50_000 + "Probability" + "*" * 50_000,
    ],
)
def test_parse_probability_is_linear_on_pathological_generations(blowup):
    """'Probability' + 500 spaces + 'x' took 74 s with the backtracking regex; 100,000 must take well under a second."""
    import time

    start = time.perf_counter()
    parse_probability(blowup)
    assert time.perf_counter() - start < 1.0


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 100), st.text(alphabet="abc .\n", max_size=40))
def test_parse_probability_reads_the_requested_format(pct, noise):
    assert parse_probability(f"{noise}\nProbability: {pct}%") == pytest.approx(pct / 100)


# -- orderings and shapes -----------------------------------------------------------------------
def test_orderings_for_more_choices():
    texts = ["a", "b", "c"]
    assert [o.key for o in answer_orderings(texts)] == ["012", "021", "102", "120", "201", "210"]
    cyclic = answer_orderings(texts, scheme="cyclic")
    assert [o.texts for o in cyclic] == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    assert cyclic[1].letter_of(0) == "C" and cyclic[1].label_of("A") == 1
    capped = answer_orderings([str(i) for i in range(6)], max_orderings=120, seed=1)
    assert len(capped) == 120 and len({o.permutation for o in capped}) == 120
    assert capped[0].permutation == tuple(range(6))
    assert [o.permutation for o in answer_orderings([str(i) for i in range(6)], max_orderings=120, seed=1)] == [
        o.permutation for o in capped
    ]


def test_renderer_with_cyclic_orderings_and_cap(X):
    batch = PromptRenderer(get_task("ACSIncome").with_wording("codebook"), PromptConfig(max_orderings=1)).render(X)
    assert batch.n_slots == 1


def test_qa_prompt_for_epidemiology():
    p = qa_prompt("Has a person aged 25 ever used marijuana?", ["Yes", "No", "Refused"])
    assert p.n_slots == 6
    assert p.full_text(0) == (
        "Question: Has a person aged 25 ever used marijuana?\nA. Yes.\nB. No.\nC. Refused.\nAnswer:"
    )
    assert p.row_shared_text == "Question: Has a person aged 25 ever used marijuana?\n"  # shared by all orderings
    many = qa_prompt("Q?", [str(i) for i in range(7)])
    assert many.n_slots == 120


def test_likelihood_prompt_has_22_bins():
    assert len(LIKELIHOOD_BINS) == 22
    assert [(b.letter, b.text) for b in LIKELIHOOD_BINS[:3]] == [("A", "0%"), ("B", "0-5%"), ("C", "5-10%")]
    assert (LIKELIHOOD_BINS[-2].letter, LIKELIHOOD_BINS[-2].text, LIKELIHOOD_BINS[-1].text) == ("U", "95-100%", "100%")
    assert [b.value for b in (LIKELIHOOD_BINS[0], LIKELIHOOD_BINS[1], LIKELIHOOD_BINS[-1])] == [0.0, 0.025, 1.0]
    text = likelihood_prompt("What is the probability that a person aged 25 smokes?").full_text()
    assert text.startswith("Question: What is the probability that a person aged 25 smokes?\nA. 0%\nB. 0-5%\n")
    assert text.endswith("U. 95-100%\nV. 100%\nAnswer:")


def test_numeric_problem_prompt():
    scenario = "A bag holds 17 red and 99 blue marbles. I draw one without looking. The marble is"
    assert numeric_problem_prompt(scenario) == scenario
    chat = numeric_problem_prompt(scenario, instruction="Answer with the colour only.")
    assert chat.messages == (ChatMessage("user", "Answer with the colour only."),) and chat.prefill == scenario


def test_prompt_object_validation():
    """The prompt layer hands out the engine's own prompt type; it checks itself when built."""
    with pytest.raises(ConfigError):
        ChatPrompt(())
    with pytest.raises(ConfigError):
        ChatPrompt("just text")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        ChatMessage("robot", "hi")
    p = ChatPrompt(({"role": "user", "content": "hi"},), prefill="A:")  # type: ignore[arg-type]
    assert p.messages == (ChatMessage("user", "hi"),)
    assert plain_text(p) == "hi\n\nA:" and plain_text("t") == "t"
