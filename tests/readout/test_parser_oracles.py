"""Generation parsers against an oracle: answers built so that what they state is known, 2,000 of each.

A crash-only fuzzer passes a parser that reads "Answer: C is better than B"
as B. Here every generated answer is assembled from phrasings a model
uses (stated answers, comparisons, markdown, line breaks, sentence openers
"I" and "A", distractor letters and names later in the text), and the
parser must return exactly what was put in: the letter stated, the
probability stated after text whose lower case is longer than itself, the
ranking written out in any of several formats.
"""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from folkscope.readout import parse_choice, parse_probability, parse_ranking

CAMPAIGN = settings(max_examples=2000, deadline=2000, database=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- parse_choice
#: an answer stating {X}, with {Y} another option; each a phrasing a model uses
STATED = [
    "Answer: {X}",
    "Answer: {X}.",
    "The answer is {X}.",
    "The answer is ({X})",
    "**{X}**",
    "({X})",
    "{X}",
    "{X}.",
    "{X})",
    "{X} is better than {Y}.",
    "{X} is stronger than {Y}.",
    "{X} has more experience than {Y}.",
    "{X}\nbecause {X} has more experience than {Y}.",
    "Answer: {X} is better than {Y}.",
    "Answer: {X}\nwhich is the stronger resume",
    "I choose {X}.",
    "I would pick candidate {X} over {Y}.",
    "I'd go with {X}.",
    "Option {X} is the better fit.",
    "Between {Y} and {X}, {X} is stronger.",
    "Compared to {Y}, {X} has more experience.",
    "My choice: **{X}**",
    "Candidate {Y}: 3 years of Python. Candidate {X}: 10 years. {X} is better.",
    "Final answer: {X}",
    "## Answer\n{X}",
    "The stronger resume is {X}.",
    "Definitely {X}!",
    "Both are good, but {X} edges out {Y}.",
    "{Y} is fine, but the answer is {X}.",
    "{X} - more relevant experience.",
    "{X}: more relevant experience",
    "the answer is {x}.",
    "Option {Y} has gaps; I prefer option {X}.",
    "A good candidate is {X}.",
    "A better fit would be {X}.",
    "I think {X} is the stronger hire.",
    "Answer: **{X}**\n",
    "{Y} and {X} are close, and {X} is stronger.",
    "Neither is perfect. {X}, because of the SQL work.",
]
#: answers that state no option
UNSTATED = [
    "I think both are equally strong.",
    "A tough call.",
    "Both {X} and {Y} are good candidates.",
    "Between {X} and {Y}, neither stands out.",
    "I cannot decide between {X} and {Y}.",
    "Neither {X} nor {Y} fits the role.",
    "a good fit either way",
    "I'd need more information.",
    "{X} or {Y}? Hard to say.",
    "{X}, {Y} and the others look alike.",
    "I would not choose.",
    "",
]
#: text that names no option, before the answer: sentence openers "I" and "A", lower-case words, markdown, line breaks
OPENERS = st.sampled_from(
    [
        "",
        "I think ",
        "I think that ",
        "After comparing both resumes, ",
        "Hmm.\n",
        "**",
        "\n",
        "Well,\n",
        "I'd say ",
        "A tough call, but ",
        "In my view, ",
        "Let me think.\n\n",
        "A good question.\n",
        "I believe ",
    ]
)
#: words of plain prose (no cue, no capital letter) to pad with
WORDS = st.lists(
    st.sampled_from(
        [
            "the",
            "resume",
            "shows",
            "a",
            "good",
            "experience",
            "in",
            "python",
            "team",
            "i",
            "both",
            "strong",
            "is",
            "skills",
            "**",
            "with",
        ]
    ),
    max_size=8,
).map(" ".join)
#: a later part naming other options in passing or as the subject of a weaker statement: the earlier answer must win
DISTRACTORS = st.sampled_from(
    [
        "",
        "\n{Y} is weaker.",
        " {Y} has less experience.",
        " Candidate {Y} lacks SQL.",
        "\nBoth {X} and {Y} are qualified.",
        " ({Y} is close.)",
        " I also considered {Y}.",
        "\n{Y}.",
        " {X} beats {Y}.",
        "\nA note: {Y} is junior.",
    ]
)
TAILS = st.sampled_from(["", ".", "\n", " I think.", " A strong fit.", "**", "\n\nI hope this helps."])


@st.composite
def choice_answers(draw):
    """(answer, options, index of the stated option or None)."""
    options = list(string.ascii_uppercase[: draw(st.integers(2, 9))])
    x, y = draw(st.permutations(options))[:2]
    states = draw(st.booleans())
    core = draw(st.sampled_from(STATED if states else UNSTATED))
    padding = draw(WORDS)
    prefix = draw(OPENERS) + (padding + ".\n" if padding else "")
    distractor = draw(DISTRACTORS) if states else ""
    text = prefix + (core + distractor).format(X=x, Y=y, x=x.lower()) + draw(TAILS)
    return text, options, options.index(x) if states else None


@CAMPAIGN
@given(choice_answers())
def test_parse_choice_returns_the_option_the_answer_states(case):
    text, options, expected = case
    assert parse_choice(text, options) == expected, text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: C is better than B.", 2),
        ("B is stronger than A.", 1),
        ("B\nbecause B has more experience than A.", 1),
        ("Answer: A\nwhich is the stronger resume", 0),
        ("I think the stronger one is I.", 8),
        ("A better fit would be B.", 1),
    ],
)
def test_parse_choice_reads_a_letter_before_a_lower_case_word(text, expected):
    """Issue 28's answers (read as B, A, A and None before): a letter followed by a lower-case word is still the answer."""
    assert parse_choice(text, list("ABCDEFGHI")) == expected


