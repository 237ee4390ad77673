"""Resume-screening candidates: Bloomberg's bundled hiring-audit resumes (the offline default) and the RABBI authors' folder.

- :func:`bloomberg_resumes`: Bloomberg's 2024 GPT hiring audit (Apache-2.0,
  bundled with its NOTICE): 8 equally qualified resumes per job, 100 names
  per race x gender group.
- :func:`rabbi_resumes`: the RABBI authors' resume-screening folder (no
  licence, so never bundled: it reads the user's copy): resumes of high,
  medium and low hiring chance.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._names import slug
from folkscope.allocation.candidates import CANDIDATE_COLUMNS, RACE_GENDER_GROUPS, CandidateSet
from folkscope.errors import ConfigError, DataError

__all__ = ["bloomberg_resumes", "rabbi_resumes", "resume_jobs"]

_RACES = {"W": "White", "B": "Black", "A": "Asian", "H": "Hispanic"}
_MAX_NAMES = 100  # each group has 100 names in both resume sources

_BLOOMBERG = "resources/bloomberg"
_BLOOMBERG_ORIGIN = "github.com/BloombergGraphics/2024-openai-gpt-hiring-racial-discrimination @ 65ae91134f1e"
_BLOOMBERG_CITATION = (
    "Yin, Alba, Nicoletti (2024), 'OpenAI's GPT is a recruiter's dream tool. Tests show there's racial bias', Bloomberg"
)
_RABBI_ORIGIN = "github.com/hannahxchen/allocational-harm-eval, folder allocation_tasks/resume_screening"
_RABBI_CITATION = (
    "Chen, Ji, Evans (2024), 'The Mismeasure of Man and Models: Evaluating Allocational Harms "
    "in Large Language Models', arXiv:2408.01285"
)
_LEVELS = ("high", "some", "low")  # RABBI's hiring-chance folders; only "high" counts as qualified

# ---------------------------------------------------------------------------------------------------------------
# resumes: shared helpers


def _job(job: Any) -> str:
    """The job in :func:`resume_jobs` spelling; any case, ``_`` or ``-`` for spaces is accepted."""
    jobs = resume_jobs()
    if isinstance(job, str):
        key = " ".join(job.replace("_", " ").replace("-", " ").lower().split())
        for known in jobs:
            if known.lower() == key:
                return known
    raise ConfigError(f"unknown job {job!r}; jobs: {', '.join(jobs)}", parameter="job", value=job)


def _names_per_group(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= _MAX_NAMES:
        raise ConfigError(
            f"names_per_group must be an integer from 1 to {_MAX_NAMES}, got {value!r}",
            parameter="names_per_group",
            value=value,
        )
    return int(value)


def _seed(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {value!r}", parameter="seed", value=value)
    return int(value)


def _fill_name(text: str, name: str) -> str:
    """The resume with its ``{name}`` slot filled (plain replace: resumes may contain other braces)."""
    return text.replace("{name}", name)


def _title(name: str) -> str:
    """``"YING PHAM"`` -> ``"Ying Pham"`` (also after hyphens and apostrophes: ``"O'NEIL-SMITH"`` -> ``"O'Neil-Smith"``)."""
    return re.sub(r"[^\W\d_]+", lambda m: m.group(0).capitalize(), name.strip().lower())


@functools.cache
def _bundled(name: str) -> Any:
    """A JSON file of the bundled Bloomberg data (parsed once; callers never mutate it)."""
    ref = resources.files("folkscope.allocation").joinpath(_BLOOMBERG).joinpath(name)
    return json.loads(ref.read_text(encoding="utf-8"))


def resume_jobs() -> tuple[str, ...]:
    """The four jobs of the resume tasks, in the spelling both resume loaders accept.

    Examples
    --------
    >>> resume_jobs()
    ('software engineer', 'HR specialist', 'retail', 'financial analyst')
    """
    return tuple(_bundled("resumes_to_rank.json"))


# ---------------------------------------------------------------------------------------------------------------
# Bloomberg (bundled, Apache-2.0)


def bloomberg_resumes(job: str, *, names_per_group: int = 4, seed: int = 0) -> CandidateSet:
    """Equally qualified resumes under names of the 8 race x gender groups: the offline default task.

    Bloomberg's audit wrote 8 resumes per job that are equally qualified by
    design, so any systematic gap between groups comes from the names. Per
    group, ``names_per_group`` distinct names are drawn (seeded) from its 100
    names (Bloomberg's race codes W/B/A/H, men and women files; shown in
    title case). Candidate ``j`` of every group gets resume ``j % 8`` (its
    ``item``, ``"resume-<r>"``): every group holds the same resumes, each
    under a name of every group, so group and resume are never confounded,
    whatever ``names_per_group`` is (with fewer than 8 names per group, only
    the first ``names_per_group`` resumes are used). Pools drawn by
    :func:`~folkscope.allocation.draw_pools` keep the balance: over the
    rounds, every group meets the same resumes equally often, and with 8 or
    more names per group a pool of 8 holds 8 different resumes, one name of
    every group each, as in the audit. Everyone is qualified (``qualified = 1``).

    Parameters
    ----------
    job : str
        One of :func:`resume_jobs` (case, ``_`` or ``-`` do not matter).
    names_per_group : int
        Names per group, 1 to 100.
    seed : int
        Seed of the name draw (the same seed gives the same names for every job).

    Returns
    -------
    CandidateSet
        Task ``"resumes"``, subtask the job, context its job description.
        Ids read ``"<job>/<group>/<j>/resume-<r>"``.

    Raises
    ------
    ConfigError
        Unknown job, ``names_per_group`` outside 1..100, a negative seed.

    Examples
    --------
    >>> cs = bloomberg_resumes("software engineer", names_per_group=2)
    >>> len(cs), len(cs.groups()), int(cs.frame["qualified"].sum())
    (16, 8, 16)
    >>> row = cs.frame.iloc[0]
    >>> row["group"], row["name"] in row["text"], row["name"] == row["name"].title()
    ('White men', True, True)
    """
    job = _job(job)
    n = _names_per_group(names_per_group)
    rng = np.random.default_rng(_seed(seed))
    entry = _bundled("resumes_to_rank.json")[job]
    resumes = list(entry["resumes"])
    files = {"men": _bundled("top_mens_names.json"), "women": _bundled("top_womens_names.json")}
    rows = []
    for group in RACE_GENDER_GROUPS:
        race, gender = group.split(" ")
        code = next(c for c, label in _RACES.items() if label == race)
        names = files[gender][code]
        for j, pick in enumerate(rng.choice(len(names), size=n, replace=False)):
            name = _title(names[int(pick)])
            r = j % len(resumes)
            rows.append(
                (
                    f"{slug(job, lower=True)}/{group}/{j}/resume-{r}",
                    group,
                    1,
                    name,
                    _fill_name(resumes[r], name),
                    f"resume-{r}",
                )
            )
    frame = pd.DataFrame(rows, columns=list(CANDIDATE_COLUMNS))
    provenance = {
        "source": "Bloomberg 2024 GPT hiring audit: names, resumes and job descriptions (bundled with folkscope)",
        "licence": "Apache-2.0 (see NOTICE)",
        "citation": _BLOOMBERG_CITATION,
        "origin": _BLOOMBERG_ORIGIN,
        "path": f"folkscope/allocation/{_BLOOMBERG}",
        "job_url": str(entry.get("jd_url", "")),
        "names_per_group": str(n),
        "seed": str(seed),
        "design": "8 equally qualified resumes; candidate j of every group gets resume j % 8 (every group holds the same resumes)",
    }
    return CandidateSet("resumes", job, str(entry["jd"]), frame, provenance)


# ---------------------------------------------------------------------------------------------------------------
# RABBI authors' resume-screening folder (no licence: read from the user's copy)


def _rabbi_missing(path: Path) -> DataError:
    return DataError(
        f"RABBI resume-screening data: {path} is missing; pass your copy of the folder {_RABBI_ORIGIN} "
        f"(it has no licence, so folkscope does not ship it)"
    )


def _rabbi_file(folder: Path, *candidates: str) -> Path:
    for name in candidates:
        if (folder / name).is_file():
            return folder / name
    raise _rabbi_missing(folder / candidates[0])


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{path} cannot be read as {what} ({exc}); replace it with the original file") from None


def _rabbi_resumes_of(folder: Path, job_file: str) -> list[tuple[str, str]]:
    """(level, rendered text) of each resume index of a job, checked against its body file."""
    bodies = _read_json(_rabbi_file(folder, f"{job_file}.json"), "a list of resume bodies")
    blocks: dict[str, list[str]] = {}
    for level in _LEVELS:
        path = _rabbi_file(folder, f"resume_templates/{level}_chance/{job_file}.txt")
        text = path.read_text(encoding="utf-8")
        blocks[level] = [b.strip() for b in re.findall(r"\[start\](.*?)\[end\]", text, flags=re.DOTALL)]
    out: list[tuple[str, str]] = []
    seen = {level: 0 for level in _LEVELS}
    for idx, body in enumerate(bodies if isinstance(bodies, list) else []):
        level = str(body.get("label", "")).removesuffix("_chance") if isinstance(body, dict) else ""
        if level not in blocks or seen[level] >= len(blocks[level]):
            raise DataError(
                f"{folder / (job_file + '.json')}: resume {idx} has label {level!r} without a matching block in "
                f"resume_templates/{level}_chance/{job_file}.txt; use the original files"
            )
        block = blocks[level][seen[level]]
        titles = [str(w.get("job_title", "")) for w in body.get("work_experience", []) if isinstance(w, dict)]
        if "{name}" not in block or not all(t in block for t in titles):
            raise DataError(
                f"resume {idx} of {job_file}.json does not match block {seen[level]} of "
                f"resume_templates/{level}_chance/{job_file}.txt; use the original files"
            )
        seen[level] += 1
        out.append((level, block))
    if not out:
        raise DataError(f"{folder / (job_file + '.json')} holds no resumes; use the original file")
    return out


def rabbi_resumes(folder: str | Path, job: str, *, names_per_group: int = 4, seed: int = 0) -> CandidateSet:
    """Resumes of high, medium and low hiring chance under names of the 8 groups, from the RABBI authors' folder.

    The folder (``allocation_tasks/resume_screening`` of
    github.com/hannahxchen/allocational-harm-eval, passed as that folder or
    its parent) has no licence, so folkscope reads the user's copy and never
    ships it. How its files fit together:

    - ``<job>.json`` lists the job's 6 resume bodies; ``resume_idx`` ``i``
      of ``names/sampled_full_names.csv[.gz]`` is entry ``i``. Its ``label``
      is ``high_chance``, ``some_chance`` or ``low_chance`` (indices 0-1,
      2-3, 4-5 for every job).
    - ``resume_templates/<label>/<job>.txt`` holds the rendered resumes of
      that level as ``[start] ... [end]`` blocks, in the order the entries of
      that label appear in ``<job>.json`` (checked: every block must name the
      entry's job titles and hold a ``{name}`` slot).
    - Only high-chance resumes are qualified (``qualified = 1``), as in the
      paper; medium ("some") and low are 0.
    - ``sampled_full_names`` has 100 name rows per (job, group, resume_idx);
      groups are ``<race>_<sex>`` codes (``W_F`` = White women).

    Resumes are spread evenly: candidate ``j`` of every group gets the
    ``j``-th resume of the order high, some, low, high, some, low (indices
    0, 2, 4, 1, 3, 5), so all groups hold the same resumes and the same
    number of qualified candidates. Its name is drawn (seeded, no name twice)
    from the name rows of that job, group and ``resume_idx``, so every
    candidate keeps the ``resume_idx`` its name row was sampled for.

    Parameters
    ----------
    folder : str or Path
        The ``resume_screening`` folder (or the ``allocation_tasks`` folder above it).
    job : str
        One of :func:`resume_jobs` (``"software_engineer"`` works too).
    names_per_group : int
        Candidates per group, 1 to 100.
    seed : int
        Seed of the name draw.

    Returns
    -------
    CandidateSet
        Task ``"rabbi-resumes"``; context the job description of
        ``job_descriptions.json``; ids ``"<job>/<group>/<j>/resume-<idx>"``.

    Raises
    ------
    DataError
        The folder or one of its files is missing or does not fit the layout.
    ConfigError
        Unknown job, ``names_per_group`` outside 1..100, a negative seed.

    Examples
    --------
    >>> cs = rabbi_resumes("/data/allocation_tasks/resume_screening", "retail", names_per_group=3)  # doctest: +SKIP
    >>> cs.frame.groupby("group")["qualified"].sum().tolist()  # doctest: +SKIP
    [1, 1, 1, 1, 1, 1, 1, 1]
    """
    job = _job(job)
    n = _names_per_group(names_per_group)
    rng = np.random.default_rng(_seed(seed))
    root = Path(folder)
    if (root / "resume_screening").is_dir():
        root = root / "resume_screening"
    if not root.is_dir():
        raise _rabbi_missing(root)
    job_file = job.lower().replace(" ", "_")
    resumes = _rabbi_resumes_of(root, job_file)
    descriptions = _read_json(_rabbi_file(root, "job_descriptions.json"), "job descriptions")
    if (
        not isinstance(descriptions, dict)
        or not isinstance(descriptions.get(job), dict)
        or "jd" not in descriptions[job]
    ):
        raise DataError(f"{root / 'job_descriptions.json'} has no job description for {job!r}; use the original file")
    names_path = _rabbi_file(root, "names/sampled_full_names.csv.gz", "names/sampled_full_names.csv")
    try:
        names = pd.read_csv(names_path, dtype={"group": str, "name": str, "job": str})
    except (OSError, ValueError) as exc:
        raise DataError(f"{names_path} cannot be read as CSV ({exc}); replace it with the original file") from None
    if not {"resume_idx", "group", "name", "job"} <= set(names.columns):
        raise DataError(
            f"{names_path} needs columns resume_idx, group, name, job; has {', '.join(map(str, names.columns))}"
        )
    names = names[names["job"].str.lower() == job_file]
    by_level = {level: [i for i, (lv, _) in enumerate(resumes) if lv == level] for level in _LEVELS}
    order = [idx for round_ in zip(*(by_level[level] for level in _LEVELS)) for idx in round_]
    order += [i for i in range(len(resumes)) if i not in order]  # levels of unequal size: the rest after
    rows = []
    used: set[str] = set()  # no name twice in the whole set: pairwise answers name the candidate
    for group in RACE_GENDER_GROUPS:
        race, gender = group.split(" ")
        code = f"{next(c for c, label in _RACES.items() if label == race)}_{'M' if gender == 'men' else 'F'}"
        of_group = names[names["group"] == code]
        picked: dict[int, list[str]] = {}
        slots = [order[j % len(order)] for j in range(n)]
        for idx in dict.fromkeys(slots):
            need = slots.count(idx)
            pool = [
                s
                for s in of_group.loc[of_group["resume_idx"] == idx, "name"].dropna().drop_duplicates()
                if s not in used
            ]
            if len(pool) < need:
                raise DataError(
                    f"{names_path}: only {len(pool)} distinct names for {code}, {job_file}, resume_idx {idx}; "
                    f"{need} needed; ask for fewer names_per_group or use the original file"
                )
            picked[idx] = [pool[int(k)] for k in rng.choice(len(pool), size=need, replace=False)]
            used.update(picked[idx])
        for j, idx in enumerate(slots):
            name = picked[idx].pop(0)
            level, text = resumes[idx]
            rows.append(
                (
                    f"{slug(job, lower=True)}/{group}/{j}/resume-{idx}",
                    group,
                    int(level == "high"),
                    name,
                    _fill_name(text, name),
                    f"resume-{idx}",
                )
            )
    frame = pd.DataFrame(rows, columns=list(CANDIDATE_COLUMNS))
    provenance = {
        "source": "RABBI resume-screening data (the paper's authors' folder, read from the user's copy)",
        "licence": "none stated (the repository has no licence file); not redistributed by folkscope",
        "citation": _RABBI_CITATION,
        "origin": _RABBI_ORIGIN,
        "path": str(root.resolve()),
        "job_url": str(descriptions[job].get("jd_url", "")),
        "names_per_group": str(n),
        "seed": str(seed),
        "design": "candidate j of every group gets resume_idx "
        + ", ".join(map(str, order))
        + " (cycled); high chance = qualified",
    }
    return CandidateSet("rabbi-resumes", job, str(descriptions[job]["jd"]), frame, provenance)
