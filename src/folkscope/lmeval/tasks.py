"""Export a run's questions as an lm-evaluation-harness task folder (``lm_eval --include_path DIR``).

The questions are learned, not re-derived: the run command is run once on
the stand-in (fake) model inside :func:`folkscope.engine.recording.recorded_requests`,
so the task holds exactly the texts the part sends a model, for any part,
with every option the command took. Each distinct (context, candidates)
pair becomes one lm-eval document of a ``multiple_choice`` task whose
choices are the candidates as folkscope scores them (token variants such as
``"A"`` and ``" A"`` are separate choices, and ``target_delimiter`` is empty,
so lm-eval scores the very continuations folkscope does).

lm-eval's own metric for the task is ``bypass`` (its table shows no score):
the documents carry no gold answer, because folkscope's numbers (calibration,
order-bias-corrected risk scores, ...) come from the log-likelihoods, not
from an argmax. ``folkscope lm-eval import`` computes them from lm-eval's
``--log_samples`` output.

Folder layout (``DIR/<name>/``): ``<name>.yaml`` (the task), ``docs.jsonl``
(the documents), ``utils.py`` (loads them from beside itself, so the folder
can move), ``folkscope.json`` (the command, the part, the counts; the import
reads it) and ``README.md`` (how to run it and import the result).
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folkscope import __version__
from folkscope.engine.recording import recorded_requests
from folkscope.engine.requests import (
    ChatPrompt,
    GenerateRequest,
    NextTokenRequest,
    PrefixGroupRequest,
    ScoreRequest,
)
from folkscope.errors import ConfigError
from folkscope.lmeval.commands import check_command, run_command

__all__ = ["DOCS_FILE", "META_FILE", "ExportedTask", "export_task", "questions"]

DOCS_FILE = "docs.jsonl"
META_FILE = "folkscope.json"
#: the stand-in model the export runs the command on (its answers are thrown away)
_STAND_IN = ("--inference-backend", "fake", "--model", "lm-eval-export", "--no-cache")

_LOADER = '''"""Loads this task's documents for lm-evaluation-harness; written by `folkscope lm-eval export`."""

import json
from pathlib import Path

import datasets


