"""``folkscope data``: download and cache Census PUMS files, or describe the bundled rows."""

from __future__ import annotations

import argparse

from folkscope.data.bundled import BUNDLED


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("data", help="download ACS PUMS data or list bundled data")
    actions = parser.add_subparsers(dest="data_action", metavar="ACTION")
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
