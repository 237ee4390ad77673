"""The terms of the data behind a run, for the dataset card: what a published export may and may not carry.

An exported run holds rows derived from its source data (risk scores per
person, the candidates' resume text, a survey's shares), so the card must
say under which terms that data came. The facts here restate the bundled
data's own records (``data/resources/PROVENANCE.md``,
``data/resources/surveys/PROVENANCE.md``, the Bloomberg ``NOTICE``, the
number-frequency ``PROVENANCE``); a run that records its data's licence in
its manifest (the allocation part does) is quoted as it recorded it. Data
folkscope knows nothing about (a user's own file, a downloaded public file)
gets a line saying so, never a guessed licence. Data with no licence at all
(the RABBI authors' resumes) is flagged: a card for it says the rows must
not be redistributed.

Examples
--------
>>> [t.name for t in data_terms("risk", {"source": "nist-national"})]
['NIST ACS 2019 excerpt']
>>> data_terms("allocation", {"source": "x", "licence": "none stated"})[0].unlicensed
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["DataTerms", "data_terms", "hub_licence"]

_NIST = (
    "NIST ACS 2019 excerpt",
    "public domain: ACS PUMS rows are U.S. Census Bureau data and the NIST excerpt is a work of the U.S. "
    "government (acknowledge NIST as the source)",
)
_PUMS = (
    "Census ACS PUMS",
    "public domain: U.S. Census Bureau Public Use Microdata Sample (cite the Census Bureau's ACS as the source)",
)
#: data source names as the runs record them -> (name, terms); from the bundled data's provenance files
_KNOWN: Mapping[str, tuple[str, str]] = {
    "nist-national": _NIST,
    "nist-ma": _NIST,
    "nist-acs": _NIST,
    "census-pums": _PUMS,
    "acs-pums": _PUMS,
    "acs-pums-2023": _PUMS,
    "anes96": (
        "ANES 1996 subset (statsmodels)",
        "public domain, as statsmodels' dataset notes state ('This is public domain.')",
    ),
    "randhie": (
        "RAND Health Insurance Experiment (statsmodels)",
        "public domain, as statsmodels' dataset notes state ('This is in the public domain.')",
    ),
}
_NUMBER_FREQUENCIES = (
    "number frequencies (wordfreq)",
    "CC-BY-SA 4.0 (derived from wordfreq by Robyn Speer); used for the frequency analysis in the metrics",
)
_UNKNOWN = "folkscope records no licence for it: check its publisher's terms before you publish rows derived from it"


@dataclass(frozen=True)
class DataTerms:
    """One source of a run's data and the terms it came under.

    Attributes
    ----------
    name : str
        The source, as a reader would name it.
    terms : str
        Its licence or terms, in one sentence.
    unlicensed : bool
        The data carries no licence at all: rows derived from it must not be redistributed.
    """

    name: str
    terms: str
    unlicensed: bool = False


def _names(data: Mapping[str, Any]) -> list[str]:
    """The data source names a manifest's data section records (``source``, ``dataset``, ``datasets``)."""
    names: list[str] = []
    for key in ("source", "dataset", "datasets"):
        value = data.get(key)
        if isinstance(value, str):
            names.append(value)
        elif isinstance(value, Sequence):
            names += [str(v) for v in value if isinstance(v, str)]
    return list(dict.fromkeys(names))


def data_terms(part: str, data: Mapping[str, Any] | None) -> list[DataTerms]:
    """The terms of every data source a run's manifest names (``part``: the run's part; ``data``: its data section)."""
    data = data or {}
    licence = data.get("licence") or data.get("license")
    if isinstance(licence, str):  # the part recorded the terms itself: quote them
        source = str(data.get("source") or data.get("task") or "the run's data")
        unlicensed = licence.lower().startswith(("none", "no licen", "no licens"))
        if unlicensed:
            licence += "; it carries no licence, so rows derived from it must not be redistributed"
        return [DataTerms(source, licence, unlicensed)]
    out: list[DataTerms] = []
    for name in _names(data):
        if name in _KNOWN:
            out.append(DataTerms(*_KNOWN[name]))
        elif name == "file":
            out.append(DataTerms(f"your file {data.get('path', '')}".strip(), _UNKNOWN))
        elif not (part == "numeric" and name == data.get("dataset")):  # numeric templates are folkscope's own
            out.append(DataTerms(name, _UNKNOWN))
    if part == "numeric":
        out.insert(0, DataTerms("numeric templates (folkscope)", "MIT, folkscope's own licence"))
        if data.get("frequency_table") == "bundled":
            out.append(DataTerms(*_NUMBER_FREQUENCIES))
    if not out:
        out.append(DataTerms("the run's data", _UNKNOWN))
    return list(dict.fromkeys(out))


def hub_licence(terms: Sequence[DataTerms]) -> str:
    """The card's ``license:`` value as the Hub spells it: ``unknown`` when a source has no licence, ``other``
    when the sources' terms are not one SPDX licence (public domain is not a licence the Hub lists)."""
    if any(t.unlicensed for t in terms):
        return "unknown"
    spdx = {t.terms.split(" ")[0].rstrip(",;").lower() for t in terms}
    return spdx.pop() if len(spdx) == 1 and spdx <= {"apache-2.0", "mit"} else "other"
