"""Survey tables by name, for any part: the bundled ones (offline), your copies of licensed extracts, the public files.

The bundled tables:

- ``nist-acs``: the NIST ACS 2019 national excerpt of the data layer (27,253
  people, weight PWGTP);
- ``anes96``: statsmodels' ANES 1996 subset (944 voters; its header names
  come quoted and are unquoted here);
- ``randhie``: statsmodels' RAND Health Insurance Experiment table (20,190
  person-years); ``health`` is derived from its three indicator columns
  (``hlthg``, ``hlthf``, ``hlthp``; none set means excellent, as the
  experiment coded self-rated health).

Examples
--------
>>> frame = load_dataset("anes96")
>>> len(frame), sorted(frame["vote"].unique().tolist())
(944, [0, 1])
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from folkscope.data import load_bundled
from folkscope.errors import ConfigError

__all__ = ["DATASETS", "load_dataset"]

_DATA = Path(__file__).with_name("resources") / "surveys"
#: the datasets the bundled tasks read
DATASETS = ("nist-acs", "anes96", "randhie")


@lru_cache(maxsize=4)
def _load(name: str) -> pd.DataFrame:
    if name == "nist-acs":
        return load_bundled("nist-national").reset_index()
    if name == "anes96":
        frame = pd.read_csv(_DATA / "anes96.csv.gz", sep="\t")
        return frame.rename(columns=lambda c: c.strip().strip("'\""))
    frame = pd.read_csv(_DATA / "randhie.csv.gz")
    frame["health"] = np.select(
        [frame["hlthg"] == 1, frame["hlthf"] == 1, frame["hlthp"] == 1], ["good", "fair", "poor"], default="excellent"
    )
    return frame


def load_dataset(name: str, *, data_dir: str | Path | None = None) -> pd.DataFrame:
    """The table of a dataset (a fresh copy: callers may modify it).

    Bundled datasets (:data:`DATASETS`) load offline; the GPL-packaged
    extracts (:data:`folkscope.data.user_data.USER_DATASETS`) are read
    from the user's copy under ``data_dir``, never bundled; the full public
    files (:data:`folkscope.data.public_datasets.PUBLIC_DATASETS`) are
    read from ``<data_dir>/epidemiology/<name>/`` (default data folder:
    :func:`folkscope.paths.data_home`), downloaded there first when missing.
    """
    from folkscope.data.public_datasets import PUBLIC_DATASETS
    from folkscope.data.user_data import USER_DATASETS

    if name in DATASETS:
        return _load(name).copy()
    if name in USER_DATASETS:
        return USER_DATASETS[name].load(data_dir)
    if name in PUBLIC_DATASETS:
        return PUBLIC_DATASETS[name].load(data_dir)
    known = ", ".join([*DATASETS, *USER_DATASETS, *PUBLIC_DATASETS])
    raise ConfigError(f"unknown survey dataset {name!r}; known: {known}", parameter="dataset", value=name)
