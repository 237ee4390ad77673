"""Run a study's grid: every cell not done yet, one progress over the grid, then the leaderboard.

In this process, one cell after the other (the default), or on a Ray
cluster (``ray_address``): then up to ``jobs`` cells run at once, each in a
process of its own on this machine (the driver) with its model on the
cluster's Ray workers, one GPU each where the cluster has GPUs (Ray places
a worker where its resources are free, and queues it until they are). Either
way this machine owns the run folders and the result cache, as with
``--data-parallel``: the workers compute answers, the driver writes them.
So a study run on a cluster leaves the same folders, byte for byte, as the
same study run here, and a study killed in one mode resumes in the other.

The grid's progress is one line per cell as it starts and ends: cells done
and left, and the time left, estimated from the cells finished in this
session (the cells differ in size, so it is a rough guide, and says so).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from folkscope._deps import require
from folkscope.engine.progress import format_duration
from folkscope.errors import FolkscopeError
from folkscope.report.terminal import closing_lines, wrap
from folkscope.study.cells import Cell, CellResult, check_cells, expand, run_cell
from folkscope.study.estimate import estimate_lines
from folkscope.study.ledger import DONE, FAILED, TO_RUN, Ledger
from folkscope.study.plan import PART_KEYS, Plan

__all__ = ["HOLD_ENV", "StudyResult", "default_results_dir", "run_study"]

Print = Callable[[str], None]
#: fault injection for tests only: ``"<cells>:<marker file>"`` makes a study that has recorded that many cells in
#: this session create the marker file and wait there until it is killed (so a test kills it at a known point)
HOLD_ENV = "FOLKSCOPE_TEST_STUDY_HOLD"


@dataclass
class StudyResult:
    """How a study ended: its cells by status, the leaderboard page, and the ledger folder."""

    cells: list[Cell]
    done: int
    failed: list[tuple[Cell, str]] = field(default_factory=list)
    leaderboard: Path | None = None
    folder: Path | None = None
    recorded: int = 0
    """Cells this session ran and recorded (done or failed)."""


def default_results_dir(plan: Plan) -> Path:
    """``results/<plan name>`` unless the plan names its own results folder: one study, one folder, one leaderboard."""
    return Path(plan.results_dir) if plan.results_dir else Path("results") / plan.name


def run_study(
    plan: Plan,
    parser: argparse.ArgumentParser,
    *,
    results_dir: str | Path | None = None,
    dry_run: bool = False,
    ray_address: str | None = None,
    jobs: int | None = None,
    estimate: bool = True,
    leaderboard: bool = True,
    say: Print | None = None,
) -> StudyResult:
    """Check every cell, say what will run and what it costs, run the cells not done yet, write the leaderboard.

    Parameters
    ----------
    plan : Plan
        From :func:`folkscope.study.load_plan`.
    parser : argparse.ArgumentParser
        The ``folkscope`` parser (:func:`folkscope.cli.main.build_parser`): cells are its commands.
    results_dir : path, optional
        Where the cells' run folders go (default :func:`default_results_dir`).
    dry_run : bool
        List the cells, their status and their commands; run nothing.
    ray_address : str, optional
        Run the cells' models on this Ray cluster (``local``: start one on this machine).
    jobs : int, optional
        Cells at once on a Ray cluster (default: its GPUs, or its CPUs when it has none; at most the cells to run).
    estimate : bool
        Measure and say what the cells to run cost before starting (:mod:`folkscope.study.estimate`).
    leaderboard : bool
        Write the leaderboard of the results folder at the end.
    """
    say = say or _say
    if ray_address is not None:  # before anything is checked, sized or run
        require("ray", feature="folkscope study run --ray-address")
    results = Path(results_dir) if results_dir is not None else default_results_dir(plan)
    cells = expand(plan, results, parser)
    check_cells(cells, plan, parser)  # every command's checks, before anything loads
    ledger = Ledger(results, plan)
    counts = ledger.summary(cells)
    models = sorted({c.model for c in cells})
    _tell(
        say,
        f"study {plan.name}: {len(cells)} cells ({', '.join(sorted({c.part for c in cells}, key=_part_order))}; "
        f"{len(models)} model{'s' if len(models) != 1 else ''}): {counts[DONE]} done, {counts[TO_RUN] + counts[FAILED]} to run"
        + (f" ({counts[FAILED]} failed before)" if counts[FAILED] else ""),
    )
    todo = [c for c in cells if ledger.status(c) != DONE]
    for line in estimate_lines(todo, plan, parser) if estimate else ():
        _tell(say, line)
    if dry_run:
        for cell in cells:
            status = ledger.status(cell)
            where = f" -> {ledger.folder_of(cell)}" if status == DONE else ""
            _tell(say, f"  [{status}] {cell.id}{where}")
            say(f"      {cell.command()}")
        say(f"dry run: nothing was run; the study's folder would be {ledger.folder}")
        return StudyResult(cells=cells, done=counts[DONE], folder=ledger.folder)
    result = StudyResult(cells=cells, done=counts[DONE], folder=ledger.folder)
    with ledger.open():
        if ray_address is None:
            _sequential(todo, cells, plan, parser, ledger, result, say)
        else:
            _on_ray(todo, cells, plan, ledger, result, say, ray_address=ray_address, jobs=jobs, results=results)
    if leaderboard and result.done:
        from folkscope.report.leaderboard import write_leaderboard

        site = write_leaderboard(results)
        for table in site.tables:
            if table.lead:
                _tell(say, f"{table.title}: {table.lead}")
        result.leaderboard = site.index
    _closing(result, ledger, say)
    return result


def _tell(say: Print, text: str) -> None:
    """``text`` folded to the terminal's width (a command line is never folded: it is said as it is, to be copied)."""
    for line in wrap(text, indent="    " if text.startswith("  ") else "  "):
        say(line)


