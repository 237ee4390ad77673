"""Rebuild the bundled NIST ACS excerpt parquet files from ../shared/data.

Run from the repository root: ``python scripts/build_bundled_data.py [SRC_DIR]``.
The CSVs use ``N`` for "not applicable"; it becomes a null. Integer codes get
the smallest nullable integer type that holds them, so the shipped files stay
small and load fast. ``ST`` (state FIPS code) is derived from the ``PUMA``
prefix and ``row_id`` keeps each record's line number in the source file, so
results can always be traced back to the published rows.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

SRC = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/data/nist-acs-excerpts")
DEST = Path("src/folkscope/data/resources")
FILES = {"national2019.csv.gz": "nist_national2019.parquet", "ma2019.csv.gz": "nist_ma2019.parquet"}
FLOAT_COLUMNS = {"DENSITY"}
STRING_COLUMNS = {"PUMA"}


def convert(src: Path) -> pd.DataFrame:
    raw = pd.read_csv(src, dtype=str, na_values=["N"], keep_default_na=False)
    out = pd.DataFrame({"row_id": pd.Series(range(len(raw)), dtype="int32")})
    for col in raw.columns:
        if col in STRING_COLUMNS:
            out[col] = raw[col].astype("category")
        elif col in FLOAT_COLUMNS:
            out[col] = raw[col].astype("float32")
        else:
            values = pd.to_numeric(raw[col]).round().astype("Int64")
            top = max(abs(int(values.min())), abs(int(values.max())))
            kind = "Int8" if top < 2**7 else "Int16" if top < 2**15 else "Int32"
            out[col] = values.astype(kind)
    out.insert(2, "ST", raw["PUMA"].str.slice(0, 2).astype("int8"))
    return out


def main() -> None:
    for name, target in FILES.items():
        frame = convert(SRC / name)
        frame.to_parquet(DEST / target, index=False, compression="zstd")
        print(f"{target}: {len(frame)} rows, {frame.shape[1]} columns")


if __name__ == "__main__":
    main()
