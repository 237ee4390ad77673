"""A finished run logged to Weights & Biases or MLflow, through their own libraries, from its run folder.

What one run becomes in a tracker (the same for both, from the folder alone):

- parameters: the part, model, subject, config fingerprint and the run
  folder's path, then the manifest's config and engine as flat ``a/b`` keys
  (:func:`folkscope.export.flatten.flat_params`);
- metrics: every finite number of ``metrics.json`` under its ``a/b`` key; the
  count of NaN or infinite ones left out is the ``metrics_not_finite`` tag
  (W&B: summary entry), so a shorter list never passes for a complete one;
- the caveats the run recorded: tags ``caveat/<code>`` with the message,
  and the list as ``caveats.txt``;
- files: the declared tables (parquet, CSV) under ``tables/``, the figures
  (PNG, SVG) under ``figures/``, the page and ``manifest.json`` (W&B: one
  artifact of type ``folkscope-run`` holding them; besides, W&B shows the PNG
  figures as images and each table of at most :data:`WANDB_TABLE_ROWS` rows
  as a table, and counts the larger ones in ``tables_as_files_only``; MLflow
  shows PNG artifacts itself).

Logging reads a published run folder, so it runs after the folder is in
place: a tracker that fails cannot lose the run, and ``folkscope export RUN
--wandb-project P`` logs it again later. Neither library is required:
:func:`check_trackers` says in one line which extra to install, before a
model loads. Their console output is kept off the terminal
(:mod:`folkscope._quiet`).

MLflow 3 refuses its file store (``file:`` URIs, plain folders) unless
``MLFLOW_ALLOW_FILE_STORE`` is set; a user who names such a URI asked for
it, so folkscope sets that switch for its own calls. W&B runs online unless
``WANDB_MODE=offline`` (or ``disabled``); online it needs a login, checked
first so it never stops to prompt for a key after a long run.
"""

from __future__ import annotations

import netrc
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from folkscope._quiet import quiet_libraries
from folkscope.errors import BackendError, ConfigError, MissingDependencyError
from folkscope.export.flatten import flat_metrics, flat_params
from folkscope.export.sources import ExportedRun
from folkscope.runs import read_caveats

__all__ = ["WANDB_TABLE_ROWS", "TrackerOptions", "check_trackers", "log_runs", "run_record"]

#: tables up to this many rows are also logged as W&B tables (its own default limit is 200,000; a large table
#: stays an artifact file rather than slowing the W&B page down)
WANDB_TABLE_ROWS = 10_000
_FIGURES = (".png", ".svg")
_PAGES = ("report.html", "index.html", "manifest.json")


@dataclass(frozen=True)
class TrackerOptions:
    """Where to log runs; both None means nowhere.

    Attributes
    ----------
    wandb_project : str, optional
        The W&B project (entity from ``WANDB_ENTITY`` or the login's default).
    mlflow_uri : str, optional
        An MLflow tracking URI: ``http(s)://`` server, ``file:`` store or folder, ``databricks``...
        The experiment is ``$MLFLOW_EXPERIMENT_NAME``, else ``folkscope``.
    run_name : str, optional
        The tracker run's name (default: the run's id, ``<subject>/<model>/<folder>``).
    """

    wandb_project: str | None = None
    mlflow_uri: str | None = None
    run_name: str | None = None

    @property
    def requested(self) -> bool:
        return bool(self.wandb_project or self.mlflow_uri)


def _import(module: str, flag: str) -> Any:
    from folkscope._deps import require

    return require(module, feature=f"{flag} (logging runs to {module})")


def _wandb_logged_in() -> bool:
    if os.environ.get("WANDB_API_KEY"):
        return True
    host = urlparse(os.environ.get("WANDB_BASE_URL") or "https://api.wandb.ai").hostname or "api.wandb.ai"
    try:
        return netrc.netrc().authenticators(host) is not None
    except (OSError, netrc.NetrcParseError):
        return False


def _is_file_store(uri: str) -> bool:
    scheme = urlparse(uri).scheme
    return scheme in ("", "file") or len(scheme) == 1  # a plain folder, or a Windows drive letter