def load_docs(**_metadata):
    """The documents beside this file, as the task's one split (lm-eval passes its metadata, unused here)."""
    path = Path(__file__).with_name("docs.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
'''


@dataclass(frozen=True)
class ExportedTask:
    """What :func:`export_task` wrote.

    Attributes
    ----------
    folder : Path
        The task folder (``DIR/<name>``); pass ``DIR`` to ``lm_eval --include_path``.
    name : str
        The lm-eval task name.
    part : str
    documents : int
        Questions (one lm-eval document each).
    continuations : int
        Log-likelihood requests lm-eval will run (documents times their choices).
    context_size : int or None
        Where the command cuts prompts (tokens); lm-eval's ``max_length`` should match.
    """

    folder: Path
    name: str
    part: str
    documents: int
    continuations: int
    context_size: int | None


def questions(requests: Sequence[Any]) -> list[tuple[str, tuple[str, ...]]]:
    """The distinct (context, candidates) pairs of recorded engine requests, in the order first asked.

    Raises
    ------
    ConfigError
        A request lm-eval's log-likelihood tasks cannot carry: a chat prompt
        (lm-eval applies its own template), a next-token distribution or a
        generation.
    """
    out: dict[tuple[str, tuple[str, ...]], None] = {}
    for req in requests:
        if isinstance(req, (NextTokenRequest, GenerateRequest)):
            what = "next-token distributions" if isinstance(req, NextTokenRequest) else "generated text"
            raise ConfigError(
                f"this run reads {what}, which an lm-eval log-likelihood task cannot carry; export a run that "
                "scores its answers (e.g. risk's default multiple-choice prompting)",
                parameter="command",
            )
        prompt = req.prefix if isinstance(req, PrefixGroupRequest) else req.prompt
        if isinstance(prompt, ChatPrompt):
            raise ConfigError(
                "this run sends chat prompts, and lm-eval applies its own chat template (or none), so the texts "
                "would differ; export it without the chat template (drop --chat or --use-chat-template; --no-chat where "
                "the part uses it by default)",
                parameter="command",
            )
        if isinstance(req, PrefixGroupRequest):
            for suffix in req.suffixes:
                out.setdefault((prompt + suffix, req.candidates), None)
        elif isinstance(req, ScoreRequest):
            out.setdefault((prompt, req.candidates), None)
    return list(out)


def _task_name(part: str, subject: str) -> str:
    """``folkscope_<part>_<subject>``, once (``numeric-colors`` -> ``folkscope_numeric_colors``)."""
    subject = subject.lower().removeprefix(f"{part}-")
    return "folkscope_" + re.sub(r"[^a-z0-9]+", "_", f"{part}_{subject}").strip("_")


def _yaml(name: str) -> str:
    # written by hand rather than through a YAML library: lm-eval's '!function' tag must stay a tag
    return (
        f"# lm-evaluation-harness task written by folkscope {__version__} (folkscope lm-eval export); see README.md\n"
        f"task: {name}\n"
        "custom_dataset: !function utils.load_docs\n"
        "test_split: test\n"
        "output_type: multiple_choice\n"
        "doc_to_text: context\n"
        "doc_to_choice: choices\n"
        "doc_to_target: target\n"
        '# choices are scored exactly as written (" A" and "A" are different continuations)\n'
        'target_delimiter: ""\n'
        "# no gold answers: folkscope computes its metrics from the --log_samples output\n"
        "metric_list:\n"
        "  - metric: bypass\n"
        "metadata:\n"
        "  version: 1.0\n"
    )


def _readme(
    name: str, part: str, command: Sequence[str], documents: int, continuations: int, context_size: int | None
) -> str:
    cut = (
        f"The command cuts prompts longer than {context_size} tokens to their last {context_size} (as folktexts "
        f"does); add `max_length={context_size}` to `--model_args` so lm-eval cuts them the same way.\n"
        if context_size
        else ""
    )
    return f"""# {name}: a folkscope {part} run as an lm-evaluation-harness task

Written by `folkscope lm-eval export` (folkscope {__version__}) from the command

    folkscope {" ".join(command)}

It holds the {documents} questions that run asks a model ({continuations} log-likelihood requests), one document
each: `context` is the exact prompt text, `choices` the continuations folkscope scores (token variants such
as "A" and " A" separately). lm-eval shows no score for this task (its metric is `bypass`): the
documents have no gold answers, and folkscope's numbers come from the log-likelihoods in its log.

Run it (no few-shot examples, no chat template, no system instruction: the contexts must stay as written;
add `add_bos_token=True` to `--model_args` when the model's tokenizer starts every text with a BOS token,
as folkscope's engine does for such models):

    lm_eval --model hf --model_args pretrained=MODEL{f",max_length={context_size}" if context_size else ""} \\
        --include_path PARENT_OF_THIS_FOLDER --tasks {name} \\
        --log_samples --output_path lm-eval-out

{cut}
Then compute folkscope's numbers (every metric of the part, order-bias correction included) from its log:

    folkscope lm-eval import lm-eval-out --task-dir THIS_FOLDER
"""


def export_task(
    parser: argparse.ArgumentParser, command: Sequence[str], out_dir: str | Path, *, name: str | None = None
) -> ExportedTask:
    """Write the questions ``command`` (``<part> run ...``) asks as an lm-eval task folder under ``out_dir``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The ``folkscope`` parser (:func:`folkscope.cli.main.build_parser`).
    command : sequence of str
        A part's run command without model or output flags, e.g.
        ``["risk", "run", "--task", "ACSIncome", "--limit", "50"]``.
    out_dir : path
        The ``--include_path`` folder; the task goes into ``out_dir/<name>``.
    name : str, optional
        The lm-eval task name; default ``folkscope_<part>_<subject>``.

    Raises
    ------
    ConfigError
        The command is not a part's run command, names a model or output
        flag, asks what a log-likelihood task cannot carry, or ``name`` is
        not a plain identifier.
    """
    part, argv = check_command(command)
    if name is not None and not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        raise ConfigError(f"--name must be letters, digits and _ (a letter first), got {name!r}", parameter="name")
    with tempfile.TemporaryDirectory(prefix="folkscope-lmeval-") as scratch:
        with recorded_requests() as asked:
            folder, _ = run_command(parser, [*argv, *_STAND_IN, "--results-dir", scratch], quiet=True)
        subject = folder.relative_to(scratch).parts[0]
    items = questions(asked)
    sizes = sorted({r.context_size for r in asked if getattr(r, "context_size", None) is not None})
    if not items:
        raise ConfigError(f"the command {' '.join(argv)!r} asked the model nothing", parameter="command")
    name = name or _task_name(part, subject)
    target = Path(out_dir) / name
    target.mkdir(parents=True, exist_ok=True)
    docs = [{"doc_id": i, "context": c, "choices": list(k), "target": 0} for i, (c, k) in enumerate(items)]
    continuations = sum(len(k) for _, k in items)
    (target / DOCS_FILE).write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    (target / f"{name}.yaml").write_text(_yaml(name), encoding="utf-8")
    (target / "utils.py").write_text(_LOADER, encoding="utf-8")
    meta = {
        "task": name,
        "part": part,
        "command": list(argv),
        "documents": len(docs),
        "continuations": continuations,
        "context_size": sizes[-1] if sizes else None,
        "folkscope_version": __version__,
    }
    (target / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    readme = _readme(name, part, argv, len(docs), continuations, sizes[-1] if sizes else None)
    (target / "README.md").write_text(readme, encoding="utf-8")
    return ExportedTask(target, name, part, len(docs), continuations, sizes[-1] if sizes else None)
