"""Datasets read from the user's copy (licences keep them out of the package): where each lives and how it is read.

Each :class:`UserDataset` names the file it expects under a data folder
(``--data-dir``; the project's test copy is ``../shared/data``) and reads it
into a table with the columns its task file uses. A missing file is one
clear error saying what to download and where to put it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from folkscope.errors import ConfigError, DataError

__all__ = [
    "USER_DATASETS",
    "UserDataset",
    "read_brfss",
    "read_gss2010",
    "read_meps96",
    "read_nhanes",
    "read_nhis",
    "read_yrbss",
]


@dataclass(frozen=True)
class UserDataset:
    """A dataset read from the user's copy."""

    name: str
    path: str  # relative to the data folder
    about: str
    source: str  # where to get it
    read: Callable[[Path], pd.DataFrame]

    def load(self, data_dir: str | Path | None) -> pd.DataFrame:
        if data_dir is None:
            raise ConfigError(
                f"dataset {self.name} is read from your copy ({self.about}); pass --data-dir, the folder holding "
                f"{self.path}",
                parameter="data_dir",
                value=self.name,
            )
        file = Path(data_dir).expanduser() / self.path
        if not file.is_file():
            raise DataError(
                f"no {self.name} file at {file}; get it from {self.source} and put it at {self.path} under --data-dir"
            )
        try:
            return self.read(file)
        except DataError:
            raise
        except (
            OSError,
            ValueError,
            TypeError,
            KeyError,
        ) as exc:  # not gzip, not CSV, not text, text where numbers belong
            raise DataError(
                f"{file} cannot be read as the {self.name} table ({type(exc).__name__}: {str(exc)[:80]}); replace it "
                f"with the original from {self.source}"
            ) from None


def _rdatasets(file: Path) -> pd.DataFrame:
    """An Rdatasets CSV without its R row names.

    Only ``NA`` and empty cells are missing: pandas' default would also read
    answers such as ``None`` as missing.
    """
    frame = pd.read_csv(file, keep_default_na=False, na_values=["", "NA"])
    return frame.drop(columns="rownames", errors="ignore")


def _need(frame: pd.DataFrame, file: Path, columns: list[str]) -> pd.DataFrame:
    """``frame`` unchanged, or one clear error when ``file`` is not the table it should be."""
    missing = [c for c in columns if c not in frame]
    if missing:
        raise DataError(
            f"{file} lacks the column(s) {', '.join(missing)}; it is not the expected table, replace it with the "
            "original file"
        )
    return frame


def read_nhanes(file: Path) -> pd.DataFrame:
    """NHANES 2009-2012 (R package NHANES, ``NHANESraw``): one row per participant, with the design weights.

    The two 2-year cycles are pooled, so, as the CDC's NHANES analytic
    guidelines direct, each 2-year weight is divided by the number of cycles
    present (two): ``WTINT4YR`` (interview weight, for questions asked at the
    household interview) and ``WTMEC4YR`` (examination weight, for the exam
    and for questions asked in the mobile examination centre). Either sums to
    about 304 million, the average US population of the period.

    ``smoking`` is derived as in the package's example: ``never`` (under 100
    cigarettes in life, ``Smoke100`` No), ``former`` (``SmokeNow`` No),
    ``current`` (``SmokeNow`` Yes); asked of adults aged 20 or over.
    Only empty cells are missing (the answer ``None`` of ``Depressed`` is a
    level, not a gap).
    """
    frame = pd.read_csv(file, keep_default_na=False, na_values=[""], low_memory=False)
    _need(frame, file, ["SurveyYr", "Age", "Gender", "WTINT2YR", "WTMEC2YR", "Smoke100", "SmokeNow"])
    cycles = frame["SurveyYr"].nunique()
    frame["WTINT4YR"] = frame["WTINT2YR"] / cycles
    frame["WTMEC4YR"] = frame["WTMEC2YR"] / cycles
    frame["smoking"] = np.select(
        [frame["Smoke100"] == "No", frame["SmokeNow"] == "No", frame["SmokeNow"] == "Yes"],
        ["never", "former", "current"],
        default=None,
    )
    return frame


def read_gss2010(file: Path) -> pd.DataFrame:
    """The 2010 General Social Survey extract of the openintro package (2,044 respondents, no weight).

    Columns as documented (``degree`` and ``grass`` keep their upper-case
    GSS labels); ``hrsrelax``, ``mntlhlth`` and ``hrs1`` were asked of
    working respondents only.
    """
    return _need(_rdatasets(file), file, ["degree", "grass", "mntlhlth", "hrs1"])


