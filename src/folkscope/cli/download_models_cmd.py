"""``folkscope download-models``: fetch hub models once, for offline runs later."""

from __future__ import annotations

import argparse
from pathlib import Path

DESCRIPTION = (
    "Download Hugging Face models (or prepare the bundled default model) so later runs work offline. "
    "Without --save-dir models go to the standard Hugging Face cache, where --model ORG/NAME finds them."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", action="append", required=True, help="hub id (repeatable), or 'default'")
    parser.add_argument("--save-dir", default=None, help="also copy each model to SAVE_DIR/ORG--NAME")
    parser.add_argument("--revision", default=None, help="branch, tag or commit to fetch")
    parser.add_argument(
        "--tmp-cache-dir",
        default=None,
        metavar="DIR",
        help="Hugging Face cache to download into before copying to --save-dir (folktexts' flag; default: the standard cache)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("download-models", help="pre-fetch models for offline use", description=DESCRIPTION)
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from folkscope.engine.models import download_models
    from folkscope.errors import ConfigError
    from folkscope.paths import check_writable_dir

    if args.tmp_cache_dir is not None and args.save_dir is None:
        raise ConfigError(
            "--tmp-cache-dir is where models are downloaded before they are copied to --save-dir, and later runs do not "
            "look there; add --save-dir DIR (or drop --tmp-cache-dir to use the standard Hugging Face cache)",
            parameter="tmp_cache_dir",
            value=args.tmp_cache_dir,
        )
    for flag, folder, what in (
        ("--save-dir", args.save_dir, "models"),
        ("--tmp-cache-dir", args.tmp_cache_dir, "downloads"),
    ):
        if folder is not None:
            check_writable_dir(folder, flag=flag, what=what)
    cache_dir = None if args.tmp_cache_dir is None else Path(args.tmp_cache_dir).expanduser()
    downloaded = download_models(args.model, args.save_dir, revision=args.revision, cache_dir=cache_dir)
    for model, folder in zip(args.model, downloaded):
        print(f"{model}: {folder}")
    return 0
