"""Import lm-eval's ``--log_samples`` output: its log-likelihoods become an ordinary folkscope run of the exported command.

The exported task folder says which command it came from; the log says what
the model answered to each of its questions. The import checks that the log
answers every question of the task, with the contexts exactly as exported
(no few-shot examples, chat template or system instruction added), writes
the answers folder the :mod:`replay backend <folkscope.engine.backends.replay>`
serves, and runs the same command on it. Every number after that is the
part's own: variant merging, order-bias correction over the orderings, the
metrics with their intervals, the caveats, the page.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from folkscope.engine.backends.replay import ANSWERS_FILE, MODEL_FILE
from folkscope.errors import ConfigError, DataError
from folkscope.lmeval.commands import run_command
from folkscope.lmeval.samples import LoggedRun, find_samples, read_run
from folkscope.lmeval.tasks import DOCS_FILE, META_FILE

__all__ = ["ANSWERS_DIR", "ImportedRun", "import_samples", "read_task"]

#: where answers folders go under the results folder (no manifest: the leaderboard passes over them)
ANSWERS_DIR = "lm-eval-answers"


@dataclass(frozen=True)
class ImportedRun:
    """What :func:`import_samples` made.

    Attributes
    ----------
    folder : Path
        The run folder, as the command makes it with a model.
    answers : Path
        The answers folder the run was replayed from.
    model : str
    command : tuple of str
        The command that ran (with ``--inference-backend replay``).
    """

    folder: Path
    answers: Path
    model: str
    command: tuple[str, ...]


def read_task(task_dir: str | Path) -> tuple[dict, list[tuple[str, tuple[str, ...]]]]:
    """An exported task folder's metadata and its questions (context, choices)."""
    folder = Path(task_dir)
    meta_path = folder / META_FILE
    if not meta_path.is_file():
        inside = sorted(p.parent for p in folder.glob(f"*/{META_FILE}")) if folder.is_dir() else []
        hint = f" (it holds {', '.join(p.name for p in inside)}: pass one of them)" if inside else ""
        raise ConfigError(
            f"--task-dir {folder} is not a task folder written by folkscope lm-eval export (no {META_FILE}){hint}",
            parameter="task_dir",
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        docs = [json.loads(line) for line in (folder / DOCS_FILE).read_text(encoding="utf-8").splitlines() if line]
        items = [(str(d["context"]), tuple(str(c) for c in d["choices"])) for d in docs]
        command, task = [str(a) for a in meta["command"]], str(meta["task"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{folder} is not a readable exported task ({exc}); export it again") from None
    return {**meta, "command": command, "task": task}, items


def _pick_log(samples: Sequence[str | Path], task: str) -> LoggedRun:
    files = find_samples(samples, task)
    if not files:
        raise ConfigError(
            f"no samples_{task}_*.jsonl under {', '.join(str(s) for s in samples)}; run lm_eval on the task with "
            "--log_samples --output_path DIR and pass DIR",
            parameter="samples",
        )
    if len(files) > 1:
        raise ConfigError(
            f"{len(files)} logs of {task} found ({', '.join(str(f) for f in files[:3])}...); pass the one to import",
            parameter="samples",
        )
    return read_run(files[0], task)


def _check_settings(log: LoggedRun) -> None:
    changed = [
        what
        for what, value in (
            ("--num_fewshot", log.settings.get("num_fewshot") or 0),
            ("--apply_chat_template", log.settings.get("chat_template")),
            ("--system_instruction", log.settings.get("system_instruction")),
        )
        if value
    ]
    if changed:
        raise ConfigError(
            f"{log.samples} was run with {', '.join(changed)}, which changes the exported contexts; run lm_eval on "
            "the task without them",
            parameter="samples",
        )


def _answers_table(log: LoggedRun, items: Sequence[tuple[str, tuple[str, ...]]]) -> pd.DataFrame:
    """The logged answers to the task's questions; every question must be answered exactly as exported."""
    missing = [(c, k) for c, ks in items for k in ks if (c, k) not in log.answers]
    if missing:
        asked = sum(len(ks) for _, ks in items)
        raise DataError(
            f"{log.samples} answers {asked - len(missing)} of the task's {asked} (context, choice) pairs; the rest "
            "are missing or their contexts differ from the export (lm_eval's --limit, few-shot examples, a "
            "description, or another export of the task)"
        )
    rows = [(c, k, log.answers[(c, k)]) for c, ks in items for k in ks]
    return pd.DataFrame(rows, columns=["context", "continuation", "logprob"])


def import_samples(
    parser: argparse.ArgumentParser,
    samples: Sequence[str | Path],
    task_dir: str | Path,
    results_dir: str | Path,
    *,
    model_name: str | None = None,
    say: Callable[[str], None] | None = None,
) -> ImportedRun:
    """Replay an lm-eval log of an exported task as the part's run; returns the run folder.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The ``folkscope`` parser (:func:`folkscope.cli.main.build_parser`).
    samples : sequence of path
        lm-eval's ``--output_path`` folder(s) or the task's ``samples_*.jsonl`` file.
    task_dir : path
        The task folder ``folkscope lm-eval export`` wrote.
    results_dir : path
        Where the run folder goes (and the answers folder, under ``lm-eval-answers/``).
    model_name : str, optional
        The model's name in the run folder; default: lm-eval's results file's
        model (a path's last part).
    say : callable, optional
        Told, before the run starts, what is replayed from where (the CLI prints it).

    Raises
    ------
    ConfigError
        No log (or several) of the task, a log made with settings that change
        the contexts, or no model name to be found.
    DataError
        A malformed log, or one that does not answer every question of the task.
    """
    meta, items = read_task(task_dir)
    log = _pick_log(samples, meta["task"])
    _check_settings(log)
    name = model_name or log.model
    if not name:
        raise ConfigError(
            f"no results_*.json beside {log.samples} names the model; pass --model-name", parameter="model_name"
        )
    table = _answers_table(log, items)
    body = table.to_json(orient="records", force_ascii=False).encode("utf-8")
    digest = hashlib.sha256(body + name.encode("utf-8")).hexdigest()[:12]
    answers = Path(results_dir) / ANSWERS_DIR / f"{meta['task']}-{digest}"
    answers.mkdir(parents=True, exist_ok=True)
    table.to_parquet(answers / ANSWERS_FILE, index=False)
    (answers / MODEL_FILE).write_text(
        json.dumps(
            {"name": name, "source": f"lm-evaluation-harness log {log.samples.name}", "task": meta["task"]},
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    command = (
        *meta["command"],
        "--inference-backend",
        "replay",
        "--model",
        str(answers),
        "--no-cache",
        "--results-dir",
        str(results_dir),
    )
    if say is not None:
        if meta.get("context_size") and log.settings.get("max_length") not in (None, meta["context_size"]):
            say(
                f"note: lm-eval ran with max_length {log.settings['max_length']}, the exported command cuts prompts "
                f"at {meta['context_size']} tokens: prompts longer than the shorter of the two were cut differently "
                f"(rerun lm_eval with max_length={meta['context_size']} in --model_args to match)"
            )
        say(f"replaying {len(table)} log-likelihoods of {name} from {log.samples} (answers folder {answers})")
    folder, _ = run_command(parser, command, quiet=False)
    return ImportedRun(folder, answers, name, command)