def read_yrbss(file: Path) -> pd.DataFrame:
    """The openintro YRBSS extract (13,583 high-school students, no weight).

    ``grade`` becomes a number (9-12); its 23 answers ``other`` (ungraded or
    other grade) become missing, so grade-based levels never mix them in. The
    answer columns keep their texts (``did not ride``, ``<5``, ``5+``...).
    """
    frame = _need(
        _rdatasets(file), file, ["gender", "grade", "helmet_12m", "physically_active_7d", "school_night_hours_sleep"]
    )
    frame["grade"] = pd.to_numeric(frame["grade"], errors="coerce")
    return frame


_NHIS_HEALTH = {5: "excellent", 4: "very good", 3: "good", 2: "fair", 1: "poor"}


def read_nhis(file: Path) -> pd.DataFrame:
    """NHIS 2009 as prepared for *Mastering 'Metrics* Table 1.1 (stevedata ``mm_nhis``): married people aged 26-59.

    ``health`` is the text of ``hlth``, the NHIS self-rated health reversed
    so that 5 is excellent and 1 poor (the book's health index; the answer
    shares, about 33% at 5 and 1% at 1, fit that reading only). ``perweight``
    is the NHIS person weight the book's table uses.
    """
    frame = _need(_rdatasets(file), file, ["fml", "hi", "hlth", "age", "yedu", "empl", "perweight"])
    frame["health"] = frame["hlth"].map(_NHIS_HEALTH)
    return frame


def read_meps96(file: Path) -> pd.DataFrame:
    """MEPS 1996, the AER package's ``HealthInsurance`` table (8,802 people aged 18-62, no weight).

    A subset of Perry and Rosen's (2004) data: every person is either
    self-employed or a wage earner. Columns keep their yes/no texts.
    """
    return _need(_rdatasets(file), file, ["health", "age", "insurance", "selfemp", "education"])


def read_brfss(file: Path) -> pd.DataFrame:
    """BRFSS 2010, the openintro ``health_coverage`` table (20,000 adults; coverage and general health, no weight)."""
    return _need(_rdatasets(file), file, ["coverage", "health_status"])


_RD = "Rdatasets (https://vincentarelbundock.github.io/Rdatasets/): csv/{0}/{1}.csv of the CRAN package {0}, gzipped"

#: datasets read from the user's copy, by name
USER_DATASETS: dict[str, UserDataset] = {
    d.name: d
    for d in (
        UserDataset(
            "nhanes",
            "nhanes-r-package/NHANESraw.csv.gz",
            "NHANES 2009-2012, 20,293 participants with their survey weights (R package NHANES, NHANESraw)",
            "the CRAN package NHANES (data NHANESraw, written to CSV) or https://github.com/cran/NHANES",
            read_nhanes,
        ),
        UserDataset(
            "gss",
            "rdatasets-surveys/csv/openintro__gss2010.csv.gz",
            "General Social Survey 2010, 2,044 respondents (openintro)",
            _RD.format("openintro", "gss2010"),
            read_gss2010,
        ),
        UserDataset(
            "yrbss",
            "rdatasets-surveys/csv/openintro__yrbss.csv.gz",
            "Youth Risk Behavior Survey, 13,583 high-school students (openintro)",
            _RD.format("openintro", "yrbss"),
            read_yrbss,
        ),
        UserDataset(
            "nhis",
            "rdatasets-surveys/csv/stevedata__mm_nhis.csv.gz",
            "National Health Interview Survey 2009, 18,790 married people aged 26-59 (stevedata mm_nhis)",
            _RD.format("stevedata", "mm_nhis"),
            read_nhis,
        ),
        UserDataset(
            "meps96",
            "rdatasets-surveys/csv/AER__HealthInsurance.csv.gz",
            "Medical Expenditure Panel Survey 1996, 8,802 workers aged 18-62 (AER HealthInsurance)",
            _RD.format("AER", "HealthInsurance"),
            read_meps96,
        ),
        UserDataset(
            "brfss",
            "rdatasets-surveys/csv/openintro__health_coverage.csv.gz",
            "BRFSS 2010, 20,000 adults: health coverage and general health (openintro health_coverage)",
            _RD.format("openintro", "health_coverage"),
            read_brfss,
        ),
    )
}
