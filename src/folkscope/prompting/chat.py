"""Chat prompts through a tokenizer's own chat template (for export and inspection).

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

from folkscope.errors import ConfigError
from folkscope.prompting.types import Prompt

__all__ = ["load_tokenizer", "render_chat", "render_chats"]


def render_chat(prompt: Prompt, tokenizer: Any) -> str:
    """The exact text a chat model sees for ``prompt`` (text prompts are returned unchanged).

    Parameters
    ----------
    prompt : Prompt
        A text or chat prompt.
    tokenizer : transformers tokenizer (or any object with ``apply_chat_template``)
        Must carry a chat template for chat prompts.

    Raises
    ------
    ConfigError
        If the prompt is a chat prompt and the tokenizer has no chat template.
    """
    if not prompt.is_chat:
        return str(prompt.text)
    if not getattr(tokenizer, "chat_template", None):
        name = getattr(tokenizer, "name_or_path", type(tokenizer).__name__)
        raise ConfigError(
            f"tokenizer {name!r} has no chat template, so chat prompts cannot be rendered; "
            "drop --use-chat-template (and --cot-prompting) for base models, or set tokenizer.chat_template",
            parameter="use_chat_template",
        )
    messages = [m.to_dict() for m in prompt.messages or ()]
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
