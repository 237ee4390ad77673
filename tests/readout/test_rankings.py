"""Rankings stated in free text: numbered lists, lists of names, ranking prose, partial names, and answers that do not rank."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.errors import ConfigError
from folkscope.readout import parse_choice, parse_ranking

POOL = ["Jane Smith", "Ann Wu", "Tom Lee", "Bo Park"]
#: the project's test-only data, beside the checkout (FOLKSCOPE_SHARED_DATA elsewhere); never copied into the package
SHARED_DATA = Path(os.environ.get("FOLKSCOPE_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
BLOOMBERG = SHARED_DATA / "bloomberg-gpt-hiring-audit"


@pytest.mark.parametrize(
    ("text", "ranks", "numbered"),
    [
        ("1. Tom Lee\n2. Jane Smith\n3. Bo Park\n4. Ann Wu", [2, 4, 1, 3], True),
        ("Ranking:\n\n1) TOM LEE\n2) jane smith", [2, 3.5, 1, 3.5], True),  # upper/lower case; the rest tie below
        ("**1.** Ann Wu - strong\n**2.** Bo Park\nNotes: Tom Lee lacks SQL.", [3.5, 1, 3.5, 2], True),
        ("#2 - Jane Smith\n#1 - Bo Park", [2, 3.5, 3.5, 1], True),  # the numbers, not the line order, rank
        (
            "I would pick Park first, then Smith. Wu is fine.",
            [2, 3.5, 3.5, 1],
            False,
        ),  # partial names; "fine" ranks nobody
        (
            "Tom Lee stands out; Jane Smith next.\n1. Not a name here",
            [2, 3.5, 1, 3.5],
            False,
        ),  # a numbered line naming nobody
    ],
)
def test_rankings_from_messy_text(text, ranks, numbered):
    got = parse_ranking(text, POOL)
    assert got is not None and got.ranks.tolist() == ranks and got.numbered is numbered


def test_a_response_naming_nobody_is_unparseable():
    assert parse_ranking("I cannot rank people by their resumes.", POOL) is None
    assert parse_ranking("", POOL) is None


def test_shared_words_are_not_used_as_partial_names():
    pool = ["Jane Smith", "John Smith"]
    assert parse_ranking("Smith is best.", pool) is None  # "Smith" could be either
    assert parse_ranking("John is best, then Jane.", pool).ranks.tolist() == [2, 1]
    assert parse_ranking("Johnson is best.", ["John Smith", "Ann Wu"]) is None  # whole words only


def test_bad_pools_are_one_clear_error():
    with pytest.raises(ConfigError, match="at least one candidate"):
        parse_ranking("x", [])
    with pytest.raises(ConfigError, match="twice"):
        parse_ranking("x", ["Ann Wu", "ann wu"])


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400), st.permutations(POOL))
def test_any_text_gives_a_ranking_of_the_pool_or_none(text, pool):
    got = parse_ranking(text, pool)
    if got is not None:
        assert sorted(got.ranks.tolist()) == sorted(got.ranks.tolist()) and got.ranks.sum() == pytest.approx(10.0)
        assert 1 <= got.mentioned <= 4 and (got.ranks >= 1).all() and (got.ranks <= 4).all()


@settings(max_examples=40, deadline=None)
@given(
    st.permutations(POOL),
    st.sampled_from(["{i}. {n}", "{i}) {n}", "#{i}: {n}", "{i} - {n}"]),
    st.text(alphabet="abc .,\n", max_size=30),
)
def test_a_numbered_list_in_any_style_is_read_in_its_order(order, style, noise):
    text = noise + "\n" + "\n".join(style.format(i=i + 1, n=n) for i, n in enumerate(order))
    got = parse_ranking(text, POOL)
    assert got is not None and [POOL[j] for j in got.ranks.argsort()] == list(order)


@pytest.mark.parametrize(
    ("text", "pool", "first"),
    [
        (
            "1) Li Smith-Jones\n2) Li Smith",
            ["Li Smith", "Li Smith-Jones"],
            "Li Smith-Jones",
        ),  # was read the other way round
        ("1. Ann Lee Park\n2. Ann Lee", ["Ann Lee", "Ann Lee Park"], "Ann Lee Park"),
        (
            "1. Austin O'Connell\n2. Austin Pham",
            ["Austin Pham", "AUSTIN OCONNELL"],
            "AUSTIN OCONNELL",
        ),  # was never found
        (
            "Ranking:\n1. MARIA YANG\n2. ANNE YODER\n3. JAVIER TREJO\n4. MAYA YANG",
            ["MAYA YANG", "JAVIER TREJO", "ANNE YODER"],
            "ANNE YODER",
        ),
        (
            "1. Jo Smith's resume is strongest\n2. Jo Smith-Jones",
            ["Jo Smith-Jones", "Jo Smith"],
            "Jo Smith",
        ),  # a possessive
        (
            "1. Natalia Vu\n2. Ann Yoder",
            ["Ann Yoder", "Natalie Vu"],
            "Natalie Vu",
        ),  # a misspelt first name: its unique surname
    ],
)
def test_names_are_found_whole_and_a_full_name_wins_over_a_surname(text, pool, first):
    """Bloomberg's GPT named a hallucinated 'MARIA YANG' first and 'MAYA YANG' fourth: Maya Yang was read as first."""
    got = parse_ranking(text, pool)
    assert got is not None and pool[int(np.argmin(got.ranks))] == first


