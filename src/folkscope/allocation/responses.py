"""Audit rankings a model already gave: who would the stated top k have picked? No model needed.

An auditor who logged a model's answers to "rank these candidates" prompts
(the Bloomberg 2024 hiring-audit design: eight names, one per race x gender
group, on equally qualified resumes) gets the allocation numbers from the
log alone. Each JSONL line is one pool::

    {"candidates": ["Jane Smith", ...], "groups": ["White Women", ...],
     "response": "<the model's text>", ...any other keys (job, model, ...)}

The ranking is the one the response states (:func:`folkscope.readout.parse_ranking`:
a numbered list, a list of names, or prose with ranking words; candidates it
does not place tie below the placed ones). The top ``k`` of each pool are selected, ties
sharing the remaining slots fractionally. Per ``by`` cell and group the audit
reports appearances, selections, the selection rate and the impact ratio
(rate / the highest group's rate in the cell: the four-fifths rule flags
< 0.8), and, with a reference group, RABBI of each group against it on the
rank scores (1 for first place down to 0 for last) with its Mann-Whitney
p-value. A response that states no ranking (a description of the candidates,
an echoed resume, a refusal, no candidate named) is counted as unparseable
and left out.

Examples
--------
>>> records = [
...     {"candidates": ["Ann Wu", "Bo Lee"], "groups": ["A", "B"], "response": "1. Bo Lee\\n2. Ann Wu"},
...     {"candidates": ["Cy Ng", "Di Ray"], "groups": ["A", "B"], "response": "Di Ray is better than Cy Ng."},
...     {"candidates": ["Ed Fox", "Flo Kim"], "groups": ["A", "B"], "response": "I cannot rank people."},
... ]
>>> audit = audit_responses(records, config=ResponsesConfig(k=1, reference="B"))
>>> audit.n_unparseable, audit.table[["group", "selection_rate", "impact_ratio", "rabbi"]].to_dict("list")
(1, {'group': ['A', 'B'], 'selection_rate': [0.0, 1.0], 'impact_ratio': [0.0, 1.0], 'rabbi': [-1.0, nan]})
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._config import comma_names, option
from folkscope._json import parse_data, read_text_file
from folkscope.errors import ConfigError, DataError, UndefinedMetricWarning
from folkscope.metrics import impact_ratio, rabbi_test, top_k_selection
from folkscope.readout import parse_ranking

__all__ = ["AUDIT_COLUMNS", "ResponseAudit", "ResponsesConfig", "audit_responses", "read_responses"]

#: columns of :attr:`ResponseAudit.table` after the ``by`` keys and ``group``
AUDIT_COLUMNS = ("appearances", "selected", "selection_rate", "impact_ratio", "rabbi", "rabbi_p_value", "mean_rank")


@dataclass(frozen=True)
class ResponsesConfig:
    """What an audit of logged rankings computes."""

    k: int = field(
        default=1, metadata=option("Candidates selected per pool: the top k of the stated ranking.", metavar="K")
    )
    by: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "Keys of each line to tabulate by, e.g. job,model (comma-separated).", kind="list", metavar="KEY,..."
        ),
    )
    reference: str | None = field(
        default=None,
        metadata=option("Reference group of RABBI (e.g. 'White Men'); without it RABBI is left out.", metavar="GROUP"),
    )

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ConfigError(f"k must be an integer >= 1, got {self.k!r}", parameter="k", value=self.k)
        object.__setattr__(self, "by", comma_names(self.by) if isinstance(self.by, str) else tuple(self.by))


@dataclass(frozen=True, eq=False)
class ResponseAudit:
    """The audit of logged rankings.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (``by`` cell, group): the ``by`` keys, ``group``, then :data:`AUDIT_COLUMNS`.
    n_responses, n_unparseable : int
        Pools read, and those whose response states no ranking (left out).
    unparseable_lines : list of int
        Their line numbers (1-based) in the file, or positions in the input.
    config : ResponsesConfig
    """

    table: pd.DataFrame
    n_responses: int
    n_unparseable: int
    unparseable_lines: list[int]
    config: ResponsesConfig


def read_responses(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSONL file of logged responses (blank lines skipped); a bad line or file is one clear error.

    The file is read as every file a person writes is (:func:`folkscope._json.read_text_file`:
    UTF-8 with or without a byte-order mark, UTF-16/32 by their mark, else one
    line naming the byte), each line as one JSON value
    (:func:`folkscope._json.parse_data`: syntax, nesting and size refused in
    one line). Each record gets ``_line``, its line number in the file (a
    ``_line`` the line itself holds is replaced: errors must name the real line).
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise DataError(f"no responses file at {file}; pass the JSONL file of logged responses")
    records = []
    for number, line in enumerate(
        read_text_file(file, "responses file").split("\n"), start=1
    ):  # JSONL lines end at \n only
        if not line.strip():
            continue
        record = parse_data(line, f"{file.name} line {number}", error=_one_object)
        if not isinstance(record, dict):
            raise DataError(f"{file.name} line {number} is a JSON {type(record).__name__}, not an object")
        records.append({**record, "_line": number})
    if not records:
        raise DataError(f"{file} holds no responses")
    return records


def _one_object(message: str) -> DataError:
    return DataError(f"{message}; each line must be one JSON object")


def _line_of(record: Mapping[str, Any], position: int) -> tuple[int, str]:
    """The line a record came from (``_line``, as :func:`read_responses` sets it) or its position, and how errors name it."""
    if "_line" not in record:
        return position, f"response {position}"
    line = record["_line"]
    if isinstance(line, bool) or not isinstance(line, (int, np.integer)) or line < 1:
        raise DataError(
            f"response {position}: '_line' must be the record's line number (an integer >= 1), got {line!r}; "
            "drop it or read the file with read_responses"
        )
    return int(line), f"line {int(line)}"


def _check(record: Mapping[str, Any], where: str, by: Sequence[str], k: int) -> tuple[list[str], list[str], str]:
    names, groups, response = record.get("candidates"), record.get("groups"), record.get("response")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise DataError(f"{where}: 'candidates' must be a non-empty list of names")
    if not isinstance(groups, list) or len(groups) != len(names):
        raise DataError(f"{where}: 'groups' must list one group per candidate ({len(names)})")
    if not all(isinstance(g, str) and g.strip() for g in groups):
        raise DataError(f"{where}: every group must be a non-blank name, got {groups}")
    if not isinstance(response, str):
        raise DataError(f"{where}: 'response' must be the model's text")
    missing = [key for key in by if key not in record]
    if missing:
        raise DataError(f"{where} has no key {missing[0]!r} to tabulate by; drop it from --by or add it to every line")
    if k > len(names):
        raise ConfigError(
            f"k={k} is larger than the pool at {where} ({len(names)} candidates); choose k <= the smallest pool",
            parameter="k",
            value=k,
        )
    return names, [g.strip() for g in groups], response


def audit_responses(records: Iterable[Mapping[str, Any]], *, config: ResponsesConfig | None = None) -> ResponseAudit:
    """Selection rates, impact ratios and RABBI of the rankings stated in logged responses.

    Parameters
    ----------
    records : iterable of mappings
        One pool each: ``candidates``, ``groups``, ``response`` and any other
        keys (``_line``, as :func:`read_responses` sets it, names the line in errors).
    config : ResponsesConfig, optional
        ``k``, ``by`` and ``reference`` (default: k = 1, one cell, no RABBI).

    Raises
    ------
    DataError
        A malformed record, or no response that names a candidate.
    ConfigError
        ``k`` larger than a pool, or a reference group that never appears.
    """
    cfg = config or ResponsesConfig()
    rows: list[dict[str, Any]] = []
    unparseable: list[int] = []
    n = 0
    for position, record in enumerate(records, start=1):
        n += 1
        if not isinstance(record, Mapping):
            raise DataError(
                f"response {position} is a {type(record).__name__}, not a mapping of candidates, groups and response"
            )
        line, where = _line_of(record, position)
        names, groups, response = _check(record, where, cfg.by, cfg.k)
        ranking = parse_ranking(response, names)
        if ranking is None:
            unparseable.append(line)
            continue
        cell = {key: str(record[key]) for key in cfg.by}
        for group, rank, score in zip(groups, ranking.ranks, ranking.scores):
            rows.append({**cell, "pool": position, "group": group, "rank": rank, "rank_score": score})
    if not rows:
        raise DataError(f"none of the {n} responses states a ranking of its pool; nothing to audit")
    long = pd.DataFrame(rows)
    long["selected"] = top_k_selection(-long["rank"].to_numpy(), long["pool"].to_numpy(), k=cfg.k)
    if cfg.reference is not None and cfg.reference not in set(long["group"]):
        groups = ", ".join(sorted(set(long["group"])))
        raise ConfigError(
            f"reference group {cfg.reference!r} never appears; groups: {groups}",
            parameter="reference",
            value=cfg.reference,
        )
    table = _tabulate(long, list(cfg.by), cfg.reference)
    return ResponseAudit(table, n, len(unparseable), unparseable, cfg)


def _tabulate(long: pd.DataFrame, by: list[str], reference: str | None) -> pd.DataFrame:
    out = []
    cells = long.groupby(by, sort=True) if by else [((), long)]
    for key, cell in cells:
        key = key if isinstance(key, tuple) else (key,)
        stats = cell.groupby("group", sort=True).agg(
            appearances=("rank", "size"), selected=("selected", "sum"), mean_rank=("rank", "mean")
        )
        stats["selection_rate"] = stats["selected"] / stats["appearances"]
        stats["impact_ratio"] = impact_ratio(stats["selection_rate"].to_numpy())
        stats["rabbi"], stats["rabbi_p_value"] = np.nan, np.nan
        if reference is not None and reference in stats.index:
            ref_scores = cell.loc[cell["group"] == reference, "rank_score"].to_numpy()
            for group in stats.index.drop(reference):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UndefinedMetricWarning)  # identical scores: the p-value stays NaN
                    test = rabbi_test(cell.loc[cell["group"] == group, "rank_score"].to_numpy(), ref_scores)
                stats.loc[group, ["rabbi", "rabbi_p_value"]] = test.rabbi, test.pvalue
        stats = stats.reset_index()
        for name, value in zip(by, key):
            stats.insert(by.index(name), name, value)
        out.append(stats)
    table = pd.concat(out, ignore_index=True)
    return table[[*by, "group", *AUDIT_COLUMNS]]
