"""A risk run's prompt settings in words, for readers of its page and of the leaderboard.

A run folder is named by its prompt configuration's short name and hash
(``mc-zeroshot-var-3a9d0560``): unique, but a reader cannot tell from it what
the model was asked. :func:`prompt_settings` reads the same settings from the
run's recorded configuration and says them ("multiple choice, zero-shot,
2 orderings"), so two rows that differ only by prompt show how they differ.

Examples
--------
>>> prompt_settings({"benchmark_config": {"few_shot": 4, "correct_order_bias": True},
...                  "prompt_config": {"ordering_scheme": "cyclic"},
...                  "task": {"choices": [{"text": "no"}, {"text": "yes"}, {"text": "maybe"}]}})
'multiple choice, 4-shot, 3 orderings'
>>> prompt_settings({"benchmark_config": {"numeric_risk_prompting": True, "use_chat_template": True}})
'numeric probability, zero-shot, chat template'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["prompt_settings"]


def _orderings(prompt: Mapping[str, Any], n_choices: int | None) -> int | None:
    """How many answer orderings were averaged (None when the number of choices is not recorded)."""
    if not n_choices:
        return None
    scheme = prompt.get("ordering_scheme") or "all"
    cap = prompt.get("max_orderings")
    n = {"identity": 1, "cyclic": n_choices}.get(scheme, math.factorial(n_choices))
    return min(n, int(cap)) if cap else n


def prompt_settings(config: Mapping[str, Any]) -> str:
    """The prompt a risk run used, in a few words: question style, examples, chat template, orderings, variations.

    Parameters
    ----------
    config : mapping
        The run's recorded configuration (``manifest.json``'s ``config``):
        ``benchmark_config``, and where present ``prompt_config`` and ``task``.
    """
    bench = config.get("benchmark_config") or {}
    prompt = config.get("prompt_config") or {}
    if bench.get("numeric_risk_prompting"):
        style = "numeric probability"
    elif bench.get("cot_prompting"):
        style = "chain of thought"
    else:
        style = "multiple choice"
    words = [style + (" with thinking" if bench.get("enable_thinking") else "")]
    shots = bench.get("few_shot")
    words.append(f"{shots}-shot" if shots else "zero-shot")
    if bench.get("use_chat_template"):
        words.append("chat template")
    if style == "multiple choice" and bench.get("correct_order_bias"):
        n = _orderings(prompt, len((config.get("task") or {}).get("choices") or ()) or None)
        words.append(f"{n} orderings" if n else "averaged over answer orderings")
    elif style == "multiple choice" and bench.get("correct_order_bias") is False:
        words.append("one answer order")
    variation = bench.get("variation") or ()
    if variation:
        words.append("varied: " + ", ".join(map(str, variation)))
    return ", ".join(words)