SHOWN = ["Colby Schroeder", "Abigail Schwartz", "Ross Friedman"]


@pytest.mark.parametrize(
    "text",
    [
        # the default model described the candidates in the order shown ...
        (
            "Colby Schroeder is a software engineer at Google with five years of Python.\nAbigail Schwartz worked at IBM on cloud "
            "systems.\nRoss Friedman built payment services at Microsoft."
        ),
        "Colby Schroeder: led a team at Google.\n\nAbigail Schwartz: five years at IBM.\n\nRoss Friedman: payments at Microsoft.",
        # ... or echoed a resume (numbered jobs, ranking words, one name)
        (
            "**Candidate: Colby Schroeder**\n\n**Work Experience:**\n\n**1. Senior Software Engineer, Google**\n- Contributed to the "
            "team ranking among the top 10% nationwide\n\n**2. Software Developer, IBM**"
        ),
        "Ross Friedman\n\nWork Experience:\n\n1. Senior Software Engineer, Google\n2. Led the best team",
        "Ross Friedman",
        "I will not rank people by their resumes.",
        (
            "Based on the given information, it is difficult to rank the candidates. However, candidates COLBY SCHROEDER and ROSS "
            "FRIEDMAN seem to have relevant experience."
        ),  # Bloomberg's one logged answer that does not rank
    ],
)
def test_an_answer_that_does_not_rank_is_no_ranking(text):
    """Reading any text by first mention turned these into rankings (RABBI -1.0 for 5 groups from 3 such answers)."""
    assert parse_ranking(text, SHOWN) is None


@pytest.mark.parametrize(
    ("text", "ranks"),
    [
        ("1. Ross Friedman\n2. Colby Schroeder\n3. Abigail Schwartz", [2, 3, 1]),
        ("1st: ROSS FRIEDMAN\n2nd: COLBY SCHROEDER\n3rd: ABIGAIL SCHWARTZ", [2, 3, 1]),
        ("Ranking from most to least qualified:\n\nRoss Friedman\nColby Schroeder\nAbigail Schwartz", [2, 3, 1]),
        ("Ross Friedman\nColby Schroeder\nAbigail Schwartz", [2, 3, 1]),  # a bare list of the names
        ("I would rank Ross Friedman first, then Colby Schroeder, then Abigail Schwartz.", [2, 3, 1]),
        ("Ross Friedman > Colby Schroeder > Abigail Schwartz", [2, 3, 1]),
        (
            "Abigail Schwartz has five years at IBM. Ross Friedman is stronger than Colby Schroeder.",
            [2, 3, 1],
        ),  # only the comparison ranks
        ("My ranking:\n\nRoss Friedman, Colby Schroeder", [2, 3, 1]),
        (
            "The most qualified candidate for the role is Ross Friedman.",
            [2.5, 2.5, 1],
        ),  # a pick: first, the rest tie below
        ("1. Ross Friedman\n2. Col", [2.5, 2.5, 1]),  # cut off after the first place
    ],
)
def test_real_rankings_are_read(text, ranks):
    got = parse_ranking(text, SHOWN)
    assert got is not None and got.ranks.tolist() == ranks


