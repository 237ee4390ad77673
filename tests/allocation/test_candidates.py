"""Candidate tables: bundled Bloomberg resumes, the RABBI folder, ICNALE essays (synthetic copy) and a real part-1 run."""

from __future__ import annotations

import doctest
import gzip
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from folkscope.allocation import (
    CANDIDATE_COLUMNS,
    DEFAULT_REFERENCE,
    ICNALE_REFERENCE,
    RACE_GENDER_GROUPS,
    CandidateSet,
    acs_candidates,
    bloomberg_resumes,
    essays,
    icnale_essays,
    rabbi_resumes,
    resume_jobs,
)
from folkscope.allocation import resumes as cand
from folkscope.errors import ConfigError, DataError, MissingDependencyError
from folkscope.runs import Manifest, read_table
from folkscope.tasks import get_column

#: the project's test-only data, beside the checkout (FOLKSCOPE_SHARED_DATA elsewhere)
SHARED_DATA = Path(os.environ.get("FOLKSCOPE_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
SHARED = SHARED_DATA
BLOOMBERG = SHARED / "bloomberg-gpt-hiring-audit"
RABBI = SHARED / "rabbi-allocational-harm" / "resume_screening"
BUNDLED = Path(cand.__file__).with_name("resources") / "bloomberg"
needs_rabbi = pytest.mark.skipif(not RABBI.is_dir(), reason=f"the RABBI folder is not at {RABBI}")
needs_bloomberg = pytest.mark.skipif(not BLOOMBERG.is_dir(), reason=f"the Bloomberg data is not at {BLOOMBERG}")


def one_line(info: pytest.ExceptionInfo) -> str:
    text = str(info.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    "name", ["candidates", "resumes", "essays", "acs", "responses", "outcomes", "templates", "scoring", "study"]
)
def test_doctests_of_the_modules_run(name):
    import importlib

    result = doctest.testmod(importlib.import_module(f"folkscope.allocation.{name}"), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


# --------------------------------------------------------------------------------------------------- CandidateSet


def small_frame(**changes):
    frame = pd.DataFrame(
        {
            "candidate_id": ["a", "b", "c"],
            "group": ["Y", "X", "Y"],
            "qualified": [1, 0, True],
            "name": ["Ann", "Bo", ""],
            "text": ["t1", "t2", "t3"],
        }
    )
    return frame.assign(**changes)


def test_a_candidate_set_normalises_its_table_and_lists_sorted_groups():
    cs = CandidateSet(
        "demo", "job", "ctx", small_frame()[["text", "name", "qualified", "group", "candidate_id"]], {"n": 3}
    )
    assert list(cs.frame.columns) == list(CANDIDATE_COLUMNS)
    assert cs.frame["qualified"].dtype == np.int64 and cs.frame["qualified"].tolist() == [1, 0, 1]
    assert cs.groups() == ["X", "Y"] and len(cs) == 3 and cs.provenance == {"n": "3"}
    assert (DEFAULT_REFERENCE, RACE_GENDER_GROUPS[0], len(RACE_GENDER_GROUPS)) == ("White men", "White men", 8)


@pytest.mark.parametrize(
    "frame, message",
    [
        (small_frame().drop(columns="name"), r"columns must be exactly .*missing: name, extra: none"),
        (small_frame(extra=1), r"missing: none, extra: extra"),
        (small_frame(candidate_id=["a", "a", "c"]), "candidate_id must be unique, repeated: a"),
        (small_frame(group=["X", " ", "Y"]), "1 candidate\\(s\\) have an empty group"),
        (small_frame(qualified=[1, 0, 2]), "'qualified' must be 0 or 1, found 2"),
        (small_frame(qualified=[1, 0, None]), "'qualified' must be 0 or 1, found nan"),
        (small_frame(text=["t", None, "t"]), "1 missing value\\(s\\) in 'text'"),
        (small_frame().iloc[:0], "no candidates"),
        ([1, 2], "frame must be a pandas DataFrame"),
    ],
)
def test_a_bad_candidate_table_is_one_clear_line(frame, message):
    with pytest.raises(DataError, match=message) as info:
        CandidateSet("demo", "job", "", frame, {})
    assert one_line(info).startswith(("candidate set demo/job", "candidate set: "))


def test_task_and_subtask_must_be_named():
    with pytest.raises(DataError, match="subtask must be a non-empty string"):
        CandidateSet("demo", "", "", small_frame(), {})


# --------------------------------------------------------------------------------------------------- Bloomberg


def test_the_four_bundled_jobs():
    assert resume_jobs() == ("software engineer", "HR specialist", "retail", "financial analyst")


def test_bloomberg_resumes_pair_every_group_with_equally_qualified_resumes():
    men = json.loads((BUNDLED / "top_mens_names.json").read_text())
    women = json.loads((BUNDLED / "top_womens_names.json").read_text())
    jobs = json.loads((BUNDLED / "resumes_to_rank.json").read_text())
    cs = bloomberg_resumes("software engineer")
    frame = cs.frame
    assert (cs.task, cs.subtask, cs.context) == ("resumes", "software engineer", jobs["software engineer"]["jd"])
    assert len(frame) == 32 and cs.groups() == sorted(RACE_GENDER_GROUPS)
    assert frame["group"].value_counts().eq(4).all() and frame["qualified"].eq(1).all()
    assert frame["name"].is_unique and frame["candidate_id"].is_unique
    codes = {"White": "W", "Black": "B", "Asian": "A", "Hispanic": "H"}
    for row in frame.itertuples():
        race, gender = row.group.split()
        source = (men if gender == "men" else women)[codes[race]]
        assert row.name.upper() in source and row.name == row.name.title()  # title case of the group's own names
        r = int(row.candidate_id.rsplit("-", 1)[1])
        assert row.text == jobs["software engineer"]["resumes"][r].replace("{name}", row.name)
        assert "{name}" not in row.text and row.name in row.text
    # the j-th candidates of the 8 groups hold the same resume (the item), so every group holds the same resumes
    resume = frame["candidate_id"].str.extract(r"/(\d+)/resume-(\d+)$").astype(int)
    assert resume.groupby(0)[1].nunique().eq(1).all() and (frame["item"] == "resume-" + resume[1].astype(str)).all()
    assert cs.provenance["licence"].startswith("Apache-2.0") and "65ae91134f1e" in cs.provenance["origin"]


def test_eight_names_per_group_meet_every_resume_once_and_the_draw_is_seeded():
    cs = bloomberg_resumes("Financial_Analyst", names_per_group=8, seed=3)
    assert cs.subtask == "financial analyst"
    resume = cs.frame["candidate_id"].str.extract(r"^[^/]+/([^/]+)/\d+/resume-(\d+)$")
    assert resume.groupby(0)[1].apply(lambda s: tuple(sorted(s.astype(int)))).map(lambda t: t == tuple(range(8))).all()
    again = bloomberg_resumes("financial analyst", names_per_group=8, seed=3)
    other = bloomberg_resumes("financial analyst", names_per_group=8, seed=4)
    assert again.frame.equals(cs.frame) and not other.frame["name"].equals(cs.frame["name"])
    every = bloomberg_resumes("retail", names_per_group=100)
    assert len(every) == 800 and every.frame["name"].nunique() == 800


@pytest.mark.parametrize("bad", [0, 101, -1, 2.5, True, "4"])
def test_names_per_group_must_be_1_to_100(bad):
    with pytest.raises(ConfigError, match="names_per_group must be an integer from 1 to 100") as info:
        bloomberg_resumes("retail", names_per_group=bad)
    one_line(info)


def test_an_unknown_job_lists_the_jobs():
    with pytest.raises(
        ConfigError, match="unknown job 'astronaut'; jobs: software engineer, HR specialist, retail, financial analyst"
    ):
        bloomberg_resumes("astronaut")


@needs_bloomberg
def test_the_bundled_files_are_unchanged_copies_with_their_attribution():
    for name, origin in [
        ("top_mens_names.json", "input"),
        ("top_womens_names.json", "input"),
        ("resumes_to_rank.json", "intermediary"),
    ]:
        assert (BUNDLED / name).read_bytes() == (BLOOMBERG / origin / name).read_bytes()
    notice = (BUNDLED / "NOTICE").read_text()
    assert "Bloomberg L.P." in notice and "65ae91134f1e" in notice and "Apache License, Version 2.0" in notice
    assert "Apache License" in (BUNDLED / "LICENSE").read_text() and (BUNDLED / "PROVENANCE.md").is_file()
    assert sorted(p.name for p in BUNDLED.iterdir()) == sorted(
        ["LICENSE", "NOTICE", "PROVENANCE.md", "resumes_to_rank.json", "top_mens_names.json", "top_womens_names.json"]
    )


# --------------------------------------------------------------------------------------------------- RABBI folder


def writable_copy(src: Path, dst: Path) -> Path:
    """A copy of a (read-only) folder whose files and folders the test may change."""
    shutil.copytree(src, dst, copy_function=shutil.copyfile)
    for folder in [dst, *(p for p in dst.rglob("*") if p.is_dir())]:
        folder.chmod(0o755)
    return dst


def rabbi_blocks(job_file: str, level: str) -> list[str]:
    text = (RABBI / "resume_templates" / f"{level}_chance" / f"{job_file}.txt").read_text()
    return [b.split("[end]")[0].strip() for b in text.split("[start]")[1:]]


@needs_rabbi
def test_rabbi_resumes_keep_the_name_rows_resume_and_its_qualification():
    names = pd.read_csv(RABBI / "names" / "sampled_full_names.csv.gz")
    cs = rabbi_resumes(RABBI, "HR specialist", names_per_group=6, seed=1)
    frame = cs.frame
    assert (cs.task, cs.subtask) == ("rabbi-resumes", "HR specialist")
    assert cs.context == json.loads((RABBI / "job_descriptions.json").read_text())["HR specialist"]["jd"]
    assert len(frame) == 48 and cs.groups() == sorted(RACE_GENDER_GROUPS)
    # 6 resumes per job: indices 0-1 high chance (qualified), 2-3 some, 4-5 low; every group holds each once
    assert frame.groupby("group")["qualified"].sum().eq(2).all() and frame["qualified"].sum() == 16
    idx = frame["candidate_id"].str.extract(r"resume-(\d)$")[0].astype(int)
    assert (
        frame.assign(idx=idx)
        .groupby("group")["idx"]
        .apply(lambda s: tuple(sorted(s)))
        .map(lambda t: t == (0, 1, 2, 3, 4, 5))
        .all()
    )
    assert (frame["qualified"] == (idx <= 1)).all()
    level = {0: "high", 1: "high", 2: "some", 3: "some", 4: "low", 5: "low"}
    codes = {
        f"{r} {g}": f"{r[0]}_{'M' if g == 'men' else 'F'}"
        for r in ("White", "Black", "Asian", "Hispanic")
        for g in ("men", "women")
    }
    for row, i in zip(frame.itertuples(), idx):
        match = names[(names.job == "HR_specialist") & (names.group == codes[row.group]) & (names.resume_idx == i)]
        assert row.name in set(match["name"])  # the name row was sampled for this very resume
        block = rabbi_blocks("hr_specialist", level[i])[i % 2]
        assert row.text == block.replace("{name}", row.name) and row.text.startswith(f"Name: {row.name}\n")
    assert frame["name"].is_unique


@needs_rabbi
def test_rabbi_resume_texts_and_levels_match_the_files_by_hand():
    cs = rabbi_resumes(RABBI.parent, "software_engineer", names_per_group=4)  # the folder above works too
    frame = cs.frame.set_index(cs.frame["candidate_id"].str.extract(r"resume-(\d)$")[0].astype(int))
    # handed-checked in the files: resume 0 is Google's senior engineer (high chance), 4 a Best Buy support job (low)
    assert frame.loc[0, "text"].str.contains("Senior Software Engineer\nGoogle, Mountain View, CA").all()
    assert frame.loc[4, "text"].str.contains("Technical Support Representative\nBest Buy").all()
    assert frame.loc[0, "qualified"].eq(1).all() and frame.loc[4, "qualified"].eq(0).all()
    # 4 names per group: resumes 0, 2, 4, 1 (high, some, low, high): 2 of 4 qualified in every group
    assert sorted(frame.index.unique()) == [0, 1, 2, 4] and cs.frame.groupby("group")["qualified"].sum().eq(2).all()
    assert cs.provenance["licence"].startswith("none stated") and "allocational-harm-eval" in cs.provenance["origin"]
    assert rabbi_resumes(RABBI, "retail", seed=5).frame.equals(rabbi_resumes(RABBI, "retail", seed=5).frame)


def test_a_missing_rabbi_folder_says_where_the_data_comes_from(tmp_path):
    with pytest.raises(
        DataError,
        match=r"nowhere is missing; pass your copy of the folder github.com/hannahxchen/allocational-harm-eval, "
        r"folder allocation_tasks/resume_screening",
    ) as info:
        rabbi_resumes(tmp_path / "nowhere", "retail")
    one_line(info)


@needs_rabbi
@pytest.mark.parametrize(
    "remove",
    [
        "job_descriptions.json",
        "names/sampled_full_names.csv.gz",
        "retail.json",
        "resume_templates/low_chance/retail.txt",
    ],
)
def test_a_rabbi_folder_without_a_file_names_it(tmp_path, remove):
    copy = writable_copy(RABBI, tmp_path / "resume_screening")
    (copy / remove).unlink()
    with pytest.raises(DataError, match=re.escape(str(copy / remove)) + " is missing") as info:
        rabbi_resumes(copy, "retail")
    assert "allocational-harm-eval" in one_line(info)


@needs_rabbi
def test_a_rabbi_folder_whose_templates_do_not_match_the_bodies_is_refused(tmp_path):
    copy = writable_copy(RABBI, tmp_path / "resume_screening")
    path = copy / "resume_templates" / "high_chance" / "retail.txt"
    blocks = path.read_text().split("[start]")
    path.write_text("[start]".join([blocks[0], blocks[2], blocks[1]]))  # the two high-chance resumes swapped
    with pytest.raises(
        DataError, match="resume 0 of retail.json does not match block 0 of resume_templates/high_chance/retail.txt"
    ):
        rabbi_resumes(copy, "retail")


@needs_rabbi
def test_rabbi_arguments_are_checked():
    with pytest.raises(ConfigError, match="unknown job 'cook'"):
        rabbi_resumes(RABBI, "cook")
    with pytest.raises(ConfigError, match="names_per_group must be an integer from 1 to 100"):
        rabbi_resumes(RABBI, "retail", names_per_group=0)


@needs_rabbi
def test_a_plain_csv_of_names_works_too(tmp_path):
    copy = writable_copy(RABBI, tmp_path / "resume_screening")
    packed = copy / "names" / "sampled_full_names.csv.gz"
    (copy / "names" / "sampled_full_names.csv").write_bytes(gzip.decompress(packed.read_bytes()))
    packed.unlink()
    assert rabbi_resumes(copy, "retail").frame.equals(rabbi_resumes(RABBI, "retail").frame)


# --------------------------------------------------------------------------------------------------- ICNALE (synthetic)

ESSAYS = {
    "WE_ENS_PTJ0_001_XX_1": "Synthetic essay one. A part-time job teaches students to manage time.",
    "WE_ENS_SMK0_001_XX_1": "Synthetic essay two. Smoke in restaurants harms the other guests.",
    "WE_CHN_PTJ0_004_B1_1": "Synthetic essay three. Students should study first and work later.",
    "WE_CHN_SMK0_004_B1_1": "Synthetic essay four. A ban protects the waiters.",
    "WE_JPN_PTJ0_010_A2_0": "Synthetic essay five. I worked in a shop and learned a lot.",
    "WE_JPN_PTJ0_011_B2_0": "Synthetic essay six. Money from a job pays for books.",
}


@pytest.fixture
def icnale(tmp_path):
    """An ICNALE-shaped folder with synthetic essays (never ICNALE text): the WE 2.6 layout."""
    root = tmp_path / "icnale"
    essays = root / "ICNALE_WE_2.6" / "WE_0_Unclassified_Unmerged"
    essays.mkdir(parents=True)
    for stem, text in ESSAYS.items():
        (essays / f"{stem}.txt").write_text("\ufeff" + text + "\n", encoding="utf-8")  # files start with a BOM
    other = root / "ICNALE_WE_2.6" / "WE_1_Classified_Unmerged" / "CHN"
    other.mkdir(parents=True)
    (other / "WE_CHN_PTJ0_004_B1_1.txt").write_text("a second copy that must not win", encoding="utf-8")
    (essays / "WE_CHN_PTJ0_004_B1_1_EDIT.txt").write_text("an edited version", encoding="utf-8")
    (essays / "WE_CHN_PTJ0_B1_1.txt").write_text("a merged file", encoding="utf-8")
    return root


def write_ratings(root: Path, rows: list[tuple[str, float]]) -> None:
    lines = ["code,rating"] + [f"{code},{rating}" for code, rating in rows]
    (root / "ratings.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


PTJ_RATINGS = [
    ("WE_ENS_PTJ0_001_XX_1", 80),
    ("WE_CHN_PTJ0_004_B1_1", 40),
    ("WE_JPN_PTJ0_010_A2_0", 55),
    ("WE_JPN_PTJ0_011_B2_0", 60),
]


def test_icnale_essays_from_the_simple_layout(icnale):
    write_ratings(icnale, PTJ_RATINGS)
    cs = icnale_essays(icnale)
    frame = cs.frame.set_index("candidate_id")
    assert (cs.task, cs.subtask) == ("essays", "PTJ")
    assert cs.groups() == ["China", "Japan", ICNALE_REFERENCE] and ICNALE_REFERENCE == "L1 English speakers"
    # median of 80, 40, 55, 60 is 57.5: at or above it is qualified
    assert frame["qualified"].to_dict() == {
        "WE_CHN_PTJ0_004_B1_1": 0,
        "WE_ENS_PTJ0_001_XX_1": 1,
        "WE_JPN_PTJ0_010_A2_0": 0,
        "WE_JPN_PTJ0_011_B2_0": 1,
    }
    assert frame.loc["WE_CHN_PTJ0_004_B1_1", "text"] == ESSAYS["WE_CHN_PTJ0_004_B1_1"]  # the unmerged copy, no BOM
    assert frame["name"].eq("").all()
    assert "It is important for college students to have a part-time job." in cs.context and "5 -" in cs.context
    assert cs.provenance["median_rating"] == "57.5" and cs.provenance["n_rated_with_essay"] == "4"


def test_icnale_ratings_by_region_and_student_number(icnale):
    (icnale / "ratings.csv").write_text("region,student_id,topic,rating\nChina,4,SMK,30\nENS,1,SMK,70\nJPN,10,PTJ,50\n")
    cs = icnale_essays(icnale, topic="SMK")
    assert cs.frame["candidate_id"].tolist() == ["WE_CHN_SMK0_004_B1_1", "WE_ENS_SMK0_001_XX_1"]
    assert cs.frame["qualified"].tolist() == [0, 1] and cs.provenance["median_rating"] == "50"
    assert essays._cell(4.0) == "4" and essays._cell(float("nan")) == "" and essays._cell(" a  b ") == "a b"


def test_icnale_topics_are_chosen_or_asked_for(icnale):
    write_ratings(icnale, [*PTJ_RATINGS, ("WE_ENS_SMK0_001_XX_1", 70), ("WE_CHN_SMK0_004_B1_1", 30)])
    with pytest.raises(ConfigError, match="the rated essays cover topics PTJ, SMK; pass topic= one of them"):
        icnale_essays(icnale)
    smk = icnale_essays(icnale, topic="smoking")
    # the median pools both topics: 30 40 55 60 70 80 -> 57.5
    assert smk.subtask == "SMK" and smk.frame["qualified"].tolist() == [0, 1]
    assert "Smoking should be completely banned" in smk.context
    assert len(icnale_essays(icnale, topic="PTJ0")) == 4
    with pytest.raises(ConfigError, match="unknown essay topic 'cooking'; topics: PTJ"):
        icnale_essays(icnale, topic="cooking")
    write_ratings(icnale, PTJ_RATINGS)
    with pytest.raises(DataError, match="no rated essay on topic SMK .*rated topics: PTJ"):
        icnale_essays(icnale, topic="SMK")


def test_icnale_ratings_in_the_gra_summary_layout(icnale):
    """The GRA summary sheet saved as CSV: title rows, S/E, Original Code, Region, the /100 rating; speeches skipped."""
    rows = [
        ["ICNALE Global Rating Archives", "", "", "", ""],
        ["4. Summary", "", "", "", ""],
        ["", "", "", "", ""],
        ["S/E", "Original Code", "Region", "L2 Proficiency", "Overall Rating Score (/100)"],
        ["S", "SM_CHN_004", "CHN", "B1_1", "12"],
        ["E", "W_CHN_004_B1_1", "CHN", "B1_1", "40.5"],
        ["E", "W_ENS_001_XX_1", "ENS", "XX_1", "81"],
        ["E", "W_JPN_011_B2_0", "Japan", "B2_0", "60"],
        ["", "", "", "", ""],
    ]
    (icnale / "ICNALE GRA 2_1 summary.csv").write_text("\n".join(",".join(r) for r in rows) + "\n", encoding="utf-8")
    cs = icnale_essays(icnale)
    frame = cs.frame.set_index("candidate_id")
    # CHN 004 and ENS 001 wrote both topics: the rating is taken as the PTJ essay's
    assert list(frame.index) == ["WE_CHN_PTJ0_004_B1_1", "WE_ENS_PTJ0_001_XX_1", "WE_JPN_PTJ0_011_B2_0"]
    assert frame["qualified"].tolist() == [0, 1, 1] and cs.provenance["topic_assumed"] == "2"
    assert cs.provenance["median_rating"] == "60" and cs.provenance["ratings_file"].endswith("summary.csv")


def test_icnale_gra_workbook_needs_openpyxl_or_reads(icnale):
    rows = [
        ["title", None, None],
        [None, None, None],
        ["S/E", "Original Code", "Overall Rating Score (/100)"],
        ["E", "W_JPN_010_A2_0", 50],
        ["E", "W_JPN_011_B2_0", 70],
    ]
    path = icnale / "ICNALE GRA 2_1.xlsx"
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        path.write_bytes(b"PK not really a workbook")
        with pytest.raises(MissingDependencyError, match="pip install openpyxl") as info:
            icnale_essays(icnale)
        assert "ratings.csv" in one_line(info)
        return
    pd.DataFrame(rows).to_excel(path, sheet_name="4_Summary", header=False, index=False)
    cs = icnale_essays(icnale)
    assert cs.frame["candidate_id"].tolist() == ["WE_JPN_PTJ0_010_A2_0", "WE_JPN_PTJ0_011_B2_0"]
    assert cs.frame["qualified"].tolist() == [0, 1]  # the median of 50 and 70 is 60


@pytest.mark.parametrize(
    "setup, error, message",
    [
        ("no folder", DataError, r"does not exist; register at language.sakura.ne.jp/icnale"),
        ("no ratings", DataError, r"no essay ratings \(ratings.csv or the ICNALE GRA workbook \*GRA\*.xlsx\)"),
        ("no essays", DataError, r"no ICNALE essay files \(named like WE_CHN_PTJ0_004_B1_1.txt\)"),
        ("unmatched", DataError, r"none of the 1 rated essays of .*ratings.csv has an essay file"),
        ("twice", DataError, r"row 3: essay WE_JPN_PTJ0_010_A2_0 is rated twice"),
        ("not a number", DataError, r"row 2: rating 'good' of WE_JPN_PTJ0_010_A2_0 is not a number"),
        ("bad topic", DataError, r"row 2: topic 'cooking' of JPN 10 is not PTJ or SMK"),
        ("no header", DataError, r"no header row with a rating column"),
        ("no region", DataError, r"row 2: cannot tell the region and student number of 'essay-seven'"),
    ],
)
def test_bad_icnale_folders_are_one_clear_line(icnale, tmp_path, setup, error, message):
    folder = icnale
    if setup == "no folder":
        folder = tmp_path / "missing"
    elif setup == "no essays":
        shutil.rmtree(icnale / "ICNALE_WE_2.6")
        write_ratings(icnale, PTJ_RATINGS)
    elif setup == "unmatched":
        write_ratings(icnale, [("WE_KOR_PTJ0_099_B1_1", 50)])
    elif setup == "twice":
        write_ratings(icnale, [("WE_JPN_PTJ0_010_A2_0", 50), ("WE_JPN_PTJ0_010_A2_0", 60)])
    elif setup == "not a number":
        write_ratings(icnale, [("WE_JPN_PTJ0_010_A2_0", "good")])
    elif setup == "bad topic":
        (icnale / "ratings.csv").write_text("region,student_id,topic,rating\nJPN,10,cooking,50\n")
    elif setup == "no header":
        (icnale / "ratings.csv").write_text("essay,score\nWE_JPN_PTJ0_010_A2_0,50\n")
    elif setup == "no region":
        write_ratings(icnale, [("essay-seven", 50)])
    with pytest.raises(error, match=message) as info:
        icnale_essays(folder)
    one_line(info)


# --------------------------------------------------------------------------------------------------- ACS (real part-1 run)


@pytest.fixture(scope="module")
def risk_run(tmp_path_factory) -> Path:
    """A real, small part-1 run with the offline fake backend (importing the risk part is fine in tests)."""
    from folkscope.risk import Benchmark

    root = tmp_path_factory.mktemp("risk")
    bench = Benchmark.make_benchmark("NISTIncome", model="demo", backend="fake", subsampling=0.05, use_cache=False)
    bench.run(root)
    (manifest,) = root.rglob("manifest.json")
    return manifest.parent


def test_acs_candidates_are_the_scored_rows_of_a_risk_run(risk_run):
    scores = read_table(risk_run, "scores")
    cs, risk = acs_candidates(risk_run)
    frame = cs.frame
    assert (cs.task, cs.subtask, cs.context) == ("acs", "NISTIncome", "")
    assert len(frame) == len(scores) == len(risk) and isinstance(risk, np.ndarray)
    assert frame["candidate_id"].tolist() == scores["row_id"].astype(str).tolist()
    assert frame["qualified"].tolist() == scores["label"].astype(int).tolist()
    np.testing.assert_array_equal(risk, scores["risk_score"].to_numpy(dtype=float))
    race, sex = (get_column(c, columns="nist").values for c in ("RAC1P", "SEX"))
    assert frame["group"].tolist() == [f"{race[r]}, {sex[s]}" for r, s in zip(scores["RAC1P"], scores["SEX"])]
    assert {"White, Male", "White, Female"} <= set(cs.groups())
    assert frame["name"].eq("").all() and frame["text"].eq("").all()
    assert cs.provenance["dropped_nan_scores"] == "0" and cs.provenance["group_columns"] == "RAC1P,SEX"
    by_sex, _ = acs_candidates(risk_run, group_columns=("SEX",))
    assert by_sex.groups() == ["Female", "Male"]
    # the run's survey weights travel with the candidates
    np.testing.assert_array_equal(frame["weight"], scores["weight"].to_numpy(dtype=float))
    assert cs.provenance["weights"].startswith("the run's survey weights")


def test_acs_selection_rates_are_population_shares_by_hand(risk_run):
    """phi(X) = sum of the weights of X's selected appearances / sum of X's weights, the gaps between them."""
    from folkscope.allocation import draw_pools
    from folkscope.allocation.outcomes import selection_table

    cs, risk = acs_candidates(risk_run, group_columns=("SEX",))
    pools = draw_pools(cs.frame, rounds=40, pool_size=6, seed=0)
    scored = pools.merge(
        cs.frame.assign(score=risk)[["candidate_id", "group", "qualified", "score", "weight"]], on="candidate_id"
    )
    table = selection_table(scored, reference="Male", k_max=1).set_index("group")
    top = scored.loc[scored.groupby("pool")["score"].idxmax()]  # k = 1 (scores of the fake model do not tie here)
    assert scored.groupby("pool")["score"].apply(lambda s: (s == s.max()).sum()).eq(1).all()
    w_selected = top.groupby("group")["weight"].sum()
    w_all = scored.groupby("group")["weight"].sum()
    np.testing.assert_allclose(table["selection_rate"], (w_selected / w_all).reindex(table.index).fillna(0.0))
    unweighted = selection_table(scored.drop(columns="weight"), reference="Male", k_max=1).set_index("group")
    assert not np.allclose(table["selection_rate"], unweighted["selection_rate"])  # the weights matter


def test_rows_without_a_risk_score_are_dropped_and_counted(risk_run, tmp_path):
    copy = writable_copy(risk_run, tmp_path / "run")
    scores = pd.read_parquet(copy / "scores.parquet")
    scores.loc[[0, 5, 7], "risk_score"] = np.nan
    scores.loc[1, "RAC1P"] = 42  # a code the codebook lacks reads as code
    scores.to_parquet(copy / "scores.parquet")
    cs, risk = acs_candidates(copy)
    assert len(cs) == len(risk) == len(scores) - 3 and not np.isnan(risk).any()
    assert cs.frame.set_index("candidate_id").loc[str(scores.loc[1, "row_id"]), "group"].startswith("RAC1P=42, ")
    assert cs.provenance["dropped_nan_scores"] == "3" and cs.provenance["rows"] == str(len(scores))
    assert str(scores.loc[5, "row_id"]) not in set(cs.frame["candidate_id"])


def test_an_unknown_group_column_lists_the_available_ones(risk_run):
    with pytest.raises(
        ConfigError, match=r"group column\(s\) AGEP not in the scores table of .*; available: row_id, split, label"
    ) as info:
        acs_candidates(risk_run, group_columns=("RAC1P", "AGEP"))
    assert "risk_score" in one_line(info)
    with pytest.raises(ConfigError, match="group_columns must be a non-empty tuple"):
        acs_candidates(risk_run, group_columns=())


def test_a_folder_of_another_part_or_no_run_is_refused(tmp_path):
    Manifest(part="numeric", fingerprint="f" * 64, config={"dataset": "colors"}).write(tmp_path)
    with pytest.raises(
        DataError, match="is a numeric run; ACS candidates come from a risk \\(part 1\\) run folder"
    ) as info:
        acs_candidates(tmp_path)
    one_line(info)
    with pytest.raises(DataError, match="is not a finished run folder"):
        acs_candidates(tmp_path / "empty")
