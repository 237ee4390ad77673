"""Population filters: parsing, masks, and clear errors on malformed input."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.errors import FilterSyntaxError, UnknownColumnError
from folkscope.tasks import PopulationFilter, apply_filters, parse_filters

FRAME = pd.DataFrame({"AGEP": pd.array([15, 16, 17, 35, 90, None], dtype="Int16"), "SEX": [1, 2, 1, 2, 1, 2]})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("AGEP>16", [False, False, True, True, True, False]),
        ("AGEP>=16", [False, True, True, True, True, False]),
        ("AGEP<17", [True, True, False, False, False, False]),
        ("AGEP<=17", [True, True, True, False, False, False]),
        ("AGEP=35", [False, False, False, True, False, False]),
        ("AGEP==35", [False, False, False, True, False, False]),
        ("AGEP!=35", [True, True, True, False, True, False]),
        ("AGEP=16..35", [False, True, True, True, False, False]),
        ("AGEP=15|90", [True, False, False, False, True, False]),
        (" SEX = 2 ", [False, True, False, True, False, True]),
    ],
)
def test_masks(text, expected):
    assert PopulationFilter.parse(text).mask(FRAME).tolist() == expected


def test_blank_values_never_pass():
    assert not PopulationFilter.parse("AGEP<1000").mask(FRAME)[-1]
    assert not PopulationFilter.parse("AGEP!=1").mask(FRAME)[-1]


def test_combined_filters_and_canonical_strings():
    filters = parse_filters("AGEP>16 & SEX=2")
    assert [f.to_string() for f in filters] == ["AGEP>16", "SEX=2"]
    assert apply_filters(FRAME, filters).tolist() == [False, False, False, True, False, False]
    assert parse_filters(["AGEP=16..35", "SEX=1|2"])[0].to_string() == "AGEP=16..35"
    assert parse_filters(None) == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("AGEP", "expected COLUMN<op>VALUE"),
        ("=5", "expected COLUMN<op>VALUE"),
        ("AGEP>", "expected COLUMN<op>VALUE"),
        ("AGEP>old", "needs a number"),
        ("AGEP=40..20", "empty range"),
        ("AGEP=a..b", "range bounds"),
        ("AGEP~3", "expected COLUMN<op>VALUE"),
        ("&", "holds no condition"),
    ],
)
def test_malformed_filters(text, message):
    with pytest.raises(FilterSyntaxError, match=message):
        parse_filters(text)


def test_unknown_column_is_named():
    with pytest.raises(UnknownColumnError, match="names column 'WKHP'"):
        PopulationFilter.parse("WKHP>0").mask(FRAME)


def test_non_string_filter():
    with pytest.raises(FilterSyntaxError, match="must be a string"):
        PopulationFilter.parse(5)  # type: ignore[arg-type]


@given(st.text(max_size=30))
def test_parser_never_fails_with_anything_but_filter_syntax_error(text):
    try:
        flt = PopulationFilter.parse(text)
    except FilterSyntaxError:
        return
    # whatever parses round-trips through its canonical form
    assert PopulationFilter.parse(flt.to_string()) == flt


@given(st.integers(-5, 100), st.integers(-5, 100))
def test_range_equals_two_inequalities(lo, hi):
    if lo > hi:
        lo, hi = hi, lo
    ages = pd.DataFrame({"AGEP": np.arange(-10, 110)})
    ranged = PopulationFilter.parse(f"AGEP={lo}..{hi}").mask(ages)
    pair = apply_filters(ages, parse_filters(f"AGEP>={lo} & AGEP<={hi}"))
    assert (ranged == pair).all()


def test_ordering_filters_on_text_codes_compare_numbers_or_say_why_not():
    """'PUMA>5' on a text column was a pandas TypeError."""
    import pandas as pd

    from folkscope.errors import FilterSyntaxError
    from folkscope.tasks.filters import apply_filters, parse_filters

    frame = pd.DataFrame(
        {"PUMA": pd.Categorical(["00100", "00007", None, "00200"]), "ST": ["01-01301", "01-00100", "x", "y"]}
    )
    assert apply_filters(frame, parse_filters("PUMA>5")).tolist() == [True, True, False, True]
    assert apply_filters(frame, parse_filters("PUMA=1..150")).tolist() == [True, True, False, False]
    assert apply_filters(frame, parse_filters("PUMA=7|200")).tolist() == [False, True, False, True]
    with pytest.raises(FilterSyntaxError, match=r"column ST holds text \(e.g. '01-01301'\), which > cannot order"):
        apply_filters(frame, parse_filters("ST>5"))


# ----------------------------------------------------------------------------- the text form reads back exactly (issue 28, item 11)
_NUMBER = st.floats(allow_nan=False) | st.integers(-(10**18), 10**18).map(float)


#: a comma followed by COLUMN<op> starts the next condition (folktexts' lists), so a text value cannot hold one
_NEXT_CONDITION = re.compile(r",\s*[A-Za-z_][A-Za-z0-9_]*\s*(==|=|!=|>=|<=|>|<)")


def _is_text_value(text: str) -> bool:
    """A value a filter string can carry as text: one line, not a number or true/false, not the grammar's own signs, no outer spaces."""
    try:
        float(text)
        return text.strip().lower() == "nan"
    except ValueError:
        return (
            bool(text.strip())
            and text == text.strip()
            and not any(s in text for s in ("|", "..", "&", "\n"))
            and text[0] not in "=<>!"
            and text.lower() not in ("true", "false")
            and not _NEXT_CONDITION.search(text)
        )