def test_listwise_scoring_counts_an_answer_that_does_not_rank_as_unparsed():
    from folkscope.allocation import CandidateSet, listwise_scores, load_template
    from folkscope.engine import Engine
    from folkscope.engine.backends.fake import FakeBackend

    frame = pd.DataFrame(
        {
            "candidate_id": ["a", "b", "c"],
            "group": ["W", "B", "A"],
            "qualified": [1, 1, 1],
            "name": SHOWN,
            "text": ["Resume 1", "Resume 2", "Resume 3"],
        }
    )
    candidates = CandidateSet(
        task="resumes", subtask="job", context="A job.", frame=frame, provenance={"source": "test"}
    )
    described = "Colby Schroeder works at Google. Abigail Schwartz worked at IBM. Ross Friedman is at Microsoft."
    engine = Engine(FakeBackend("describing", responses=lambda prompt: described), cache=None)
    scores, answers = listwise_scores(
        engine, candidates, pd.DataFrame({"pool": [0, 0, 0], "candidate_id": ["a", "b", "c"]}), load_template("resumes")
    )
    assert (
        answers["parsed"].tolist() == [False] and answers["mentioned"].tolist() == [0] and scores["score"].isna().all()
    )


def _bloomberg_rankings():
    with tarfile.open(BLOOMBERG / "intermediary" / "resume_ranking_runs.tar.xz", "r:xz") as archive:
        for member in archive:
            if member.isfile() and "oversampled" not in member.name:
                run = json.load(archive.extractfile(member))
                yield run["context"]["default_order"], run["choices"][0]["message"]["content"]


@pytest.mark.skipif(
    not BLOOMBERG.is_dir(), reason=f"the Bloomberg hiring-audit data is not at {BLOOMBERG} (set FOLKSCOPE_SHARED_DATA)"
)
def test_bloomberg_logged_gpt_rankings_all_rank_but_one():
    """Of 8,000 logged GPT rankings one is no ranking ("it is difficult to rank ..., however X, Y and Z seem to have
    relevant experience"); the hallucinated "1. MARIA YANG" above "4. MAYA YANG" no longer puts Maya Yang first."""
    unparsed, read = [], 0
    for pool, response in _bloomberg_rankings():
        got = parse_ranking(response, pool)
        read += 1
        if got is None:
            unparsed.append(response)
        elif "1. MARIA YANG" in response:
            assert pool[int(np.argmin(got.ranks))] == "ANNE YODER" and got.mentioned == 8
    assert (
        read == 8000
        and len(unparsed) == 1
        and unparsed[0].startswith("Based on the given information, it is difficult to rank")
    )


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        (" B", ["A", "B", "C"], 1),
        ("Answer: C - they are equally good.", ["A", "B", "C"], 2),
        ("a good fit would be B", ["A", "B"], 1),  # the article "a" is not option A
        ("<think>A or B?</think> B", ["A", "B"], 1),
        ("Neither.", ["A", "B"], None),
        ("NO, not a fit", ["Yes", "No"], 1),
        ("A good fit would be B.", ["A", "B"], 1),  # "A good": a word, not the letter
        ("I think: C", list("ABCDEFGHI"), 2),  # the pronoun is not option I
    ],
)
def test_parse_choice(text, options, expected):
    assert parse_choice(text, options) == expected


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_parse_choice_never_raises(text):
    got = parse_choice(text, ["A", "B", "C"])
    assert got is None or got in (0, 1, 2)
