"""Screening prompts (part 2): one candidate to judge, two to compare, or a pool to rank.

The wording comes from the allocation part's templates (data files a user
may replace); this module only assembles it, the same way for every model:
the system turn carries the shared context (a job description, a rubric),
so every prompt of a subtask starts with the same text and the engine runs
it once per batch; the user turn carries the candidate(s) and the question.

- :func:`pointwise_prompt`: one candidate; the answer (``"Yes"``, a grade)
  is read from the next-token probabilities after the prefill.
- :func:`pairwise_prompt`: candidates labelled A and B, plus C for "equally
  good"; asked in both orders by the caller.
- :func:`listwise_prompt`: the whole pool, each candidate under its name;
  the model writes a ranking (a generation).

``chat=False`` (base models) flattens the turns into one text:
system, blank line, user, blank line, prefill.

Examples
--------
>>> p = pointwise_prompt("Job: data analyst", "Resume of Ann Wu", system="Context:\\n{context}",
...                      question="Resume:\\n{candidate}\\n\\nA good fit? Answer Yes or No.")
>>> [m.role for m in p.messages], p.prefill
(['system', 'user'], 'Answer:')
>>> pairwise_prompt("Job", "first", "second", system="{context}", question="A:\\n{first}\\nB:\\n{second}", chat=False)
'Job\\n\\nA:\\nfirst\\nB:\\nsecond\\n\\nAnswer:'
"""

from __future__ import annotations

from collections.abc import Sequence

from folkscope.engine.requests import ChatPrompt, Message, Prompt
from folkscope.errors import ConfigError
from folkscope.prompting.templates import ANSWER_PREFILL

__all__ = ["listwise_prompt", "pairwise_prompt", "pointwise_prompt"]


def _fill(template: str, what: str, **values: str) -> str:
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        slots = ", ".join("{" + k + "}" for k in values)
        raise ConfigError(
            f"the {what} template {template[:60]!r} cannot be filled ({exc!r}); it may use only {slots}, with literal braces doubled",
            parameter="template",
            value=template,
        ) from None


def _assemble(system: str, user: str, prefill: str, chat: bool) -> Prompt:
    if chat:
        messages = ((Message("system", system),) if system else ()) + (Message("user", user),)
        return ChatPrompt(messages, prefill=prefill)
    parts = [p for p in (system, user) if p]
    text = "\n\n".join(parts)
    return f"{text}\n\n{prefill}" if prefill else text


def pointwise_prompt(context: str, candidate: str, *, system: str, question: str, chat: bool = True,
                     prefill: str = ANSWER_PREFILL) -> Prompt:
    """One candidate: ``system`` gets ``{context}``, ``question`` gets ``{candidate}``; ends on the answer prefill."""
    return _assemble(_fill(system, "system", context=context), _fill(question, "pointwise", candidate=candidate), prefill, chat)


def pairwise_prompt(context: str, first: str, second: str, *, system: str, question: str, chat: bool = True,
                    prefill: str = ANSWER_PREFILL) -> Prompt:
    """Two candidates (``{first}`` as A, ``{second}`` as B); the caller asks both orders."""
    user = _fill(question, "pairwise", first=first, second=second)
    return _assemble(_fill(system, "system", context=context), user, prefill, chat)


def listwise_prompt(context: str, candidates: Sequence[str], names: Sequence[str], *, system: str, question: str,
                    entry: str = "Candidate: {name}\n{candidate}", chat: bool = True) -> Prompt:
    """The whole pool, each candidate under its name (``entry``), in ``{candidates}`` of ``question``; no prefill."""
    if len(candidates) != len(names) or not candidates:
        raise ConfigError(f"a listwise pool needs one name per candidate, got {len(names)} names for {len(candidates)}",
                          parameter="names")  # fmt: skip
    blocks = "\n\n".join(_fill(entry, "entry", name=n, candidate=c) for n, c in zip(names, candidates))
    return _assemble(_fill(system, "system", context=context), _fill(question, "listwise", candidates=blocks), "", chat)