def _say(line: str) -> None:
    """Print a line now, even into a pipe or a log file: a study runs for hours and its progress must show."""
    print(line, flush=True)


def _part_order(part: str) -> int:
    return PART_KEYS.index(part)


class _Clock:
    """Cells done and left, and the time left from the mean time of the cells finished in this session."""

    def __init__(self, total: int, done_before: int) -> None:
        self.total, self.finished, self.start = total, done_before, time.monotonic()
        self.ran = 0

    def tick(self) -> str:
        self.finished += 1
        self.ran += 1
        left = self.total - self.finished
        per_cell = (time.monotonic() - self.start) / self.ran
        eta = f", about {format_duration(per_cell * left)} left" if left else ""
        return f"[{self.finished}/{self.total} cells, {left} left{eta}]"


def _ended(cell: Cell, result: CellResult | None, error: str | None, seconds: float, clock: _Clock) -> str:
    head = f"{clock.tick()} {cell.id} ({format_duration(seconds)})"
    if error is not None:
        return f"{head}: FAILED: {error}"
    assert result is not None
    return f"{head}: {result.answer or 'done'}"


def _sequential(
    todo: Sequence[Cell],
    cells: list[Cell],
    plan: Plan,
    parser: argparse.ArgumentParser,
    ledger: Ledger,
    result: StudyResult,
    say: Print,
) -> None:
    clock = _Clock(len(cells), len(cells) - len(todo))
    for cell in todo:
        _tell(say, f"running {cell.id}")
        start = time.monotonic()
        try:
            ran = run_cell(cell, plan, parser)
        except FolkscopeError as exc:
            _record(ledger, cells, cell, None, str(exc), result)
            _tell(say, _ended(cell, None, str(exc), time.monotonic() - start, clock))
            continue
        _record(ledger, cells, cell, ran, None, result)
        _tell(say, _ended(cell, ran, None, time.monotonic() - start, clock))


def _record(
    ledger: Ledger, cells: list[Cell], cell: Cell, ran: CellResult | None, error: str | None, result: StudyResult
) -> None:
    if ran is not None:
        ledger.record(cells, cell, folder=ran.folder, answer=ran.answer, output=ran.output)
        result.done += 1
    else:
        ledger.record(cells, cell, error=error)
        result.failed.append((cell, error or ""))
    result.recorded += 1
    _hold(result.recorded)


