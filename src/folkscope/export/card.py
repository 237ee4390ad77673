"""The dataset card (``README.md``) of an export: what was measured, how, what it says, and under which terms.

A Hugging Face card is a YAML header (licence, tags, and ``configs``:
which files hold which split once on the Hub, where ``datasets`` uploads
split ``s`` as ``data/s-*.parquet``) followed by prose. Here the prose
says, per run: the model, the subject and part, the config fingerprint,
the headline numbers with their intervals as the part's own leaderboard
table shows them (reached through the registry, never by importing the
part), the caveats the run recorded, and then, for the whole export, how
it was made and the data terms (:mod:`folkscope.data.terms`). Data that
carries no licence is said so in words, above the terms list.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from folkscope import __version__
from folkscope.data.terms import DataTerms, data_terms, hub_licence
from folkscope.export.sources import ExportedRun
from folkscope.registry import PARTS
from folkscope.runs import read_caveats

__all__ = ["headline_tables", "render_card"]

#: rows of one headline table shown per run (an allocation run lists every group; the split holds them all)
_MAX_ROWS = 12


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _markdown(frame: Any, labels: Sequence[str], metrics: Sequence[str], intervals: Mapping[str, Any]) -> list[str]:
    columns = [*labels, *metrics]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for _, row in frame.head(_MAX_ROWS).iterrows():
        cells = [_cell(row[c]) for c in labels]
        for metric in metrics:
            text = _cell(row[metric])
            if metric in intervals:
                low, high = (row[c] for c in intervals[metric])
                if isinstance(low, float) and isinstance(high, float) and not (math.isnan(low) or math.isnan(high)):
                    text += f" [{low:.3f}, {high:.3f}]"
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
    if len(frame) > _MAX_ROWS:
        lines.append(f"\n({len(frame) - _MAX_ROWS} more rows in the split of this table)")
    return lines


def headline_tables(run: ExportedRun) -> list[str]:
    """The run's rows of its part's leaderboard tables as Markdown (numbers with their 95% intervals)."""
    with tempfile.TemporaryDirectory(prefix="folkscope-card-") as site:
        board = PARTS[run.manifest.part].load("leaderboard")([run.folder], site=Path(site), draw=False)
    lines: list[str] = []
    for table in board.tables:
        frame = table.frame
        if "run" in frame:
            frame = frame[frame["run"].astype(str) == str(run.folder)]
        if "kind" in frame:
            frame = frame[frame["kind"].astype(str) == "model"]
        if frame.empty:
            continue
        labels = [c for c in table.labels if c != "model"]
        lines += [f"**{table.title}**", ""]
        lines += _markdown(frame, labels, table.metric_columns, table.intervals)
        lines.append("")
    return lines


def _yaml_list(items: Sequence[str]) -> list[str]:
    return [f"- {item}" for item in items]


def _terms_of(runs: Sequence[ExportedRun]) -> list[DataTerms]:
    return list(dict.fromkeys(t for run in runs for t in data_terms(run.manifest.part, run.manifest.data)))


def render_card(runs: Sequence[ExportedRun], splits: Mapping[str, int], *, command: str = "") -> str:
    """The card of an export of ``runs`` whose splits hold ``splits`` (name -> rows)."""
    terms = _terms_of(runs)
    parts = list(dict.fromkeys(r.manifest.part for r in runs))
    models = list(dict.fromkeys(r.model for r in runs))
    subjects = list(dict.fromkeys(r.subject for r in runs))
    header = [
        "---",
        f"license: {hub_licence(terms)}",
        "tags:",
        *_yaml_list(["folkscope", "llm-evaluation", *parts]),
        "configs:",
        "- config_name: default",
        "  data_files:",
        *(f"  - split: {s}\n    path: data/{s}-*" for s in splits),
        "---",
        "",
    ]
    title = f"# folkscope results: {', '.join(models[:3])}{' and more' if len(models) > 3 else ''} on {', '.join(subjects[:3])}"
    body = [
        title + (" and more" if len(subjects) > 3 else ""),
        "",
        f"{len(runs)} run(s) of folkscope {', '.join(PARTS[p].title for p in parts)}, exported with folkscope "
        f"{__version__}. Load it with `datasets.load_from_disk(DIR)` (a local export) or "
        "`datasets.load_dataset(REPO)` (once pushed to the Hub).",
        "",
        "## Splits",
        "",
        "| split | rows |",
        "|---|---|",
        *(f"| {s} | {n} |" for s, n in splits.items()),
        "",
        "`runs` has one row per run: part, model, subject, config fingerprint, caveats, the config, engine, data "
        "and package versions as JSON, and every finite number of the run's `metrics.json` as a "
        "`metric/<a>/<b>` column (`metrics_not_finite` counts the NaN or infinite ones left out). Every other "
        "split is one declared table of the runs' part, rows of all runs concatenated, each row naming its run "
        "(`run_id`, `run_part`, `run_model`, `run_subject`).",
        "",
    ]
    for run in runs:
        body += [
            f"## Run `{run.id}`",
            "",
            f"- part: {PARTS[run.manifest.part].title} (`{run.manifest.part}`)",
            f"- model: `{run.model}`",
            f"- task: `{run.subject}`",
            f"- config fingerprint: `{run.manifest.fingerprint}`",
            f"- created: {run.manifest.created or 'before manifests were written'}",
            "",
            "Headline metrics (95% intervals in brackets):",
            "",
            *headline_tables(run),
        ]
        caveats = read_caveats(run.folder)
        if caveats:
            body += ["Caveats recorded with the run:", "", *(f"- {c.message}" for c in caveats), ""]
    body += [
        "## How it was made",
        "",
        f"`{command}`" if command else "`folkscope export`",
        "",
        "Each run folder was written by `folkscope <part> run` and holds the same tables, the run's "
        "`manifest.json` (config, engine identity, data, package versions) and its page; the numbers here are "
        "copied from those files, not recomputed.",
        "",
        "## Data terms",
        "",
    ]
    if any(t.unlicensed for t in terms):
        body += [
            "**Some of the source data carries no licence.** Rows derived from it (e.g. candidates' texts) "
            "must not be redistributed: keep this export private, or drop those splits before sharing it.",
            "",
        ]
    body += [f"- {t.name}: {t.terms}" for t in terms]
    body += ["", "folkscope itself is MIT-licensed; these terms are those of the data the runs read.", ""]
    return "\n".join(header + body)
