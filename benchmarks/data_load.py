"""Time loading about 3.2 million ACS person records from folkscope's parquet cache.

The 2018 1-year ACS holds about 3.2 million person records; the target is to
load them from the local cache in at most 10 s and 4 GiB peak memory on 2 CPU
cores (``shared/spec/performance.md``). No network is used: the benchmark
resamples the 10 real rows bundled with folkscope into PUMS-shaped person
files, places them in a cache folder as ``csv_p{state}.zip`` archives and
lets :func:`folkscope.data.pums.download_pums` convert them exactly as it
converts Census downloads. That build runs once and is not timed.

Two layouts are timed: one parquet holding every row, and the real
all-states layout (51 per-state parquets, concatenated by
:func:`~folkscope.data.pums.load_pums`). Building and each measurement run in
their own child process, and this parent imports only the standard library,
because ``ru_maxrss`` survives fork and exec: a child of a large parent would
report the parent's peak, not the loader's.

Usage::

    .venv/bin/python benchmarks/data_load.py [--cache-dir DIR] [--rows N]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

TARGET_SECONDS = 10.0
TARGET_GIB = 4.0
YEAR, HORIZON = 2018, "1-Year"
# Never reached: the archives are already in the cache; this only guarantees
# that a bug cannot send the benchmark to census.gov.
UNREACHABLE = "http://127.0.0.1:9"
FEATURES = ["AGEP", "COW", "SCHL", "MAR", "OCCP", "POBP", "RELP", "WKHP", "SEX", "RAC1P"]


def resampled_people(rows: int, seed: int = 0) -> pd.DataFrame:
    """``rows`` PUMS-shaped person records drawn from the bundled real rows."""
    import numpy as np
    import pandas as pd

    text = (files("folkscope") / "data" / "resources" / "acs_income_10rows.csv").read_text(encoding="utf-8")
    sample = pd.read_csv(io.StringIO(text), index_col=0)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(sample), rows)
    rich = sample["PINCP>50000"].to_numpy()[pick].astype(bool)
    numbers = np.arange(1, rows + 1).astype(str)
    frame = pd.DataFrame(
        {
            "RT": "P",
            "SERIALNO": np.char.add("2018HU", np.char.zfill(numbers, 9)),
            "SPORDER": rng.integers(1, 8, rows),
            "PUMA": rng.integers(100, 11000, rows),
            "PWGTP": rng.integers(1, 900, rows),
            **{name: sample[name].to_numpy()[pick].astype(np.int64) for name in FEATURES},
            "JWMNP": np.where(rng.random(rows) < 0.5, rng.integers(1, 150, rows).astype(float), np.nan),
            "PINCP": np.where(rich, rng.integers(50_001, 400_000, rows), rng.integers(-5_000, 50_001, rows)),
        }
    )
    frame["JWMNP"] = frame["JWMNP"].astype("Int64")  # blank cells, as in the Census files
    return frame


def write_archive(folder: Path, abbr: str, people: pd.DataFrame) -> None:
    """Store ``people`` as the Census would: ``csv_p{abbr}.zip`` holding ``psam_p{fips}.csv``."""
    from folkscope.data.pums import state_fips

    fips = state_fips(abbr)
    people = people.assign(ST=fips)
    tmp = folder / f"csv_p{abbr.lower()}.zip.tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        with zf.open(f"psam_p{fips}.csv", "w") as fh:
            people.to_csv(io.TextIOWrapper(fh, encoding="utf-8", newline=""), index=False, lineterminator="\n")
    os.replace(tmp, folder / f"csv_p{abbr.lower()}.zip")


def build(root: Path, states: list[str], rows: int) -> float:
    """Build the parquet cache once; return the seconds spent (0 when it existed)."""
    import numpy as np

    from folkscope.data.pums import download_pums, load_pums
    from folkscope.errors import DownloadError

    try:
        load_pums(states, YEAR, HORIZON, root, columns=["ST"], download=False)
        return 0.0
    except DownloadError:
        pass
    start = time.perf_counter()
    folder = root / "pums" / str(YEAR) / HORIZON
    folder.mkdir(parents=True, exist_ok=True)
    people = resampled_people(rows)
    for abbr, part in zip(states, np.array_split(np.arange(rows), len(states))):
        write_archive(folder, abbr, people.iloc[part])
    download_pums(states, YEAR, HORIZON, root, base_url=UNREACHABLE, progress=False)
    return time.perf_counter() - start


def measure(root: Path, states: list[str]) -> dict[str, float]:
    """Load every cached state as the toolkit does, timing only the load."""
    from folkscope.data.pums import load_pums

    start = time.perf_counter()
    frame = load_pums(states, YEAR, HORIZON, root, download=False)
    seconds = time.perf_counter() - start
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    return {"seconds": seconds, "peak_gib": peak_gib, "rows": len(frame), "columns": frame.shape[1]}


def in_child(mode: str, root: Path, states: list[str], rows: int) -> dict[str, float]:
    """Run ``build`` or ``measure`` in a fresh interpreter; return its JSON answer."""
    command = [sys.executable, __file__, f"--{mode}", str(root), "--rows", str(rows), *states]
    result = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(result.stdout)


def all_states() -> list[str]:
    # The parent must not import folkscope (pandas): read the list in a child.
    command = [sys.executable, "-c", "from folkscope.data.pums import default_states; print(*default_states())"]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()


def report(label: str, result: dict[str, float]) -> str:
    ok = result["seconds"] <= TARGET_SECONDS and result["peak_gib"] <= TARGET_GIB
    return (
        f"{label:<22} {int(result['rows']):>9,} rows x {int(result['columns'])} cols  "
        f"load {result['seconds']:6.2f} s (target <= {TARGET_SECONDS:.0f} s)  "
        f"peak RSS {result['peak_gib']:5.2f} GiB (target <= {TARGET_GIB:.0f} GiB)  {'OK' if ok else 'MISSED'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "folkscope-bench-data-load")
    parser.add_argument("--rows", type=int, default=3_200_000)
    parser.add_argument("--build", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("states", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        print(json.dumps({"seconds": build(args.build, args.states, args.rows)}))
        return
    if args.measure:
        print(json.dumps(measure(args.measure, args.states)))
        return
    states = all_states()
    layouts = {"1 parquet (CA)": ["CA"], f"{len(states)} state parquets": states}
    print(f"folkscope data-load benchmark: {os.cpu_count()} CPU cores, cache {args.cache_dir}")
    for index, (label, names) in enumerate(layouts.items()):
        root = args.cache_dir / f"{args.rows}-rows-layout{index}"
        built = in_child("build", root, names, args.rows)["seconds"]
        if built:
            print(f"  built {label} cache in {built:.1f} s (not timed)")
        print(report(label, in_child("measure", root, names, args.rows)))


if __name__ == "__main__":
    main()
