"""The cells of a study: one ordinary ``folkscope <part> run`` command each, checked and run by the command itself.

A cell is the command line a user would type (``folkscope risk run --task
NISTIncome --model default --subsampling 0.05 --results-dir ...``). Building
cells as command lines, not as part configs, is what keeps the study a thin
layer: every flag, default, check and error of the part applies unchanged,
``--dry-run`` can print each cell as a runnable command, and a cell run by
the study leaves the same run folder as the same command typed by hand.

Checking a plan parses every cell with the command's own parser and builds
its config (the checks a command makes before any data or model loads); the
first problem is one line naming the plan, the cell and the command's own
message. Running a cell calls the command's function in this process and
learns the folder it published from the runs layer
(:func:`folkscope.runs.published_runs`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from folkscope._names import did_you_mean
from folkscope.errors import FolkscopeError
from folkscope.registry import PARTS
from folkscope.runs import published_runs
from folkscope.study.plan import Plan, PlanError

__all__ = ["Cell", "CellResult", "check_cells", "expand", "run_cell"]

#: how every command's closing line starts (:func:`folkscope.report.terminal.closing_lines`)
ANSWER = "answer:"


@dataclass(frozen=True)
class Cell:
    """One run of a study: which part, model, task and settings, and the command that makes it."""

    index: int
    part: str
    model: str
    """The model's label in the plan."""
    task: str | None
    settings: Mapping[str, Any]
    argv: tuple[str, ...]
    """The ``folkscope`` arguments of the run (``risk run --task ...``)."""
    flags: tuple[str, ...] = ()
    """The part's own flags of the cell (its options and setting, no task, model or engine flags)."""

    def shape(self) -> tuple[str, str | None, tuple[str, ...]]:
        """What the cell asks, whatever the model: cells of one shape send the same prompts."""
        return (self.part, self.task, self.flags)

    @property
    def id(self) -> str:
        """A stable name of the cell, the key of its line in the study's ledger."""
        shown = ", ".join(f"{k}={_text(v)}" for k, v in sorted(self.settings.items())) or "defaults"
        return f"{self.part} | {_task_text(self.task)} | {self.model} | {shown}"

    def command(self) -> str:
        """The cell as a shell command line."""
        import shlex

        return "folkscope " + " ".join(shlex.quote(a) for a in self.argv)


@dataclass
class CellResult:
    """What running a cell left: its run folder, its one-line answer and everything it printed."""

    folder: Path
    answer: str | None
    output: str = field(repr=False, default="")


def _task_text(task: str | None) -> str:
    """A cell's task as a reader scans it: a list of tasks (``a,b,c``) by its first, last and count.

    >>> _task_text("acs_income_by_sex,acs_income_by_age,acs_tenure_by_age")
    'acs_income_by_sex ... acs_tenure_by_age (3 tasks)'
    """
    if task is None:
        return "default task"
    names = task.split(",")
    return task if len(names) == 1 else f"{names[0]} ... {names[-1]} ({len(names)} tasks)"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(map(_text, value))
    return str(value)


def _run_parser(parser: argparse.ArgumentParser, part: str) -> argparse.ArgumentParser:
    """The parser of ``folkscope <part> run``."""
    for name in (PARTS[part].commands[0], "run"):
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


def _flags(values: Mapping[str, Any], run_parser: argparse.ArgumentParser, plan: Plan, where: str) -> list[str]:
    """``{"subsampling": 0.05, "chat": False}`` as ``--subsampling 0.05 --no-chat``, each key checked against the command."""
    options = {o: a for a in run_parser._actions for o in a.option_strings}
    out: list[str] = []
    for key, value in values.items():
        flag = "--" + str(key).replace("_", "-")
        action = options.get(flag)
        if action is None:
            known = sorted(o[2:].replace("-", "_") for o in options if o.startswith("--") and o != "--help")
            raise PlanError(
                f"plan {plan.path}: {where}: {run_parser.prog} has no {flag}{did_you_mean(str(key), known)}; "
                f"see {run_parser.prog} --help"
            )
        if action.nargs == 0:  # a switch
            if not isinstance(value, bool):
                raise PlanError(f"plan {plan.path}: {where}: {key} is a switch; write {key} = true or false")
            if isinstance(action, argparse.BooleanOptionalAction):
                out.append(flag if value else "--no-" + flag[2:])
            elif value:
                out.append(flag)
            continue
        if isinstance(value, (Mapping, type(None))):
            raise PlanError(f"plan {plan.path}: {where}: {key} needs a value (text, a number or a list)")
        out += [flag, _text(value)]
    return out


def expand(plan: Plan, results_dir: str | Path, parser: argparse.ArgumentParser) -> list[Cell]:
    """Every cell of ``plan``, in the order a study runs them: part by part, then model, task and setting."""
    cells: list[Cell] = []
    for part in plan.parts:
        run_parser = _run_parser(parser, part.part)
        for model in plan.models:
            if part.part not in model.parts:
                continue
            engine = _flags(model.engine, run_parser, plan, f"model {model.label!r}")
            for task in part.tasks:
                for setting in part.settings:
                    where = f"[{part.part}] {task or 'default task'} with {model.label!r}"
                    flags = _flags({**part.options, **setting}, run_parser, plan, where)
                    argv = (
                        *PARTS[part.part].commands[:1],
                        "run",
                        *(("--task", task) if task else ()),
                        "--model",
                        model.model,
                        *engine,
                        *flags,
                        "--results-dir",
                        str(results_dir),
                    )
                    cells.append(
                        Cell(
                            index=len(cells),
                            part=part.part,
                            model=model.label,
                            task=task,
                            settings=dict(setting),
                            argv=argv,
                            flags=tuple(flags),
                        )
                    )
    return cells


def _parse(parser: argparse.ArgumentParser, cell: Cell, plan: Plan) -> argparse.Namespace:
    """The cell's arguments parsed by the command's parser; a usage error becomes one :class:`PlanError` line."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return parser.parse_args(list(cell.argv))
    except SystemExit:
        message = err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else "invalid arguments"
        raise PlanError(f"plan {plan.path}: cell {cell.id}: {message}") from None


def check_cells(cells: Sequence[Cell], plan: Plan, parser: argparse.ArgumentParser) -> None:
    """Parse every cell and build its config: each command's checks, before any data or model loads."""
    for cell in cells:
        args = _parse(parser, cell, plan)
        module = sys.modules[args.func.__module__]
        try:
            module.config_from_args(args)
        except FolkscopeError as exc:
            raise PlanError(f"plan {plan.path}: cell {cell.id}: {exc}") from None


def run_cell(cell: Cell, plan: Plan, parser: argparse.ArgumentParser) -> CellResult:
    """Run the cell's command in this process; its printed summary is kept, not shown (the study shows one line).

    Raises
    ------
    FolkscopeError
        The command's own error (the study records it and goes on).
    """
    args = _parse(parser, cell, plan)
    out = io.StringIO()
    with published_runs() as folders, contextlib.redirect_stdout(out):
        code = args.func(args)
    if code or not folders:
        raise PlanError(f"cell {cell.id}: the command ended with status {code} and published no run folder")
    text = out.getvalue()
    return CellResult(folder=folders[-1], answer=_answer(text), output=text)


def _answer(text: str) -> str | None:
    """The ``answer: ...`` line every command ends with, its folded follow-on lines joined back into one."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(ANSWER):
            parts = [line[len(ANSWER) :].strip()]
            parts += [follow.strip() for follow in itertools.takewhile(lambda f: f.startswith(" "), lines[i + 1 :])]
            return " ".join(parts)
    return None
