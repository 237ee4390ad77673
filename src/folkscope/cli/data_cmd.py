"""``folkscope data``: every dataset any part reads (``list``), the bundled rows, and the Census PUMS download."""

from __future__ import annotations

import argparse

from folkscope.data.bundled import BUNDLED


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("data", help="list every dataset, download ACS PUMS data, or list the bundled rows")
    actions = parser.add_subparsers(dest="data_action", metavar="ACTION")
    listing = actions.add_parser("list", help="every dataset a part reads: where it comes from and which part reads it")
    listing.set_defaults(func=run_list)
    dl = actions.add_parser("download", help="download PUMS person files into the parquet cache")
    dl.add_argument("--year", type=int, default=2018, help="ACS survey year (default 2018)")
    dl.add_argument("--horizon", default="1-Year", choices=["1-Year", "5-Year"], help="survey horizon")
    dl.add_argument("--states", default=None, help="comma-separated state abbreviations (default: all)")
    dl.add_argument("--data-dir", default=None, help="cache root (default $FOLKSCOPE_HOME/data)")
    dl.add_argument("--force", action="store_true", help="download again even if cached")
    dl.set_defaults(func=run_download)
    info = actions.add_parser("bundled", help="list the real survey rows shipped with folkscope")
    info.set_defaults(func=run_bundled)
    parser.set_defaults(func=run_bundled)


def run_download(args: argparse.Namespace) -> int:
    from folkscope.data.pums import download_pums
    from folkscope.paths import check_writable_dir

    if args.data_dir is not None:
        check_writable_dir(args.data_dir, flag="--data-dir", what="survey data")
    states = [s.strip() for s in args.states.split(",") if s.strip()] if args.states else None
    paths = download_pums(states=states, year=args.year, horizon=args.horizon, data_dir=args.data_dir, force=args.force)
    for path in paths:
        print(path)
    return 0


def run_bundled(args: argparse.Namespace) -> int:
    for name, (filename, year, about) in BUNDLED.items():
        print(f"{name:<14} {year}  {about}  ({filename})")
    return 0


def run_list(_args: argparse.Namespace) -> int:
    """Every dataset by where it comes from: shipped, downloaded on first use, or read from your copy."""
    from folkscope.data.public_datasets import PUBLIC_DATASETS
    from folkscope.data.surveys import DATASETS
    from folkscope.data.user_data import USER_DATASETS

    print("shipped with folkscope (offline):")
    readers = {"nist-national": "risk: the NIST* tasks; epidemiology: nist-acs"}
    for name, (filename, year, about) in BUNDLED.items():
        print(f"  {name:<16} {year}  {about}  ({filename}; {readers.get(name, f'Python: load_bundled({name!r})')})")
    for name in DATASETS:
        print(f"  {name:<16} epidemiology  (--dataset {name}; its tasks: folkscope epidemiology list --dataset {name})")
    print("  resumes          Bloomberg hiring-audit names, resumes and job descriptions (allocation --task resumes)")
    print("  colors, wordproblems, distributions  numeric templates (folkscope numeric list)")
    print("downloaded on first use (cached under --data-dir):")
    print(
        "  acs-pums         Census ACS PUMS person files, any year, state and horizon (risk tasks ACS*, folkscope data download)"
    )
    for name in PUBLIC_DATASETS:
        if name != "acs-pums":
            print(f"  {name:<16} epidemiology  (--dataset {name})")
    print("read from your copy (--data-dir or --data; never shipped, for licence reasons):")
    for name in USER_DATASETS:
        print(f"  {name:<16} epidemiology  (--dataset {name} --data-dir PATH)")
    print("  rabbi-resumes    the RABBI authors' resume_screening folder (allocation --task rabbi-resumes --data PATH)")
    print("  essays           ICNALE written essays with ratings (allocation --task essays --data PATH)")
    return 0
