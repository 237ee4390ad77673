"""Shared fixtures: a locally trained tokenizer with a chat template (no download)."""

from __future__ import annotations

import pytest

#: A small chat template in the usual shape, honouring enable_thinking like Qwen3's does.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n"
    "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{% endif %}"
    "{% endif %}"
)

CORPUS = [
    "The following data corresponds to a survey respondent.",
    "Information: The age is: 18 years old. The sex is: Female.",
    "Question: What is this person's estimated yearly income?",
    "A. Below $50,000. B. Above $50,000. Answer: A B",
    "Probability: 40%",
]


@pytest.fixture(scope="session")
def local_tokenizer(tmp_path_factory):
    """A WordLevel tokenizer trained on a few sentences, wrapped as a transformers fast tokenizer, saved locally."""
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = ["<unk>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>", "<think>", "</think>"]
    raw.train_from_iterator(CORPUS, trainers.WordLevelTrainer(special_tokens=specials))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>", chat_template=CHAT_TEMPLATE)
    folder = tmp_path_factory.mktemp("tokenizer")
    tokenizer.save_pretrained(folder)
    return tokenizer, folder