def check_trackers(options: TrackerOptions) -> None:
    """Refuse, in one line and before any model loads, tracker options that cannot work here.

    Raises
    ------
    MissingDependencyError
        The tracker's library is not installed (the message names the extra).
    ConfigError
        An empty project or URI, or W&B online without a login.
    """
    if options.wandb_project is not None:
        if not options.wandb_project.strip() or "/" in options.wandb_project:
            raise ConfigError(
                f"--wandb-project {options.wandb_project!r} is not a project name; pass a name without '/' "
                "(the entity comes from WANDB_ENTITY)",
                parameter="wandb_project",
                value=options.wandb_project,
            )
        _import("wandb", "--wandb-project")
        mode = os.environ.get("WANDB_MODE", "online").lower()
        if mode not in ("offline", "disabled", "dryrun") and not _wandb_logged_in():
            raise ConfigError(
                "--wandb-project needs a W&B login and none is set; run `wandb login`, set WANDB_API_KEY, or "
                "log locally with WANDB_MODE=offline",
                parameter="wandb_project",
                value=options.wandb_project,
            )
    if options.mlflow_uri is not None:
        if not options.mlflow_uri.strip():
            raise ConfigError(
                "--mlflow-uri is empty; pass a tracking URI such as file:./mlruns or http://localhost:5000",
                parameter="mlflow_uri",
                value=options.mlflow_uri,
            )
        _import("mlflow", "--mlflow-uri")


@dataclass(frozen=True)
class RunRecord:
    """What a tracker receives for one run (see the module docstring)."""

    name: str
    params: dict[str, Any]
    metrics: dict[str, float]
    not_finite: int
    caveats: list[tuple[str, str]]
    files: dict[str, list[Path]]  # tracker folder -> files


def run_record(run: ExportedRun, *, run_name: str | None = None) -> RunRecord:
    """The parameters, metrics, caveats and files of ``run`` as both trackers log them."""
    manifest = run.manifest
    params = {
        "part": manifest.part,
        "model": run.model,
        "subject": run.subject,
        "fingerprint": manifest.fingerprint,
        "run_folder": str(run.folder),
        **flat_params({"config": manifest.config, "engine": manifest.engine or {}}),
    }
    metrics, not_finite = flat_metrics(run.metrics)
    declared = {str(spec["file"]) for spec in manifest.tables.values()}
    files: dict[str, list[Path]] = {"tables": [], "figures": [], "": []}
    for path in sorted(p for p in run.folder.rglob("*") if p.is_file()):
        name = path.relative_to(run.folder).as_posix()
        if name in declared and path.suffix in (".parquet", ".csv"):
            files["tables"].append(path)
        elif path.suffix in _FIGURES:
            files["figures"].append(path)
        elif name in _PAGES:
            files[""].append(path)
    return RunRecord(
        name=run_name or run.id,
        params=params,
        metrics=metrics,
        not_finite=not_finite,
        caveats=[(c.code, c.message) for c in read_caveats(run.folder)],
        files=files,
    )


def _caveat_text(record: RunRecord) -> str:
    return "\n".join(f"{code}: {message}" for code, message in record.caveats) or "no caveats recorded"


# -- Weights & Biases ------------------------------------------------------------------------------------------------


