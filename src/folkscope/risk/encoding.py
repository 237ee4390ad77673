"""folktexts' row encoders: one row in, its prompt text out, rendered by folkscope's prompt layer.

``encode_row_prompt``, ``encode_row_prompt_few_shot`` and
``encode_row_prompt_chat`` take folktexts' arguments and return the text
folkscope sends for that row (:func:`folkscope.prompting.render_prompts` does
the rendering, so these and a run never disagree). A ``question`` given as a
:mod:`folkscope.risk.qa` object picks the mode, the question text and, for
multiple choice, the order of the options (order-bias correction's
orderings).

Examples
--------
>>> from folkscope.data import load_bundled
>>> from folkscope.tasks import get_task
>>> row = load_bundled("acs-income-10").iloc[0]
>>> encode_row_prompt(row, get_task("ACSIncome")).splitlines()[-3:]
['A. Below $50,000.', 'B. Above $50,000.', 'Answer:']
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd

from folkscope.errors import ConfigError
from folkscope.prompting import FewShotConfig, PromptBatch, PromptConfig, render_chat, render_prompts, shuffled_pool
from folkscope.prompting.config import DEFAULT
from folkscope.risk.qa import MultipleChoiceQA, QAInterface
from folkscope.tasks.task import TaskMetadata, get_task

__all__ = ["encode_row_prompt", "encode_row_prompt_chat", "encode_row_prompt_few_shot"]


def _setup(
    task: TaskMetadata | str, question: QAInterface | None, prompt_config: PromptConfig | None
) -> tuple[TaskMetadata, PromptConfig]:
    task_obj = get_task(task)
    config = prompt_config or PromptConfig(numeric_risk_prompting=task_obj.use_numeric_qa)
    if question is not None:
        task_obj = question.apply_to(task_obj)
        config = question.prompt_config(config)
    return task_obj, config


def _slot(batch: PromptBatch, question: QAInterface | None) -> int:
    """The ordering whose options are listed as the question lists them (0: the task's own order)."""
    if not isinstance(question, MultipleChoiceQA) or not batch.orderings:
        return 0
    texts = tuple(c.text for c in question.choices)
    for ordering in batch.orderings:
        if ordering.texts == texts:
            return ordering.index
    raise ConfigError(
        "this order of the options is not among the orderings rendered; set correct_order_bias=True "
        "in the prompt config to render every order",
        parameter="question",
    )


def _frame(row: pd.Series, task: TaskMetadata) -> pd.DataFrame:
    return row.to_frame().T.reindex(columns=list(task.features))


def encode_row_prompt(
    row: pd.Series,
    task: TaskMetadata | str,
    *,
    question: QAInterface | None = None,
    prompt_config: PromptConfig | None = None,
) -> str:
    """The zero-shot prompt of ``row`` (folktexts' ``encode_row_prompt``)."""
    task_obj, config = _setup(task, question, prompt_config)
    batch = render_prompts(task_obj, _frame(row, task_obj), config)
    return str(batch.full_texts(_slot(batch, question))[0])


def encode_row_prompt_few_shot(
    row: pd.Series,
    task: TaskMetadata | str,
    dataset: Any,
    *,
    n_shots: int | None = None,
    question: QAInterface | None = None,
    reuse_examples: bool = False,
    compose_few_shot_examples: str | list[int] = "random",
    example_order: tuple[int, ...] | str | None = None,
    prompt_config: PromptConfig | None = None,
    few_shot_config: FewShotConfig | None = None,
) -> str:
    """The few-shot prompt of ``row``, examples drawn from ``dataset``'s training split as a benchmark draws them.

    ``few_shot_config`` wins over the loose ``n_shots``, ``reuse_examples``,
    ``compose_few_shot_examples`` and ``example_order`` (as in folktexts).
    """
    task_obj, config = _setup(task, question, prompt_config)
    if few_shot_config is None:
        if n_shots is None:
            raise ConfigError("give n_shots= or few_shot_config=", parameter="n_shots")
        composition = (
            compose_few_shot_examples
            if isinstance(compose_few_shot_examples, str)
            else tuple(compose_few_shot_examples)
        )
        few_shot_config = FewShotConfig(
            n_shots=n_shots, reuse_examples=reuse_examples, composition=composition, example_order=example_order
        )
    config = replace(config, few_shot=few_shot_config)
    examples = shuffled_pool(*dataset.get_train(), seed=few_shot_config.seed)
    batch = render_prompts(task_obj, _frame(row, task_obj), config, examples=examples)
    return str(batch.full_texts(_slot(batch, question))[0])


def encode_row_prompt_chat(
    row: pd.Series,
    task: TaskMetadata | str,
    tokenizer: Any,
    system_prompt: str | None = DEFAULT,
    chat_prompt: str | None = DEFAULT,
    question: QAInterface | None = None,
    prompt_config: PromptConfig | None = None,
) -> str:
    """The prompt of ``row`` through ``tokenizer``'s chat template, ending on the assistant's prefill.

    ``system_prompt`` and ``chat_prompt`` default to folktexts' for the
    question mode (``PROMPT_DEFAULT``); None leaves the system message out.
    They apply unless ``prompt_config`` is given (as in folktexts).
    """
    task_obj, config = _setup(task, question, prompt_config)
    if prompt_config is None:
        config = replace(config, system_prompt=system_prompt, chat_prompt=chat_prompt)
    config = replace(config, use_chat_template=True)
    batch = render_prompts(task_obj, _frame(row, task_obj), config)
    return render_chat(batch.prompts(_slot(batch, question))[0], tokenizer)
