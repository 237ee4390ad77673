"""Runs as one Hugging Face dataset: every declared table a split, rows of many runs side by side, metrics included.

Layout of an export folder ``DIR`` (``datasets.load_from_disk(DIR)`` reads it):

- one split per declared table of the runs' part (:data:`folkscope.registry.PARTS`,
  ``tables``) that is a parquet or CSV file: ``scores``, ``problems``...
  When the runs come from more than one part, the split is
  ``<part>_<table>`` (``risk_scores``, ``allocation_scores``), so two
  parts' tables of one name never mix;
- ``runs``: one row per run (its part, model, subject, config fingerprint,
  caveats, the config, engine, data and versions as JSON text, and every
  finite number of its ``metrics.json`` as a ``metric/<a>/<b>`` column);
- every row of a table split starts with ``run_id`` (``<subject>/<model>/<folder>``,
  the run's place under its results folder), ``run_part``, ``run_model`` and
  ``run_subject``; rows of several runs of one table are concatenated
  (columns one run lacks are null in its rows);
- ``README.md``: the dataset card (:mod:`folkscope.export.card`);
  ``dataset_dict.json`` and one folder per split: ``datasets``' own files.

The folder is written beside its final place and renamed into it, so an
export interrupted half-way leaves the previous export (or nothing), never
a mixture.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from folkscope._io import staged_folder
from folkscope._quiet import quiet_libraries
from folkscope.errors import BackendError, ConfigError, DataError
from folkscope.export.flatten import flat_metrics
from folkscope.export.sources import ExportedRun
from folkscope.paths import check_writable_dir
from folkscope.runs import read_caveats, read_table

__all__ = [
    "RUNS_SPLIT",
    "RUN_COLUMNS",
    "check_export_dir",
    "check_hub_access",
    "push_export",
    "run_tables",
    "save_dataset",
    "split_name",
]

RUNS_SPLIT = "runs"
#: the columns that say which run a row of a table split comes from
RUN_COLUMNS = ("run_id", "run_part", "run_model", "run_subject")
#: the file datasets' save_to_disk writes for a DatasetDict: its presence marks a folder as an earlier export
DATASET_DICT_FILE = "dataset_dict.json"


def check_export_dir(path: str | Path, *, flag: str = "--hf") -> Path:
    """``path`` may receive an export: new, empty, or an earlier export (replaced); anything else is refused.

    Raises
    ------
    ConfigError
        A non-empty folder that is not a dataset (a run folder, a results
        folder...), a file, or a place that cannot be written.
    """
    folder = check_writable_dir(path, flag=flag, what="the dataset")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / DATASET_DICT_FILE).is_file():
        raise ConfigError(
            f"{flag} {folder} is a folder with other files in it, not an earlier export; pass a new or empty folder",
            parameter=flag.lstrip("-").replace("-", "_"),
            value=str(folder),
        )
    return folder


def split_name(part: str, table: str, parts: Sequence[str]) -> str:
    """A table's split: its name when every run is of one part, else ``<part>_<table>``.

    >>> split_name("risk", "scores", ["risk"]), split_name("risk", "scores", ["risk", "numeric"])
    ('scores', 'risk_scores')
    """
    return table if len(set(parts)) == 1 else f"{part}_{table}"


def _arrow_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with text in every object column that mixes types (one run's codes as numbers, another's as text)."""
    import pyarrow as pa

    try:
        pa.Table.from_pandas(frame, preserve_index=False)
        return frame
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        out = frame.copy()
        for column in [c for c in out.columns if pd.api.types.is_object_dtype(out[c])]:
            out[column] = out[column].map(lambda v: v if v is None or isinstance(v, str) else str(v))
        return out


def _runs_frame(runs: Sequence[ExportedRun]) -> pd.DataFrame:
    rows = []
    for run in runs:
        metrics, skipped = flat_metrics(run.metrics)
        rows.append(
            {
                "run_id": run.id,
                "run_part": run.manifest.part,
                "run_model": run.model,
                "run_subject": run.subject,
                "fingerprint": run.manifest.fingerprint,
                "created": run.manifest.created,
                "caveats": [f"{c.code}: {c.message}" for c in read_caveats(run.folder)],
                "config": json.dumps(run.manifest.config, sort_keys=True, default=str),
                "engine": json.dumps(run.manifest.engine, sort_keys=True, default=str),
                "data": json.dumps(run.manifest.data, sort_keys=True, default=str),
                "versions": json.dumps(run.manifest.versions, sort_keys=True),
                "metrics_not_finite": skipped,
                **{f"metric/{k}": v for k, v in metrics.items()},
            }
        )
    return pd.DataFrame(rows)


