"""Pairwise runs as the paper defines them, checked against numbers worked out by hand on one 2x2 pool.

The pool holds x1, x2 (group X) and r1, r2 (the reference R). A scripted
model, asked both orders of every pair, writes:

- x1 against anyone: "I would pick <x1's letter>." in both orders (x1 wins);
- x2 vs r1: "I would pick A." in both orders (the first shown: flipped);
- x2 shown first vs r2: "Both are equal, C" (tie); r2 first: "I would pick B." (x2);
- r1 vs r2: gibberish in both orders (unread).

Answers (a = the pair's first candidate): (x1,x2) a,a; (x1,r1) a,a; (x1,r2) a,a;
(x2,r1) a,b; (x2,r2) tie,a; (r1,r2) unread,unread.

Paper points (section 3.2): x1 3, x2 0 + 0.5 + 0.5 = 1, r1 0 + 0.5 + 0.5 = 1, r2 0 + 0.5 + 0.5 = 1.
Authors' points (0.5 per named answer, 0.25 per tie, 0 unread): x1 3, x2 0 + 0.5 + 0.75 = 1.25,
r1 0 + 0.5 + 0 = 0.5, r2 0 + 0.25 + 0 = 0.25.
Paper δ(X, R) (section 4.3): of the four X x R pairs, x1 is named in both orders against r1 and r2,
x2 never: 2/4 = 0.5; among qualified candidates only (x2 is not qualified): 2/2 = 1.
Score-gap δ: mean(3, 1) - mean(1, 1) = 1.0 (paper points).
Shares (12 prompts): regular 9/12, tie 1/12, unread 2/12 (so regular < 1 - tie); flipped 1/6 pairs,
inconsistent 2/6 (two unread answers agree with each other).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from folkscope.allocation import AllocationConfig, CandidateSet, bias_table, load_template, pairwise_scores
from folkscope.allocation.outcomes import pairwise_delta
from folkscope.allocation.scoring import pair_points, read_pair_answer
from folkscope.engine import Engine
from folkscope.engine.backends.fake import FakeBackend
from folkscope.errors import ConfigError

TEMPLATE = load_template("resumes")
IDS = ["x1", "x2", "r1", "r2"]


def _candidates() -> CandidateSet:
    frame = pd.DataFrame(
        {
            "candidate_id": IDS,
            "group": ["X", "X", "R", "R"],
            "qualified": [1, 0, 1, 1],
            "name": ["Ann Wu", "Bo Lee", "Cy Ng", "Di Ray"],
            "text": [f"Resume of {c.upper()}" for c in IDS],
        }
    )
    return CandidateSet(task="resumes", subtask="test job", context="A job.", frame=frame, provenance={})


def _script(prompt: str) -> str:
    shown_a = prompt.split("Candidate A:")[1].split("Candidate B:")[0]
    shown_b = prompt.split("Candidate B:")[1]
    first = next(c for c in IDS if f"Resume of {c.upper()}" in shown_a)
    second = next(c for c in IDS if f"Resume of {c.upper()}" in shown_b)
    pair = {first, second}
    if "x1" in pair:
        return "I would pick A." if first == "x1" else "I would pick B."
    if pair == {"x2", "r1"}:
        return "I would pick A."
    if pair == {"x2", "r2"}:
        return "Both are equal, C" if first == "x2" else "I would pick B."
    return "zq#@! ~~"


def _pool() -> pd.DataFrame:
    return pd.DataFrame({"pool": [0] * 4, "candidate_id": IDS})


def _run(points: str = "paper"):
    engine = Engine(FakeBackend("hand", responses=_script), cache=None)
    return pairwise_scores(engine, _candidates(), _pool(), TEMPLATE, points=points)


def test_generated_answers_are_parsed_into_candidates_ties_and_unread():
    assert read_pair_answer("I would pick B.", 0) == "b" and read_pair_answer("I would pick B.", 1) == "a"
    assert read_pair_answer("Both are equal, C", 0) == "tie" and read_pair_answer("Both are equal, C", 1) == "tie"
    assert read_pair_answer("zq#@! ~~", 0) == "unread"
    assert read_pair_answer("Both candidates are equally qualified.", 0) == "tie"  # no letter, but says equal
    assert read_pair_answer("Neither is a good fit.", 1) == "unread"


def test_the_default_reads_generated_answers_and_scores_by_the_paper_rule():
    scores, pairs, shares = _run()
    assert pairs["answer_ab"].tolist() == ["a", "a", "a", "a", "tie", "unread"]
    assert pairs["answer_ba"].tolist() == ["a", "a", "a", "b", "a", "unread"]
    assert pairs["generated_ab"].all() and pairs["response_ab"].iloc[4] == "Both are equal, C"
    assert scores.set_index("candidate_id")["score"].to_dict() == {"x1": 3.0, "x2": 1.0, "r1": 1.0, "r2": 1.0}
    assert shares["regular"] == pytest.approx(9 / 12) and shares["tie"] == pytest.approx(1 / 12)
    assert shares["unread"] == pytest.approx(2 / 12) and shares["regular"] < 1 - shares["tie"]
    assert shares["flipped"] == pytest.approx(1 / 6) and shares["inconsistent"] == pytest.approx(2 / 6)


def test_the_authors_rule_points_each_prompt():
    scores, _, _ = _run(points="authors")
    assert scores.set_index("candidate_id")["score"].to_dict() == {"x1": 3.0, "x2": 1.25, "r1": 0.5, "r2": 0.25}
    a, b = pair_points(np.array(["a", "unread"]), np.array(["tie", "b"]), rule="authors")
    assert a.tolist() == [0.75, 0.0] and b.tolist() == [0.25, 0.5]


def test_paper_delta_counts_pairs_won_in_both_orders_and_score_gap_stays_an_option():
    scores, pairs, _ = _run()
    scored = scores.merge(_candidates().frame[["candidate_id", "group", "qualified"]], on="candidate_id")
    paper = bias_table(scored, reference="R", n_bootstrap=0, pairs=pairs).set_index("group")
    assert paper.loc["X", "delta"] == pytest.approx(0.5) and paper.loc["X", "delta_qualified"] == pytest.approx(1.0)
    gap = bias_table(scored, reference="R", n_bootstrap=0, pairs=pairs, delta="score-gap").set_index("group")
    assert gap.loc["X", "delta"] == pytest.approx(1.0)  # mean(3, 1) - mean(1, 1)
    assert gap.loc["X", "delta_qualified"] == pytest.approx(3.0 - 1.0)  # x1 alone against r1, r2
    info = _candidates().frame.set_index("candidate_id")[["group", "qualified"]]
    assert pairwise_delta(pairs, info, reference="R") == {"X": 0.5}
    with pytest.raises(ConfigError, match="delta must be one of"):
        bias_table(scored, reference="R", n_bootstrap=0, pairs=pairs, delta="mean")


def test_the_probability_readout_is_a_named_option():
    def rule(text):  # the first-shown candidate is always the most probable
        return {" A": 0.8, " B": 0.1, " C": 0.1, "A": 0.0, "B": 0.0, "C": 0.0} if text.endswith("Answer:") else None

    engine = Engine(FakeBackend("hand", next_token_probs=rule), cache=None)
    _, pairs, shares = pairwise_scores(engine, _candidates(), _pool(), TEMPLATE, answer="probability")
    assert (pairs["answer_ab"] == "a").all() and (pairs["answer_ba"] == "b").all()
    assert shares["flipped"] == 1.0 and shares["read_from_generation"] == 0 and not pairs["generated_ab"].any()
    with pytest.raises(ConfigError, match="answer must be one of"):
        pairwise_scores(engine, _candidates(), _pool(), TEMPLATE, answer="logits")


def test_the_options_are_config_fields_with_the_paper_as_default():
    config = AllocationConfig(mode="pairwise")
    assert (config.pairwise_answer, config.pairwise_points, config.pairwise_delta) == ("generated", "paper", "paper")
    assert AllocationConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    for name in ("pairwise_answer", "pairwise_points", "pairwise_delta"):
        with pytest.raises(ConfigError, match=f"{name} must be one of"):
            AllocationConfig(mode="pairwise", **{name: "other"})


def _scripted_first(prompt: str) -> str:
    """A model that always names the first-shown candidate: every pair flips with the order."""
    return "I would pick A."


def test_a_pairwise_run_records_its_readout_and_writes_the_csv_tables_that_rescore_rewrites(tmp_path):
    from folkscope.allocation import draw_pools, rescore, run_allocation
    from folkscope.allocation.resumes import bloomberg_resumes
    from folkscope.runs import read_table

    pool = draw_pools(bloomberg_resumes("software engineer", names_per_group=1).frame, rounds=2, pool_size=4, seed=0)
    reference = pool["candidate_id"].iloc[0].split("/")[1]
    engine = Engine(FakeBackend("hand", responses=_scripted_first), cache=None)
    config = AllocationConfig(
        mode="pairwise", names_per_group=1, rounds=2, pool_size=4, k_max=1, n_bootstrap=0, reference=reference
    )
    result = run_allocation(config, tmp_path, engine=engine)
    scoring = json.loads((result.folder / "scoring.json").read_text())
    assert (scoring["pairwise_answer"], scoring["pairwise_points"]) == ("generated", "paper")
    pairs = read_table(result.folder, "answers")
    assert (pairs["answer_ab"] == "a").all() and (pairs["answer_ba"] == "b").all()  # always the first shown
    bias = pd.read_csv(result.folder / "bias_metrics.csv")
    # nobody is named in both orders: the paper's δ is 0 for every group that met the reference in a pool, and
    # undefined (no compared pair) for the others
    assert bias["delta"].notna().any() and (bias["delta"].dropna() == 0.0).all()
    gaps = pd.read_csv(result.folder / "allocation_gaps.csv")
    assert reference not in set(gaps["group"]) and {"k", "group", "dp_gap"} <= set(gaps)
    top = pd.read_csv(result.folder / "top_k_ranking.csv")
    assert set(top["group"]) == set(read_table(result.folder, "selection")["group"])
    for name in ("top_k_ranking", "allocation_gaps", "bias_metrics"):
        (result.folder / f"{name}.csv").unlink()
    rescore(result.folder)
    assert all((result.folder / f"{n}.csv").exists() for n in ("top_k_ranking", "allocation_gaps", "bias_metrics"))
