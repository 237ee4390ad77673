"""A fake model that plays a chosen reference behaviour on numeric problems.

The fake backend's tokenizer splits words into several tokens (bytes, a
space merged with the next byte), so the rule below spreads the target
probability of each option word over its tokens as a trie: at the prompt the
first tokens of the options get their summed targets, after a partial word the
next token gets the conditional share. The product along a word is then
exactly the target, which exercises multi-token scoring and shared prefixes
("blue", "black", "brown").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from folkscope.engine import Engine
from folkscope.engine.backends.fake import FakeBackend, FakeTokenizer
from folkscope.metrics import pick_higher_baseline, reference_behaviour
from folkscope.numeric import NumericProblem, engine_prompt, word_variants

_TOK = FakeTokenizer()


def _pieces(text: str) -> list[str]:
    return [_TOK.decode([t]) for t in _TOK.encode(text)]


def behaviour_probs(name: str, ideal: Sequence[float]) -> np.ndarray:
    """Π of a behaviour: a reference behaviour name or ``pick_higher_q=0.7``."""
    if name.startswith("pick_higher_q="):
        return pick_higher_baseline([list(ideal)], q=float(name.split("=")[1]))[0]
    return reference_behaviour(name, [list(ideal)])[0]


def behaviour_rule(
    problems: Sequence[NumericProblem], name: str, *, chat: bool = False, render: Callable[[object], str]
) -> Callable[[str], Mapping[str, float] | None]:
    """Next-token rule putting ``behaviour_probs`` on the `` word`` variant of each option."""
    table: dict[str, tuple[dict[str, float], list[str]]] = {}
    longest = 0
    for p in problems:
        target = behaviour_probs(name, p.ideal)
        words = {" " + o: float(q) for o, q in zip(p.options, target)}
        firsts = {_pieces(v)[0] for o in p.options for v in word_variants(o)}
        table[render(engine_prompt(p, chat=chat))] = (words, sorted(firsts))
        longest = max(longest, *(len(w) for w in words))

    def rule(text: str) -> Mapping[str, float] | None:
        for cut in range(0, longest + 1):
            prompt, partial = text[: len(text) - cut], text[len(text) - cut :]
            if prompt not in table:
                continue
            words, firsts = table[prompt]
            done = _pieces(partial) if partial else []
            nxt: dict[str, float] = {}
            mass = 0.0
            for word, q in words.items():
                toks = _pieces(word)
                if toks[: len(done)] == done and len(toks) > len(done):
                    nxt[toks[len(done)]] = nxt.get(toks[len(done)], 0.0) + q
                    mass += q
            if not done:
                return {**{f: 0.0 for f in firsts}, **nxt}
            if mass <= 0:
                return None
            return {t: q / mass for t, q in nxt.items()}
        return None

    return rule


def behaviour_engine(
    problems: Sequence[NumericProblem],
    name: str,
    *,
    chat: bool = False,
    fallback: Callable[[str], Mapping[str, float] | None] | None = None,
    **engine_options: object,
) -> Engine:
    """An engine whose fake model plays behaviour ``name`` on ``problems`` (and follows
    ``fallback`` on any other text, e.g. a matching-pennies player)."""
    holder: dict[str, Callable[[str], Mapping[str, float] | None]] = {}

    def rule(text: str) -> Mapping[str, float] | None:
        out = holder["rule"](text)
        return out if out is not None or fallback is None else fallback(text)

    backend = FakeBackend(f"plays-{name}", next_token_probs=rule)
    engine = Engine(backend, cache=None, progress=False, **engine_options)  # type: ignore[arg-type]
    holder["rule"] = behaviour_rule(problems, name, chat=chat, render=engine.render)
    return engine
