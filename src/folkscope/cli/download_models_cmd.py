"""``folkscope download-models``: fetch hub models once, for offline runs later."""

from __future__ import annotations

import argparse

DESCRIPTION = (
    "Download Hugging Face models (or prepare the bundled default model) so later runs work offline. "
    "Without --save-dir models go to the standard Hugging Face cache, where --model ORG/NAME finds them."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", action="append", required=True, help="hub id (repeatable), or 'default'")
    parser.add_argument("--save-dir", default=None, help="also copy each model to SAVE_DIR/ORG--NAME")
    parser.add_argument("--revision", default=None, help="branch, tag or commit to fetch")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("download-models", help="pre-fetch models for offline use", description=DESCRIPTION)
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from folkscope.engine.models import download_models
    from folkscope.paths import check_writable_dir

    if args.save_dir is not None:
        check_writable_dir(args.save_dir, flag="--save-dir", what="models")
    for model, folder in zip(args.model, download_models(args.model, args.save_dir, revision=args.revision)):
        print(f"{model}: {folder}")
    return 0
