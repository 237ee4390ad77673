"""High-dimensional tasks generated from a phrase table, by seed, as an ordinary task file.

The paper's 94 high-dimensional tasks were generated from phrase
dictionaries: a binary outcome and 2-5 conditioning variables, each with the
words that describe a person. A phrase table (``resources/phrases/<dataset>.json``)
holds those words for one dataset; :func:`generate_tasks` draws outcome and
conditions from a seed and writes task entries in the format
:func:`~folkscope.epidemiology.tasks.load_task_file` reads, each checked by
the same parser, so a generated file is data like any other.

A phrase table::

    {"dataset": "nist-acs", "about": "...", "population": "...", "weights": "PWGTP",
     "name_prefix": "acs_gen",                  # generated names: <prefix>_<outcome>_by_<cond>_<cond>...
     "subset": {"AGEP": {"min": 18}},           # every generated task's population (optional)
     "person": {"subject": "a person", "join": ", "},
     "outcomes": [{"name": "income", "column": "PINCP",
                   "levels": [{"max": 50000, "text": "less than $50,000"}, {"min": 50000, "text": "$50,000 or more"}],
                   "qa": "... {condition} ...", "likelihood": "... {condition} ... {outcome}?",
                   "subset": {...}, "exclude": ["<condition name>"]}],   # both optional
     "conditions": [{"name": "sex", "column": "SEX", "subject": true,
                     "levels": [{"value": 1, "text": "a man"}, {"value": 2, "text": "a woman"}]},
                    {"name": "age", "column": "AGEP", "phrase": "aged {level}",
                     "levels": [{"min": 18, "max": 35, "text": "18 to 34"}, ...]}]}

The person sentence: the chosen ``subject`` condition's level text (at most
one condition of a table is the subject: "a man"), else the grammar's
``subject`` ("a person"); then each other chosen condition's fragment, its
``phrase`` with ``{level}`` replaced by the level text (a level may give its
own ``phrase``), in the table's order, joined by ``join``: "a woman aged 18
to 34, with a bachelor's degree or higher, who is White". An outcome never
gets a condition on its own column, nor one its ``exclude`` names.

Examples
--------
>>> table = load_phrases(bundled_phrases("nist-acs"))
>>> tasks = generate_tasks(table, 2, seed=0)
>>> [t["name"] for t in tasks] == [t["name"] for t in generate_tasks(table, 2, seed=0)]
True
>>> all(2 <= len(t["conditions"]) <= 5 for t in tasks)
True
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from math import comb, prod
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._json import fingerprint, read_data_file, write_json
from folkscope.epidemiology.tasks import Level, Task, parse_task
from folkscope.errors import ConfigError, DataError

__all__ = [
    "PhraseCondition",
    "PhraseOutcome",
    "PhraseTable",
    "bundled_phrases",
    "generate_task_file",
    "generate_tasks",
    "load_phrases",
    "write_task_file",
]

_PHRASES = Path(__file__).with_name("resources") / "phrases"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
#: draws per requested task before the generator gives up (each draw is cheap; only empty cells reject one)
_DRAWS_PER_TASK = 200


@dataclass(frozen=True)
class PhraseOutcome:
    """A candidate binary outcome: its column, two levels, and the question stems."""

    name: str
    column: str
    levels: tuple[dict[str, Any], ...]
    qa: str
    likelihood: str
    subset: Mapping[str, Any]
    exclude: frozenset[str]


@dataclass(frozen=True)
class PhraseCondition:
    """A candidate conditioning variable: its column and levels, each level's text already the person fragment."""

    name: str
    column: str
    subject: bool
    levels: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class PhraseTable:
    """A dataset's phrase table, checked (:func:`load_phrases`)."""

    dataset: str
    about: str
    population: str
    weights: str | None
    unweighted_because: str | None
    prefix: str
    subset: Mapping[str, Any]
    subject: str
    join: str
    outcomes: tuple[PhraseOutcome, ...]
    conditions: tuple[PhraseCondition, ...]
    fingerprint: str
    file: str

    def eligible(self, outcome: PhraseOutcome) -> list[PhraseCondition]:
        """The conditions an outcome may be asked by: not its own column, not excluded."""
        return [c for c in self.conditions if c.column != outcome.column and c.name not in outcome.exclude]


def bundled_phrases(dataset: str) -> Path:
    """The phrase table the package ships for ``dataset``."""
    path = _PHRASES / f"{dataset}.json"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in _PHRASES.glob("*.json")))
        raise ConfigError(
            f"no bundled phrase table for dataset {dataset!r}; tables: {known} (or give --phrases FILE)",
            parameter="dataset",
            value=dataset,
        )
    return path


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{where}: needs a non-empty {key!r}")
    return value


