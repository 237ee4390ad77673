"""Runs logged to Weights & Biases (offline mode) and MLflow (a file store), read back from what the libraries wrote.

W&B in offline mode keeps a run as a record log (``run-<id>.wandb``: the
LevelDB log format, records of ``wandb_internal.proto``), read back here
with the protobuf classes wandb ships; MLflow's file store is read with its
own client. Nothing reaches a network.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from folkscope.cli.main import main
from folkscope.export.flatten import flat_metrics
from folkscope.export.trackers import _mlflow_key
from folkscope.runs import read_manifest, read_table

from .conftest import numeric_argv

wandb = pytest.importorskip("wandb")
mlflow = pytest.importorskip("mlflow")

_BLOCK = 32768


def _wandb_records(path: Path) -> list:
    """Every record of a ``.wandb`` file: after a 7-byte file header, LevelDB log records (crc, length, type)."""
    from wandb.proto import wandb_internal_pb2

    data, pos, pending, out = path.read_bytes(), 7, b"", []
    while pos + 7 <= len(data):
        left = _BLOCK - pos % _BLOCK
        if left < 7:  # a block's tail too short for a header is padding
            pos += left
            continue
        length, kind = int.from_bytes(data[pos + 4 : pos + 6], "little"), data[pos + 6]
        chunk, pos = data[pos + 7 : pos + 7 + length], pos + 7 + length
        if kind == 0:
            break
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):  # FULL, LAST
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            out.append(record)
    return out


def _wandb_logged(folder: Path) -> tuple[dict, dict]:
    """(metrics logged, config) of the one offline run under ``folder``."""
    logs = list(folder.rglob("offline-run-*/run-*.wandb"))
    assert len(logs) == 1, sorted(folder.rglob("*"))
    (log,) = logs
    metrics, config = {}, {}
    for record in _wandb_records(log):
        kind = record.WhichOneof("record_type")
        if kind == "history":
            metrics.update(
                {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item}
            )
        elif kind == "config":
            config.update({item.key: json.loads(item.value_json) for item in record.config.update})
        elif kind == "run":
            config.update({item.key: json.loads(item.value_json) for item in record.run.config.update})
    return metrics, config


@pytest.fixture
def offline_wandb(tmp_path, monkeypatch):
    folder = tmp_path / "wandb"
    folder.mkdir()
    for var in ("WANDB_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR"):
        monkeypatch.setenv(var, str(folder))
    monkeypatch.setenv("WANDB_MODE", "offline")
    return folder


def _mlflow_run(uri: str, folder: Path):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    (experiment,) = [e for e in client.search_experiments() if e.name == "folkscope"]
    (run,) = [
        r
        for r in client.search_runs([experiment.experiment_id])
        if r.data.tags.get("folkscope.run_folder") == str(folder)
    ]
    return client, run


@pytest.fixture
def file_store(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.setenv(
        "MLFLOW_ALLOW_FILE_STORE", "true"
    )  # for this test's own reading client; the export sets it itself
    return f"file://{tmp_path / 'mlruns'}"


def test_wandb_offline_log_holds_the_runs_metrics_and_config(capsys, risk_run, offline_wandb):
    assert main(["export", str(risk_run), "--wandb-project", "folkscope-tests"]) == 0
    assert "logged NISTIncome/export-fake/" in capsys.readouterr().out
    logged, config = _wandb_logged(offline_wandb)
    flat, _ = flat_metrics(json.loads((risk_run / "metrics.json").read_text()))
    assert {k: logged[k] for k in flat} == flat
    assert (
        logged["model/unweighted/overall/roc_auc"]
        == json.loads((risk_run / "metrics.json").read_text())["model"]["unweighted"]["overall"]["roc_auc"]
    )
    assert config["run_folder"] == str(risk_run) and config["fingerprint"] == read_manifest(risk_run).fingerprint
    # the tables and PNG figures show in W&B as tables and images, not only as artifact files
    # (W&B records a media value as flat keys: tables/scores/_type, tables/scores/nrows, ...)
    assert logged["tables/scores/_type"] == "table-file"
    assert logged["tables/scores/nrows"] == len(read_table(risk_run, "scores"))
    figures = sorted(p.stem for p in risk_run.rglob("*.png"))
    assert figures and all(logged[f"figures/{name}/_type"] == "image-file" for name in figures)


def test_a_table_longer_than_the_wandb_limit_stays_an_artifact_file_only(capsys, risk_run, offline_wandb, monkeypatch):
    import folkscope.export.trackers as trackers

    monkeypatch.setattr(trackers, "WANDB_TABLE_ROWS", len(read_table(risk_run, "scores")) - 1)
    assert main(["export", str(risk_run), "--wandb-project", "folkscope-tests"]) == 0
    logged, _ = _wandb_logged(offline_wandb)
    assert "tables/scores/_type" not in logged and "figures/roc/_type" in logged


def test_mlflow_file_store_holds_metrics_params_caveats_tables_figures_and_page(capsys, risk_run, file_store):
    assert main(["export", str(risk_run), "--mlflow-uri", file_store]) == 0
    client, run = _mlflow_run(file_store, risk_run)
    metrics = json.loads((risk_run / "metrics.json").read_text())
    flat, skipped = flat_metrics(metrics)
    assert run.data.metrics == {_mlflow_key(k): v for k, v in flat.items()}
    assert run.data.metrics["model/unweighted/overall/ece"] == metrics["model"]["unweighted"]["overall"]["ece"]
    assert run.data.tags["metrics_not_finite"] == str(skipped)
    assert run.data.params["part"] == "risk" and run.data.params["config/task/name"] == "NISTIncome"
    for caveat in read_manifest(risk_run).caveats:
        assert run.data.tags[f"caveat/{caveat['code']}"] == caveat["message"]
    files = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"tables", "figures", "report.html", "manifest.json", "caveats.txt"} <= files
    assert "tables/scores.parquet" in {a.path for a in client.list_artifacts(run.info.run_id, "tables")}
    pngs = {p.name for p in risk_run.rglob("*.png")}
    assert pngs and {Path(a.path).name for a in client.list_artifacts(run.info.run_id, "figures")} == pngs
    assert run.info.status == "FINISHED"


def test_tracker_flags_on_a_run_command_log_the_run_it_published(capsys, tmp_path, file_store, offline_wandb):
    results = tmp_path / "results"
    argv = numeric_argv(results, "--mlflow-uri", file_store, "--wandb-project", "p", "--tracker-run-name", "colors")
    assert main(argv) == 0
    out = capsys.readouterr().out
    (folder,) = [p.parent for p in results.rglob("manifest.json")]
    assert "to MLflow" in out and "to W&B" in out
    _, run = _mlflow_run(file_store, folder)
    flat, _ = flat_metrics(json.loads((folder / "metrics.json").read_text()))
    assert run.data.metrics == {_mlflow_key(k): v for k, v in flat.items()} and run.info.run_name == "colors"
    logged, _ = _wandb_logged(offline_wandb)
    assert {k: logged[k] for k in flat} == flat


def test_a_missing_tracker_library_is_one_line_before_anything_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)  # `import wandb` raises ImportError
    results = tmp_path / "results"
    assert main(numeric_argv(results, "--wandb-project", "p")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'folkscope[wandb]'" in err
    assert not results.exists()  # refused before the run started


def test_wandb_online_without_a_login_is_refused_before_the_run(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "online")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    results = tmp_path / "results"
    assert main(numeric_argv(results, "--wandb-project", "p")) == 2
    assert "needs a W&B login" in capsys.readouterr().err and not results.exists()


def test_a_tracker_failure_keeps_the_run_and_says_how_to_log_it_again(capsys, tmp_path, file_store, monkeypatch):
    from mlflow.tracking import MlflowClient

    def refuse(*_args, **_kwargs):
        raise ConnectionError("tracking server unreachable")

    monkeypatch.setattr(MlflowClient, "create_run", refuse)
    results = tmp_path / "results"
    assert main(numeric_argv(results, "--mlflow-uri", file_store)) == 2
    err = capsys.readouterr().err.splitlines()[-1]  # after the run's own progress lines
    (folder,) = [p.parent for p in results.rglob("manifest.json")]
    assert err.startswith("folkscope: error: logging ") and "tracking server unreachable" in err
    assert f"folkscope export {folder} --mlflow-uri {file_store}" in err
    assert (folder / "metrics.json").is_file()  # the run is published and whole


def test_metrics_are_flattened_with_non_finite_numbers_counted_not_logged():
    flat, skipped = flat_metrics(
        {"config": {"seed": 1}, "a": {"b": 0.5, "c": math.nan, "d": {"e": math.inf}}, "f": [1.0], "g": True, "h": 2}
    )
    assert flat == {"a/b": 0.5, "h": 2.0} and skipped == 2


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("model/unweighted/groups/RAC1P/intervals/groups/Some other race/ece/low", None),
        ("groups/White (non-Hispanic), 65+/ece", "groups/White _non-Hispanic__ 65_/ece"),
        ("a//b/../c", "a/_/b/_/c"),
    ],
)
def test_mlflow_keys_are_made_acceptable_to_mlflow(key, expected):
    from mlflow.utils.validation import _validate_metric_name

    made = _mlflow_key(key)
    assert made == (expected or key)
    _validate_metric_name(made)  # raises on a key MLflow refuses


def test_a_study_plan_logs_each_cell_once_and_never_its_cost_estimate(capsys, tmp_path, file_store):
    plan = tmp_path / "tracked.toml"
    plan.write_text(
        'name = "tracked"\n[[models]]\nmodel = "fake"\ninference_backend = "fake"\n[numeric]\ntasks = ["colors"]\n'
        f'options = {{ limit = 10, no_cache = true, mlflow_uri = "{file_store}" }}\n'
    )
    results = tmp_path / "results"
    assert main(["study", "run", str(plan), "--results-dir", str(results), "--no-leaderboard"]) == 0
    capsys.readouterr()
    (folder,) = [p.parent for p in results.rglob("manifest.json")]
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=file_store)
    (experiment,) = [e for e in client.search_experiments() if e.name == "folkscope"]
    (run,) = client.search_runs([experiment.experiment_id])  # the estimate's stand-in run is not among them
    assert run.data.tags["folkscope.run_folder"] == str(folder)