def _hold(recorded: int) -> None:
    """Wait to be killed once ``HOLD_ENV`` cells were recorded (tests only; a no-op without the variable)."""
    hold = os.environ.get(HOLD_ENV)
    if not hold:
        return
    count, _, marker = hold.partition(":")
    if recorded >= int(count):
        Path(marker).touch()
        while True:
            time.sleep(1)


def _closing(result: StudyResult, ledger: Ledger, say: Print) -> None:
    """Failures and the ledger first, then the answer (cells done, failed) and the leaderboard, last as every command."""
    total = len(result.cells)
    for cell, error in result.failed:
        _tell(say, f"failed: {cell.id}: {error}")
    _tell(say, f"study folder: {ledger.folder} (cells.json: each cell's command, folder and answer)")
    answer = f"{result.done} of {total} cells done"
    if result.failed:
        answer += f", {len(result.failed)} failed (errors above and in cells.json; a rerun retries them)"
    if result.leaderboard is not None:
        for line in closing_lines(answer, result.leaderboard):
            say(line)
    else:
        say(f"answer: {answer}")


# ----------------------------------------------------------------------------- on a Ray cluster
def _on_ray(
    todo: Sequence[Cell],
    cells: list[Cell],
    plan: Plan,
    ledger: Ledger,
    result: StudyResult,
    say: Print,
    *,
    ray_address: str,
    jobs: int | None,
    results: Path,
) -> None:
    """Up to ``jobs`` cells at once, each a process of its own (a clean slate: logging, plots, the model) whose model
    runs on the cluster; this process records each cell as it ends."""
    address, resources, stop = _cluster(ray_address)
    try:
        # a cell's worker takes a GPU where the cluster has them: more cells at once than GPUs would only queue
        capacity = int(resources.get("GPU", 0)) or int(resources.get("CPU", 1))
        slots = max(1, min(jobs or capacity, len(todo) or 1))
        say(
            f"Ray cluster {address}: {resources.get('CPU', 0):g} CPUs, {resources.get('GPU', 0):g} GPUs; {slots} cells at once"
        )
        clock = _Clock(len(cells), len(cells) - len(todo))
        with ThreadPoolExecutor(max_workers=slots) as pool:
            running: dict[Future[tuple[CellResult | None, str | None]], tuple[Cell, float]] = {}
            queue = list(todo)
            while queue or running:
                while queue and len(running) < slots:
                    cell = queue.pop(0)
                    _tell(say, f"running {cell.id}")
                    running[pool.submit(_cell_process, plan, results, cell, address)] = (cell, time.monotonic())
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    cell, start = running.pop(future)
                    ran, error = future.result()
                    _record(ledger, cells, cell, ran, error, result)
                    _tell(say, _ended(cell, ran, error, time.monotonic() - start, clock))
    finally:
        stop()


def _cluster(ray_address: str) -> tuple[str, dict[str, float], Callable[[], None]]:
    """Join the cluster (``local``: start one here); its address for the cells' processes, its resources, a stop."""
    ray = require("ray", feature="folkscope study run --ray-address")
    import logging

    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
    if ray_address == "local":
        ray.init(num_cpus=os.cpu_count() or 1, **options)
    else:
        ray.init(address=ray_address, **options)
    address = ray.get_runtime_context().gcs_address
    return address, dict(ray.cluster_resources()), ray.shutdown


def _cell_process(plan: Plan, results: Path, cell: Cell, address: str) -> tuple[CellResult | None, str | None]:
    """Run one cell in a fresh process (``python -m folkscope.study.worker``) with its model on the cluster."""
    with tempfile.TemporaryDirectory(prefix="folkscope-cell-") as tmp:
        out = Path(tmp) / "cell.json"
        command = [
            sys.executable,
            "-m",
            "folkscope.study.worker",
            plan.path,
            str(results),
            str(cell.index),
            address,
            str(out),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not out.is_file():
            tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
            return None, f"the cell's process ended with status {done.returncode}: {tail}"
        record = json.loads(out.read_text(encoding="utf-8"))
    if "error" in record:
        return None, str(record["error"])
    return CellResult(folder=Path(record["folder"]), answer=record.get("answer"), output=record.get("output", "")), None