def _name(data: Mapping[str, Any], where: str) -> str:
    name = _text(data, "name", where)
    if not _NAME.match(name):
        raise DataError(f"{where}: name {name!r} must be lower-case letters, digits and '_' (it goes into task names)")
    return name


def _levels(data: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    levels = data.get("levels")
    if not isinstance(levels, list) or not levels or not all(isinstance(lv, Mapping) for lv in levels):
        raise DataError(f"{where}: needs 'levels', a list of level objects")
    for lv in levels:  # the task format's own check, without the fragment key the task never sees
        Level.from_dict({k: v for k, v in lv.items() if k != "phrase"}, where)
    texts = [lv["text"] for lv in levels]
    if len(set(texts)) != len(texts):
        raise DataError(f"{where}: two levels share a text")
    return [dict(lv) for lv in levels]


def _outcome(data: Any, where: str) -> PhraseOutcome:
    if not isinstance(data, Mapping):
        raise DataError(f"{where}: every outcome is an object")
    name = _name(data, where)
    where = f"{where} {name!r}"
    levels = _levels(data, where)
    if len(levels) != 2:
        raise DataError(f"{where}: a generated task's outcome is binary: give exactly two levels, got {len(levels)}")
    exclude = data.get("exclude") or []
    if not isinstance(exclude, list) or not all(isinstance(e, str) for e in exclude):
        raise DataError(f"{where}: 'exclude' is a list of condition names")
    subset = data.get("subset") or {}
    if not isinstance(subset, Mapping):
        raise DataError(f'{where}: \'subset\' maps columns to a level ({{"min": 18}}, {{"values": [1, 2]}}, ...)')
    return PhraseOutcome(
        name,
        _text(data, "column", where),
        tuple({k: v for k, v in lv.items() if k != "phrase"} for lv in levels),
        _text(data, "qa", where),
        _text(data, "likelihood", where),
        dict(subset),
        frozenset(exclude),
    )


def _condition(data: Any, where: str) -> PhraseCondition:
    if not isinstance(data, Mapping):
        raise DataError(f"{where}: every condition is an object")
    name = _name(data, where)
    where = f"{where} {name!r}"
    levels = _levels(data, where)
    subject = data.get("subject", False)
    if not isinstance(subject, bool):
        raise DataError(f"{where}: 'subject' is true or false")
    fragments = []
    for lv in levels:
        phrase = lv.get("phrase", data.get("phrase"))
        if subject:
            if "phrase" in data or "phrase" in lv:
                raise DataError(
                    f"{where}: the subject's level texts are the noun phrase itself (\"a man\"); drop 'phrase'"
                )
            fragment = lv["text"]
        elif not isinstance(phrase, str) or "{level}" not in phrase and "phrase" not in lv:
            raise DataError(
                f"{where}: give a 'phrase' with {{level}} (e.g. \"aged {{level}}\"), or a 'phrase' on each level"
            )
        else:
            fragment = phrase.replace("{level}", lv["text"])
        if "{" in fragment or "}" in fragment:
            raise DataError(
                f"{where}: the fragment {fragment!r} has a brace other than {{level}}; persons are plain text"
            )
        fragments.append({**{k: v for k, v in lv.items() if k not in ("phrase", "text")}, "text": fragment})
    if len({f["text"] for f in fragments}) != len(fragments):
        raise DataError(f"{where}: two levels describe a person the same way")
    return PhraseCondition(name, _text(data, "column", where), subject, tuple(fragments))


def load_phrases(source: str | Path | Mapping[str, Any]) -> PhraseTable:
    """Read and check a phrase table (a file, or its JSON value); a bad entry is one :class:`DataError` naming it."""
    data = source if isinstance(source, Mapping) else read_data_file(source, "phrase table")
    where = "phrase table" if isinstance(source, Mapping) else Path(source).name
    if not isinstance(data, Mapping):
        raise DataError(f"{where}: a phrase table is a JSON object")
    dataset = _text(data, "dataset", where)
    if "weights" not in data:
        raise DataError(f"{where}: declare 'weights' (a column, or null with 'unweighted_because'), as in a task file")
    prefix = _name({"name": data.get("name_prefix")}, f"{where} name_prefix")
    person = data.get("person") or {}
    if not isinstance(person, Mapping):
        raise DataError(f'{where}: \'person\' is the grammar, {{"subject": "a person", "join": ", "}}')
    subject, join = str(person.get("subject", "a person")), str(person.get("join", ", "))
    if any(ch in subject + join for ch in "{}"):
        raise DataError(f"{where}: the person grammar's 'subject' and 'join' are plain text, without braces")
    for key in ("outcomes", "conditions"):
        if not isinstance(data.get(key) or [], list):
            raise DataError(f"{where}: {key!r} is a list of objects, got {type(data[key]).__name__}")
    outcomes = [_outcome(o, f"{where} outcome") for o in data.get("outcomes") or []]
    conditions = [_condition(c, f"{where} condition") for c in data.get("conditions") or []]
    if not outcomes or len(conditions) < 2:
        raise DataError(f"{where}: needs at least one outcome and two conditions")
    for kind, items in (("outcome", outcomes), ("condition", conditions)):
        names = [i.name for i in items]
        if len(set(names)) != len(names):
            raise DataError(f"{where}: two {kind}s share a name")
    columns = [c.column for c in conditions]
    if len(set(columns)) != len(columns):
        raise DataError(f"{where}: two conditions share a column; merge their levels into one condition")
    if sum(c.subject for c in conditions) > 1:
        raise DataError(f"{where}: at most one condition is the subject (the noun of the person sentence)")
    known = {c.name for c in conditions}
    for o in outcomes:
        if o.exclude - known:
            raise DataError(
                f"{where} outcome {o.name!r}: 'exclude' names unknown condition(s) {', '.join(sorted(o.exclude - known))}"
            )
    subset = data.get("subset") or {}
    if not isinstance(subset, Mapping):
        raise DataError(f"{where}: 'subset' maps columns to a level ({{\"min\": 18}}, ...)")
    return PhraseTable(
        dataset=dataset,
        about=str(data.get("about", "")),
        population=str(data.get("population", "")),
        weights=data["weights"],
        unweighted_because=data.get("unweighted_because"),
        prefix=prefix,
        subset=dict(subset),
        subject=subject,
        join=join,
        outcomes=tuple(outcomes),
        conditions=tuple(conditions),
        fingerprint=fingerprint(data),
        file=where,
    )


def _pick(rng: random.Random, n: int) -> int:
    """A uniform index below ``n`` from ``rng.random()`` alone: the one stream Python keeps the same across versions."""
    return min(int(rng.random() * n), n - 1)


def _sample(rng: random.Random, items: Sequence[Any], k: int) -> list[Any]:
    """``k`` distinct items (a partial Fisher-Yates shuffle on :func:`_pick`)."""
    pool = list(items)
    for i in range(k):
        j = i + _pick(rng, len(pool) - i)
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]


