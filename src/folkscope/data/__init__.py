"""Real survey data: Census PUMS downloads with a parquet cache, bundled rows, task datasets.

No model code lives here.
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