_TEXT = st.text(min_size=1, max_size=12).filter(_is_text_value)
_COLUMN = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)


@st.composite
def _filters(draw) -> PopulationFilter:
    """Any filter ``parse`` can produce, built directly (the oracle: parsing its text must give it back)."""
    column, op = draw(_COLUMN), draw(st.sampled_from(["=", "!=", ">", ">=", "<", "<=", "range", "in"]))
    if op == "range":
        values = tuple(sorted(draw(st.lists(_NUMBER, min_size=2, max_size=2))))
    elif op == "in":
        values = tuple(draw(st.lists(_NUMBER | _TEXT, min_size=2, max_size=4)))
    elif op in ("=", "!="):
        values = (draw(_NUMBER | _TEXT),)
    else:
        values = (draw(_NUMBER),)
    return PopulationFilter(column, op, values)


@settings(max_examples=2000, deadline=None, database=None)
@given(_filters())
def test_the_text_of_a_filter_parses_back_as_the_same_filter(flt):
    """``PINCP>1234567`` was described (and fingerprinted) as ``PINCP>1.23457e+06``, which reads back as 1234570."""
    assert PopulationFilter.parse(flt.describe()) == flt
    assert parse_filters(" & ".join([flt.describe()] * 2)) == (flt, flt)


@settings(max_examples=2000, deadline=None, database=None)
@given(st.lists(_filters(), min_size=1, max_size=4), st.sampled_from([",", ", ", " & ", "&"]))
def test_a_list_of_filters_joined_as_folktexts_or_with_and_parses_back_as_that_list(filters, sep):
    """folktexts' --use-population-filter SEX=2,RAC1P=1 was refused (read as SEX equal to the text '2,RAC1P=1')."""
    assert parse_filters(sep.join(f.describe() for f in filters)) == tuple(filters)
    assert parse_filters([sep.join(f.describe() for f in filters)]) == tuple(filters)


@pytest.mark.parametrize(
    ("text", "same_as"),
    [
        ("SEX=2,AGEP=35", "SEX=2 & AGEP=35"),
        ("SEX=2, AGEP>16", "SEX=2 & AGEP>16"),
        ("AGEP=15|90,SEX==2", "AGEP=15|90 & SEX=2"),
        ("AGEP=16..35,SEX=1", "AGEP=16..35 & SEX=1"),
        ("SEX=true", "SEX=1"),
        ("SEX=False", "SEX=0"),
        ("SEX=TRUE,AGEP=35", "SEX=1 & AGEP=35"),
    ],
)
def test_folktexts_comma_lists_and_booleans_read_as_folktexts_reads_them(text, same_as):
    assert parse_filters(text) == parse_filters(same_as)
    assert apply_filters(FRAME, parse_filters(text)).tolist() == apply_filters(FRAME, parse_filters(same_as)).tolist()


def test_a_comma_inside_a_text_value_stays_in_the_value():
    frame = pd.DataFrame({"CITY": ["Boston, MA", "Boston", "true", None], "SEX": [1, 2, 2, 1]})
    assert parse_filters("CITY=Boston, MA")[0].values == ("Boston, MA",)
    assert apply_filters(frame, parse_filters("CITY=Boston, MA,SEX=1")).tolist() == [True, False, False, False]
    assert apply_filters(frame, parse_filters("CITY=TRUE")).tolist() == [
        False,
        False,
        True,
        False,
    ]  # a text cell 'true' is 1 too


def test_several_codes_written_with_a_comma_are_told_to_use_a_bar():
    from folkscope.tasks import get_task

    with pytest.raises(
        FilterSyntaxError, match=r"'1,2' is not a number; write e.g. 'SEX=1' \(one of several values: 'SEX=1\|2'\)"
    ):
        get_task("ACSIncome").with_filters(["SEX=1,2"])


@pytest.mark.parametrize(
    ("text", "described"),
    [
        ("PINCP>1234567", "PINCP>1234567"),
        ("PINCP<=0.1", "PINCP<=0.1"),
        ("WKHP=0.30000000000000004", "WKHP=0.30000000000000004"),
        ("PINCP=1e22", "PINCP=1e+22"),
        ("SERIALNO=123456789012345678", "SERIALNO=123456789012345680"),
        ("AGEP>16", "AGEP>16"),
        ("INDP_CAT=0..17", "INDP_CAT=0..17"),
        ("PINCP<=30000", "PINCP<=30000"),
        ("AGEP<inf", "AGEP<inf"),
    ],
)
def test_values_already_exact_keep_their_text_and_the_rest_are_exact_now(text, described):
    assert PopulationFilter.parse(text).describe() == described


def test_nan_is_no_number_a_filter_can_compare_with():
    with pytest.raises(FilterSyntaxError, match="> needs a number, got 'nan'"):
        PopulationFilter.parse("AGEP>nan")
    assert PopulationFilter.parse("NAME=nan").values == ("nan",)
