"""Prompt configuration: one frozen object per way of asking, hashed into run names.

:class:`PromptConfig` holds every option of folktexts' "Configuring prompts"
(question mode, delivery path, feature-block variations, order-bias
correction); :class:`FewShotConfig` holds the in-context example options.
Both check themselves when built, reject unknown keys in
:meth:`~PromptConfig.from_dict`, and hash their canonical JSON (together with
:data:`PROMPT_FORMAT_VERSION`) in :meth:`~PromptConfig.fingerprint`, so every
distinct configuration gets its own deterministic :attr:`~PromptConfig.name`.

The ``--variation key=value`` strings of the CLI are parsed by
:func:`~folkscope.prompting.variations.parse_variations`.

Field documentation lives in each field's ``metadata["doc"]`` and is what the
CLI shows as help (:func:`field_doc`).
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any, Literal

from folkscope._config import config_fields
from folkscope._json import canonical_json, fingerprint
from folkscope.errors import ConfigError
from folkscope.prompting._checks import check_bool, check_int, check_text, int_tuple
from folkscope.prompting.templates import CHAT_PREFILLS, CHAT_SYSTEM_PROMPTS
from folkscope.prompting.variations import (
    COLUMN_NAME,
    FORMATS,
    GRANULARITIES,
    VARIATION_KEYS,
    parse_variations,
)

__all__ = [
    "PROMPT_FORMAT_VERSION",
    "FewShotConfig",
    "PromptConfig",
    "PromptConfigWarning",
    "field_doc",
]

#: Bumped whenever the text produced for an unchanged configuration changes;
#: part of every fingerprint, so caches never mix two prompt formats.
#: 2: folktexts 0.7.1's texts and layouts (issue 29: ACS tasks, variations, chain of thought, few-shot, chat).
PROMPT_FORMAT_VERSION = 2

ORDERING_SCHEMES = ("all", "cyclic")
COMPOSITIONS = ("random", "balanced")
#: How few-shot examples are chosen (see :mod:`folkscope.prompting.fewshot`).
DRAWS = ("folktexts", "seeded")
#: The value of ``system_prompt`` / ``chat_prompt`` that stands for the question mode's default (folktexts' word).
DEFAULT = "default"


class PromptConfigWarning(UserWarning):
    """A prompt option was given where it has no effect (e.g. a system prompt without chat)."""


def _doc(text: str) -> dict[str, str]:
    return {"doc": text}


@dataclass(frozen=True)
class FewShotConfig:
    """In-context examples drawn from the training split.

    Examples
    --------
    >>> FewShotConfig(n_shots=4, composition="2,2").composition
    (2, 2)
    >>> FewShotConfig(n_shots=3, example_order=(2, 0, 1)).example_order
    (2, 0, 1)
    """

    n_shots: int = field(default=1, metadata=_doc("Number of examples shown before the question (--few-shot N)."))
    reuse_examples: bool = field(
        default=False,
        metadata=_doc(
            "Show the same examples before every row (one shared block) instead of drawing new ones per row "
            "(per-row draws are seeded by (seed, row id), so they are reproducible too)."
        ),
    )
    composition: str | tuple[int, ...] = field(
        default="random",
        metadata=_doc(
            "How examples are drawn: 'random' (uniform), 'balanced' (equal count per class; a remainder goes to "
            "the lowest labels) or per-class counts in label order such as '2,2'."
        ),
    )
    example_order: tuple[int, ...] | None = field(
        default=None,
        metadata=_doc(
            "Permutation of the example indices, e.g. '3,2,1,0'. Index i is the i-th example drawn; per-class "
            "draws list class 0 first, then class 1. Without it, per-class draws are shuffled (seeded)."
        ),
    )
    hide_question: bool = field(
        default=False, metadata=_doc("Show only the answer in each example, without the repeated question.")
    )
    seed: int = field(default=42, metadata=_doc("Seed of the example draws."))
    draw: str = field(
        default="folktexts",
        metadata=_doc(
            "'folktexts': as folktexts' Benchmark, examples are reused whenever reuse_examples is set or answer-order "
            "bias is corrected, and reused examples are the first training rows (per class for per-class "
            "compositions). 'seeded': folkscope's seeded random draws, one shared draw with reuse_examples, else "
            "one per row, whatever the order-bias setting."
        ),
    )

    def __post_init__(self) -> None:
        check_int("n_shots", self.n_shots, minimum=1)
        check_bool("reuse_examples", self.reuse_examples)
        check_bool("hide_question", self.hide_question)
        check_int("seed", self.seed, minimum=0)
        if self.draw not in DRAWS:
            raise ConfigError(
                f"draw must be one of {', '.join(DRAWS)}, got {self.draw!r}", parameter="draw", value=self.draw
            )
        comp = self.composition
        if isinstance(comp, str) and comp.strip().lower() in COMPOSITIONS:
            comp = comp.strip().lower()
        else:
            comp = int_tuple("composition", comp)
            if len(comp) < 2 or any(c < 0 for c in comp):
                raise ConfigError(
                    f"composition counts need one non-negative count per class (at least two), got {self.composition!r}",
                    parameter="composition",
                    value=self.composition,
                )
            if sum(comp) != self.n_shots:
                raise ConfigError(
                    f"composition counts {','.join(map(str, comp))} add up to {sum(comp)}, "
                    f"but n_shots is {self.n_shots}; make them agree",
                    parameter="composition",
                    value=self.composition,
                )
        object.__setattr__(self, "composition", comp)
        if self.example_order is not None:
            order = int_tuple("example_order", self.example_order)
            # the length first: n_shots may be absurd (1e9), and range(n_shots) must never be built for it
            if len(order) != self.n_shots or sorted(order) != list(range(len(order))):
                raise ConfigError(
                    f"example_order must be a permutation of 0..{self.n_shots - 1} "
                    f"(one index per example), got {','.join(map(str, order))}",
                    parameter="example_order",
                    value=self.example_order,
                )
            object.__setattr__(self, "example_order", order)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples become lists)."""
        return {
            "n_shots": self.n_shots,
            "reuse_examples": self.reuse_examples,
            "composition": self.composition if isinstance(self.composition, str) else list(self.composition),
            "example_order": None if self.example_order is None else list(self.example_order),
            "hide_question": self.hide_question,
            "seed": self.seed,
            "draw": self.draw,
        }

    def reused(self, correct_order_bias: bool) -> bool:
        """Whether every row is shown the same examples: asked for, or forced by order-bias correction (folktexts)."""
        return self.reuse_examples or (self.draw == "folktexts" and correct_order_bias)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FewShotConfig:
        """Inverse of :meth:`to_dict`; unknown keys raise :class:`ConfigError`."""
        return cls(**config_fields(cls, data, "few_shot"))

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON of this config and the prompt-format version."""
        return fingerprint({"v": PROMPT_FORMAT_VERSION, **self.to_dict()})

    @property
    def short_name(self) -> str:
        """``fs4``, ``fs4-reuse-bal``, ``fs4-2x2-ord``, ... (part of :attr:`PromptConfig.name`)."""
        parts = [f"fs{self.n_shots}"]
        if self.reuse_examples:
            parts.append("reuse")
        if self.composition == "balanced":
            parts.append("bal")
        elif not isinstance(self.composition, str):
            parts.append("x".join(map(str, self.composition)))
        if self.example_order is not None:
            parts.append("ord")
        if self.hide_question:
            parts.append("noq")
        if self.draw != "folktexts":
            parts.append(self.draw)
        return "-".join(parts)


@dataclass(frozen=True)
class PromptConfig:
    """How a row becomes a prompt; the defaults give the paper's prompt exactly.

    Question mode: multiple-choice (default), ``numeric_risk_prompting`` or
    ``cot_prompting``. Delivery: zero-shot text (default), ``few_shot`` or
    ``use_chat_template``. Variations change the feature block. Invalid
    combinations raise :class:`~folkscope.errors.ConfigError` here, before
    any data or model is loaded.

    Examples
    --------
    >>> cfg = PromptConfig(format="bullet", connector="=")
    >>> cfg.mode, cfg.variations()
    ('multiple_choice', {'format': 'bullet', 'connector': '='})
    >>> cfg.name == PromptConfig(connector="=", format="bullet").name
    True
    """

    numeric_risk_prompting: bool = field(
        default=False,
        metadata=_doc("Ask for the probability directly; the answer is prefilled with '0.' and digits are read."),
    )
    cot_prompting: bool = field(
        default=False,
        metadata=_doc("Chain-of-thought: the model reasons, then ends with a 'Probability: X%' line (generation)."),
    )
    enable_thinking: bool = field(
        default=False,
        metadata=_doc(
            "Thinking mode for templates that support it (Qwen3 style); the <think> block is stripped before "
            "parsing. Implies chain-of-thought (with a warning when set alone)."
        ),
    )
    use_chat_template: bool = field(
        default=False, metadata=_doc("Deliver prompts as chat messages through the tokenizer's own chat template.")
    )
    system_prompt: str | None = field(
        default=DEFAULT,
        metadata=_doc(
            "System message for chat delivery. 'default': folktexts' for the question mode (none for chain of "
            "thought), left out where the chat template has no system role; None: no system message (the "
            "template's own default applies)."
        ),
    )
    chat_prompt: str | None = field(
        default=DEFAULT,
        metadata=_doc(
            "Assistant prefill for chat delivery, which the model continues. 'default': folktexts' for the question "
            "mode ('If had to select one of the options, my answer would be', 'Answer (between 0 and 1): 0.', "
            "none for chain of thought); None: no prefill. Numeric prompting needs it to end with '0.'."
        ),
    )
    few_shot: FewShotConfig | None = field(default=None, metadata=_doc("In-context examples (None: zero-shot)."))
    correct_order_bias: bool = field(
        default=True,
        metadata=_doc("Render every ordering of the answer choices so scores can be averaged over orderings."),
    )
    ordering_scheme: str = field(
        default="all",
        metadata=_doc("Which orderings: 'all' permutations or the 'cyclic' rotations (the same for two choices)."),
    )
    max_orderings: int | None = field(
        default=None,
        metadata=_doc("Cap on the number of orderings (the identity plus seeded random others when exceeded)."),
    )
    format: str = field(
        default="textbullet",
        metadata=_doc(
            "Feature block layout: textbullet ('- The age is: 42 years old.'), bullet ('- Age is: 42 years old'), "
            "comma ('Age is: 42 years old, Sex is: Male'), text (sentences in one paragraph)."
        ),
    )
    connector: str = field(
        default="is:",
        metadata=_doc(
            "Words between a feature's label and its value. Joined with single spaces ('The age = 42 years "
            "old'), except that a connector starting with ':' or ',' attaches to the label ('The age: 42 years old')."
        ),
    )
    granularity: str = field(
        default="original", metadata=_doc("Feature values at 'original' detail or 'low' (coarser bins).")
    )
    order: tuple[str, ...] = field(
        default=(), metadata=_doc("Columns listed first in the feature block; the rest follow in task order.")
    )
    custom_prompt_prefix: str | None = field(
        default=None, metadata=_doc("Paragraph inserted after the task description, before examples and features.")
    )
    custom_prompt_suffix: str | None = field(
        default=None,
        metadata=_doc(
            "Line added after the question and its options, just before the answer prefill (the prompt must end "
            "on the prefill so the next token is the answer)."
        ),
    )
    show_question: bool = field(
        default=True, metadata=_doc("Show the 'Question: ...' line; false keeps only options and answer prefill.")
    )

    def __post_init__(self) -> None:
        for name in (
            "numeric_risk_prompting",
            "cot_prompting",
            "enable_thinking",
            "use_chat_template",
            "correct_order_bias",
            "show_question",
        ):
            check_bool(name, getattr(self, name))
        for name in ("system_prompt", "chat_prompt", "custom_prompt_prefix", "custom_prompt_suffix"):
            check_text(name, getattr(self, name))
        if self.few_shot is not None and not isinstance(self.few_shot, FewShotConfig):
            if isinstance(self.few_shot, Mapping):
                object.__setattr__(self, "few_shot", FewShotConfig.from_dict(self.few_shot))
            else:
                raise ConfigError(
                    f"few_shot must be a FewShotConfig or None, got {type(self.few_shot).__name__}",
                    parameter="few_shot",
                    value=self.few_shot,
                )
        if self.format not in FORMATS:
            raise ConfigError(
                f"format must be one of {', '.join(FORMATS)}, got {self.format!r}",
                parameter="format",
                value=self.format,
            )
        if self.granularity not in GRANULARITIES:
            raise ConfigError(
                f"granularity must be one of {', '.join(GRANULARITIES)}, got {self.granularity!r}",
                parameter="granularity",
                value=self.granularity,
            )
        if self.ordering_scheme not in ORDERING_SCHEMES:
            raise ConfigError(
                f"ordering_scheme must be one of {', '.join(ORDERING_SCHEMES)}, got {self.ordering_scheme!r}",
                parameter="ordering_scheme",
                value=self.ordering_scheme,
            )
        if self.max_orderings is not None:
            check_int("max_orderings", self.max_orderings, minimum=1)
        self._check_connector()
        self._check_order()
        self._check_combinations()

    def _check_connector(self) -> None:
        c = self.connector
        if not isinstance(c, str) or not c.strip() or c != c.strip() or "\n" in c or "\r" in c:
            raise ConfigError(
                f"connector must be non-empty text without surrounding spaces or line breaks, got {c!r} "
                "(spacing is added by the format: '<label> <connector> <value>')",
                parameter="connector",
                value=c,
            )

    def _check_order(self) -> None:
        order = self.order
        if isinstance(order, str) or not isinstance(order, Sequence):
            raise ConfigError(
                f"order must be a sequence of column names, got {order!r} (the CLI takes 'order=AGEP,SCHL')",
                parameter="order",
                value=order,
            )
        order = tuple(order)
        bad = [c for c in order if not isinstance(c, str) or not COLUMN_NAME.match(c)]
        if bad:
            raise ConfigError(f"order holds invalid column names {bad!r}", parameter="order", value=order)
        if len(set(order)) != len(order):
            raise ConfigError(f"order names a column twice: {','.join(order)}", parameter="order", value=order)
        object.__setattr__(self, "order", order)

    def _check_combinations(self) -> None:
        if self.enable_thinking and not self.cot_prompting:
            warnings.warn(
                "enable_thinking implies chain-of-thought prompting; turning cot_prompting on",
                PromptConfigWarning,
                stacklevel=3,
            )
            object.__setattr__(self, "cot_prompting", True)
        if self.numeric_risk_prompting and self.cot_prompting:
            raise ConfigError(
                "numeric risk prompting and chain-of-thought prompting are two different question modes; "
                "choose one (--numeric-risk-prompting or --cot-prompting)",
                parameter="cot_prompting",
                value=True,
            )
        if self.few_shot is not None and self.use_chat_template:
            raise ConfigError(
                "few-shot prompting cannot be combined with the chat template; drop --few-shot or --use-chat-template",
                parameter="few_shot",
                value=self.few_shot.n_shots,
            )
        if self.cot_prompting and self.use_chat_template:
            raise ConfigError(
                "chain-of-thought prompting applies the chat template itself and cannot be combined with "
                "--use-chat-template; drop one of them",
                parameter="use_chat_template",
                value=True,
            )
        if self.cot_prompting and self.few_shot is not None:
            raise ConfigError(
                "chain-of-thought prompting runs zero-shot; drop --few-shot or --cot-prompting",
                parameter="few_shot",
                value=self.few_shot.n_shots,
            )
        if self.cot_prompting and not self.show_question:
            raise ConfigError(
                "chain-of-thought prompts are instructions about their question, so show_question=false has no "
                "chain-of-thought form (folktexts 0.7.1 fails on it too); drop --variation show_question=false",
                parameter="show_question",
                value=False,
            )
        chat_path = self.use_chat_template or self.cot_prompting
        for name in ("system_prompt", "chat_prompt"):
            if getattr(self, name) != DEFAULT and not chat_path:
                flag = "--" + name.replace("_", "-")
                warnings.warn(
                    f"{flag} has no effect without --use-chat-template (or --cot-prompting); it is ignored",
                    PromptConfigWarning,
                    stacklevel=3,
                )
        if self.numeric_risk_prompting and self.chat_prompt != DEFAULT and not (self.chat_prompt or "").endswith("0."):
            raise ConfigError(
                f"with numeric risk prompting the chat prompt is the answer prefill and must end with '0.' "
                f"so the digits that follow are the probability; got {self.chat_prompt!r}",
                parameter="chat_prompt",
                value=self.chat_prompt,
            )

    # -- derived -------------------------------------------------------------------
    @property
    def mode(self) -> Literal["multiple_choice", "numeric", "cot"]:
        """The question mode."""
        if self.cot_prompting:
            return "cot"
        return "numeric" if self.numeric_risk_prompting else "multiple_choice"

    @property
    def is_chat(self) -> bool:
        """Whether prompts are delivered as chat messages (chat template or chain-of-thought)."""
        return self.use_chat_template or self.cot_prompting

    @property
    def chat_system_prompt(self) -> str | None:
        """The system message of chat prompts: folktexts' default for the mode, the text given, or None (none)."""
        return CHAT_SYSTEM_PROMPTS[self.mode] if self.system_prompt == DEFAULT else self.system_prompt

    @property
    def chat_prefill(self) -> str:
        """The assistant prefill of chat prompts: folktexts' default for the mode, the text given, or '' (none)."""
        return CHAT_PREFILLS[self.mode] if self.chat_prompt == DEFAULT else self.chat_prompt or ""

    def variations(self) -> dict[str, Any]:
        """The variation keys that differ from their defaults (CLI spelling of the values)."""
        default = PromptConfig()
        out: dict[str, Any] = {}
        for key in VARIATION_KEYS:
            value = getattr(self, key)
            if value != getattr(default, key):
                out[key] = value
        return out

    def with_variations(self, items: Iterable[str] | Mapping[str, Any]) -> PromptConfig:
        """A copy with ``--variation`` overrides applied (strings are parsed by :func:`parse_variations`)."""
        parsed = dict(items) if isinstance(items, Mapping) else parse_variations(items)
        unknown = sorted(set(parsed) - set(VARIATION_KEYS))
        if unknown:
            raise ConfigError(
                f"unknown variation key(s) {', '.join(unknown)}; known keys: {', '.join(VARIATION_KEYS)}",
                parameter="variation",
                value=unknown,
            )
        return replace(self, **parsed)

    # -- serialisation -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "few_shot":
                value = None if value is None else value.to_dict()
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PromptConfig:
        """Inverse of :meth:`to_dict`; unknown keys raise :class:`ConfigError`."""
        kwargs = config_fields(cls, data, "prompt config")
        if kwargs.get("few_shot") is not None:
            kwargs["few_shot"] = FewShotConfig.from_dict(kwargs["few_shot"])
        if "order" in kwargs and isinstance(kwargs["order"], list):
            kwargs["order"] = tuple(kwargs["order"])
        return cls(**kwargs)

    def canonical_json(self) -> str:
        """Sorted, compact JSON of the config and :data:`PROMPT_FORMAT_VERSION` (what is hashed)."""
        return canonical_json({"prompt_format_version": PROMPT_FORMAT_VERSION, **self.to_dict()})

    def fingerprint(self) -> str:
        """SHA-256 hex digest of :meth:`canonical_json`."""
        return self._fingerprint

    @cached_property
    def _fingerprint(self) -> str:  # configs are frozen, so the hash is computed once
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()

    @cached_property
    def name(self) -> str:
        """Short deterministic name for results folders, e.g. ``mc-zeroshot-3f2a9c1b``.

        Mode (``mc``, ``num``, ``cot``/``cot-think``), delivery (``zeroshot``,
        ``chat``, or the few-shot short name), ``var`` when a variation is set,
        ``noob`` without order-bias correction, then the first 8 hex digits of
        the fingerprint, so two different configs never share a name.
        """
        mode = {"multiple_choice": "mc", "numeric": "num", "cot": "cot"}[self.mode]
        if self.enable_thinking:
            mode += "-think"
        if self.few_shot is not None:
            delivery = self.few_shot.short_name
        elif self.use_chat_template:
            delivery = "chat"
        else:
            delivery = "zeroshot"
        parts = [mode, delivery]
        if self.variations():
            parts.append("var")
        if not self.correct_order_bias and self.mode == "multiple_choice":
            parts.append("noob")
        parts.append(self.fingerprint()[:8])
        return "-".join(parts)


def field_doc(cls: type, name: str) -> str:
    """The documentation of one field of any folkscope config dataclass (used as CLI help)."""
    for f in fields(cls):
        if f.name == name:
            return str(f.metadata.get("doc", ""))
    raise ConfigError(f"{cls.__name__} has no field {name!r}", parameter="name", value=name)