def _plain_cells(frame: Any) -> Any:
    """The table with list, dict and array cells as JSON text: a W&B table holds scalars."""
    import json

    import numpy as np
    import pandas as pd

    def plain(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            value = value.tolist()
        return json.dumps(value, default=str) if isinstance(value, (list, dict, tuple)) else value

    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_object_dtype(out[column].dtype):
            out[column] = out[column].map(plain)
    return out


def _wandb_media(wandb: Any, record: RunRecord) -> tuple[dict[str, Any], int]:
    """PNG figures as images and tables of at most :data:`WANDB_TABLE_ROWS` rows as tables; how many were too long."""
    import importlib.util

    import pandas as pd

    media: dict[str, Any] = {}
    if importlib.util.find_spec("PIL") is not None:  # wandb.Image reads the file with Pillow
        media.update({f"figures/{p.stem}": wandb.Image(str(p)) for p in record.files["figures"] if p.suffix == ".png"})
    too_long = 0
    for path in record.files["tables"]:
        frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
        if len(frame) > WANDB_TABLE_ROWS:
            too_long += 1
            continue
        media[f"tables/{path.stem}"] = wandb.Table(dataframe=_plain_cells(frame))
    return media, too_long


def _log_wandb(record: RunRecord, run: ExportedRun, project: str) -> str:
    wandb = _import("wandb", "--wandb-project")
    tracker = wandb.init(
        project=project,
        name=record.name,
        job_type=f"folkscope-{run.manifest.part}",
        tags=[run.manifest.part, *(f"caveat:{code}"[:64] for code, _ in record.caveats)],
        config=record.params,
        settings=wandb.Settings(silent=True, console="off"),
        dir=os.environ.get("WANDB_DIR") or None,  # read now: wandb keeps the first call's settings for the process
        mode=os.environ.get("WANDB_MODE") or None,
        reinit="create_new",
    )
    try:
        tracker.log(record.metrics)
        media, too_long = _wandb_media(wandb, record)
        if media:
            tracker.log(media)
        tracker.summary["metrics_not_finite"] = record.not_finite
        tracker.summary["tables_as_files_only"] = too_long
        tracker.summary["caveats"] = _caveat_text(record)
        artifact = wandb.Artifact(
            f"folkscope-{run.manifest.part}-{run.manifest.fingerprint[:16]}", type="folkscope-run"
        )
        for folder, paths in record.files.items():
            for path in paths:
                artifact.add_file(str(path), name=f"{folder}/{path.name}" if folder else path.name)
        tracker.log_artifact(artifact)
        url = str(getattr(tracker, "url", None) or Path(tracker.dir).parent)  # offline: the local run folder
    finally:
        tracker.finish()
    return url


# -- MLflow ----------------------------------------------------------------------------------------------------------

_MLFLOW_BAD = re.compile(r"[^/\w.\- ]")


def _mlflow_key(key: str) -> str:
    """A key MLflow accepts: its characters, no empty or dot-only path segments, at most 250 characters."""
    segments = [_MLFLOW_BAD.sub("_", s) if s not in ("", ".", "..") else "_" for s in key.split("/")]
    return "/".join(segments)[:250]


@contextmanager
def _file_store_allowed(uri: str) -> Iterator[None]:
    before = os.environ.get("MLFLOW_ALLOW_FILE_STORE")
    if _is_file_store(uri):
        os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("MLFLOW_ALLOW_FILE_STORE", None)
        else:
            os.environ["MLFLOW_ALLOW_FILE_STORE"] = before


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _log_mlflow(record: RunRecord, run: ExportedRun, uri: str) -> str:
    _import("mlflow", "--mlflow-uri")
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    with _file_store_allowed(uri):
        client = MlflowClient(tracking_uri=uri)
        name = os.environ.get("MLFLOW_EXPERIMENT_NAME") or "folkscope"
        experiment = client.get_experiment_by_name(name)
        experiment_id = experiment.experiment_id if experiment else client.create_experiment(name)
        tags = {
            "folkscope.part": run.manifest.part,
            "folkscope.run_folder": str(run.folder),
            "metrics_not_finite": str(record.not_finite),
            **{_mlflow_key(f"caveat/{code}"): message for code, message in record.caveats},
        }
        tracker = client.create_run(experiment_id, run_name=record.name, tags=tags)
        run_id = tracker.info.run_id
        status = "FAILED"
        try:
            now = int(time.time() * 1000)
            params = [Param(_mlflow_key(k), str(v)[:6000]) for k, v in record.params.items()]
            metrics = [Metric(_mlflow_key(k), v, now, 0) for k, v in record.metrics.items()]
            for chunk in _chunks(params, 100):
                client.log_batch(run_id, params=list(chunk))
            for chunk in _chunks(metrics, 1000):
                client.log_batch(run_id, metrics=list(chunk))
            client.log_text(run_id, _caveat_text(record), "caveats.txt")
            for folder, paths in record.files.items():
                for path in paths:
                    client.log_artifact(run_id, str(path), artifact_path=folder or None)
            status = "FINISHED"
        finally:
            client.set_terminated(run_id, status=status)
    return f"{uri} run {run_id}"


def log_runs(runs: Sequence[ExportedRun], options: TrackerOptions, *, say: Callable[[str], Any] = print) -> None:
    """Log every run to the trackers ``options`` names, one line per run and tracker (``say``).

    Raises
    ------
    BackendError
        A tracker refused (network, permissions, a bad URI); the line names
        the run folder and the command that logs it again.
    """
    for run in runs:
        record = run_record(run, run_name=options.run_name if len(runs) == 1 else None)
        for tracker, target, log in (
            ("W&B", options.wandb_project, _log_wandb),
            ("MLflow", options.mlflow_uri, _log_mlflow),
        ):
            if not target:
                continue
            flag = "--wandb-project" if tracker == "W&B" else "--mlflow-uri"
            try:
                with quiet_libraries():
                    where = log(record, run, target)
            except MissingDependencyError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure of a third-party client is one line, the run is safe
                raise BackendError(
                    f"logging {run.id} to {tracker} failed ({type(exc).__name__}: "
                    f"{(str(exc).splitlines() or [''])[0][:160]}); the run folder is complete, log it again with "
                    f"`folkscope export {run.folder} {flag} {target}`"
                ) from None
            say(f"logged {run.id} to {tracker}: {where}")
