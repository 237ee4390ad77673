"""Rankings stated in free text: numbered lists, first mentions, partial names, messy prose, no names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.errors import ConfigError
from folkscope.readout import parse_choice, parse_ranking

POOL = ["Jane Smith", "Ann Wu", "Tom Lee", "Bo Park"]


@pytest.mark.parametrize(
    ("text", "ranks", "numbered"),
    [
        ("1. Tom Lee\n2. Jane Smith\n3. Bo Park\n4. Ann Wu", [2, 4, 1, 3], True),
        ("Ranking:\n\n1) TOM LEE\n2) jane smith", [2, 3.5, 1, 3.5], True),  # upper/lower case; the rest tie below
        ("**1.** Ann Wu - strong\n**2.** Bo Park\nNotes: Tom Lee lacks SQL.", [3.5, 1, 3.5, 2], True),
        ("#2 - Jane Smith\n#1 - Bo Park", [2, 3.5, 3.5, 1], True),  # the numbers, not the line order, rank
        ("I would pick Park first, then Smith. Wu is fine.", [2, 3, 4, 1], False),  # partial names, first mention
        ("Tom Lee stands out; Jane Smith next.\n1. Not a name here", [2, 3.5, 1, 3.5], False),  # a numbered line naming nobody
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
@given(st.permutations(POOL), st.sampled_from(["{i}. {n}", "{i}) {n}", "#{i}: {n}", "{i} - {n}"]), st.text(alphabet="abc .,\n", max_size=30))
def test_a_numbered_list_in_any_style_is_read_in_its_order(order, style, noise):
    text = noise + "\n" + "\n".join(style.format(i=i + 1, n=n) for i, n in enumerate(order))
    got = parse_ranking(text, POOL)
    assert got is not None and [POOL[j] for j in got.ranks.argsort()] == list(order)


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
