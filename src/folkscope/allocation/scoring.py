"""Candidate scores from a model, three ways (Chen, Ji & Evans 2024, section 3.2).

pointwise
    One candidate per prompt; the answer label's next-token probabilities
    (each label's tokenizations summed, renormalised over the labels) give
    ``score = Σ_y P_n(y | candidate) γ_y`` (Yes/No -> 1/0, grades -> 1..5).
    A candidate is scored once, whatever pools it lands in.
pairwise
    Every pair of a pool, in both orders (A/B swapped), with C for "equally
    good". By default (``answer="generated"``) each prompt gets a short
    generation and the letter it states is parsed
    (:func:`read_pair_answer`), as the paper reads what the model writes, so
    an answer naming no candidate is counted (``unread``) and the shares of
    the paper's table 2 are measured; ``answer="probability"`` takes the most
    probable of A, B, C instead (backends with log-probabilities; where a
    backend cannot give them, the letter a short generation states, counted
    as ``read_from_generation``). Points (:func:`pair_points`): ``paper``, a
    candidate chosen in both orders wins the pair (1 point), a tie answer is
    worth 0.25 per prompt and any other disagreement gives 0.5 to each;
    ``authors``, per prompt 0.5 to the candidate named, 0.25 each on a tie,
    0 on an unread answer. A candidate's score is the sum over its opponents
    in the pool. The answer shares of the paper's table 2 are reported
    (:func:`answer_shares`): regular (a candidate named), tie, unread,
    flipped (each order picked a different candidate) and inconsistent (the
    two answers differ in any way).
listwise
    The whole pool in one prompt; the model writes a ranking, read back by
    :func:`folkscope.readout.parse_ranking`; score = 1 for first place down to
    0 for last (candidates it does not place share the remaining places). A
    pool whose answer states no ranking (a description of the candidates, an
    echoed resume, a refusal) is unparseable: its candidates get NaN and are
    counted (``unparseable_pools``), never scored.
"""

from __future__ import annotations

import re
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from folkscope.allocation.candidates import CandidateSet
from folkscope.allocation.templates import TaskTemplate
from folkscope.engine import Engine, GenerateRequest, GenerationSettings, word_variants
from folkscope.errors import ConfigError
from folkscope.prompting import listwise_prompt, pairwise_prompt, pointwise_prompt
from folkscope.readout import parse_choice, parse_ranking, read_choices, strip_thinking

__all__ = [
    "MODES",
    "PAIR_ANSWERS",
    "PAIR_POINTS",
    "answer_shares",
    "listwise_scores",
    "pair_points",
    "pairwise_scores",
    "pointwise_scores",
    "read_pair_answer",
]

#: the scoring modes: one candidate per prompt, every pair of a pool compared, or the whole pool ranked in one prompt
MODES = ("pointwise", "pairwise", "listwise")
#: how a pairwise prompt's answer is read: the letter a generation states (the paper), or the most probable letter
PAIR_ANSWERS = ("generated", "probability")
#: pairwise point rules: the paper's (section 3.2) and the authors' code's per-prompt rule
PAIR_POINTS = ("paper", "authors")
#: tokens a pairwise answer may take: room for "Candidate B is the better fit." before the letter is lost
PAIR_ANSWER_TOKENS = 32
_PAIR_CHOICES = ("A", "B", "C")
#: an answer without a letter that says the two are equally good (the paper counts it a tie)
_TIE = re.compile(r"\bequally\b|\bequal\b|\b(?:a|it'?s a) tie\b|\bidentical\b|\bboth (?:candidates|essays|are)\b", re.I)


def pointwise_scores(
    engine: Engine, candidates: CandidateSet, template: TaskTemplate, *, chat: bool = True
) -> pd.DataFrame:
    """One row per candidate: ``candidate_id``, ``score``, ``label_mass`` and ``p_<label>`` (renormalised)."""
    frame = candidates.frame
    prompts = [
        [pointwise_prompt(candidates.context, text, system=template.system, question=template.pointwise, chat=chat)]
        for text in frame["text"]
    ]
    readout = read_choices(
        engine, prompts, template.labels, variants=word_variants, unit="candidates", description="pointwise scoring"
    )
    probs = readout.probs
    out = pd.DataFrame(
        {
            "candidate_id": frame["candidate_id"].to_numpy(),
            "score": probs @ np.asarray(template.relevance),
            "label_mass": readout.mass[:, 0],
        }
    )
    for j, label in enumerate(template.labels):
        out[f"p_{label}"] = probs[:, j]
    return out


