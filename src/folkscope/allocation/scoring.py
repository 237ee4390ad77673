"""Candidate scores from a model, three ways (Chen, Ji & Evans 2024, section 3.2).

pointwise
    One candidate per prompt; the answer label's next-token probabilities
    (each label's tokenizations summed, renormalised over the labels) give
    ``score = Σ_y P_n(y | candidate) γ_y`` (Yes/No -> 1/0, grades -> 1..5).
    A candidate is scored once, whatever pools it lands in.
pairwise
    Every pair of a pool, in both orders (A/B swapped), with C for "equally
    good"; each prompt's answer is the most probable of A, B, C (where a
    backend cannot give those probabilities, the letter a short generation
    states; counted as ``read_from_generation``). A candidate
    chosen in both orders wins the pair (1 point); any other outcome (chosen
    once each, a tie stated once or twice, an unread answer) gives 0.5 to each
    (a tie answer is worth 0.25 per prompt, so two ties also give 0.5). Its
    score is the sum over its opponents in the pool. The answer shares of the
    paper's table 2 are reported: regular (a candidate named), tie, flipped
    (each order picked a different candidate) and inconsistent (the two
    answers differ in any way).
listwise
    The whole pool in one prompt; the model writes a ranking, read back by
    :func:`folkscope.readout.parse_ranking`; score = 1 for first place down to
    0 for last (candidates it does not place share the remaining places). A
    pool whose answer states no ranking (a description of the candidates, an
    echoed resume, a refusal) is unparseable: its candidates get NaN and are
    counted (``unparseable_pools``), never scored.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from folkscope.allocation.candidates import CandidateSet
from folkscope.allocation.templates import TaskTemplate
from folkscope.engine import Engine, GenerateRequest, GenerationSettings, word_variants
from folkscope.prompting import listwise_prompt, pairwise_prompt, pointwise_prompt
from folkscope.readout import parse_choice, parse_ranking, read_choices

__all__ = ["MODES", "listwise_scores", "pairwise_scores", "pointwise_scores"]

MODES = ("pointwise", "pairwise", "listwise")
_PAIR_CHOICES = ("A", "B", "C")


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
    engine: Engine, candidates: CandidateSet, pools: pd.DataFrame, template: TaskTemplate, *, chat: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """Scores per (pool, candidate), the answers per pair, and the answer shares.

    ``pools`` has one row per (pool, candidate_id). Returns ``(scores, pairs, shares)``:
    ``scores`` with ``pool, candidate_id, score``; ``pairs`` with ``pool, a, b,
    answer_ab, answer_ba`` (``"a"``, ``"b"``, ``"tie"`` or ``"unread"``) and the
    points of each; ``shares``: the answer shares (paper table 2) and counts.
    """
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
    generated = _generated_answers(engine, prompts, ~ok)
    for (i, o), answer in generated.items():
        answers[i, o] = answer
    ab, ba = answers[:, 0], answers[:, 1]
    consistent = (ab == ba) & np.isin(ab, ["a", "b"])
    points_a = np.where(consistent, (ab == "a").astype(float), 0.5)
    pairs = pd.DataFrame(
        {
            "pool": [r[0] for r in rows],
            "a": [r[1] for r in rows],
            "b": [r[2] for r in rows],
            "answer_ab": ab,
            "answer_ba": ba,
            "points_a": points_a,
            "points_b": 1.0 - points_a,
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
    prompts_answers = answers.ravel()
    n_pairs = len(pairs)
    shares = dict(
        n_pairs=n_pairs,
        n_prompts=2 * n_pairs,
        regular=float(np.isin(prompts_answers, ["a", "b"]).mean()) if n_pairs else float("nan"),
        tie=float((prompts_answers == "tie").mean()) if n_pairs else float("nan"),
        unread=float((prompts_answers == "unread").mean()) if n_pairs else float("nan"),
        flipped=float((np.isin(ab, ["a", "b"]) & np.isin(ba, ["a", "b"]) & (ab != ba)).mean())
        if n_pairs
        else float("nan"),
        inconsistent=float((ab != ba).mean()) if n_pairs else float("nan"),
        read_from_generation=len(generated),
    )
    return scores, pairs, shares


def _generated_answers(engine: Engine, prompts: list[list[Any]], unread: np.ndarray) -> dict[tuple[int, int], str]:
    """Answers the probabilities could not give (a web API without those letters in its top log-probabilities),
    read from a short generation instead: the letter it states first, mapped through the prompt's order."""
    where = [(int(i), int(o)) for i, o in zip(*np.nonzero(unread))]
    if not where:
        return {}
    settings = GenerationSettings(max_new_tokens=16)
    results = engine.generate(
        [GenerateRequest(prompts[i][o], settings) for i, o in where],
        unit="answers",
        description="pairwise answers (generated)",
    )
    out = {}
    for (i, o), result in zip(where, results):
        choice = parse_choice(result.text, _PAIR_CHOICES)
        # ordering 0 shows (a, b) as (A, B); ordering 1 shows (b, a)
        out[(i, o)] = (
            "unread" if choice is None else ("a", "b", "tie")[(0, 1, 2)[choice] if o == 0 else (1, 0, 2)[choice]]
        )
    return out


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