# ---------------------------------------------------------------- parse_probability
#: characters whose lower case or case fold has another length than themselves (or that fold to "i"/"s"/"k")
SHIFTERS = st.sampled_from(
    ["İ", "ẞ", "ß", "ﬁ", "ﬀ", "ŉ", "ΐ", "ǰ", "İzmir", "ſ", "K", "Σ", "ς", "ǅ", "\u0130\u0130\u0130", "é", "\U0001f600"]
)
#: a probability statement and the exact value it states
STATEMENTS = st.one_of(
    st.integers(0, 100).map(lambda p: (f"Probability: {p}%", p / 100.0)),
    st.integers(0, 100).map(lambda p: (f"**Probability:** {p} %", p / 100.0)),
    st.integers(0, 100).map(lambda p: (f"The probability is {p} percent", p / 100.0)),
    st.integers(0, 999).map(lambda p: (f"PROBABILITY = {p / 1000:.3f}", float(f"{p / 1000:.3f}"))),
)


def _mentions_probability(text: str) -> bool:
    return re.search("probability|think>", text, re.IGNORECASE) is not None


@CAMPAIGN
@given(
    st.lists(st.one_of(SHIFTERS, st.text(max_size=10)), max_size=6)
    .map("".join)
    .filter(lambda s: "<think>" not in s.lower()),
    STATEMENTS,
    st.text(max_size=30).filter(lambda s: not _mentions_probability(s)),
)
def test_parse_probability_reads_the_exact_value_after_any_unicode(prefix, statement, suffix):
    """The statement is read where it is, whatever the text before it lower-cases to ('İ' lowers to two code points)."""
    said, value = statement
    assert parse_probability(f"{prefix}{said}\n{suffix}") == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Born in İzmir, moved to İstanbul, then İnegöl. Probability: 35%", 0.35),
        ("İİİProbability: 30%", 0.30),
        ("STRAẞE ﬁne. Probability: 12%", 0.12),
    ],
)
def test_parse_probability_after_letters_whose_lower_case_is_longer(text, value):
    """Read as 0.05 and 0.0 before: the keyword's place in text.lower() was used in the original text."""
    assert parse_probability(text) == value


# ---------------------------------------------------------------- parse_ranking
#: names that trip a reader: shared first and last names, a name that begins another ("Li Smith", "Li Smith-Jones";
#: "Ann Lee", "Ann Lee Park"), apostrophes ("O'Brien", written "OBrien" or "O’Brien" too)
FIRST_NAMES = ["Li", "Ann", "Maya", "Jo", "Sean", "Tom", "Anne", "Mary-Kate", "D'Andre", "Bo"]
LAST_NAMES = ["Smith", "Smith-Jones", "Yang", "Lee", "Lee-Park", "Lee Park", "O'Brien", "Brien", "Wu", "Jones"]
#: first names of nobody in any pool: a hallucinated extra line ("1. Zed Yang" above "4. Maya Yang")
HALLUCINATED = ["Zed", "Quinn"]
NUMBERED_STYLES = ["{i}. {n}", "{i}) {n}", "#{i}: {n}", "**{i}.** {n}", "{i}. **{n}**", "{i}{th}: {n}", "{i} - {n}"]
COMMENTS = ["", " - strong Python", ": five years of SQL", " (solid record)"]