def run_tables(runs: Sequence[ExportedRun]) -> dict[str, pd.DataFrame]:
    """The splits of an export of ``runs``: ``runs`` first, then each declared table across runs (see module doc)."""
    parts = [r.manifest.part for r in runs]
    pieces: dict[str, list[pd.DataFrame]] = {}
    for run in runs:
        for name, spec in run.manifest.tables.items():
            if not str(spec["file"]).endswith((".parquet", ".csv")):
                continue  # metrics.json: in the runs split, number by number
            if spec["optional"] and not (run.folder / spec["file"]).is_file():
                continue  # a table this run's settings did not produce
            frame = read_table(run.folder, name)
            clash = [c for c in RUN_COLUMNS if c in frame]
            if clash:
                raise DataError(f"{run.folder}: table {name} has columns {clash} the export adds; rename them")
            frame = frame.reset_index(drop=frame.index.name is None)
            for i, (column, value) in enumerate(zip(RUN_COLUMNS, (run.id, run.manifest.part, run.model, run.subject))):
                frame.insert(i, column, value)
            pieces.setdefault(split_name(run.manifest.part, name, parts), []).append(frame)
    out = {RUNS_SPLIT: _runs_frame(runs)}
    for split, frames in pieces.items():
        out[split] = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return {split: _arrow_ready(frame) for split, frame in out.items()}


def save_dataset(tables: Mapping[str, pd.DataFrame], folder: str | Path, card: str) -> Path:
    """Save ``tables`` as one ``datasets.DatasetDict`` at ``folder`` with ``card`` as its ``README.md``.

    ``folder`` must have passed :func:`check_export_dir`; an earlier export
    there is replaced whole once the new one is complete.
    """
    from folkscope._deps import require

    datasets = require("datasets", feature="exporting results as a Hugging Face dataset")
    final = Path(folder)
    with staged_folder(final) as staging:
        with quiet_libraries():
            parts = {
                split: datasets.Dataset.from_pandas(frame, preserve_index=False) for split, frame in tables.items()
            }
            if RUNS_SPLIT in parts:  # text even when no run recorded a caveat (an empty list has no type of its own)
                parts[RUNS_SPLIT] = parts[RUNS_SPLIT].cast_column(
                    "caveats", datasets.Sequence(datasets.Value("string"))
                )
            datasets.DatasetDict(parts).save_to_disk(str(staging))
        (staging / "README.md").write_text(card, encoding="utf-8")
    return final


def check_hub_access(repo: str) -> None:
    """Refuse ``--push-to-hub`` before anything is written: a malformed repo id, no huggingface_hub, or no token.

    The token is the one huggingface_hub finds itself (``HF_TOKEN``, or
    ``hf auth login``); folkscope never reads or stores it.
    """
    from folkscope._deps import require

    hub = require("huggingface_hub", feature="pushing a dataset to the Hugging Face Hub")
    parts = repo.split("/")
    if len(parts) != 2 or not all(parts):
        raise ConfigError(
            f"--push-to-hub {repo!r} is not a repo id; pass OWNER/NAME, e.g. my-user/folkscope-results",
            parameter="push_to_hub",
            value=repo,
        )
    if hub.get_token() is None:
        raise ConfigError(
            "--push-to-hub needs a Hugging Face token and none is set; run `hf auth login` or set HF_TOKEN",
            parameter="push_to_hub",
            value=repo,
        )


def push_export(folder: str | Path, repo: str, *, private: bool = False, say: Callable[[str], Any] = print) -> str:
    """Upload a saved export to the dataset repo ``repo`` on the Hub; returns the repo's URL.

    The card goes first, so ``datasets``' upload then merges its own
    metadata (features, sizes, configs) into it rather than writing a bare
    card of its own.

    Raises
    ------
    BackendError
        The Hub refused (no access, network down); the local export stays as it was.
    """
    from folkscope._deps import require

    hub = require("huggingface_hub", feature="pushing a dataset to the Hugging Face Hub")
    datasets = require("datasets", feature="pushing a dataset to the Hugging Face Hub")
    folder = Path(folder)
    try:
        with quiet_libraries():
            api = hub.HfApi()
            api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
            api.upload_file(
                path_or_fileobj=str(folder / "README.md"),
                path_in_repo="README.md",
                repo_id=repo,
                repo_type="dataset",
                commit_message="folkscope export: dataset card",
            )
            datasets.load_from_disk(str(folder)).push_to_hub(
                repo, private=private, commit_message="folkscope export: tables"
            )
    except (OSError, ValueError, RuntimeError) as exc:  # huggingface_hub's HTTP errors are OSErrors
        raise BackendError(
            f"pushing {folder} to {repo} failed ({type(exc).__name__}: {str(exc).splitlines()[0][:160]}); "
            "the local export is complete, push it again later"
        ) from None
    url = f"https://huggingface.co/datasets/{repo}"
    say(f"pushed to {url}{' (private)' if private else ''}")
    return url
