"""Tokenization helpers: answer-letter variants, bulk and continuation encoding.

Answer variants
---------------
A model asked "Answer:" may put the letter ``A`` right after the colon or
after a space, and BPE vocabularies hold both ``"A"`` and ``" A"`` as single
tokens. The probability of answering A is the sum over these *tokenization
variants*. :func:`token_variants` lists them for one choice and
:func:`expand_variants` builds a :class:`VariantSet` that maps the flat list
of variant strings (to put in a :class:`~folkscope.engine.NextTokenRequest`
or :class:`~folkscope.engine.ScoreRequest`) back to the choices, summing
their probabilities::

    vs = expand_variants(["A", "B"], keep=engine.is_single_token)
    res = engine.next_token([NextTokenRequest(prompt, vs.tokens)])[0]
    p_a, p_b = vs.merge_probs(res.logprobs)         # P(A) = P("A") + P(" A")

Summing is right because the variants are distinct token sequences, i.e.
disjoint events for the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from folkscope.errors import ConfigError

__all__ = [
    "MISSING_TOLERANCE",
    "TokenizerLike",
    "VariantSet",
    "encode_continuations",
    "encode_texts",
    "expand_variants",
    "missing_is_negligible",
    "token_variants",
    "word_variants",
]


#: Largest share of probability that unscored variants may hold before a row is marked NaN.
MISSING_TOLERANCE = 1e-3


def missing_is_negligible(
    logprobs: Sequence[float] | np.ndarray, bound: float | None, tolerance: float = MISSING_TOLERANCE
) -> bool:
    """Whether the NaN (unscored) entries of ``logprobs`` can be left out: the one bound rule.

    Each NaN entry's probability is at most ``exp(bound)``; together they are
    negligible when that mass is at most ``tolerance`` times the scored
    entries' probability (renormalised probabilities then move by at most
    about ``tolerance``). No bound, or nothing scored: not negligible. Used by
    :meth:`VariantSet.merge_logprobs` and by the web-API backend to decide
    whether a candidate missing from the top log-probabilities is worth a request.

    Examples
    --------
    >>> missing_is_negligible([np.log(0.9), np.nan], bound=np.log(1e-5))
    True
    >>> missing_is_negligible([np.log(0.9), np.nan], bound=np.log(0.01))
    False
    >>> missing_is_negligible([np.log(0.9)], bound=None)  # nothing missing
    True
    """
    with np.errstate(invalid="ignore"):
        lp = np.asarray(logprobs, dtype=float)
    missing = np.isnan(lp)
    if not missing.any():
        return True
    present = np.exp(lp[~missing]).sum()
    return bool(bound is not None and present > 0 and missing.sum() * np.exp(bound) <= tolerance * present)


class TokenizerLike(Protocol):
    """The subset of a Hugging Face tokenizer the engine relies on."""

    def __call__(self, text: Any, **kwargs: Any) -> Any: ...

    def decode(self, ids: Sequence[int], **kwargs: Any) -> str: ...

    def apply_chat_template(self, conversation: Any, **kwargs: Any) -> Any: ...


def token_variants(choice: str) -> tuple[str, ...]:
    """The common tokenizations of one answer choice: as written and with/without a leading space.

    Parameters
    ----------
    choice : str
        E.g. ``"A"`` or ``" A"`` or ``"Yes"``.

    Returns
    -------
    tuple of str
        The choice first, then its variant.

    Examples
    --------
    >>> token_variants("A")
    ('A', ' A')
    >>> token_variants(" yes")
    (' yes', 'yes')
    """
    if not isinstance(choice, str) or not choice.strip():
        raise ConfigError(
            f"an answer choice must be a non-blank string, got {choice!r}", parameter="choice", value=choice
        )
    stripped = choice.lstrip(" ")
    spaced = " " + stripped
    return (choice, stripped) if choice.startswith(" ") else (choice, spaced)


def word_variants(word: str) -> tuple[str, ...]:
    """Common tokenizations of an answer word: as written, lower-case, capitalised, ± leading space.

    For words a model writes in free running text (a colour, a brand, Yes/No),
    where it may start the word in either case.

    Examples
    --------
    >>> word_variants("red")
    ('red', ' red', 'Red', ' Red')
    >>> word_variants("42")
    ('42', ' 42')
    """
    base = word.strip()
    forms = dict.fromkeys([base, base.lower(), base[:1].upper() + base[1:]])
    return tuple(dict.fromkeys(v for f in forms for v in (f, " " + f)))


@dataclass(frozen=True)
class VariantSet:
    """Choices expanded into tokenization variants, and the way back.

    Attributes
    ----------
    choices : tuple of str
    tokens : tuple of str
        Flat list of variant strings, to request.
    owner : tuple of int
        ``owner[k]`` is the index of the choice that ``tokens[k]`` belongs to.
    """

    choices: tuple[str, ...]
    tokens: tuple[str, ...]
    owner: tuple[int, ...]

    def merge_logprobs(
        self,
        logprobs: Sequence[float] | np.ndarray,
        *,
        bound: float | None = None,
        tolerance: float = MISSING_TOLERANCE,
    ) -> np.ndarray:
        """Log of the summed probability of each choice's variants, shape (n_choices,).

        A NaN entry is a variant the backend could not score (a web API left
        it out of its top log-probabilities). Its probability is at most
        ``exp(bound)``; when all NaN entries together could hold at most
        ``tolerance`` times the probability of the scored ones, they are left
        out (renormalised choice probabilities then move by at most about
        ``tolerance``). Otherwise, or without a bound, every choice is NaN:
        the row is marked, never filled with a guess.

        Examples
        --------
        >>> vs = expand_variants(["A", "B"])
        >>> vs.tokens
        ('A', ' A', 'B', ' B')
        >>> np.round(np.exp(vs.merge_logprobs(np.log([0.1, 0.2, 0.3, 0.05]))), 6)
        array([0.3 , 0.35])
        >>> lp = np.log([0.6, np.nan, 0.3, np.nan])
        >>> np.round(np.exp(vs.merge_logprobs(lp, bound=np.log(1e-5))), 6)  # two misses <= 2e-5 << 0.9
        array([0.6, 0.3])
        >>> vs.merge_logprobs(lp, bound=np.log(0.01))  # up to 0.02 missing: too much to ignore
        array([nan, nan])
        """
        with np.errstate(invalid="ignore"):
            lp = np.asarray(logprobs, dtype=float)
        if lp.shape != (len(self.tokens),):
            raise ConfigError(
                f"expected {len(self.tokens)} log-probabilities (one per variant), got shape {lp.shape}",
                parameter="logprobs",
                value=lp.shape,
            )
        missing = np.isnan(lp)
        if missing.any():
            if not missing_is_negligible(lp, bound, tolerance):
                return np.full(len(self.choices), np.nan)
            lp = np.where(missing, -np.inf, lp)
        out = np.full(len(self.choices), -np.inf)
        owner = np.asarray(self.owner)
        for c in range(len(self.choices)):
            vals = lp[owner == c]
            top = vals.max()
            if np.isfinite(top):
                out[c] = top + np.log(np.exp(vals - top).sum())
        return out

    def merge_probs(
        self,
        logprobs: Sequence[float] | np.ndarray,
        *,
        bound: float | None = None,
        tolerance: float = MISSING_TOLERANCE,
    ) -> np.ndarray:
        """Summed probability of each choice's variants, shape (n_choices,); NaN as in :meth:`merge_logprobs`."""
        return np.exp(self.merge_logprobs(logprobs, bound=bound, tolerance=tolerance))


