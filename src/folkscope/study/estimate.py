"""What a study will cost, said before it starts: requests per model, and tokens and price for web APIs.

How it is measured: every distinct *shape* of cell (part, task and settings;
the model does not change which prompts are sent) is run once with
folkscope's stand-in model (the ``fake`` backend, instant answers) in a
throw-away folder, and the engine's own counters of that run are read
(:func:`folkscope.engine.usage.recorded_accounting`): the distinct requests
the model would answer, and the prompt text it would read. So the figures
come from the parts' own prompt building, not from a second model of it
that could drift. A web-API model's tokens are the stand-in's byte count
divided by 4 (the usual rate of English text in BPE vocabularies) and priced
with litellm's table: a guide, stated as one; each API step still states its
exact estimate and stops above ``--max-cost`` before it sends anything.

A shape whose data is not on this machine yet (a public file downloaded on
first use) cannot be measured without downloading it, and sizing a study
downloads nothing (:func:`folkscope.data.download.no_downloads`); it is
counted as unknown, not guessed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from folkscope.data.download import no_downloads
from folkscope.engine.usage import recorded_accounting, token_price
from folkscope.errors import DownloadError, FolkscopeError
from folkscope.study.cells import Cell
from folkscope.study.plan import Plan

__all__ = ["ShapeCost", "estimate_lines", "measure_shapes"]

#: bytes of English prompt text per BPE token, for a web API's token guess
BYTES_PER_TOKEN = 4


@dataclass(frozen=True)
class ShapeCost:
    """What one shape of cell sends: distinct requests and prompt bytes (None: not measurable here, ``why``)."""

    requests: int | None
    prompt_bytes: int | None
    why: str = ""


def measure_shapes(cells: Iterable[Cell], parser: argparse.ArgumentParser) -> dict[tuple, ShapeCost]:
    """Run each distinct shape of ``cells`` once on the stand-in model and read what its engine counted."""
    costs: dict[tuple, ShapeCost] = {}
    for cell in cells:
        if cell.shape() in costs:
            continue
        with tempfile.TemporaryDirectory(prefix="folkscope-estimate-") as tmp:
            argv = [
                *cell.argv[:2],
                *(("--task", cell.task) if cell.task else ()),
                "--model",
                "fake",
                "--inference-backend",
                "fake",
                *cell.flags,
                "--results-dir",
                str(Path(tmp) / "results"),
                "--cache-dir",
                str(Path(tmp) / "cache"),
            ]
            quiet = io.StringIO()
            try:
                with (
                    no_downloads("sizing the study"),
                    recorded_accounting() as seen,
                    contextlib.redirect_stdout(quiet),
                    contextlib.redirect_stderr(quiet),
                ):
                    args = parser.parse_args(argv)
                    # a stand-in run is never logged to a tracker the plan names
                    vars(args).update(wandb_project=None, mlflow_uri=None)
                    args.func(args)
            except DownloadError:
                costs[cell.shape()] = ShapeCost(None, None, why="its data is downloaded when it runs")
                continue
            except (FolkscopeError, OSError) as exc:
                costs[cell.shape()] = ShapeCost(None, None, why=str(exc).split("; ")[0])
                continue
        requests = sum(int((s.get("engine_stats") or {}).get("unique", 0)) for s in seen)
        prompt = sum(int((s.get("backend_stats") or {}).get("logical_tokens", 0)) for s in seen)
        costs[cell.shape()] = ShapeCost(requests, prompt)
    return costs


def estimate_lines(todo: Sequence[Cell], plan: Plan, parser: argparse.ArgumentParser) -> list[str]:
    """One line per model with cells to run: cells, requests, and for a web API the tokens and price."""
    if not todo:
        return []
    costs = measure_shapes(todo, parser)
    lines = []
    for model in plan.models:
        mine = [c for c in todo if c.model == model.label]
        if not mine:
            continue
        known = [costs[c.shape()] for c in mine if costs[c.shape()].requests is not None]
        unknown = len(mine) - len(known)
        requests = sum(c.requests or 0 for c in known)
        line = f"  {model.label}: {len(mine)} cells, about {requests:,} requests"
        if model.engine.get("use_web_api_model") or model.engine.get("inference_backend") == "litellm":
            tokens = sum(c.prompt_bytes or 0 for c in known) // BYTES_PER_TOKEN
            price = token_price(model.model, tokens, requests)  # one answer token per request
            cost = f"about ${price:,.2f} at litellm's price" if price is not None else "no litellm price known"
            line += f", about {tokens:,} prompt tokens (text bytes / {BYTES_PER_TOKEN}), {cost}"
        else:
            line += " on its own hardware (no per-token price)"
        if unknown:
            why = next(costs[c.shape()].why for c in mine if costs[c.shape()].requests is None)
            line += f"; {unknown} cell{'s' if unknown != 1 else ''} not measured: {why}"
        lines.append(line)
    return ["cost before starting (prompts built for every kind of cell, answered by a stand-in model):", *lines]
