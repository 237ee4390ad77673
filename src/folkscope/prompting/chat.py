"""Engine prompts as text: through a tokenizer's own chat template, or flattened; continued answers.

The engine renders chat prompts itself; :func:`render_chat` is the same rule
for everyone else (the ``folkscope prompts --tokenizer`` export, notebooks,
tests): ``apply_chat_template(messages, add_generation_prompt=True,
enable_thinking=...)`` followed by the assistant prefill, so the model
continues the assistant's turn. Any object with ``apply_chat_template`` and
``chat_template`` works; transformers is never imported here.

folktexts renders the prefill as a closed assistant turn and cuts the text
after it; for the templates tested (ChatML, SmolLM2's, Gemma's) that is the
same text. :func:`fit_chat_config` applies folktexts' rule for templates
without a system role.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from folkscope.engine.requests import ChatPrompt, Prompt
from folkscope.errors import ConfigError
from folkscope.prompting.config import DEFAULT, PromptConfig

__all__ = [
    "continue_prompt",
    "fit_chat_config",
    "load_tokenizer",
    "plain_text",
    "render_chat",
    "render_chats",
    "supports_system_role",
]

log = logging.getLogger(__name__)


def _name(tokenizer: Any) -> str:
    return str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)


def supports_system_role(tokenizer: Any) -> bool:
    """Whether the tokenizer's chat template takes a system message (Gemma's, for one, raises on it).

    Any failure to render a system and a user message counts as no, as in
    folktexts: templates say so with different exceptions.
    """
    probe = [{"role": "system", "content": "test"}, {"role": "user", "content": "test"}]
    try:
        tokenizer.apply_chat_template(probe, tokenize=False)
    except Exception:  # noqa: BLE001 - a template's own refusal has no common type
        return False
    return True


def fit_chat_config(config: PromptConfig, tokenizer: Any) -> PromptConfig:
    """The prompt configuration as it can be sent through this tokenizer's chat template.

    A template without a system role gets no system message when the system
    prompt is the default (folktexts leaves it out too); a system prompt the
    user wrote is refused in one line instead of being dropped unseen.
    Configurations without chat delivery, tokenizers without a chat template
    and templates with a system role are returned as they are.

    Raises
    ------
    ConfigError
        A ``system_prompt`` was given and the template has no system role.
    """
    if not config.is_chat or config.chat_system_prompt is None or not getattr(tokenizer, "chat_template", None):
        return config
    if supports_system_role(tokenizer):
        return config
    if config.system_prompt != DEFAULT:
        raise ConfigError(
            f"the chat template of {_name(tokenizer)!r} has no system role, so --system-prompt cannot be sent; "
            "drop it, or put the text in --variation custom_prompt_prefix=...",
            parameter="system_prompt",
            value=config.system_prompt,
        )
    log.info("the chat template of %s has no system role; prompts go without a system message", _name(tokenizer))
    return dataclasses.replace(config, system_prompt=None)


def plain_text(prompt: Prompt) -> str:
    """The prompt as text without any chat template: message contents blank-line separated, then the prefill.

    Examples
    --------
    >>> plain_text(ChatPrompt([("user", "Hi")], prefill="Answer:"))
    'Hi\\n\\nAnswer:'
    >>> plain_text("Answer:")
    'Answer:'
    """
    if isinstance(prompt, str):
        return prompt
    body = "\n\n".join(m.content for m in prompt.messages)
    return f"{body}\n\n{prompt.prefill}" if prompt.prefill else body


def continue_prompt(prompt: Prompt, text: str) -> Prompt:
    """The same prompt with ``text`` appended to what the model has already 'said' (the prefill of a chat prompt).

    Reading an answer token by token (the second digit after the first)
    asks the model again with its own first token in place.

    Examples
    --------
    >>> continue_prompt("Answer: 0.", "7")
    'Answer: 0.7'
    >>> continue_prompt(ChatPrompt([("user", "Risk?")], prefill="0."), "7").prefill
    '0.7'
    """
    if isinstance(prompt, ChatPrompt):
        return ChatPrompt(prompt.messages, prefill=prompt.prefill + text, enable_thinking=prompt.enable_thinking)
    return prompt + text


def render_chat(prompt: Prompt, tokenizer: Any) -> str:
    """The exact text a chat model sees for ``prompt`` (text prompts are returned unchanged).

    Parameters
    ----------
    prompt : str or ChatPrompt
        A text or chat prompt.
    tokenizer : transformers tokenizer (or any object with ``apply_chat_template``)
        Must carry a chat template for chat prompts.

    Raises
    ------
    ConfigError
        If the prompt is a chat prompt and the tokenizer has no chat template.
    """
    if isinstance(prompt, str):
        return prompt
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(
            f"tokenizer {_name(tokenizer)!r} has no chat template, so chat prompts cannot be rendered; "
            "drop --use-chat-template (and --cot-prompting) for base models, or set tokenizer.chat_template",
            parameter="use_chat_template",
        )
    messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
    options = {} if prompt.enable_thinking is None else {"enable_thinking": prompt.enable_thinking}  # as the engine
    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **options)
    except Exception as exc:  # noqa: BLE001 - a template's own refusal (jinja's raise_exception) has no common type
        raise ConfigError(
            f"the chat template of {_name(tokenizer)!r} refused these messages ({exc}); a template without a system "
            "role takes no system prompt (fit_chat_config leaves folktexts' default out)",
            parameter="use_chat_template",
        ) from None
    return f"{text}{prompt.prefill}"


def render_chats(prompts: Iterable[Prompt], tokenizer: Any) -> list[str]:
    """:func:`render_chat` for many prompts."""
    return [render_chat(p, tokenizer) for p in prompts]


def load_tokenizer(name_or_path: str) -> Any:
    """Load a tokenizer for chat rendering, by the same handles as ``--model``.

    ``default`` (the bundled SmolLM2 model), a local (tokenizer) folder, a ``.gguf`` file
    or a hub id all resolve as a model does, so an unknown name or an
    unreachable hub is one clear :class:`~folkscope.errors.ModelNotFoundError`
    rather than a hub traceback.
    """
    from folkscope._deps import require
    from folkscope.engine.models import resolve_model  # the one rule for model handles

    transformers = require("transformers", feature="rendering chat templates")
    folder = Path(str(name_or_path)).expanduser()
    if folder.is_dir():  # a tokenizer saved on its own has no model config.json
        return transformers.AutoTokenizer.from_pretrained(folder)
    return transformers.AutoTokenizer.from_pretrained(resolve_model(name_or_path).path)