def expand_variants(
    choices: Sequence[str],
    *,
    variants: Callable[[str], Sequence[str]] = token_variants,
    keep: Callable[[str], bool] | None = None,
) -> VariantSet:
    """Expand choices into their tokenization variants.

    Parameters
    ----------
    choices : sequence of str
        Distinct answer choices.
    variants : callable, default :func:`token_variants`
    keep : callable, optional
        Keep only variants for which ``keep(variant)`` is true, e.g.
        ``engine.is_single_token`` for next-token requests. Every choice must
        keep at least one variant.

    Raises
    ------
    ConfigError
        Two choices share a variant (their probabilities could not be told
        apart), or a choice keeps no variant.
    """
    tokens: list[str] = []
    owner: list[int] = []
    seen: dict[str, int] = {}
    for c, choice in enumerate(choices):
        kept = 0
        for variant in variants(choice):
            if keep is not None and not keep(variant):
                continue
            if variant in seen:
                if seen[variant] == c:
                    continue
                raise ConfigError(
                    f"choices {choices[seen[variant]]!r} and {choice!r} share the variant {variant!r}; "
                    "use choices that differ after stripping spaces",
                    parameter="choices",
                    value=list(choices),
                )
            seen[variant] = c
            tokens.append(variant)
            owner.append(c)
            kept += 1
        if kept == 0:
            raise ConfigError(
                f"no tokenization variant of choice {choice!r} was kept (e.g. none is a single token)",
                parameter="choices",
                value=list(choices),
            )
    return VariantSet(tuple(choices), tuple(tokens), tuple(owner))


def encode_texts(tokenizer: TokenizerLike, texts: Sequence[str], *, add_special_tokens: bool) -> list[tuple[int, ...]]:
    """Tokenize many texts in one call (fast tokenizers run it in parallel), each distinct text once."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        return []
    encoded = tokenizer(unique, add_special_tokens=add_special_tokens)["input_ids"]
    table = {text: tuple(int(i) for i in ids) for text, ids in zip(unique, encoded)}
    return [table[t] for t in texts]


def encode_continuations(tokenizer: TokenizerLike, texts: Sequence[str]) -> list[tuple[int, ...]]:
    """Token ids of continuations (candidates, suffixes) to append to an encoded prompt.

    Byte-level BPE tokenizers (GPT-2, Llama 3, SmolLM, Qwen) encode a text the
    same wherever it stands, so the text is encoded alone. SentencePiece
    tokenizers prepend a word-boundary marker to a text encoded alone, which
    would turn ``"A"`` into ``" A"``; when decoding does not give the text back,
    it is encoded after a newline anchor and the anchor's tokens removed.

    Raises
    ------
    ConfigError
        A text cannot be encoded so that it decodes back to itself.
    """
    unique = list(dict.fromkeys(texts))
    direct = encode_texts(tokenizer, unique, add_special_tokens=False)
    table: dict[str, tuple[int, ...]] = {}
    anchor = "\n"
    anchor_ids: tuple[int, ...] | None = None
    for text, ids in zip(unique, direct):
        if ids and tokenizer.decode(list(ids), clean_up_tokenization_spaces=False) == text:
            table[text] = ids
            continue
        if anchor_ids is None:
            anchor_ids = encode_texts(tokenizer, [anchor], add_special_tokens=False)[0]
        both = encode_texts(tokenizer, [anchor + text], add_special_tokens=False)[0]
        rest = both[len(anchor_ids) :]
        if (
            both[: len(anchor_ids)] != anchor_ids
            or not rest
            or tokenizer.decode(list(rest), clean_up_tokenization_spaces=False) != text
        ):
            raise ConfigError(
                f"cannot tokenize the continuation {text!r} on its own (it decodes to "
                f"{tokenizer.decode(list(ids))!r}); use a different candidate or suffix",
                parameter="candidates",
                value=text,
            )
        table[text] = rest
    return [table[t] for t in texts]
