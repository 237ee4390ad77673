"""Real survey rows shipped inside the package, so everything runs offline.

- ``nist-national`` / ``nist-ma``: the NIST ACS Data Excerpts (2019 1-year
  PUMS person records, 24 columns, 27,253 and 7,634 rows). Public-domain
  Census data released by NIST; see ``resources/PROVENANCE.md``.
- ``acs-income-10``: 10 real ACSIncome rows in folktables format (MIT,
  from the folktexts test suite), used as a prompt and schema fixture.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

import pandas as pd

from folkscope.errors import ConfigError

__all__ = ["BUNDLED", "load_bundled", "nist_data_dictionary"]

#: name -> (file in data/resources, survey year, short description)
BUNDLED: dict[str, tuple[str, int, str]] = {
    "nist-national": ("nist_national2019.parquet", 2019, "NIST ACS excerpt, 20 PUMAs in 16 states, 27,253 persons"),
    "nist-ma": ("nist_ma2019.parquet", 2019, "NIST ACS excerpt, Massachusetts, 7,634 persons"),
    "acs-income-10": ("acs_income_10rows.csv", 2018, "10 real ACSIncome rows (folktexts test fixture)"),
}


def _resource(name: str) -> Any:
    return resources.files("folkscope.data").joinpath("resources", name)


def load_bundled(name: str = "nist-national", *, columns: list[str] | None = None) -> pd.DataFrame:
    """Load a bundled table; ``row_id`` (the record's line in the source file) is the index.

    Parameters
    ----------
    name : str
        One of :data:`BUNDLED` (``nist-national``, ``nist-ma``, ``acs-income-10``).
    columns : list of str, optional
        Read only these columns (faster for parquet).

    Examples
    --------
    >>> df = load_bundled("nist-ma", columns=["AGEP", "PWGTP"])
    >>> len(df), int(df["PWGTP"].sum())
    (7634, 772691)
    """
    if name not in BUNDLED:
        raise ConfigError(
            f"unknown bundled dataset {name!r}; available: {', '.join(BUNDLED)}", parameter="excerpt", value=name
        )
    filename = BUNDLED[name][0]
    with resources.as_file(_resource(filename)) as path:
        if filename.endswith(".parquet"):
            wanted = None if columns is None else ["row_id", *[c for c in columns if c != "row_id"]]
            frame = pd.read_parquet(path, columns=wanted)
            return frame.set_index("row_id")
        frame = pd.read_csv(path, index_col=0)
    frame.index.name = "row_id"
    return frame if columns is None else frame[columns]


@lru_cache(maxsize=1)
def nist_data_dictionary() -> dict[str, Any]:
    """The NIST excerpt's code dictionary (column -> description and value labels)."""
    return json.loads(_resource("nist_data_dictionary.json").read_text("utf-8"))