def pairwise_scores(
    engine: Engine,
    candidates: CandidateSet,
    pools: pd.DataFrame,
    template: TaskTemplate,
    *,
    chat: bool = True,
    answer: str = "generated",
    points: str = "paper",
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """Scores per (pool, candidate), the answers per pair, and the answer shares.

    ``pools`` has one row per (pool, candidate_id). ``answer`` is how each
    prompt's answer is read (:data:`PAIR_ANSWERS`: ``generated``, the letter a
    short generation names, as the paper parses what the model writes; or
    ``probability``, the most probable of A/B/C), ``points`` the point rule
    (:data:`PAIR_POINTS`, see :func:`pair_points`). Returns ``(scores, pairs,
    shares)``: ``scores`` with ``pool, candidate_id, score``; ``pairs`` with
    ``pool, a, b, answer_ab, answer_ba`` (``"a"``, ``"b"``, ``"tie"`` or
    ``"unread"``), the points of each, the generated texts (``response_ab``,
    ``response_ba``; empty where read from probabilities) and whether each
    answer was generated; ``shares``: the answer shares (paper table 2) and counts.
    """
    if answer not in PAIR_ANSWERS:
        raise ConfigError(
            f"answer must be one of {', '.join(PAIR_ANSWERS)}, got {answer!r}", parameter="pairwise_answer"
        )
    if points not in PAIR_POINTS:
        raise ConfigError(
            f"points must be one of {', '.join(PAIR_POINTS)}, got {points!r}", parameter="pairwise_points"
        )
    texts = candidates.frame.set_index("candidate_id")["text"]
    rows = []
    for pool, members in pools.groupby("pool", sort=True):
        for a, b in combinations(members["candidate_id"].tolist(), 2):
            rows.append((pool, a, b))
    prompts = [
        [
            pairwise_prompt(
                candidates.context, texts[a], texts[b], system=template.system, question=template.pairwise, chat=chat
            ),
            pairwise_prompt(
                candidates.context, texts[b], texts[a], system=template.system, question=template.pairwise, chat=chat
            ),
        ]
        for _, a, b in rows
    ]
    if answer == "generated":
        answers = np.full((len(rows), 2), "unread", dtype=object)
        to_generate = np.ones((len(rows), 2), dtype=bool)
    else:
        answers, to_generate = _probability_answers(engine, prompts)
    generated = _generated_answers(engine, prompts, to_generate)
    for (i, o), (said, _) in generated.items():
        answers[i, o] = said
    ab, ba = answers[:, 0], answers[:, 1]
    points_a, points_b = pair_points(ab, ba, rule=points)
    pairs = pd.DataFrame(
        {
            "pool": [r[0] for r in rows],
            "a": [r[1] for r in rows],
            "b": [r[2] for r in rows],
            "answer_ab": ab,
            "answer_ba": ba,
            "points_a": points_a,
            "points_b": points_b,
            "response_ab": [generated.get((i, 0), ("", ""))[1] for i in range(len(rows))],
            "response_ba": [generated.get((i, 1), ("", ""))[1] for i in range(len(rows))],
            "generated_ab": [(i, 0) in generated for i in range(len(rows))],
            "generated_ba": [(i, 1) in generated for i in range(len(rows))],
        }
    )
    won = pd.concat(
        [
            pairs[["pool", "a", "points_a"]].set_axis(["pool", "candidate_id", "score"], axis=1),
            pairs[["pool", "b", "points_b"]].set_axis(["pool", "candidate_id", "score"], axis=1),
        ]
    )
    scores = (
        pools[["pool", "candidate_id"]]
        .merge(
            won.groupby(["pool", "candidate_id"], as_index=False)["score"].sum(),
            on=["pool", "candidate_id"],
            how="left",
        )
        .fillna({"score": 0.0})
    )
    return scores, pairs, answer_shares(ab, ba, read_from_generation=len(generated))


def answer_shares(ab: np.ndarray, ba: np.ndarray, *, read_from_generation: int = 0) -> dict[str, float]:
    """The answer shares of the paper's table 2 over the pairs' two answers (``"a"``, ``"b"``, ``"tie"``, ``"unread"``).

    Per prompt: regular (a candidate named), tie, unread (neither; so regular
    can fall below 1 - tie, as in the paper's table). Per pair: flipped (each
    order named a different candidate) and inconsistent (the two answers differ).

    Examples
    --------
    >>> s = answer_shares(np.array(["a", "a", "tie"]), np.array(["a", "b", "unread"]))
    >>> [round(s[k], 3) for k in ("regular", "tie", "unread", "flipped", "inconsistent")]
    [0.667, 0.167, 0.167, 0.333, 0.667]
    """
    n_pairs = len(ab)
    said = np.concatenate([ab, ba]).astype(object)
    named_ab, named_ba = np.isin(ab, ["a", "b"]), np.isin(ba, ["a", "b"])
    nan = float("nan")
    return dict(
        n_pairs=n_pairs,
        n_prompts=2 * n_pairs,
        regular=float(np.isin(said, ["a", "b"]).mean()) if n_pairs else nan,
        tie=float((said == "tie").mean()) if n_pairs else nan,
        unread=float((said == "unread").mean()) if n_pairs else nan,
        flipped=float((named_ab & named_ba & (ab != ba)).mean()) if n_pairs else nan,
        inconsistent=float((ab != ba).mean()) if n_pairs else nan,
        read_from_generation=read_from_generation,
    )


def pair_points(ab: np.ndarray, ba: np.ndarray, *, rule: str = "paper") -> tuple[np.ndarray, np.ndarray]:
    """Points of a and of b in each pair from its two answers (``"a"``, ``"b"``, ``"tie"``, ``"unread"``).

    ``paper`` (section 3.2): 1 to a candidate named in both orders; 0.25 per
    tie answer, so two ties give 0.5 each; any other disagreement (the orders
    differ, an unread answer) 0.5 each, so every pair hands out one point.
    ``authors`` (the authors' code, per prompt): 0.5 to the candidate an answer
    names, 0.25 to each on a tie, nothing on an unread answer; summed over the
    two prompts (one "a" and one tie: a 0.75, b 0.25; two unread: 0 each).

    Examples
    --------
    >>> ab, ba = np.array(["a", "a", "tie", "unread"]), np.array(["a", "tie", "tie", "unread"])
    >>> [p.tolist() for p in pair_points(ab, ba)]
    [[1.0, 0.5, 0.5, 0.5], [0.0, 0.5, 0.5, 0.5]]
    >>> [p.tolist() for p in pair_points(ab, ba, rule="authors")]
    [[1.0, 0.75, 0.5, 0.0], [0.0, 0.25, 0.5, 0.0]]
    """
    if rule == "paper":
        consistent = (ab == ba) & np.isin(ab, ["a", "b"])
        points_a = np.where(consistent, (ab == "a").astype(float), 0.5)
        return points_a, 1.0 - points_a
    if rule != "authors":
        raise ConfigError(f"rule must be one of {', '.join(PAIR_POINTS)}, got {rule!r}", parameter="pairwise_points")
    said = np.stack([ab, ba])
    tie = 0.25 * (said == "tie")
    return (0.5 * (said == "a") + tie).sum(axis=0), (0.5 * (said == "b") + tie).sum(axis=0)


def read_pair_answer(text: str, order: int) -> str:
    """What a generated pairwise answer says, as ``"a"``, ``"b"``, ``"tie"`` or ``"unread"``.

    The letter it states (:func:`folkscope.readout.parse_choice` over A, B and
    C for "equally good"), mapped through the prompt's order (``order`` 0
    shows a as A; 1 shows b as A). Without a letter, an answer that says the
    two are equally good ("both are equally qualified", "it's a tie") is a
    tie, as the paper counts it; anything else names no candidate: unread.

    Examples
    --------
    >>> read_pair_answer("I would pick B.", 0), read_pair_answer("I would pick B.", 1)
    ('b', 'a')
    >>> read_pair_answer("Both are equal, C", 0), read_pair_answer("They are equally qualified.", 1)
    ('tie', 'tie')
    >>> read_pair_answer("xq#@!zz", 0), read_pair_answer("Neither is a good fit.", 0)
    ('unread', 'unread')
    """
    choice = parse_choice(text, _PAIR_CHOICES)
    if choice is None:
        return "tie" if _TIE.search(strip_thinking(text)) else "unread"
    return ("a", "b", "tie")[(0, 1, 2)[choice] if order == 0 else (1, 0, 2)[choice]]


def _probability_answers(engine: Engine, prompts: list[list[Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Each prompt's most probable letter of A, B, C as ``"a"``/``"b"``/``"tie"``, and where none could be read.

    A web API whose top log-probabilities miss the letters gives no
    probabilities: those prompts are marked for a short generation instead.
    """
    # ordering 0 shows (a, b) as (A, B); ordering 1 shows (b, a): its A stands for b
    readout = read_choices(
        engine,
        prompts,
        _PAIR_CHOICES,
        orderings=[(0, 1, 2), (1, 0, 2)],
        unit="pairs",
        description="pairwise comparisons",
    )
    names = np.array(["a", "b", "tie"])
    raw = readout.raw
    ok = np.isfinite(raw).all(axis=2) & (np.nan_to_num(raw).sum(axis=2) > 0)
    answers = np.where(ok, names[np.nan_to_num(raw, nan=-1.0).argmax(axis=2)], "unread").astype(object)
    return answers, ~ok


def _generated_answers(
    engine: Engine, prompts: list[list[Any]], where_mask: np.ndarray
) -> dict[tuple[int, int], tuple[str, str]]:
    """A short generation for each marked (pair, order): what it says (:func:`read_pair_answer`) and its text."""
    where = [(int(i), int(o)) for i, o in zip(*np.nonzero(where_mask))]
    if not where:
        return {}
    settings = GenerationSettings(max_new_tokens=PAIR_ANSWER_TOKENS)
    results = engine.generate(
        [GenerateRequest(prompts[i][o], settings) for i, o in where],
        unit="answers",
        description="pairwise answers (generated)",
    )
    return {(i, o): (read_pair_answer(result.text, o), result.text) for (i, o), result in zip(where, results)}


def listwise_scores(
    engine: Engine,
    candidates: CandidateSet,
    pools: pd.DataFrame,
    template: TaskTemplate,
    *,
    chat: bool = True,
    max_new_tokens: int = 200,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scores per (pool, candidate) from the ranking each pool's answer states, and the answers per pool.

    Returns ``(scores, answers)``: ``scores`` with ``pool, candidate_id, rank, score``
    (NaN for a pool whose answer states no ranking); ``answers`` with ``pool, response, parsed, numbered, mentioned``
    (``mentioned``: candidates the answer places; ``numbered``: read from a list).
    """
    frame = candidates.frame.set_index("candidate_id")
    groups = list(pools.groupby("pool", sort=True))
    prompts = []
    for _, members in groups:
        ids = members["candidate_id"].tolist()
        prompts.append(
            listwise_prompt(
                candidates.context,
                frame.loc[ids, "text"].tolist(),
                _names(frame, ids),
                system=template.system,
                question=template.listwise,
                entry=template.entry,
                chat=chat,
            )
        )
    settings = GenerationSettings(max_new_tokens=max_new_tokens)
    results = engine.generate(
        [GenerateRequest(p, settings) for p in prompts], unit="pools", description="listwise ranking"
    )
    score_rows: list[dict[str, Any]] = []
    answer_rows: list[dict[str, Any]] = []
    for (pool, members), result in zip(groups, results):
        ids = members["candidate_id"].tolist()
        ranking = parse_ranking(result.text, _names(frame, ids))
        answer_rows.append(
            {
                "pool": pool,
                "response": result.text,
                "parsed": ranking is not None,
                "numbered": bool(ranking and ranking.numbered),
                "mentioned": ranking.mentioned if ranking else 0,
            }
        )
        ranks = ranking.ranks if ranking else np.full(len(ids), np.nan)
        scores = ranking.scores if ranking else np.full(len(ids), np.nan)
        for cid, rank, score in zip(ids, ranks, scores):
            score_rows.append({"pool": pool, "candidate_id": cid, "rank": float(rank), "score": float(score)})
    return pd.DataFrame(score_rows), pd.DataFrame(answer_rows)


def _names(frame: pd.DataFrame, ids: list[str]) -> list[str]:
    """The names the model ranks: the candidates' own names, else their ids (essays have no names)."""
    names = frame.loc[ids, "name"].tolist()
    return [n if n else str(cid) for n, cid in zip(names, ids)]
