"""Engine prompts as text: through a tokenizer's own chat template, or flattened; continued answers.

The engine renders chat prompts itself; :func:`render_chat` is the same rule
for everyone else (the ``folkscope prompts --tokenizer`` export, notebooks,
tests): ``apply_chat_template(messages, add_generation_prompt=True,
enable_thinking=...)`` followed by the assistant prefill, so the model
continues the assistant's turn. Any object with ``apply_chat_template`` and
``chat_template`` works; transformers is never imported here.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from folkscope.engine.requests import ChatPrompt, Prompt
from folkscope.errors import ConfigError

__all__ = ["continue_prompt", "load_tokenizer", "plain_text", "render_chat", "render_chats"]


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
        name = getattr(tokenizer, "name_or_path", type(tokenizer).__name__)
        raise ConfigError(
            f"tokenizer {name!r} has no chat template, so chat prompts cannot be rendered; "
            "drop --use-chat-template (and --cot-prompting) for base models, or set tokenizer.chat_template",
            parameter="use_chat_template",
        )
    messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
    text = tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True, enable_thinking=prompt.enable_thinking
    )
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
