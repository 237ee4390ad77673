"""``folkscope prompts``: render a task's prompts to inspect, to JSONL, or as a Hugging Face dataset.

The prompt and data flags are shared with ``folkscope run`` /
``run_acs_benchmark``: both are generated from the fields of
:class:`~folkscope.risk.BenchmarkConfig` (:mod:`folkscope.cli.config_flags`).
:func:`add_prompt_arguments` adds the prompt flags to any parser and
:func:`prompt_config_from_args` turns the parsed namespace into a
:class:`~folkscope.prompting.PromptConfig` through the same flat-to-nested
mapping as a run (checked before any data or model is loaded).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from folkscope._config import flag_named
from folkscope.cli.config_flags import add_config_flags, config_values
from folkscope.cli.data_args import add_data_source_arguments, data_options
from folkscope.errors import ConfigError
from folkscope.paths import check_folder_path, check_output_file
from folkscope.prompting.config import PromptConfig
from folkscope.risk.config import PROMPTS, BenchmarkConfig, prompt_config_of

__all__ = [
    "DATA_FIELDS",
    "DESCRIPTION",
    "add_arguments",
    "add_prompt_arguments",
    "check_few_shot_flags",
    "prompt_config_from_args",
    "register",
    "run",
]

DESCRIPTION = (
    "Render the prompts of a task's rows exactly as a model would get them: print a few, write them "
    "as JSONL (one line per row and answer ordering), or export them as a Hugging Face dataset."
)


#: the data flags ``prompts`` shares with ``run`` (fields of :class:`~folkscope.risk.BenchmarkConfig`)
DATA_FIELDS = ("wording", "subsampling", "seed", "feature_subset", "population_filter")
#: few-shot options that mean nothing without --few-shot, and their defaults
_FEW_SHOT_ONLY = {
    "reuse_few_shot_examples": False,
    "compose_few_shot_examples": "random",
    "example_order": None,
    "few_shot_hide_question": False,
    "few_shot_draw": "folktexts",
}


def add_prompt_arguments(parser: argparse.ArgumentParser | Any) -> None:
    """Add the prompt flags of folktexts' "Configuring prompts" to ``parser`` (or an argument group).

    They are generated from :class:`~folkscope.risk.BenchmarkConfig`'s prompt
    fields: --numeric-risk-prompting, --cot-prompting, --enable-thinking,
    --few-shot, --reuse-few-shot-examples, --compose-few-shot-examples,
    --example-order, --few-shot-hide-question, --few-shot-draw, --variation, --use-chat-template,
    --system-prompt, --chat-prompt, --dont-correct-order-bias. ``--seed``
    (used for few-shot draws) is left to the command.
    """
    add_config_flags(parser, BenchmarkConfig, only=(PROMPTS,))


def check_few_shot_flags(args: argparse.Namespace) -> None:
    """Few-shot sub-flags given without ``--few-shot`` are one clear error (they would silently do nothing)."""
    values = config_values(args, BenchmarkConfig, only=(PROMPTS,))
    if values["few_shot"]:
        return
    given = [flag_named(BenchmarkConfig, name) for name, default in _FEW_SHOT_ONLY.items() if values[name] != default]
    if given:
        raise ConfigError(
            f"{', '.join(given)} only apply to few-shot prompting; add --few-shot N or drop them",
            parameter="few_shot",
            value=given,
        )


def prompt_config_from_args(args: argparse.Namespace) -> PromptConfig:
    """Build the :class:`PromptConfig` of parsed prompt flags (see :func:`add_prompt_arguments`).

    Raises
    ------
    ConfigError
        For invalid values or combinations, and for few-shot sub-flags given
        without ``--few-shot``.
    """
    check_few_shot_flags(args)
    seed = getattr(args, "seed", None)
    values = config_values(args, BenchmarkConfig, only=(PROMPTS,))
    return prompt_config_of(values, seed=42 if seed is None else int(seed), warn_implied=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of ``folkscope prompts``."""
    data = parser.add_argument_group("data")
    data.add_argument(
        "--task", default="ACSIncome", help="task name (ACS* tasks download PUMS data; NIST* work offline)"
    )
    data.add_argument("--data-dir", default=None, help="root folder of downloaded survey data")
    data.add_argument("--split", default="test", choices=("train", "val", "test"), help="split whose rows are rendered")
    add_config_flags(data, BenchmarkConfig, only=DATA_FIELDS)
    add_data_source_arguments(data)
    add_prompt_arguments(parser.add_argument_group("prompt"))
    out = parser.add_argument_group("output")
    out.add_argument("--output", default=None, help="write JSONL here: one line per row and answer ordering")
    out.add_argument(
        "--hf-dataset",
        default=None,
        metavar="DIR",
        help="export train/test prompts as a Hugging Face dataset at DIR (datasets.load_from_disk(DIR)), with "
        "parquet/ files, prompt_config.json and a dataset card",
    )
    out.add_argument("--hf-splits", default="train,test", help="splits for --hf-dataset (comma-separated)")
    out.add_argument("--tokenizer", default=None, help="render chat prompts with this tokenizer's chat template")
    out.add_argument("--show", type=int, default=1, metavar="N", help="without --output/--hf-dataset: print N rows")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("prompts", help="render prompts to inspect or export them", description=DESCRIPTION)
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from folkscope.data import ACSDataset
    from folkscope.prompting import (
        export_hf_dataset,
        fit_chat_config,
        load_tokenizer,
        render_chat,
        render_dataset,
        write_prompts_jsonl,
    )
    from folkscope.tasks import get_task

    config = prompt_config_from_args(args)  # invalid flags fail before any data is read
    data = config_values(args, BenchmarkConfig, only=DATA_FIELDS)
    task = get_task(args.task).with_wording(data["wording"])
    if data["feature_subset"]:
        task = task.with_features(data["feature_subset"])
    if data["population_filter"]:
        task = task.with_filters(list(data["population_filter"]))
    if args.show < 0:
        raise ConfigError(f"--show must be >= 0, got {args.show}", parameter="show", value=args.show)
    if args.data_dir is not None:
        check_folder_path(args.data_dir, flag="--data-dir")
    if args.output is not None:  # where the prompts go is checked before any row is read
        check_output_file(args.output)
    if args.hf_dataset is not None:
        from folkscope.export import check_export_dir

        check_export_dir(args.hf_dataset, flag="--hf-dataset")  # new, empty or an earlier export
    tokenizer = load_tokenizer(args.tokenizer) if args.tokenizer else None  # a bad name fails before any data is read
    if tokenizer is not None:  # a template without a system role: as a run sends the prompts
        config = fit_chat_config(config, tokenizer)
    dataset = ACSDataset.make_from_task(
        task, cache_dir=args.data_dir, seed=data["seed"], subsampling=data["subsampling"], **data_options(args)
    )
    batch = render_dataset(dataset, config, split=args.split)
    print(
        f"# task {task.name}, split {args.split}: {len(batch)} rows x {batch.n_slots} prompt(s); config {config.name}",
        file=sys.stderr,
    )
    if args.output:
        n = write_prompts_jsonl(batch, args.output, split=args.split, tokenizer=tokenizer)
        print(f"wrote {n} prompts to {args.output}", file=sys.stderr)
    if args.hf_dataset:
        splits = [s.strip() for s in args.hf_splits.split(",") if s.strip()]
        export_hf_dataset(dataset, config, args.hf_dataset, splits=splits, tokenizer=tokenizer)
        print(f"exported splits {', '.join(splits)} to {args.hf_dataset}", file=sys.stderr)
    if not args.output and not args.hf_dataset:
        for i in range(min(args.show, len(batch))):
            rendered = batch[i]
            for o in range(rendered.n_slots):
                head = f"### row {rendered.row_id}, ordering {o}"
                if rendered.orderings:
                    ordering = rendered.orderings[o]
                    head += (
                        " ("
                        + ", ".join(f"{letter}={lab}" for letter, lab in zip(ordering.letters, ordering.labels))
                        + ")"
                    )
                print(head)
                prompt = rendered.to_prompt(o)
                if tokenizer is not None:
                    print(render_chat(prompt, tokenizer))
                elif isinstance(prompt, str):
                    print(prompt)
                else:
                    for message in prompt.messages:
                        print(f"[{message.role}]\n{message.content}")
                    print(f"[assistant prefill]\n{prompt.prefill}")
                print()
    return 0