def _entry(table: PhraseTable, outcome: PhraseOutcome, chosen: Sequence[PhraseCondition]) -> dict[str, Any]:
    """The task entry of one outcome and its conditions (in the table's order)."""
    subject = next((c for c in chosen if c.subject), None)
    head = f"{{{subject.column}}}" if subject is not None else table.subject
    person = head + " " + table.join.join(f"{{{c.column}}}" for c in chosen if not c.subject)
    return {
        "name": f"{table.prefix}_{outcome.name}_by_{'_'.join(c.name for c in chosen)}",
        "subset": {**table.subset, **outcome.subset},
        "outcome": {"column": outcome.column, "levels": [dict(lv) for lv in outcome.levels]},
        "conditions": [{"column": c.column, "levels": [dict(lv) for lv in c.levels]} for c in chosen],
        "person": person,
        "qa": outcome.qa,
        "likelihood": outcome.likelihood,
    }


def _populated(task: Task, data: pd.DataFrame, min_persons: int) -> bool:
    """Whether every combination of the task's condition levels holds at least ``min_persons`` of its population.

    A level written in another type than its column stops the generation (every draw with it would be empty).
    """
    task.check_levels(data, empty_ok=True)
    rows = task.rows(data)
    _, cell, texts = task.cells(rows)
    if len(texts) < prod(len(v.levels) for v in task.conditions):
        return False
    return bool(np.bincount(cell[cell >= 0], minlength=len(texts)).min() >= min_persons)


