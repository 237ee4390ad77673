"""Few-shot and chat-template prompts are folktexts 0.7.1's, character for character (issue 29).

folktexts itself renders them (the oracle's ``benchmark_prompts``: the
encode function its ``Benchmark.make_benchmark`` builds), from the same
training rows in the same order, for every answer ordering it scores. Few-shot
prompts are compared whole (task description, examples, the row, the
question); chat prompts are compared as the text the model reads, through the
default model's tokenizer (SmolLM2, a ChatML template with a system role) and
through a locally trained tokenizer whose template rejects the system role,
as Gemma's does.
"""

from __future__ import annotations

import difflib
from collections import Counter

import pandas as pd
import pytest
from tests.parity.rows import draw_rows

from folkscope.prompting import FewShotConfig, PromptConfig, fit_chat_config, render_chat, render_prompts

ACS_TASKS = ("ACSIncome", "ACSPublicCoverage", "ACSMobility", "ACSEmployment", "ACSTravelTime")
N_TRAIN, N_ROWS = 8, 5
LABELS = [0, 1, 1, 0, 0, 1, 0, 1]  #: training labels (rotated per task): four of each class
QUESTIONS = ("multiple_choice", "direct_numeric")

#: Gemma's chat template in shape: no system role (it raises), the assistant is 'model', contents trimmed
NO_SYSTEM_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for message in messages %}{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"
)


@pytest.fixture(scope="module")
def data(folktexts) -> dict[str, dict]:
    """Per task: training rows with labels (both classes) and rows to ask about."""
    out = {}
    for i, task in enumerate(ACS_TASKS):
        codes = folktexts("column_values", task=task)
        labels = LABELS[i:] + LABELS[:i]
        out[task] = {
            "train": draw_rows(codes, N_TRAIN, seed=100 + i),
            "labels": labels,
            "rows": draw_rows(codes, N_ROWS, seed=200 + i),
        }
    return out


def ours_few_shot(task: str, d: dict, order: list[int], config: PromptConfig) -> list[list[str]]:
    """folkscope's prompts, per row and ordering, with the training rows in folktexts' split order."""
    X = pd.DataFrame(d["train"]).iloc[order]
    y = pd.Series(d["labels"]).iloc[order]
    batch = render_prompts(task, pd.DataFrame(d["rows"]), config, examples=(X, y))
    return [list(p) for p in zip(*(batch.full_texts(o) for o in range(batch.n_slots)))]


def first_difference(ours: list[str], theirs: list[str]) -> str:
    """How many prompts differ, and a diff of the first that does ('' when none)."""
    differ = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    if not differ and len(ours) == len(theirs):
        return ""
    i = differ[0] if differ else min(len(ours), len(theirs))
    a, b = (theirs[i] if i < len(theirs) else ""), (ours[i] if i < len(ours) else "")
    diff = "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), "folktexts", "folkscope", n=1))
    return f"{len(differ)} of {len(theirs)} prompts differ; prompt {i}:\n{diff}"


def assert_same(ours: list[list[str]], theirs: list[list[str]]) -> None:
    flat_ours, flat_theirs = [p for row in ours for p in row], [p for row in theirs for p in row]
    message = first_difference(flat_ours, flat_theirs)
    if message:
        pytest.fail(message, pytrace=False)


def few_shot_case(folktexts, data, task, question, few_shot: dict, *, correct_order_bias: bool = True, variation=None):
    d = data[task]
    options = {"few_shot": few_shot, "correct_order_bias": correct_order_bias, "prompt_variation": variation}
    theirs = folktexts(
        "benchmark_prompts",
        task=task,
        rows=d["rows"],
        question=question,
        options=options,
        train_rows=d["train"],
        train_labels=d["labels"],
    )
    config = PromptConfig(
        numeric_risk_prompting=question == "direct_numeric",
        correct_order_bias=correct_order_bias,
        few_shot=FewShotConfig(
            n_shots=few_shot["n_shots"],
            reuse_examples=few_shot.get("reuse_examples", False),
            composition=few_shot.get("compose", "random"),
            example_order=few_shot.get("example_order"),
            hide_question=not few_shot.get("show_question_in_examples", True),
        ),
    ).with_variations(variation or {})
    return ours_few_shot(task, d, theirs["train_order"], config), theirs["prompts"]


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("task", ACS_TASKS)
def test_few_shot_prompts_are_folktexts(folktexts, data, task, question):
    """The default few-shot run: order-bias correction makes folktexts reuse the first n training rows for every row."""
    assert_same(*few_shot_case(folktexts, data, task, question, {"n_shots": 3}))


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize(
    "few_shot, correct_order_bias",
    [
        ({"n_shots": 4, "reuse_examples": True}, False),  # reused without order-bias correction: still the first rows
        ({"n_shots": 3, "example_order": "2,0,1"}, True),
        ({"n_shots": 2, "show_question_in_examples": False}, True),
        ({"n_shots": 1}, True),
    ],
    ids=["reuse-no-order-bias", "example-order", "hide-question", "one-shot"],
)
def test_few_shot_options_are_folktexts(folktexts, data, question, few_shot, correct_order_bias):
    """Few-shot options on ACSIncome (whose row text is folktexts' already): the framing alone."""
    assert_same(*few_shot_case(folktexts, data, "ACSIncome", question, few_shot, correct_order_bias=correct_order_bias))


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize(
    "variation",
    [
        {"custom_prompt_prefix": "Think of the US.", "custom_prompt_suffix": "Be brief."},
        {"show_question": False},
        {"format": "comma", "connector": "="},
    ],
    ids=["custom-prefix-suffix", "no-question", "comma"],
)
def test_few_shot_with_variations_is_folktexts(folktexts, data, question, variation):
    """Variations reach the examples as folktexts lays them out (custom prefix before every respondent, custom
    suffix after every answer; examples keep their question when the row's is hidden)."""
    assert_same(*few_shot_case(folktexts, data, "ACSIncome", question, {"n_shots": 2}, variation=variation))


