"""Every ACS column of paper table A5 renders known codes and values to the expected sentence.

Expected strings are written by hand from the Census PUMS 2018 data dictionary,
not produced by the code under test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from folkscope.errors import ConfigError, DataError, UnknownColumnError
from folkscope.tasks import ColumnToText, column_set
from folkscope.tasks import get_column as _get_column


def get_column(name, columns="acs-codebook"):
    """These tests check the Census codebook wording (folktexts' is checked in test_folktexts_wording.py)."""
    return _get_column(name, columns=columns)


# (column, value, expected sentence)
CASES = [
    ("AGEP", 42, "The age is: 42 years old."),
    ("COW", 2, "The class of worker is: Employee of a private not-for-profit, tax-exempt or charitable organization."),
    ("SCHL", 21, "The highest educational attainment is: Bachelor's degree."),
    ("MAR", 1, "The marital status is: Married."),
    ("OCCP", 136, "The occupation is: Human Resources Managers."),
    ("POBP", 515, "The place of birth is: New Zealand."),
    ("POBP", 6, "The place of birth is: California."),
    ("RELP", 5, "The relationship to the reference person in the household is: Brother or sister."),
    ("WKHP", 40, "The usual number of hours worked per week is: 40 hours."),
    ("SEX", 2, "The sex is: Female."),
    ("RAC1P", 2, "The race is: Black or African American."),
    ("PINCP", 75000, "The total yearly income is: $75,000."),
    ("PINCP", -9000, "The total yearly income is: -$9,000."),
    ("CIT", 4, "The citizenship status is: U.S. citizen by naturalization."),
    ("DIS", 1, "The disability status is: With a disability."),
    ("ESP", 1, "The employment status of parents is: Living with two parents, both in the labor force."),
    ("MIG", 1, "The residence one year ago is: Same house as now."),
    ("MIL", 2, "The military service is: On active duty in the past, but not now."),
    ("PUBCOV", 1, "The public health coverage is: With public health coverage."),
    ("ANC", 1, "The ancestry is: Single ancestry."),
    ("NATIVITY", 2, "The nativity is: Foreign born."),
    ("DEAR", 1, "The hearing status is: Deaf or has serious difficulty hearing."),
    ("DEYE", 2, "The vision status is: No serious difficulty seeing."),
    ("DREM", 2, "The cognitive status is: No serious difficulty concentrating, remembering or making decisions."),
    ("ESR", 6, "The employment status is: Not in labor force."),
    ("ST", 6, "The state of residence is: California."),
    ("ST", 72, "The state of residence is: Puerto Rico."),
    ("FER", 1, "The fertility in the past 12 months is: Gave birth to a child in the past 12 months."),
    ("JWMNP", 45, "The travel time to work is: 45 minutes."),
    ("JWTR", 9, "The means of transportation to work is: Bicycle."),
    ("POVPIP", 150, "The income-to-poverty ratio is: 150%."),
    ("POVPIP", 501, "The income-to-poverty ratio is: 501% or more."),
]

TABLE_A5 = [
    "AGEP",
    "COW",
    "SCHL",
    "MAR",
    "OCCP",
    "POBP",
    "RELP",
    "WKHP",
    "SEX",
    "RAC1P",
    "PINCP",
    "CIT",
    "DIS",
    "ESP",
    "MIG",
    "MIL",
    "PUBCOV",
    "ANC",
    "NATIVITY",
    "DEAR",
    "DEYE",
    "DREM",
    "ESR",
    "ST",
    "FER",
    "JWMNP",
    "JWTR",
    "POVPIP",
]


def test_all_28_table_a5_columns_have_a_mapping_and_a_case():
    assert len(TABLE_A5) == 28
    assert set(TABLE_A5) <= set(column_set("acs-codebook"))
    assert {c for c, _, _ in CASES} == set(TABLE_A5)


@pytest.mark.parametrize(("column", "value", "expected"), CASES, ids=[f"{c}={v}" for c, v, _ in CASES])
def test_sentence(column, value, expected):
    assert get_column(column).sentence(value) == expected


def test_vectorised_render_matches_single_values_and_keeps_index():
    values = pd.Series([18, 53, 18, 41], index=[7, 3, 9, 1])
    out = get_column("AGEP").render(values)
    assert list(out) == ["18 years old", "53 years old", "18 years old", "41 years old"]
    assert list(out.index) == [7, 3, 9, 1]


def test_missing_values_use_the_not_applicable_text():
    out = get_column("WKHP").render(pd.Series([40, np.nan], dtype="float64"))
    assert out.iloc[1] == "N/A (less than 16 years old, or did not work during the past 12 months)"
    out = get_column("JWMNP").render(pd.Series([pd.NA, 10], dtype="Int16"))
    assert list(out) == ["N/A (not a worker, or worked at home)", "10 minutes"]


def test_missing_values_without_text_raise():
    with pytest.raises(DataError, match="SEX has 1 blank values"):
        get_column("SEX").render(pd.Series([1, None], dtype="Int8"))


def test_unknown_code_raises_naming_column_and_code():
    with pytest.raises(DataError, match=r"SEX: code 7 is not in its codebook"):
        get_column("SEX").render(pd.Series([1, 7]))


def test_low_granularity_bins():
    assert get_column("AGEP").value_text(17, granularity="low") == "under 18 years old"
    assert get_column("AGEP").value_text(18, granularity="low") == "18 to 24 years old"
    assert get_column("OCCP").value_text(4720, granularity="low") == "Sales"
    assert get_column("POBP").value_text(303, granularity="low") == "the Americas outside the United States"
    assert get_column("PINCP").value_text(0, granularity="low") == "no income or a loss"
    assert get_column("PINCP").value_text(50000, granularity="low") == "$50,000 to $74,999"
    # a column without coarse bins keeps its detailed label
    assert get_column("SEX").value_text(1, granularity="low") == "Male"


def test_bad_granularity_and_unknown_column():
    with pytest.raises(ConfigError, match="granularity"):
        get_column("AGEP").render(pd.Series([1]), granularity="medium")
    with pytest.raises(UnknownColumnError, match="no text mapping for column 'XYZ'"):
        get_column("XYZ")
    with pytest.raises(ConfigError, match="unknown column set"):
        column_set("cps")


def test_nist_columns_override_and_extend_acs():
    nist = column_set("nist")
    assert nist["HISP"].sentence(0) == "The Hispanic origin is: Not Spanish, Hispanic or Latino."
    assert nist["EDU"].sentence(9) == "The highest educational attainment is: Bachelor's degree."
    assert nist["AGEP"] is column_set("acs-codebook")["AGEP"]


def test_invalid_definitions_are_rejected():
    with pytest.raises(ConfigError, match="numeric unit"):
        ColumnToText("X", "x", "numeric", unit="furlongs")
    with pytest.raises(ConfigError, match="needs a 'values' map"):
        ColumnToText("X", "x", "categorical")
