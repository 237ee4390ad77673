"""The prompt layer: the one place that knows how a row, a condition or a problem becomes a prompt.

Configuration (:class:`PromptConfig`, :class:`FewShotConfig`,
:func:`parse_variations`), rendering (:class:`PromptRenderer`,
:func:`render_prompts`, :func:`render_dataset` into a :class:`PromptBatch`
of :class:`RenderedPrompt`), the engine prompts they become (the engine's
own type: a text, or a :class:`~folkscope.engine.ChatPrompt`; this layer is
the only one that builds them), chat rendering through a tokenizer's own
template (:func:`render_chat`, :func:`plain_text`, :func:`continue_prompt`),
exports (JSONL, Hugging Face datasets) and the prompt shapes of the other
parts (:func:`qa_prompt`, :func:`likelihood_prompt`,
:func:`numeric_problem_prompt`, :func:`matching_pennies_prompt`, the
screening prompts :func:`pointwise_prompt`, :func:`pairwise_prompt`,
:func:`listwise_prompt`); :func:`format_slots` reads the ``{slots}`` of every
template a user writes, refusing anything ``str.format`` would do beyond
filling a name. Reading the answers back is :mod:`folkscope.readout`'s.

Importing this package loads numpy and pandas only; transformers and
datasets are imported inside the functions that need them.
"""

from folkscope.prompting._checks import format_slots
from folkscope.prompting.chat import (
    continue_prompt,
    fit_chat_config,
    load_tokenizer,
    plain_text,
    render_chat,
    render_chats,
    supports_system_role,
)
from folkscope.prompting.config import (
    PROMPT_FORMAT_VERSION,
    FewShotConfig,
    PromptConfig,
    PromptConfigWarning,
    field_doc,
)
from folkscope.prompting.export import export_hf_dataset, iter_prompt_records, prompts_frame, write_prompts_jsonl
from folkscope.prompting.features import feature_order, join_label, render_feature_block
from folkscope.prompting.fewshot import (
    ExamplePool,
    class_counts,
    draw_examples,
    draw_for_rows,
    first_examples,
    row_keys,
    row_uniforms,
    shuffled_pool,
)
from folkscope.prompting.orderings import LETTERS, AnswerOrdering, answer_orderings, option_text
from folkscope.prompting.renderer import PromptBatch, PromptRenderer, render_dataset, render_prompts
from folkscope.prompting.screening import (
    SCREENING_SLOTS,
    check_screening_template,
    listwise_prompt,
    pairwise_prompt,
    pointwise_prompt,
)
from folkscope.prompting.shapes import (
    LIKELIHOOD_BINS,
    PENNY_FACES,
    LikelihoodBin,
    likelihood_prompt,
    matching_pennies_prompt,
    numeric_problem_prompt,
    qa_prompt,
)
from folkscope.prompting.templates import (
    ANSWER_PREFILL,
    CHAT_PREFILLS,
    CHAT_SYSTEM_PROMPTS,
    COT_INSTRUCTION,
    INFO_HEADER,
    NUMERIC_ANSWER_LEAD,
    NUMERIC_PREFILL,
    QUESTION_HEADER,
    few_shot_description,
    task_description,
)
from folkscope.prompting.types import RenderedPrompt
from folkscope.prompting.variations import FORMATS, GRANULARITIES, VARIATION_KEYS, format_variations, parse_variations

__all__ = [
    "ANSWER_PREFILL",
    "CHAT_PREFILLS",
    "CHAT_SYSTEM_PROMPTS",
    "COT_INSTRUCTION",
    "FORMATS",
    "GRANULARITIES",
    "INFO_HEADER",
    "LETTERS",
    "LIKELIHOOD_BINS",
    "NUMERIC_ANSWER_LEAD",
    "NUMERIC_PREFILL",
    "PENNY_FACES",
    "PROMPT_FORMAT_VERSION",
    "QUESTION_HEADER",
    "SCREENING_SLOTS",
    "VARIATION_KEYS",
    "AnswerOrdering",
    "ExamplePool",
    "FewShotConfig",
    "LikelihoodBin",
    "PromptBatch",
    "PromptConfig",
    "PromptConfigWarning",
    "PromptRenderer",
    "RenderedPrompt",
    "answer_orderings",
    "check_screening_template",
    "class_counts",
    "continue_prompt",
    "draw_examples",
    "draw_for_rows",
    "export_hf_dataset",
    "feature_order",
    "few_shot_description",
    "field_doc",
    "first_examples",
    "fit_chat_config",
    "format_slots",
    "format_variations",
    "iter_prompt_records",
    "join_label",
    "likelihood_prompt",
    "listwise_prompt",
    "load_tokenizer",
    "matching_pennies_prompt",
    "numeric_problem_prompt",
    "option_text",
    "pairwise_prompt",
    "parse_variations",
    "plain_text",
    "pointwise_prompt",
    "prompts_frame",
    "qa_prompt",
    "render_chat",
    "render_chats",
    "render_dataset",
    "render_feature_block",
    "render_prompts",
    "row_keys",
    "row_uniforms",
    "shuffled_pool",
    "supports_system_role",
    "task_description",
    "write_prompts_jsonl",
]
