"""The fixed wording of survey prompts, in one place.

The zero-shot task description and the ``Information:`` / ``Question:`` /
``Answer:`` frame follow the paper's prompt verbatim (spec
``risk-scores.md``); the few-shot description, the chain-of-thought
instruction, and the chat template's default system prompts and assistant
prefills are folktexts 0.7.1's (MIT; reproduced for parity). Changing any
text here changes prompts, so bump
:data:`~folkscope.prompting.config.PROMPT_FORMAT_VERSION` with it.
"""

from __future__ import annotations

__all__ = [
    "ANSWER_PREFILL",
    "CHAT_PREFILLS",
    "CHAT_SYSTEM_PROMPTS",
    "COT_INSTRUCTION",
    "INFO_HEADER",
    "NUMERIC_ANSWER_LEAD",
    "NUMERIC_PREFILL",
    "QUESTION_HEADER",
    "few_shot_description",
    "task_description",
]

#: the line above a row's features in a prompt
INFO_HEADER = "Information:\n"
#: what starts the question line
QUESTION_HEADER = "Question: "
#: Multiple-choice answer prefill; the scored continuation is " A", " B", ...
ANSWER_PREFILL = "Answer:"
#: Lead-in of a numeric answer (solved few-shot examples end it with "0.0" or "1.0").
NUMERIC_ANSWER_LEAD = "Answer (between 0 and 1):"
#: Numeric answer prefill; the digits that follow are the probability.
NUMERIC_PREFILL = f"{NUMERIC_ANSWER_LEAD} 0."
#: Chain-of-thought instruction, a paragraph after the question; the model's reasoning follows ``Reasoning:``.
COT_INSTRUCTION = (
    "Think step-by-step about the factors that could influence the answer to this question. After reasoning "
    "through the relevant information, provide your final probability estimate.\n\n"
    "Your response MUST end with your probability estimate in the following format:\n"
    "Probability: X%\n"
    "where X is a number between 0 and 100.\n\n"
    "Reasoning:"
)

#: The chat template's default system prompt per question mode (chain of thought has none of its own).
CHAT_SYSTEM_PROMPTS: dict[str, str | None] = {
    "multiple_choice": "You are a helpful assistant. You answer multiple-choice questions based on the information "
    "provided. Respond with a single answer choice.\n",
    "numeric": "You are a helpful assistant. You provide numeric probability estimates based on the information "
    "provided.\n",
    "cot": None,
}
#: The chat template's default assistant prefill per question mode (the model continues it; sic "If had to").
CHAT_PREFILLS: dict[str, str] = {
    "multiple_choice": "If had to select one of the options, my answer would be",
    "numeric": NUMERIC_PREFILL,
    "cot": "",
}

_ANSWER_SENTENCES = (
    "Please answer the question based on the information provided. "
    "The data provided is enough to reach an approximate answer."
)


def _survey_sentence(survey_year: int | None) -> str:
    if survey_year is None:
        return "The survey was conducted among US residents."
    return f"The survey was conducted among US residents in {survey_year}."


def task_description(survey_year: int | None) -> str:
    """The zero-shot task description (one paragraph, no trailing newline).

    Examples
    --------
    >>> task_description(2018)[:60]
    'The following data corresponds to a survey respondent. The s'
    """
    return f"The following data corresponds to a survey respondent. {_survey_sentence(survey_year)} {_ANSWER_SENTENCES}"


def few_shot_description(survey_year: int | None) -> str:
    """Task description when solved examples precede the respondent of interest (one paragraph).

    Examples
    --------
    >>> few_shot_description(2018).split(". ")[0]
    'The following data corresponds to different survey respondents'
    """
    return (
        f"The following data corresponds to different survey respondents. {_survey_sentence(survey_year)} "
        "Please answer each question based on the information provided. "
        "The data provided is enough to reach an approximate answer for each person."
    )
