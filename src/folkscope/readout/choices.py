"""Choice probabilities: which of a few options the model picks, read from its own probabilities.

Every part asks a model to pick among a few options: a risk question's
answer letters, an epidemiology question's letters over up to 128
orderings, the 22 likelihood bins, a screening question's Yes/No, a
numeric-calibration problem's colour words, the faces of a coin. The
reading is the same each time, and it lives here once:

1. each choice the model may answer with (``"A"``, ``"Yes"``) is expanded
   into its usual tokenizations (:func:`~folkscope.engine.token_variants`,
   or the caller's rule) and their probabilities are summed; the variants
   are distinct token sequences, hence disjoint events;
2. in each ordering the choice under position j stands for one option;
   the probabilities go back to the options' own order;
3. they are renormalised over the options (the mass left on other words is
   kept, as a diagnostic), and averaged over the orderings.

An option the backend could not score (a web API left it out of its top
log-probabilities, and it could matter) makes that ordering NaN, and so the
item: never a guess. Orderings of one text prompt that share their opening
are sent as one prefix group, so the engine runs the shared text once.

Examples
--------
>>> from folkscope.engine import Engine
>>> engine = Engine.from_model("demo", backend="fake", use_cache=False)
>>> out = read_choices(engine, [["Q1\\nA. yes\\nB. no\\nAnswer:", "Q1\\nA. no\\nB. yes\\nAnswer:"]], ("A", "B"),
...                    orderings=[(0, 1), (1, 0)], shared=["Q1\\n"])
>>> out.raw.shape, out.probs.shape, bool(np.allclose(out.probs.sum(axis=1), 1.0))
((1, 2, 2), (1, 2), True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from folkscope.engine import Engine, PrefixGroupRequest, ScoreRequest, token_variants
from folkscope.engine.requests import ChatPrompt, Prompt
from folkscope.engine.tokens import expand_variants
from folkscope.errors import ConfigError
from folkscope.prompting.types import RenderedPrompt

__all__ = ["ChoiceReadout", "OptionScores", "most_likely", "read_choices", "read_rendered", "score_options"]


@dataclass(frozen=True, eq=False)
class ChoiceReadout:
    """Probabilities of each item's options, per ordering and averaged.

    Attributes
    ----------
    raw : ndarray of shape (n_items, n_orderings, n_options)
        Summed variant probability of each option (in the options' own
        order) in each ordering, not renormalised; NaN where unscored.
    """

    raw: np.ndarray

    @property
    def mass(self) -> np.ndarray:
        """Probability on the options per (item, ordering), shape (n_items, n_orderings); NaN where unscored."""
        return self.raw.sum(axis=2)

    @property
    def per_ordering(self) -> np.ndarray:
        """``raw`` renormalised over the options; NaN where the mass is NaN or zero."""
        mass = self.mass[:, :, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(np.isfinite(mass) & (mass > 0), self.raw / mass, np.nan)

    @property
    def probs(self) -> np.ndarray:
        """Renormalised probabilities averaged over the orderings, shape (n_items, n_options); NaN if any ordering is."""
        return self.per_ordering.mean(axis=1)


def _permutations(orderings: Sequence[Sequence[int]] | None, n_choices: int) -> list[np.ndarray]:
    if orderings is None:
        return [np.arange(n_choices)]
    perms = [np.asarray(o, dtype=np.int64) for o in orderings]
    if not perms or any(sorted(p.tolist()) != list(range(n_choices)) for p in perms):
        raise ConfigError(
            f"orderings must be permutations of the {n_choices} options, got {[p.tolist() for p in perms]}",
            parameter="orderings",
            value=orderings,
        )
    return perms


def read_choices(
    engine: Engine,
    prompts: Sequence[Sequence[Prompt]],
    choices: Sequence[str],
    *,
    orderings: Sequence[Sequence[int]] | None = None,
    shared: Sequence[str] | None = None,
    variants: Callable[[str], Sequence[str]] = token_variants,
    unit: str = "rows",
    description: str = "scoring",
    context_size: int | None = None,
) -> ChoiceReadout:
    """Read which option the model picks, for many items each asked in one or more orderings.

    Parameters
    ----------
    engine : Engine
        Any backend.
    prompts : sequence of sequences of prompts
        Per item, one prompt per ordering (text or chat).
    choices : sequence of str
        What the model answers with, by position: letters ``("A", "B")``,
        words ``("Yes", "No")``. The same in every ordering.
    orderings : sequence of permutations, optional
        ``orderings[o][j]`` is the option that ``choices[j]`` stands for in
        ordering ``o``. Default: one ordering, choice j is option j.
    shared : sequence of str, optional
        Per item, text that all its orderings' (text) prompts start with; the
        orderings go to the engine as one prefix group. It should end at a
        clean token boundary (a line break).
    variants : callable, default :func:`~folkscope.engine.token_variants`
        Tokenizations of one choice whose probabilities are summed.
    unit, description : str
        Progress wording (what one item is; what is being done).
    context_size : int, optional
        Prompts longer than this many tokens are cut to their last ones (the
        requests' ``context_size``, as folktexts truncates).

    Returns
    -------
    ChoiceReadout

    Raises
    ------
    ConfigError
        Prompts per item do not match the orderings, or a shared text is not
        the start of its item's prompts.
    """
    perms = _permutations(orderings, len(choices))
    vs = expand_variants(list(choices), variants=variants)
    items = [tuple(item) if not isinstance(item, (str, ChatPrompt)) else (item,) for item in prompts]
    k = len(perms)
    if any(len(item) != k for item in items):
        raise ConfigError(f"every item needs one prompt per ordering ({k})", parameter="prompts")
    raw = np.full((len(items), k, len(choices)), np.nan)
    if shared is not None:
        if len(shared) != len(items):
            raise ConfigError(f"shared has {len(shared)} entries for {len(items)} items", parameter="shared")
        requests = []
        for text, item in zip(shared, items):
            if not all(isinstance(p, str) and p.startswith(text) for p in item):
                raise ConfigError(
                    "a shared text must start every (text) prompt of its item", parameter="shared", value=text
                )
            requests.append(PrefixGroupRequest(text, tuple(str(p)[len(text) :] for p in item), vs.tokens, context_size))
        for i, group in enumerate(engine.score_groups(requests, unit=unit, description=description)):
            for o, res in enumerate(group.results):
                raw[i, o, perms[o]] = vs.merge_probs(res.logprobs, bound=res.bound)
        return ChoiceReadout(raw)
    for o in range(k):
        described = description if k == 1 else f"{description} (ordering {o + 1} of {k})"
        results = engine.score(
            [ScoreRequest(item[o], vs.tokens, context_size) for item in items], unit=unit, description=described
        )
        for i, res in enumerate(results):
            raw[i, o, perms[o]] = vs.merge_probs(res.logprobs, bound=res.bound)
    return ChoiceReadout(raw)


def read_rendered(
    engine: Engine,
    rendered: Iterable[RenderedPrompt],
    *,
    unit: str = "rows",
    description: str = "scoring",
    context_size: int | None = None,
) -> ChoiceReadout:
    """:func:`read_choices` for the prompt layer's rendered questions, each in every ordering of its answers.

    Chat prompts go one request per ordering; text prompts one prefix group
    per question, cut where its orderings stop sharing text
    (:meth:`~folkscope.prompting.RenderedPrompt.ordering_split`). All
    questions must have the same orderings (they come from one renderer).
    """
    items = list(rendered)
    if not items:
        raise ConfigError("no rendered questions to read", parameter="rendered")
    orderings = items[0].orderings
    letters, permutations = orderings[0].letters, [o.permutation for o in orderings]
    if items[0].config.is_chat:
        prompts = [[r.to_prompt(o) for o in range(len(orderings))] for r in items]
        return read_choices(
            engine,
            prompts,
            letters,
            orderings=permutations,
            unit=unit,
            description=description,
            context_size=context_size,
        )
    splits = [r.ordering_split() for r in items]
    prompts = [[shared + rest for rest in rests] for shared, rests in splits]
    return read_choices(
        engine,
        prompts,
        letters,
        orderings=permutations,
        shared=[s for s, _ in splits],
        unit=unit,
        description=description,
        context_size=context_size,
    )


@dataclass(frozen=True, eq=False)
class OptionScores:
    """One item's options as scored: raw probabilities (not renormalised) and how they were read.

    Attributes
    ----------
    probs : ndarray of shape (n_options,)
        Summed probability of each option's variants; NaN where unscored.
    n_variants : ndarray of int
        Tokenizations summed per option.
    min_tokens : ndarray of int
        Fewest tokens among an option's variants (> 1: a multi-token word for this model).
    """

    probs: np.ndarray
    n_variants: np.ndarray
    min_tokens: np.ndarray


def score_options(
    engine: Engine,
    prompts: Sequence[Prompt],
    options: Sequence[Sequence[str]],
    *,
    variants: Callable[[str], Sequence[str]] = token_variants,
    unit: str = "items",
    description: str = "scoring",
    chunk: int | None = None,
) -> list[OptionScores]:
    """Probabilities of each item's own options (which may differ per item), as full continuations.

    ``chunk`` sends that many requests per engine call, so the result cache
    holds every finished chunk of a long run that is interrupted.
    """
    if len(prompts) != len(options):
        raise ConfigError(f"{len(prompts)} prompts for {len(options)} option lists", parameter="options")
    sets = [expand_variants(list(opts), variants=variants) for opts in options]
    requests = [ScoreRequest(p, vs.tokens) for p, vs in zip(prompts, sets)]
    step = chunk or max(len(requests), 1)
    results = []
    for start in range(0, len(requests), step):
        part = requests[start : start + step]
        where = "" if len(requests) <= step else f" ({start + 1}-{start + len(part)} of {len(requests)})"
        results.extend(engine.score(part, unit=unit, description=f"{description}{where}"))
    out = []
    for vs, res in zip(sets, results):
        owner = np.asarray(vs.owner)
        n_tokens = np.asarray(res.num_tokens)
        out.append(
            OptionScores(
                probs=vs.merge_probs(res.logprobs, bound=res.bound),
                n_variants=np.bincount(owner, minlength=len(vs.choices)),
                min_tokens=np.array([n_tokens[owner == j].min() for j in range(len(vs.choices))]),
            )
        )
    return out


def most_likely(probs: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """The value of each row's most probable option (a likelihood bin's midpoint); NaN rows stay NaN.

    Examples
    --------
    >>> most_likely(np.array([[0.2, 0.7, 0.1], [np.nan, np.nan, np.nan]]), [0.0, 0.025, 0.075])
    array([0.025,   nan])
    """
    p = np.asarray(probs, dtype=float)
    vals = np.asarray(values, dtype=float)
    if p.ndim != 2 or p.shape[1] != len(vals):
        raise ConfigError(f"probs must have one column per value ({len(vals)}), got shape {p.shape}", parameter="probs")
    ok = np.isfinite(p).all(axis=1)
    return np.where(ok, vals[np.nan_to_num(p, nan=-1.0).argmax(axis=1)], np.nan)
