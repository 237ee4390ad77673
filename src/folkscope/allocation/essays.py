"""Essay-grading candidates: the user's copy of the ICNALE written essays with human ratings (not redistributable)."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._deps import require
from folkscope.allocation.candidates import CANDIDATE_COLUMNS, ICNALE_REFERENCE, CandidateSet
from folkscope.errors import ConfigError, DataError

__all__ = ["icnale_essays"]

_ICNALE_REGIONS = {
    "ENS": ICNALE_REFERENCE,
    "CHN": "China",
    "HKG": "Hong Kong",
    "IDN": "Indonesia",
    "JPN": "Japan",
    "KOR": "Korea",
    "PAK": "Pakistan",
    "PHL": "Philippines",
    "SIN": "Singapore",
    "THA": "Thailand",
    "TWN": "Taiwan",
}
_ICNALE_TOPICS = {
    "PTJ": "It is important for college students to have a part-time job.",
    "SMK": "Smoking should be completely banned at all the restaurants in the country.",
}
_ICNALE_SOURCE = (
    "register at language.sakura.ne.jp/icnale and unpack the Written Essays (WE) module and the "
    "Global Rating Archives (GRA) there"
)
_ESSAY_FILE = re.compile(
    r"^(?:WE|W)_(?P<region>[A-Z]{3})_(?P<topic>PTJ|SMK)\d*_(?P<id>\d+)_(?P<level>[A-Z0-9]{2}_\d+)$", re.IGNORECASE
)
_RUBRIC = """Grade from 1 (lowest) to 5 (highest):
5 - strong command of English with only occasional slips; the opinion is fully developed with clear reasoning and a well organised structure.
4 - good command with some lapses; the ideas are developed competently, the reasoning is adequate and the structure mostly coherent.
3 - developing command with clear weaknesses; the ideas are developed unevenly, with limited reasoning and coherence.
2 - weak command with serious flaws; the ideas are vague, the reasoning weak and the organisation poor.
1 - very weak command; no workable idea is developed, the text is disorganised and errors are everywhere."""


# ---------------------------------------------------------------------------------------------------------------
# ICNALE essays with human ratings (not redistributable: read from the user's copy)


def _cell(value: Any) -> str:
    """A table cell as stripped text ('' for blanks and NaN; a whole float as an integer: Excel's 4.0 is "4")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return " ".join(str(value).split())


def _role(header: str) -> str | None:
    """Which field a ratings-table header names (GRA's own headers or the simple layout's)."""
    h = header.lower()
    if h == "rating" or h.startswith("overall rating"):
        return "rating"
    roles = {
        "original code": "code",
        "code": "code",
        "essay code": "code",
        "region": "region",
        "country": "region",
        "student_id": "student",
        "student id": "student",
        "topic": "topic",
        "s/e": "kind",
    }
    return roles.get(h)


def _read_rows(path: Path) -> list[list[str]]:
    """All rows of a ratings table as text: the sheet ``4_Summary`` (or the first) of an .xlsx, or a CSV."""
    if path.suffix.lower() == ".xlsx":
        require(
            "openpyxl",
            feature=f"reading the ICNALE ratings workbook {path.name} (or save its summary sheet as ratings.csv)",
        )
        try:
            sheets = pd.read_excel(path, sheet_name=None, header=None, dtype=object)
        except (OSError, ValueError) as exc:
            raise DataError(f"{path} cannot be read as a workbook ({exc}); use the original GRA file") from None
        ordered = [sheets[s] for s in sheets if s.strip().lower() == "4_summary"] + list(sheets.values())
        for sheet in ordered:
            rows = [[_cell(v) for v in row] for row in sheet.itertuples(index=False)]
            if _header(rows) is not None:
                return rows
        return []
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            return [[_cell(v) for v in row] for row in csv.reader(handle)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path} cannot be read as a UTF-8 CSV ({exc}); save it again as CSV UTF-8") from None


def _header(rows: list[list[str]]) -> tuple[int, dict[str, int]] | None:
    """The header row (first 30 rows) and the column of each field, or None when no row looks like one."""
    for i, row in enumerate(rows[:30]):
        columns: dict[str, int] = {}
        for j, cell in enumerate(row):
            role = _role(cell)
            if role is not None and role not in columns:
                columns[role] = j
        if "rating" in columns and ("code" in columns or {"region", "student"} <= columns.keys()):
            return i, columns
    return None


def _region_code(text: str) -> str:
    upper = text.strip().upper()
    for code, label in _ICNALE_REGIONS.items():
        if upper == label.upper():
            return code
    return upper


def _ratings(path: Path) -> list[tuple[str, int, str | None, float, str]]:
    """(region, student id, topic or None, rating, code) per rated essay of a ratings table."""
    rows = _read_rows(path)
    found = _header(rows)
    if found is None:
        raise DataError(
            f"{path}: no header row with a rating column ('Overall Rating Score (/100)' or 'rating') and "
            f"an essay code ('Original Code' or 'code', or 'region' and 'student_id'); see icnale_essays for the layout"
        )
    start, columns = found
    out, seen = [], set()
    for number, row in enumerate(rows[start + 1 :], start=start + 2):
        cells = {role: row[j] if j < len(row) else "" for role, j in columns.items()}
        code = cells.get("code", "")
        if "kind" in columns and not cells["kind"].upper().startswith("E"):
            continue  # the GRA rates speeches (S) too
        tokens = [t for t in re.split(r"[_\s\-]+", code.upper()) if t]
        region = _region_code(cells.get("region", "")) or next((t for t in tokens if t in _ICNALE_REGIONS), "")
        student = cells.get("student", "") or next((t for t in tokens if t.isdigit()), "")
        if not (code or region or student or cells["rating"]):
            continue  # blank or footer row
        topic_text = cells.get("topic", "") or next((t for t in tokens if re.fullmatch(r"(PTJ|SMK)\d*", t)), "")
        essay = code or f"{region} {student}"
        try:
            topic = _topic(topic_text) if topic_text else None
        except ConfigError:
            raise DataError(
                f"{path}, row {number}: topic {topic_text!r} of {essay} is not PTJ or SMK; fix or delete the row"
            ) from None
        try:
            rating = float(cells["rating"]) if cells["rating"] else math.nan
        except ValueError:
            raise DataError(
                f"{path}, row {number}: rating {cells['rating']!r} of {essay} is not a number; fix or delete the row"
            ) from None
        if math.isnan(rating):
            continue
        if not region or not student.isdigit():
            raise DataError(
                f"{path}, row {number}: cannot tell the region and student number of {code!r}; give codes like "
                f"WE_CHN_PTJ0_004_B1_1 or 'region' and 'student_id' columns"
            )
        key = (region, int(student), topic)
        if key in seen:
            raise DataError(f"{path}, row {number}: essay {essay} is rated twice; keep one rating per essay")
        seen.add(key)
        out.append((region, int(student), topic, rating, code))
    if not out:
        raise DataError(
            f"{path} holds no essay ratings; use the GRA summary sheet or a ratings.csv with code and rating"
        )
    return out


def _ratings_file(root: Path) -> Path:
    """The ratings table: ratings.csv (simple layout) before a GRA CSV before the GRA workbook."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(("~$", ".")))
    tiers = [
        [p for p in files if p.name.lower() == "ratings.csv"],
        [p for p in files if p.suffix.lower() == ".csv" and "gra" in p.name.lower()],
        [p for p in files if p.suffix.lower() == ".xlsx" and "gra" in p.name.lower()],
    ]
    for tier in tiers:
        if len(tier) > 1:
            raise DataError(
                f"{root}: several rating tables ({', '.join(str(p.relative_to(root)) for p in tier)}); keep one"
            )
        if tier:
            return tier[0]
    raise DataError(f"{root}: no essay ratings (ratings.csv or the ICNALE GRA workbook *GRA*.xlsx); {_ICNALE_SOURCE}")


def _essay_files(root: Path) -> dict[tuple[str, int, str], Path]:
    """ICNALE essay files by (region, student, topic); the unclassified, unmerged copy wins over others."""
    found: dict[tuple[str, int, str], Path] = {}
    paths = sorted(root.rglob("*.txt"), key=lambda p: ("unclassified_unmerged" not in p.parent.name.lower(), str(p)))
    for path in paths:
        match = _ESSAY_FILE.match(path.stem)
        if match:
            key = (match["region"].upper(), int(match["id"]), match["topic"].upper())
            found.setdefault(key, path)
    return found


def _topic(topic: Any) -> str:
    aliases = {"ptj": "PTJ", "ptj0": "PTJ", "part-time job": "PTJ", "smk": "SMK", "smk0": "SMK", "smoking": "SMK"}
    key = topic.strip().lower() if isinstance(topic, str) else None
    if key not in aliases:
        raise ConfigError(
            f"unknown essay topic {topic!r}; topics: PTJ (part-time job), SMK (smoking)", parameter="topic", value=topic
        )
    return aliases[key]


def icnale_essays(folder: str | Path, *, topic: str | None = None) -> CandidateSet:
    """Rated ICNALE essays: L1 English writers against learners of ten Asian countries or regions.

    ICNALE may not be redistributed, so this reads the user's copy
    (registration at language.sakura.ne.jp/icnale). ``folder`` is searched
    recursively for two things:

    **The essays**: ICNALE Written Essays files, one essay per UTF-8 text
    file named ``WE_<REGION>_<TOPIC><n>_<ID>_<LEVEL>.txt`` (WE 2.x, e.g.
    ``WE_0_Unclassified_Unmerged/WE_CHN_PTJ0_004_B1_1.txt``; natives
    ``WE_ENS_..._XX_<n>.txt``; the older ``W_`` prefix works too). Where the
    release holds an essay twice, the copy in ``*Unclassified_Unmerged`` is
    read; merged files, edited (``_EDIT``) and other files are ignored.

    **The ratings**, from the first of these that exists:

    1. ``ratings.csv``, the simple layout: a header row, then one row per
       rated essay with ``code`` (the essay's file name without ``.txt``)
       and ``rating`` (any scale; higher is better), or ``region`` and
       ``student_id`` (plus an optional ``topic``) instead of ``code``;
    2. a CSV export of the GRA summary sheet (a ``*GRA*.csv``);
    3. the ICNALE Global Rating Archives workbook (``*GRA*.xlsx``, needs
       openpyxl): sheet ``4_Summary``, whose header row (found below the
       title rows) has ``S/E`` (only ``E``, essay, rows are read),
       ``Original Code``, ``Region`` and ``Overall Rating Score (/100)``.

    A rating is joined to its essay by region, student number and topic
    (region and number taken from the ``Region`` column or the code, the
    number as the code's first all-digit part). A rating that names no topic
    is taken to be of the part-time-job essay (PTJ) when the student wrote
    both, as the RABBI authors' analysis joins GRA ratings to PTJ essays
    only; ``provenance['topic_assumed']`` says how often. This layout
    follows the RABBI authors' reading of ICNALE WE 2.6 and GRA 2.1 (their
    ``config.json`` and loaders: ``WE_0_Unclassified_Unmerged``,
    ``ICNALE GRA 2_1.xlsx``) and other public loaders of WE 2.6; folkscope
    could not check it against the files themselves. Where a real copy
    differs, save the ratings as ``ratings.csv`` (layout 1).

    Groups are the writer's region (``ENS`` -> :data:`ICNALE_REFERENCE`,
    ``CHN`` -> China, ``HKG``, ``IDN``, ``JPN``, ``KOR``, ``PAK``, ``PHL``,
    ``SIN``, ``THA``, ``TWN``; an unknown code is kept as is). Qualified
    essays are those rated at or above the median of all rated essays found
    (the paper's 50th percentile), pooled over topics.

    Parameters
    ----------
    folder : str or Path
        The folder holding the unpacked ICNALE files.
    topic : {"PTJ", "SMK"}, optional
        The essay topic (subtask); also ``"part-time job"``/``"smoking"``.
        Needed only when the rated essays span both topics.

    Returns
    -------
    CandidateSet
        Task ``"essays"``, subtask the topic, context the essay task with a
        1-5 rubric; id = the essay's file name, name ``""``, text the essay.

    Raises
    ------
    DataError
        Missing folder, ratings or essays; a malformed ratings table.
    ConfigError
        Unknown topic, or no topic given for ratings of both topics.

    Examples
    --------
    >>> cs = icnale_essays("/data/icnale", topic="PTJ")  # doctest: +SKIP
    >>> cs.groups()[:3]  # doctest: +SKIP
    ['China', 'Hong Kong', 'Indonesia']
    """
    wanted = None if topic is None else _topic(topic)
    root = Path(folder)
    if not root.is_dir():
        raise DataError(f"ICNALE folder {root} does not exist; {_ICNALE_SOURCE}, then pass that folder")
    ratings_path = _ratings_file(root)
    ratings = _ratings(ratings_path)
    essays = _essay_files(root)
    if not essays:
        raise DataError(f"{root}: no ICNALE essay files (named like WE_CHN_PTJ0_004_B1_1.txt); {_ICNALE_SOURCE}")
    matched, missing, assumed, empty = [], 0, 0, 0
    for region, student, rated_topic, rating, code in ratings:
        topics = [rated_topic] if rated_topic else [t for t in _ICNALE_TOPICS if (region, student, t) in essays]
        if len(topics) > 1:
            topics, assumed = ["PTJ"], assumed + 1
        path = essays.get((region, student, topics[0])) if topics else None
        if path is None:
            missing += 1
            continue
        try:
            text = path.read_text(encoding="utf-8-sig").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(f"{path} cannot be read as UTF-8 text ({exc}); use the original essay file") from None
        if not text:
            empty += 1
            continue
        matched.append((path.stem, region, topics[0], rating, text))
    if not matched:
        raise DataError(
            f"none of the {len(ratings)} rated essays of {ratings_path} has an essay file under {root}; "
            f"the essays must be named like WE_CHN_PTJ0_004_B1_1.txt"
        )
    median = float(np.median([m[3] for m in matched]))
    present = sorted({m[2] for m in matched})
    if wanted is None:
        if len(present) > 1:
            raise ConfigError(
                f"the rated essays cover topics {', '.join(present)}; pass topic= one of them",
                parameter="topic",
                value=topic,
            )
        wanted = present[0]
    elif wanted not in present:
        raise DataError(f"no rated essay on topic {wanted} under {root}; rated topics: {', '.join(present)}")
    rows = sorted(
        (stem, _ICNALE_REGIONS.get(region, region), int(rating >= median), "", text, "")
        for stem, region, t, rating, text in matched
        if t == wanted
    )
    frame = pd.DataFrame(rows, columns=list(CANDIDATE_COLUMNS))
    context = (
        f'Task: an opinion essay on the statement "{_ICNALE_TOPICS[wanted]}" The writer agrees or disagrees '
        f"and supports the opinion with reasons and specific examples.\n\n{_RUBRIC}"
    )
    provenance = {
        "source": "ICNALE Written Essays with Global Rating Archives ratings (read from the user's copy)",
        "licence": "ICNALE terms of use: research use, no redistribution; not shipped by folkscope",
        "citation": "Ishikawa (2013), The ICNALE and sophisticated contrastive interlanguage analysis of Asian learners "
        "of English; Ishikawa (2024), The ICNALE Global Rating Archives",
        "path": str(root.resolve()),
        "ratings_file": str(ratings_path.resolve()),
        "topic": wanted,
        "n_rated": str(len(ratings)),
        "n_rated_with_essay": str(len(matched)),
        "rated_without_essay": str(missing),
        "empty_essays_skipped": str(empty),
        "topic_assumed": str(assumed),
        "median_rating": f"{median:g}",
        "qualified_rule": "rating >= median of all rated essays found (pooled over topics)",
    }
    return CandidateSet("essays", wanted, context, frame, provenance)
