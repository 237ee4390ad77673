"""The full public survey files the epidemiology tasks can read: what each publisher distributes, where, and the weight.

Each is downloaded on first use (or read from your copy) and cached as
parquet by :class:`~folkscope.data.public_files.PublicDataset`; ACS
PUMS goes through the data layer's :func:`~folkscope.data.pums.load_pums`
(its own cache, ``$FOLKSCOPE_PUMS_BASE_URL``). Codes in the task files are
the publishers' (see each codebook); every weight below is the one the
publisher's analysis guidance names for the questions the tasks ask.

==============  ===========================================================  =========
name            files                                                        weight
==============  ===========================================================  =========
nhanes1718      CDC NHANES 2017-2018 (cycle J): DEMO_J, SMQ_J, BPQ_J, DIQ_J  WTINT2YR
nhanes2021      CDC NHANES 2021-2023 (cycle L): DEMO_L, BMX_L, DIQ_L, ALQ_L  WTMEC2YR
brfss2022       CDC BRFSS 2022: LLCP2022XPT.zip (LLCP2022.XPT)               _LLCPWT
brfss2023       CDC BRFSS 2023: LLCP2023XPT.zip (LLCP2023.XPT)               _LLCPWT
gss-cumulative  NORC GSS cumulative file: GSS_stata.zip (gss72NN_rN.dta)     wtssps
meps2022        AHRQ MEPS HC-243, 2022 full-year consolidated: h243dta.zip   PERWT22F
nsduh2022       SAMHSA NSDUH 2022 public-use file, tab-delimited             ANALWT2_C
scf2022         Federal Reserve SCF 2022 summary extract: scfp2022s.zip      WGT
acs-pums        Census ACS PUMS 2018 1-year person files, 50 states and DC   PWGTP
acs-pums-2023   Census ACS PUMS 2023 1-year person files, 50 states and DC   PWGTP
==============  ===========================================================  =========

Examples
--------
>>> brfss = PUBLIC_DATASETS["brfss2022"]
>>> brfss.files[0].name, brfss.weight, brfss.base_url_env
('LLCP2022XPT.zip', '_LLCPWT', 'FOLKSCOPE_BRFSS2022_BASE_URL')
>>> PUBLIC_DATASETS["acs-pums"].weight
'PWGTP'
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from folkscope.data.public_files import PublicDataset, PublicFile
from folkscope.data.pums import default_states, load_pums

__all__ = ["PUBLIC_DATASETS", "PumsDataset", "nhanes_alcohol_weekly", "nhanes_smoking", "scf_derived"]


@dataclass(frozen=True)
class PumsDataset:
    """ACS PUMS person records read through :func:`folkscope.data.pums.load_pums` (not duplicated here).

    The files are cached under ``<data_dir>/pums/<year>/<horizon>/``, the data
    layer's place, so the risk-score part and this one share one download.
    ``states`` None means the 50 states and the District of Columbia: the
    resident population of the United States, as the ACS national tables
    count it (Puerto Rico, which folktables adds, is left out).
    """

    name: str
    about: str
    columns: tuple[str, ...]
    weight: str
    year: int = 2018
    horizon: str = "1-Year"
    states: tuple[str, ...] | None = None

    def state_list(self) -> list[str]:
        """The USPS codes loaded."""
        return list(self.states) if self.states is not None else [s for s in (*default_states(), "DC") if s != "PR"]

    def load(
        self, data_dir: str | os.PathLike[str] | None = None, *, base_url: str | None = None, download: bool = True
    ) -> pd.DataFrame:
        """The kept columns of every state's persons (the data layer's errors and offline hints)."""
        return load_pums(
            self.state_list(),
            self.year,
            self.horizon,
            data_dir,
            columns=list(self.columns),
            download=download,
            base_url=base_url,
        )


def nhanes_smoking(frame: pd.DataFrame) -> pd.DataFrame:
    """``smoking``: ``never`` (SMQ020 2: under 100 cigarettes in life), ``current`` (SMQ040 1 or 2: every or some days),
    ``former`` (SMQ040 3: not at all); missing for refusals and unknowns (7, 9) and people not asked (under 18).

    >>> nhanes_smoking(pd.DataFrame({"SMQ020": [2, 1, 1, 1, 9], "SMQ040": [None, 1, 2, 3, None]}))["smoking"].fillna("-").tolist()
    ['never', 'current', 'current', 'former', '-']
    """
    ever, now = frame["SMQ020"], frame["SMQ040"]
    frame["smoking"] = np.select(
        [ever == 2, (ever == 1) & now.isin([1, 2]), (ever == 1) & (now == 3)],
        ["never", "current", "former"],
        default=None,
    )
    return frame


def nhanes_alcohol_weekly(frame: pd.DataFrame) -> pd.DataFrame:
    """``alcohol_weekly``: 1 when ALQ121 (how often the person drank in the past 12 months) is once a week or more
    (codes 1-5), else 0, people not asked (never drinkers) included, as the paper's code derives it.

    >>> nhanes_alcohol_weekly(pd.DataFrame({"ALQ121": [1, 5, 6, 0, 77, None]}))["alcohol_weekly"].tolist()
    [1, 1, 0, 0, 0, 0]
    """
    frame["alcohol_weekly"] = frame["ALQ121"].isin([1, 2, 3, 4, 5]).astype("int64")
    return frame


def scf_derived(frame: pd.DataFrame) -> pd.DataFrame:
    """``implicate`` (1-5) of each row, as the SCF numbers a record ``Y1 = 10 * YY1 + implicate`` (YY1: the
    family), and ``FOOD``, the family's yearly food spending at home, away and delivered (the paper's outcome).

    >>> frame = pd.DataFrame({"YY1": [1, 1, 2], "Y1": [11, 15, 23], "FOODHOME": [1.0, 2.0, 3.0],
    ...                       "FOODAWAY": [0.5, 0.0, 1.0], "FOODDELV": [0.0, 1.0, 0.0]})
    >>> derived = scf_derived(frame)
    >>> derived["implicate"].tolist(), derived["FOOD"].tolist()
    ([1, 5, 3], [1.5, 3.0, 4.0])
    """
    frame["implicate"] = (frame["Y1"] - 10 * frame["YY1"]).astype("int64")
    frame["FOOD"] = frame["FOODHOME"] + frame["FOODAWAY"] + frame["FOODDELV"]
    return frame


_NHANES = PublicDataset(
    name="nhanes1718",
    about="CDC NHANES 2017-2018 (9,254 participants), household-interview questions, interview weight WTINT2YR",
    page="https://wwwn.cdc.gov/nchs/nhanes/continuousnhanes/default.aspx?BeginYear=2017",
    # where the CDC now serves the cycle's files; the older links under https://wwwn.cdc.gov/Nchs/Nhanes/2017-2018/
    # are those many scripts still use (point $FOLKSCOPE_NHANES1718_BASE_URL there if they answer for you)
    base_url="https://wwwn.cdc.gov/Nchs/Data/Nhanes/Public/2017/DataFiles",
    files=(
        # demographics and the design weights: sex (1 male, 2 female), age in years (80: 80 or over), race and
        # Hispanic origin with Asian (RIDRETH3), education of adults 20+ (DMDEDUC2)
        PublicFile(
            "DEMO_J.xpt", "xport", ("SEQN", "RIAGENDR", "RIDAGEYR", "RIDRETH3", "DMDEDUC2", "WTINT2YR", "WTMEC2YR")
        ),
        # SMQ020 smoked at least 100 cigarettes in life; SMQ040 smokes now (1 every day, 2 some days, 3 not at all)
        PublicFile("SMQ_J.xpt", "xport", ("SEQN", "SMQ020", "SMQ040")),
        # BPQ020 ever told by a doctor of high blood pressure (1 yes, 2 no)
        PublicFile("BPQ_J.xpt", "xport", ("SEQN", "BPQ020")),
        # DIQ010 doctor told you have diabetes (1 yes, 2 no, 3 borderline)
        PublicFile("DIQ_J.xpt", "xport", ("SEQN", "DIQ010")),
    ),
    weight="WTINT2YR",  # the CDC's guidelines: interview weight for questions asked at the household interview
    key="SEQN",
    derive=nhanes_smoking,
)

_NHANES21 = PublicDataset(
    name="nhanes2021",
    about="CDC NHANES August 2021-August 2023 (cycle L), examined adults, exam weight WTMEC2YR: the paper's cycle",
    page="https://wwwn.cdc.gov/nchs/nhanes/continuousnhanes/default.aspx?Cycle=2021-2023",
    base_url="https://wwwn.cdc.gov/Nchs/Data/Nhanes/Public/2021/DataFiles",
    files=(
        # age in years (80: 80 or over), sex, the exam weight (0: interviewed but not examined)
        PublicFile("DEMO_L.xpt", "xport", ("SEQN", "RIAGENDR", "RIDAGEYR", "WTMEC2YR")),
        # BMXBMI body mass index (kg/m2), measured at the exam
        PublicFile("BMX_L.xpt", "xport", ("SEQN", "BMXBMI")),
        # DIQ010 doctor told you have diabetes (1 yes, 2 no, 3 borderline, 7 refused, 9 don't know)
        PublicFile("DIQ_L.xpt", "xport", ("SEQN", "DIQ010")),
        # ALQ121 past 12 months how often drank (0 never in the last year, 1 every day ... 5 once a week, 6-10 less)
        PublicFile("ALQ_L.xpt", "xport", ("SEQN", "ALQ121")),
    ),
    weight="WTMEC2YR",  # the CDC's guidelines: the exam weight whenever an exam measurement (BMI) is used
    key="SEQN",
    derive=nhanes_alcohol_weekly,
)

_BRFSS = PublicDataset(
    name="brfss2022",
    about="CDC BRFSS 2022 (445,132 adults in the states, DC and three territories), final weight _LLCPWT",
    page="https://www.cdc.gov/brfss/annual_data/annual_2022.html",
    base_url="https://www.cdc.gov/brfss/annual_data/2022/files",
    files=(
        PublicFile(
            "LLCP2022XPT.zip",
            "xport",
            ("_STATE", "SEXVAR", "_AGE_G", "_EDUCAG", "GENHLTH", "_SMOKER3", "EXERANY2", "_LLCPWT"),
            member=r"LLCP2022\.XPT",
        ),
    ),
    weight="_LLCPWT",  # the combined landline and cell-phone weight, the one the CDC's codebook names for all analyses
)

_BRFSS23 = PublicDataset(
    name="brfss2023",
    about="CDC BRFSS 2023 (the states but Kentucky and Pennsylvania, DC and three territories), final weight _LLCPWT",
    page="https://www.cdc.gov/brfss/annual_data/annual_2023.html",
    base_url="https://www.cdc.gov/brfss/annual_data/2023/files",
    # the paper's by-state questions: EXERANY2 exercise in the past month, DIABETE4 ever told diabetes (2 during
    # pregnancy only), BPHIGH6 ever told high blood pressure (odd years; 2 pregnancy only), ASTHMA3 ever told asthma,
    # TOLDHI3 ever told high cholesterol, BLIND and DEAF serious difficulty seeing or hearing, CVDINFR4 heart attack,
    # CVDSTRK3 stroke; 1 yes, 2 no (DIABETE4, BPHIGH6: 3 no, 4 borderline), 7 don't know, 9 refused
    files=(
        PublicFile(
            "LLCP2023XPT.zip",
            "xport",
            (
                "_STATE",
                "EXERANY2",
                "DIABETE4",
                "BPHIGH6",
                "ASTHMA3",
                "TOLDHI3",
                "BLIND",
                "DEAF",
                "CVDINFR4",
                "CVDSTRK3",
                "_LLCPWT",
            ),
            member=r"LLCP2023\.XPT",
        ),
    ),
    weight="_LLCPWT",
)

_GSS = PublicDataset(
    name="gss-cumulative",
    about="NORC General Social Survey cumulative file 1972-2022 or later (tasks: the 2022 respondents), weight wtssps",
    page="https://gss.norc.org/get-the-data/stata",
    base_url="https://gss.norc.org/content/dam/gss/get-the-data/documents/stata",
    # NORC replaces the archive with each release: gss7222_r4.dta (1972-2022), gss7224_r3a.dta (1972-2024), ...
    files=(
        PublicFile(
            "GSS_stata.zip",
            "stata",
            # race 1 white, 2 Black, 3 other; income16 family income in 26 classes (1 under $1,000 ... 26 $170,000 or
            # over); polviews 1 extremely liberal ... 7 extremely conservative; partyid 0 strong Democrat ... 6 strong
            # Republican, 7 other party
            (
                "year",
                "wtssps",
                "sex",
                "age",
                "race",
                "degree",
                "income16",
                "grass",
                "happy",
                "cappun",
                "polviews",
                "partyid",
            ),
            member=r"gss7\d{3}_r\w+\.dta",
        ),
    ),
    # NORC's weighting guidance since the 2021 release: wtssps (post-stratification weight, defined for every year
    # of the cumulative file); wtssall, the weight used before, is not defined for 2021 and later
    weight="wtssps",
)

_MEPS = PublicDataset(
    name="meps2022",
    about="AHRQ MEPS HC-243, 2022 full-year consolidated file (persons of the civilian noninstitutionalized population), "
    "person weight PERWT22F",
    page="https://meps.ahrq.gov/mepsweb/data_stats/download_data_files_detail.jsp?cboPufNumber=HC-243",
    base_url="https://meps.ahrq.gov/mepsweb/data_files/pufs/h243",
    # AGE22X age at the end of 2022 (85: 85 or over); SEX 1 male 2 female; RTHLTH53 perceived health in round 5/3
    # (1 excellent ... 5 poor); INSCOV22 1 any private, 2 public only, 3 uninsured; POVCAT22 family income as
    # percent of poverty (1 poor ... 5 high income); TOTEXP22 total health care expenses in dollars
    files=(
        PublicFile(
            "h243dta.zip",
            "stata",
            # the paper's questions: AGE53X age in round 5/3 (-1 inapplicable), RACEV1X race (1 white, 2 Black, 3 American
            # Indian or Alaska Native, 4 Asian, 5 Native Hawaiian or Pacific Islander, 6 more than one), INSURC22
            # coverage (under 65: 1 any private, 2 public only, 3 uninsured; 65+: 4 Medicare only, 5 Medicare and
            # private, 6 Medicare and other public, 7 uninsured, 8 no Medicare but other coverage)
            (
                "DUPERSID",
                "AGE22X",
                "AGE53X",
                "SEX",
                "RACEV1X",
                "RTHLTH53",
                "INSCOV22",
                "INSURC22",
                "POVCAT22",
                "TOTEXP22",
                "PERWT22F",
            ),
            member=r"h243\.dta",
        ),
    ),
    weight="PERWT22F",  # zero for persons out of scope at the end of the year: they count for nothing
)

_NSDUH = PublicDataset(
    name="nsduh2022",
    about="SAMHSA NSDUH 2022 public-use file (people aged 12 or over), analysis weight ANALWT2_C",
    page="https://www.samhsa.gov/data/data-we-collect/nsduh-national-survey-drug-use-and-health/datafiles",
    base_url="https://www.samhsa.gov/data/system/files/media-puf-file",
    # CATAG6 age group (1 12-17, 2 18-25, 3 26-34, 4 35-49, 5 50-64, 6 65+); IRSEX 1 male 2 female; IRMJRC, IRALCRC,
    # IRCIGRC: imputation-revised recency of marijuana, alcohol and cigarette use (1 past 30 days, 2 past 12 months,
    # 3 (cigarettes: 3 and 4) longer ago, 9 never)
    files=(
        PublicFile(
            "NSDUH-2022-DS0001-bndl-data-tsv_v2.zip",
            "tsv",
            # the paper's questions (its code reads the raw answers, not the imputed ones): AGE3 age in 11 classes (1
            # 12-13 ... 11 65+), NEWRACE2 (1 white, 2 Black, 3 Native American or Alaska Native, 4 Native Hawaiian or
            # other Pacific Islander, 5 Asian, 6 more than one race, all non-Hispanic; 7 Hispanic), ALCREC and CIGREC
            # recency (1 within the past 30 days), MJEVER, COCEVER and HEREVER ever used (1 yes)
            (
                "QUESTID2",
                "CATAG6",
                "AGE3",
                "IRSEX",
                "NEWRACE2",
                "IRMJRC",
                "IRALCRC",
                "IRCIGRC",
                "ALCREC",
                "CIGREC",
                "MJEVER",
                "COCEVER",
                "HEREVER",
                "ANALWT2_C",
            ),
            member=r"NSDUH_2022_Tab\.(txt|tsv)",
        ),
    ),
    weight="ANALWT2_C",  # the 2021-2023 files' person weight; ANALWT_C in 2019 and earlier, ANALWTQ1Q4_C in 2020
)

_SCF = PublicDataset(
    name="scf2022",
    about="Federal Reserve Survey of Consumer Finances 2022 summary extract (4,595 families, five implicates each), weight WGT",
    page="https://www.federalreserve.gov/econres/scfindex.htm",
    base_url="https://www.federalreserve.gov/econres/files",
    # the family's reference person: AGECL age class (1 under 35, 2 35-44, 3 45-54, 4 55-64, 5 65-74, 6 75+), EDCL
    # (1 no high-school diploma, 2 diploma or GED, 3 some college or associate degree, 4 bachelor's or more),
    # RACECL4 (1 white non-Hispanic, 2 Black non-Hispanic, 3 Hispanic, 4 other or several); HOUSECL 1 owns the home,
    # 2 otherwise; HSTOCKS, HDEBT 1 holds directly held stocks / has any debt, 0 not
    files=(
        PublicFile(
            "scfp2022s.zip",
            "stata",
            # the paper's questions: AGE of the reference person, RACECL5 (1 white non-Hispanic, 2 Black non-Hispanic, 3
            # Hispanic, 4 Asian, 5 other), HHOUSES owns the primary residence (1 yes, 0 no), FOODHOME, FOODAWAY,
            # FOODDELV yearly food spending, ASSET, DEBT, NETWORTH in dollars
            (
                "YY1",
                "Y1",
                "WGT",
                "AGE",
                "AGECL",
                "EDCL",
                "RACECL4",
                "RACECL5",
                "HOUSECL",
                "HHOUSES",
                "HSTOCKS",
                "HDEBT",
                "FOODHOME",
                "FOODAWAY",
                "FOODDELV",
                "ASSET",
                "DEBT",
                "NETWORTH",
            ),
            member=r"rscfp2022\.dta",
        ),
    ),
    # All five implicates are kept. The extract's WGT is the full file's weight X42001 already divided by 5, so all
    # rows together add up to the US families and weighted shares are the Fed's point estimates averaged over the
    # implicates. Each family still counts five times among the rows, so a task's Kish effective sample size, and
    # with it the best reference, overstates the survey's precision about five-fold.
    weight="WGT",
    derive=scf_derived,
)

_PUMS = PumsDataset(
    name="acs-pums",
    about="Census ACS PUMS 2018 1-year person records of the 50 states and DC (data layer cache), weight PWGTP",
    columns=("AGEP", "SEX", "SCHL", "RAC1P", "ESR", "HICOV", "PWGTP"),
    weight="PWGTP",
)

_PUMS23 = PumsDataset(
    name="acs-pums-2023",
    about="Census ACS PUMS 2023 1-year person records of the 50 states and DC (data layer cache), weight PWGTP; the "
    "paper's ACS year",
    # ESR employment status (1, 4 at work; 2, 5 with a job, not at work; 3 unemployed; 6 not in the labor force), COW
    # class of worker (1 for-profit, 2 non-profit, 3-5 government, 6-8 self-employed, 9 unpaid family worker), WAGP
    # wages and salary of the past 12 months in dollars, SCHL educational attainment in 24 classes
    columns=("AGEP", "SEX", "RAC1P", "SCHL", "ESR", "COW", "WAGP", "PWGTP"),
    weight="PWGTP",
    year=2023,
)

#: full public files, downloaded on first use or read from your copy, by name
PUBLIC_DATASETS: dict[str, PublicDataset | PumsDataset] = {
    d.name: d for d in (_NHANES, _NHANES21, _BRFSS, _BRFSS23, _GSS, _MEPS, _NSDUH, _SCF, _PUMS, _PUMS23)
}