def generate_tasks(
    phrases: PhraseTable,
    n: int,
    seed: int,
    dims: tuple[int, int] = (2, 5),
    *,
    data: pd.DataFrame | None = None,
    min_persons: int = 1,
    avoid: Collection[tuple[str, frozenset[str]]] = (),
) -> list[dict[str, Any]]:
    """``n`` distinct high-dimensional task entries drawn from the phrase table by ``seed``.

    Each draw picks an outcome, a number of conditions in ``dims`` (both
    ends included, capped by the conditions the outcome may use) and that
    many distinct conditions, uniformly; a task drawn before, or one of
    ``avoid`` (outcome column, condition columns: the dataset's hand-written
    tasks), is drawn again.
    With ``data`` (the dataset's table), a draw is kept only when every
    combination of its condition levels holds ``min_persons`` people of the
    task's population, so each person the questions describe exists in the
    survey. The same phrase table, arguments and data give the same tasks.

    Raises
    ------
    ConfigError
        ``n`` or ``dims`` out of range, or fewer than ``n`` distinct tasks
        can be drawn (the table is too small, or too many combinations are
        empty in ``data``).
    """
    low, high = dims
    if not (isinstance(n, int) and n >= 1):
        raise ConfigError(f"n must be a positive integer, got {n!r}", parameter="n", value=n)
    if not 2 <= low <= high <= 5:
        raise ConfigError(
            f"dims must satisfy 2 <= low <= high <= 5 (2-5 conditions), got {dims!r}", parameter="dims", value=dims
        )
    possible = sum(comb(len(phrases.eligible(o)), k) for o in phrases.outcomes for k in range(low, high + 1))
    if n > possible:
        raise ConfigError(
            f"the phrase table {phrases.file} allows only {possible} distinct tasks with {low}-{high} conditions; "
            f"ask for at most that many",
            parameter="n",
            value=n,
        )
    rng = random.Random(seed)
    seen: set[str] = set()
    entries: list[dict[str, Any]] = []
    draws = 0
    while len(entries) < n and draws < _DRAWS_PER_TASK * n and len(seen) < possible:
        draws += 1
        outcome = phrases.outcomes[_pick(rng, len(phrases.outcomes))]
        eligible = phrases.eligible(outcome)
        if len(eligible) < low:
            continue
        k = low + _pick(rng, min(high, len(eligible)) - low + 1)
        picked = {c.name for c in _sample(rng, eligible, k)}
        entry = _entry(phrases, outcome, [c for c in eligible if c.name in picked])
        if entry["name"] in seen:
            continue
        seen.add(entry["name"])
        if (outcome.column, frozenset(c["column"] for c in entry["conditions"])) in avoid:
            continue
        task = parse_task(
            entry,
            dataset=phrases.dataset,
            population=phrases.population,
            weights=phrases.weights,
            where=phrases.file,
            generated=True,
        )
        if data is not None and not _populated(task, data, min_persons):
            continue
        entries.append(entry)
    if len(entries) < n:
        raise ConfigError(
            f"only {len(entries)} of {n} tasks found after {draws} draws ({len(seen)} distinct): too many "
            f"combinations of levels are empty; ask for fewer, narrow --dims, or lower --min-persons",
            parameter="n",
            value=n,
        )
    return entries


def generate_task_file(
    phrases: PhraseTable,
    n: int,
    seed: int,
    dims: tuple[int, int] = (2, 5),
    *,
    data: pd.DataFrame | None = None,
    min_persons: int = 1,
    avoid: Collection[tuple[str, frozenset[str]]] = (),
) -> dict[str, Any]:
    """A whole task file: the dataset's header, a ``generated`` record of how to make it again, and the tasks."""
    tasks = generate_tasks(
        phrases, n, seed, dims, data=data, min_persons=min_persons if data is not None else 0, avoid=avoid
    )
    head: dict[str, Any] = {
        "dataset": phrases.dataset,
        "about": phrases.about,
        "population": phrases.population,
        "weights": phrases.weights,
    }
    if phrases.unweighted_because is not None:
        head["unweighted_because"] = phrases.unweighted_because
    head["generated"] = {
        "phrases": phrases.file,
        "phrases_fingerprint": phrases.fingerprint,
        "n": n,
        "seed": seed,
        "dims": list(dims),
        "min_persons": min_persons if data is not None else 0,
        "avoided": sorted(f"{outcome} by {', '.join(sorted(columns))}" for outcome, columns in avoid),
        "command": f"folkscope epidemiology generate --dataset {phrases.dataset} --n {n} --seed {seed} --dims {dims[0]},{dims[1]} "
        f"--min-persons {min_persons if data is not None else 0} --output FILE",
    }
    return {**head, "tasks": tasks}


def write_task_file(path: str | Path, task_file: Mapping[str, Any]) -> Path:
    """Write a generated task file (indented JSON; the same content gives the same bytes) and check it reads back."""
    from folkscope.epidemiology.tasks import load_task_file

    out = Path(path)
    write_json(out, task_file)
    load_task_file(out)
    return out