def example_blocks(prompt: str) -> Counter:
    """The solved examples of a few-shot prompt, as a multiset (everything between the description and the row)."""
    parts = prompt.split("\n\nInformation:\n")
    return Counter(parts[1:-1])


@pytest.mark.parametrize("compose", ["balanced", "1,2", "3,0"])
def test_per_class_compositions_show_folktexts_rows(folktexts, data, compose):
    """Per-class compositions reuse the first rows of each class; folktexts shuffles them afresh at every call
    from its dataset's running generator (no order to reproduce), so the examples are compared as a multiset."""
    ours, theirs = few_shot_case(folktexts, data, "ACSIncome", "multiple_choice", {"n_shots": 3, "compose": compose})
    for row_ours, row_theirs in zip(ours, theirs):
        for a, b in zip(row_ours, row_theirs):
            assert example_blocks(a) == example_blocks(b)
            assert a.rsplit("\n\nInformation:\n", 1)[1] == b.rsplit("\n\nInformation:\n", 1)[1]


# -- chat template -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory) -> dict[str, tuple[object, str]]:
    """The default model's tokenizer, and a local one whose chat template has no system role (both saved on disk)."""
    pytest.importorskip("transformers")
    from folkscope.engine import resolve_model
    from folkscope.prompting import load_tokenizer
    from folkscope.testing import train_tokenizer

    smollm = str(resolve_model("default").path)
    no_system = train_tokenizer()
    no_system.chat_template = NO_SYSTEM_TEMPLATE
    folder = tmp_path_factory.mktemp("no-system-role")
    no_system.save_pretrained(folder)
    return {"smollm2": (load_tokenizer(smollm), smollm), "no-system-role": (load_tokenizer(str(folder)), str(folder))}


def ours_chat(task: str, rows: list[dict], config: PromptConfig, tokenizer: object) -> list[list[str]]:
    batch = render_prompts(task, pd.DataFrame(rows), fit_chat_config(config, tokenizer))
    return [[render_chat(p.to_prompt(o), tokenizer) for o in range(p.n_slots)] for p in batch]


@pytest.mark.parametrize("which", ["smollm2", "no-system-role"])
@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("task", ACS_TASKS)
def test_chat_template_defaults_are_folktexts(folktexts, data, tokenizers, task, question, which):
    """--use-chat-template alone: folktexts' system prompt per question kind (dropped where the template has no
    system role) and its assistant prefill, rendered through the tokenizer's template."""
    tokenizer, path = tokenizers[which]
    rows = data[task]["rows"]
    theirs = folktexts(
        "benchmark_prompts",
        task=task,
        rows=rows,
        question=question,
        options={"use_chat_template": True},
        tokenizer=path,
    )["prompts"]
    config = PromptConfig(use_chat_template=True, numeric_risk_prompting=question == "direct_numeric")
    assert_same(ours_chat(task, rows, config, tokenizer), theirs)


@pytest.mark.parametrize("which", ["smollm2", "no-system-role"])
@pytest.mark.parametrize("task", ACS_TASKS)
def test_chain_of_thought_chat_is_folktexts(folktexts, data, tokenizers, task, which):
    """Chain of thought: folktexts' instruction, no system prompt of its own, the template's generation prompt."""
    tokenizer, path = tokenizers[which]
    rows = data[task]["rows"]
    theirs = folktexts("benchmark_prompts", task=task, rows=rows, question="cot", tokenizer=path)["prompts"]
    assert_same(ours_chat(task, rows, PromptConfig(cot_prompting=True), tokenizer), theirs)


@pytest.mark.parametrize(
    "options",
    [
        {"system_prompt": "You are a demographer."},
        {"chat_prompt": "My answer:"},
        {"system_prompt": None, "chat_prompt": "Answer:"},
    ],
    ids=["system-prompt", "chat-prompt", "no-system-answer-prefill"],
)
def test_chat_prompt_options_are_folktexts(folktexts, data, tokenizers, options):
    """Explicit system prompt and prefill (None: no system turn), on ACSIncome through SmolLM2's template."""
    tokenizer, path = tokenizers["smollm2"]
    rows = data["ACSIncome"]["rows"]
    theirs = folktexts(
        "benchmark_prompts", task="ACSIncome", rows=rows, options={"use_chat_template": True, **options}, tokenizer=path
    )["prompts"]
    config = PromptConfig(use_chat_template=True, **options)
    assert_same(ours_chat("ACSIncome", rows, config, tokenizer), theirs)
