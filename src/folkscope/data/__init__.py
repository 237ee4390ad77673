"""Real survey data, for every part: Census PUMS downloads, bundled rows, task datasets, and the survey files.

- :mod:`~folkscope.data.pums`: ACS PUMS person files, downloaded and cached as parquet;
- :mod:`~folkscope.data.bundled`: the NIST ACS excerpts shipped with folkscope;
- :mod:`~folkscope.data.dataset`: a task's rows and splits (risk scores);
- :mod:`~folkscope.data.surveys`: the survey tables by name (``load_dataset``): the
  bundled ones (NIST ACS, ANES 1996, RAND HIE), your copies of licensed extracts
  (:mod:`~folkscope.data.user_data`) and the full public files
  (:mod:`~folkscope.data.public_datasets`, fetched and cached by
  :mod:`~folkscope.data.public_files`).

Every download goes through :func:`folkscope.data.download.download_file`
(resume, retries, verification). No model code lives here.
"""

from folkscope.data.bundled import BUNDLED, load_bundled, nist_data_dictionary
from folkscope.data.dataset import ACSDataset, Dataset
from folkscope.data.pums import download_pums, load_pums, pums_url

__all__ = [
    "ACSDataset",
    "BUNDLED",
    "Dataset",
    "download_pums",
    "load_bundled",
    "load_pums",
    "nist_data_dictionary",
    "pums_url",
]