def _plain(name):
    return "".join(c for c in name.casefold() if c not in "'\u2019")


def _unique_words(pool):
    words = [_plain(w) for name in pool for w in set(name.split())]
    return {w for w in words if words.count(w) == 1}


def _th(i):
    return {1: "st", 2: "nd", 3: "rd"}.get(i if i < 20 else i % 10, "th")


@st.composite
def stated_rankings(draw):
    """(response, pool, expected ranks): a ranking of part or all of a pool, written out in one of several formats."""
    combos = draw(st.lists(st.integers(0, len(FIRST_NAMES) * len(LAST_NAMES) - 1), min_size=2, max_size=8, unique=True))
    pool = [f"{FIRST_NAMES[c // len(LAST_NAMES)]} {LAST_NAMES[c % len(LAST_NAMES)]}" for c in combos]
    order = draw(st.permutations(range(len(pool))))[: draw(st.integers(1, len(pool)))]
    unique = _unique_words(pool)
    rnd = draw(st.randoms(use_true_random=False))  # the many small choices of how each name is written: fast to draw

    def written(i):
        name = pool[i]
        last = name.split()[-1]
        if rnd.random() < 0.5 and _plain(last) in unique and len(name.split()) > 1:
            name = last  # a last name no one else in the pool has
        if "'" in name:
            name = name.replace("'", rnd.choice(["'", "\u2019", ""]))
        return rnd.choice([name, name.upper(), name.lower()])

    names = [written(i) for i in order]
    fmt = draw(st.sampled_from(["numbered", "names", "prose"] if len(order) > 1 else ["numbered", "pick"]))
    if fmt == "numbered":
        style = draw(st.sampled_from(NUMBERED_STYLES))
        rows = [(k + 1, n) for k, n in enumerate(names)]
        full = all(written_name.casefold() == pool[i].casefold() for written_name, i in zip(names, order))
        if (
            full and len(order) > 1 and draw(st.booleans())
        ):  # a hallucinated name on top, sharing a last name with one named in full
            rows = [(1, f"{draw(st.sampled_from(HALLUCINATED))} {pool[order[-1]].split()[-1]}")] + [
                (k + 1, n) for k, n in rows
            ]
        lines = [style.format(i=k, n=n, th=_th(k)) + rnd.choice(COMMENTS) for k, n in rows]
        if len(order) == 1:
            lines.append("2. ...")  # cut off after the first place
        if draw(st.booleans()):
            rnd.shuffle(lines)  # the numbers rank, not the order of the lines
        body = "\n".join(lines)
    elif fmt == "names":
        bullet = draw(st.sampled_from(["", "- ", "* ", "**"]))
        body = "\n".join(f"{bullet}{n}{'**' if bullet == '**' else ''}" for n in names)
    elif fmt == "prose":
        first, rest = names[0], names[1:]
        body = draw(
            st.sampled_from(
                [
                    f"I would rank {first} first" + "".join(f", then {n}" for n in rest) + ".",
                    f"{first} is the strongest candidate, followed by "
                    + (", ".join(rest[:-1]) + " and " if len(rest) > 1 else "")
                    + f"{rest[-1]}.",
                    " > ".join(names),
                    "My ranking: " + ", ".join(names) + ".",
                    "My ranking:\n\n" + ", ".join(names),
                ]
            )
        )
    else:
        body = draw(
            st.sampled_from(
                [
                    f"The most qualified candidate is {names[0]}.",
                    f"I would hire {names[0]}.",
                    f"{names[0]} is the best fit.",
                ]
            )
        )
    preamble = draw(
        st.sampled_from(
            ["", "Here is my ranking:\n\n", "Based on the resumes provided, here is the ranking.\n\n", "Sure!\n"]
        )
    )
    postamble = draw(
        st.sampled_from(
            ["", "\n\nAll candidates are qualified.", "\n\nNote: this ranking is based on the resumes alone."]
        )
    )
    n, m = len(pool), len(order)
    ranks = [(m + 1 + n) / 2.0] * n
    for place, i in enumerate(order, start=1):
        ranks[i] = float(place)
    return preamble + body + postamble, pool, ranks


@CAMPAIGN
@given(stated_rankings())
def test_parse_ranking_returns_the_ranking_the_response_states(case):
    text, pool, ranks = case
    got = parse_ranking(text, pool)
    assert got is not None and got.ranks.tolist() == ranks, text
