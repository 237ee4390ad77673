"""``folkscope prompts``: render a task's prompts to inspect, to JSONL, or as a Hugging Face dataset.

The prompt flags are shared with ``folkscope run`` / ``run_acs_benchmark``:
:func:`add_prompt_arguments` adds them to any parser and
:func:`prompt_config_from_args` turns the parsed namespace into a
:class:`~folkscope.prompting.PromptConfig` (checked before any data or model
is loaded). Help texts are the config fields' documentation.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from folkscope.cli.data_args import add_data_source_arguments, data_options, parse_subsampling
from folkscope.errors import ConfigError
from folkscope.prompting.config import FewShotConfig, PromptConfig, field_doc
from folkscope.prompting.variations import parse_variations
from folkscope.tasks.task import WORDINGS

__all__ = ["DESCRIPTION", "add_arguments", "add_prompt_arguments", "prompt_config_from_args", "register", "run"]

DESCRIPTION = (
    "Render the prompts of a task's rows exactly as a model would get them: print a few, write them "
    "as JSONL (one line per row and answer ordering), or export them as a Hugging Face dataset."
)


def _pc(name: str) -> str:
    return field_doc(PromptConfig, name).replace("%", "%%")  # argparse %-formats help strings


def _fs(name: str) -> str:
    return field_doc(FewShotConfig, name).replace("%", "%%")


def add_prompt_arguments(parser: argparse.ArgumentParser | Any) -> None:
    """Add the prompt flags of folktexts' "Configuring prompts" to ``parser`` (or an argument group).

    Flags: --numeric-risk-prompting, --cot-prompting, --enable-thinking,
    --few-shot, --reuse-few-shot-examples, --compose-few-shot-examples,
    --example-order, --few-shot-hide-question, --variation, --use-chat-template,
    --system-prompt, --chat-prompt, --dont-correct-order-bias. ``--seed``
    (used for few-shot draws) is left to the command.
    """
    parser.add_argument("--numeric-risk-prompting", action="store_true", help=_pc("numeric_risk_prompting"))
    parser.add_argument("--cot-prompting", action="store_true", help=_pc("cot_prompting"))
    parser.add_argument("--enable-thinking", action="store_true", help=_pc("enable_thinking"))
    parser.add_argument("--few-shot", type=int, default=None, metavar="N", help=_fs("n_shots"))
    parser.add_argument("--reuse-few-shot-examples", action="store_true", help=_fs("reuse_examples"))
    parser.add_argument("--compose-few-shot-examples", default=None, metavar="random|balanced|C0,C1", help=_fs("composition"))
    parser.add_argument("--example-order", default=None, metavar="I,J,...", help=_fs("example_order"))
    parser.add_argument("--few-shot-hide-question", action="store_true", help=_fs("hide_question"))
    parser.add_argument(
        "--variation",
        nargs="*",
        action="extend",
        default=None,
        metavar="KEY=VALUE",
        help="prompt variations as key=value pairs (keys: format, connector, granularity, order, "
        "custom_prompt_prefix, custom_prompt_suffix, show_question), e.g. --variation format=bullet connector==",
    )
    parser.add_argument("--use-chat-template", action="store_true", help=_pc("use_chat_template"))
    parser.add_argument("--system-prompt", default=None, help=_pc("system_prompt"))
    parser.add_argument("--chat-prompt", default=None, help=_pc("chat_prompt"))
    parser.add_argument(
        "--dont-correct-order-bias",
        action="store_true",
        help="ask each question in the task's own answer order only (no averaging over orderings)",
    )


def prompt_config_from_args(args: argparse.Namespace) -> PromptConfig:
    """Build the :class:`PromptConfig` of parsed prompt flags (see :func:`add_prompt_arguments`).

    Raises
    ------
    ConfigError
        For invalid values or combinations, and for few-shot sub-flags given
        without ``--few-shot``.
    """
    few_shot = None
    n_shots = getattr(args, "few_shot", None)
    sub_flags = {
        "--reuse-few-shot-examples": getattr(args, "reuse_few_shot_examples", False),
        "--compose-few-shot-examples": getattr(args, "compose_few_shot_examples", None) is not None,
        "--example-order": getattr(args, "example_order", None) is not None,
        "--few-shot-hide-question": getattr(args, "few_shot_hide_question", False),
    }
    if n_shots is None or n_shots == 0:
        given = [flag for flag, on in sub_flags.items() if on]
        if given:
            raise ConfigError(
                f"{', '.join(given)} only apply to few-shot prompting; add --few-shot N or drop them",
                parameter="few_shot",
                value=given,
            )
    else:
        few_shot = FewShotConfig(
            n_shots=n_shots,
            reuse_examples=bool(getattr(args, "reuse_few_shot_examples", False)),
            composition=getattr(args, "compose_few_shot_examples", None) or "random",
            example_order=getattr(args, "example_order", None),
            hide_question=bool(getattr(args, "few_shot_hide_question", False)),
            seed=42 if getattr(args, "seed", None) is None else int(args.seed),
        )
    variations = parse_variations(getattr(args, "variation", None) or [])
    return PromptConfig(
        numeric_risk_prompting=bool(getattr(args, "numeric_risk_prompting", False)),
        cot_prompting=bool(getattr(args, "cot_prompting", False)),
        enable_thinking=bool(getattr(args, "enable_thinking", False)),
        use_chat_template=bool(getattr(args, "use_chat_template", False)),
        system_prompt=getattr(args, "system_prompt", None),
        chat_prompt=getattr(args, "chat_prompt", None),
        few_shot=few_shot,
        correct_order_bias=not getattr(args, "dont_correct_order_bias", False),
        **variations,
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of ``folkscope prompts``."""
    data = parser.add_argument_group("data")
    data.add_argument("--task", default="ACSIncome", help="task name (ACS* tasks download PUMS data; NIST* work offline)")
    data.add_argument("--data-dir", default=None, help="root folder of downloaded survey data")
    data.add_argument("--wording", choices=WORDINGS, default="folktexts",
                      help="ACS tasks: folktexts 0.7.1's prompts (byte for byte) or the Census codebook's labels")
    data.add_argument("--split", default="test", choices=("train", "val", "test"), help="split whose rows are rendered")
    data.add_argument("--subsampling", type=parse_subsampling, default=None, help="fraction (0.1) or count (500) of rows per split")
    add_data_source_arguments(data)
    data.add_argument("--seed", type=int, default=42, help="seed of the split, subsampling and few-shot draws")
    data.add_argument("--use-feature-subset", default=None, help="comma-separated features to show instead of the task's")
    data.add_argument(
        "--use-population-filter", action="append", default=None, metavar="COL=VALUE",
        help="extra population filter such as 'SEX=2' (repeatable)",
    )  # fmt: skip
    add_prompt_arguments(parser.add_argument_group("prompt"))
    out = parser.add_argument_group("output")
    out.add_argument("--output", default=None, help="write JSONL here: one line per row and answer ordering")
    out.add_argument("--hf-dataset", default=None, metavar="DIR", help="export train/test prompts as a Hugging Face dataset")
    out.add_argument("--hf-splits", default="train,test", help="splits for --hf-dataset (comma-separated)")
    out.add_argument("--tokenizer", default=None, help="render chat prompts with this tokenizer's chat template")
    out.add_argument("--show", type=int, default=1, metavar="N", help="without --output/--hf-dataset: print N rows")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("prompts", help="render prompts to inspect or export them", description=DESCRIPTION)
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from folkscope.data import ACSDataset
    from folkscope.prompting import export_hf_dataset, load_tokenizer, render_chat, render_dataset, write_prompts_jsonl
    from folkscope.tasks import get_task

    config = prompt_config_from_args(args)  # invalid flags fail before any data is read
    task = get_task(args.task).with_wording(args.wording)
    if args.use_feature_subset:
        task = task.with_features(args.use_feature_subset)
    if args.use_population_filter:
        task = task.with_filters(args.use_population_filter)
    if args.show < 0:
        raise ConfigError(f"--show must be >= 0, got {args.show}", parameter="show", value=args.show)
    tokenizer = load_tokenizer(args.tokenizer) if args.tokenizer else None  # a bad name fails before any data is read
    dataset = ACSDataset.make_from_task(
        task, cache_dir=args.data_dir, seed=args.seed, subsampling=args.subsampling, **data_options(args)
    )
    batch = render_dataset(dataset, config, split=args.split)
    print(f"# task {task.name}, split {args.split}: {len(batch)} rows x {batch.n_slots} prompt(s); config {config.name}", file=sys.stderr)
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
                    head += " (" + ", ".join(f"{l}={lab}" for l, lab in zip(ordering.letters, ordering.labels)) + ")"
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
