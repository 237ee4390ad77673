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
from folkscope.prompting._checks import format_slots
from folkscope.prompting.templates import ANSWER_PREFILL

__all__ = ["SCREENING_SLOTS", "check_screening_template", "listwise_prompt", "pairwise_prompt", "pointwise_prompt"]

#: per part of a screening template: the slots it may use, and those it must use. Without its required slots a
#: prompt reads the same for every candidate (pointwise, listwise), cannot show the second candidate (pairwise) or
#: gives the model no name to rank by (entry): every candidate would get one score, a perfect parity that measures
#: nothing.
SCREENING_SLOTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "system": (("context",), ()),
    "pointwise": (("candidate",), ("candidate",)),
    "pairwise": (("first", "second"), ("first", "second")),
    "listwise": (("candidates",), ("candidates",)),
    "entry": (("name", "candidate"), ("name", "candidate")),
}


def check_screening_template(part: str, text: object, where: str) -> None:
    """Refuse (one ConfigError line naming ``where``) a screening template part the prompts could not be filled from.

    Checked once, when a template is loaded, so a misspelt or missing slot
    stops the run before any model loads: the text must be a string whose
    slots (:func:`~folkscope.prompting._checks.format_slots`) are among the
    part's allowed ones and include its required ones (:data:`SCREENING_SLOTS`).

    Examples
    --------
    >>> check_screening_template("pointwise", "Resume:\\n{candidate}\\nA good fit?", "resumes.pointwise")
    >>> check_screening_template("pointwise", "Is this candidate a good fit?", "resumes.pointwise")
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: template resumes.pointwise has no {candidate} slot, so every candidate would get the same prompt; add {candidate} where the candidate goes
    """
    allowed, required = SCREENING_SLOTS[part]
    if not isinstance(text, str):
        raise ConfigError(
            f"template {where} must be a string, got {type(text).__name__}", parameter="template", value=text
        )
    slots = format_slots(text, f"template {where}")
    unknown = [s for s in dict.fromkeys(slots) if s not in allowed]
    if unknown:
        raise ConfigError(
            f"template {where} has the slot {{{unknown[0]}}}, which is not one of its slots: "
            f"{', '.join('{' + a + '}' for a in allowed)} (misspelt?)",
            parameter="template",
            value=text,
        )
    missing = [r for r in required if r not in slots]
    if missing:
        why = {
            "pointwise": "every candidate would get the same prompt",
            "listwise": "every pool would get the same prompt",
            "pairwise": "the model could not see both candidates",
            "entry": "the candidates could not be told apart",
        }[part]
        goes = {
            "candidate": "the candidate",
            "first": "candidate A",
            "second": "candidate B",
            "candidates": "the pool",
            "name": "the candidate's name",
        }[missing[0]]
        raise ConfigError(
            f"template {where} has no {{{missing[0]}}} slot, so {why}; add {{{missing[0]}}} where {goes} goes",
            parameter="template",
            value=text,
        )


def _fill(template: str, what: str, **values: str) -> str:
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as exc:
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


def pointwise_prompt(
    context: str, candidate: str, *, system: str, question: str, chat: bool = True, prefill: str = ANSWER_PREFILL
) -> Prompt:
    """One candidate: ``system`` gets ``{context}``, ``question`` gets ``{candidate}``; ends on the answer prefill."""
    return _assemble(
        _fill(system, "system", context=context), _fill(question, "pointwise", candidate=candidate), prefill, chat
    )


def pairwise_prompt(
    context: str,
    first: str,
    second: str,
    *,
    system: str,
    question: str,
    chat: bool = True,
    prefill: str = ANSWER_PREFILL,
) -> Prompt:
    """Two candidates (``{first}`` as A, ``{second}`` as B); the caller asks both orders."""
    user = _fill(question, "pairwise", first=first, second=second)
    return _assemble(_fill(system, "system", context=context), user, prefill, chat)


def listwise_prompt(
    context: str,
    candidates: Sequence[str],
    names: Sequence[str],
    *,
    system: str,
    question: str,
    entry: str = "Candidate: {name}\n{candidate}",
    chat: bool = True,
) -> Prompt:
    """The whole pool, each candidate under its name (``entry``), in ``{candidates}`` of ``question``; no prefill."""
    if len(candidates) != len(names) or not candidates:
        raise ConfigError(
            f"a listwise pool needs one name per candidate, got {len(names)} names for {len(candidates)}",
            parameter="names",
        )
    blocks = "\n\n".join(_fill(entry, "entry", name=n, candidate=c) for n, c in zip(names, candidates))
    return _assemble(_fill(system, "system", context=context), _fill(question, "listwise", candidates=blocks), "", chat)
