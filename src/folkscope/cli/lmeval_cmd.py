"""``folkscope lm-eval``: a run's questions as an lm-evaluation-harness task (``export``), and lm-eval's
``--log_samples`` output back as a folkscope run (``import``); the work is :mod:`folkscope.lmeval`'s."""

from __future__ import annotations

import argparse
import shlex

from folkscope.cli.parser import add_logger_level
from folkscope.errors import ConfigError

__all__ = ["register"]

DESCRIPTION = (
    "Score a model that runs under lm-evaluation-harness with folkscope's metrics: export a part's run as an "
    "lm-eval task, run it with lm_eval --log_samples, import the log as an ordinary run folder."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lm-eval",
        help="lm-evaluation-harness both ways: export a run as a task, import its log",
        description=DESCRIPTION,
    )
    parser.set_defaults(func=lambda _args: parser.print_help() or 2)
    commands = parser.add_subparsers(dest="lmeval_command", metavar="SUBCOMMAND")
    export = commands.add_parser(
        "export",
        help="write the questions of a part's run as an lm-eval task folder",
        description="Write the questions a part's run command asks as an lm-eval task folder "
        "(lm_eval --include_path DIR). Give the command after '--', without --model or --results-dir.",
        usage="folkscope lm-eval export [--output DIR] [--name NAME] -- PART run [FLAGS...]",
    )
    export.add_argument(
        "--output",
        default="lm-eval-tasks",
        metavar="DIR",
        help="the --include_path folder; the task goes into DIR/<name> (default: lm-eval-tasks)",
    )
    export.add_argument("--name", default=None, help="the lm-eval task name (default folkscope_<part>_<task>)")
    export.add_argument("command", nargs=argparse.REMAINDER, metavar="-- PART run FLAGS", help="the run command")
    add_logger_level(export)
    export.set_defaults(func=run_export)
    imports = commands.add_parser(
        "import",
        help="turn lm-eval's --log_samples output for an exported task into a folkscope run folder",
        description="Read lm_eval's --log_samples output for a task folkscope exported and run the exported "
        "command on those log-likelihoods: a run folder with every metric of the part.",
    )
    imports.add_argument("samples", nargs="+", metavar="SAMPLES", help="lm_eval's --output_path folder, or the file")
    imports.add_argument("--task-dir", required=True, help="the task folder folkscope lm-eval export wrote")
    imports.add_argument("--results-dir", default="results", help="where the run folder goes (default: results)")
    imports.add_argument("--model-name", default=None, help="the model's name (default: from lm-eval's results file)")
    add_logger_level(imports)
    imports.set_defaults(func=run_import)


def run_export(args: argparse.Namespace) -> int:
    from folkscope.cli.main import build_parser
    from folkscope.lmeval import export_task

    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise ConfigError("give the run command after '--', e.g. -- risk run --task ACSIncome --limit 50")
    task = export_task(build_parser(), command, args.output, name=args.name)
    print(
        f"answer: lm-eval task {task.name}: {task.documents} questions, {task.continuations} log-likelihoods to compute"
    )
    print(f"folder: {task.folder}")
    cut = f",max_length={task.context_size}" if task.context_size else ""
    print(
        f"next:   lm_eval --model hf --model_args pretrained=MODEL{cut} --include_path "
        f"{shlex.quote(str(task.folder.parent))} --tasks {task.name} --log_samples --output_path lm-eval-out"
    )
    print(f"then:   folkscope lm-eval import lm-eval-out --task-dir {shlex.quote(str(task.folder))}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from folkscope.cli.main import build_parser
    from folkscope.lmeval import import_samples

    import_samples(build_parser(), args.samples, args.task_dir, args.results_dir, model_name=args.model_name, say=print)
    return 0
