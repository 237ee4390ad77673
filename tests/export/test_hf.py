"""``folkscope export RUN_OR_STUDY... --hf DIR``: one dataset at DIR, loadable with ``datasets.load_from_disk(DIR)``,
holding the run folders' own tables, their metrics, and a card that states the data terms."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from folkscope.cli.main import main
from folkscope.export.flatten import flat_metrics
from folkscope.registry import PARTS
from folkscope.runs import read_manifest, read_table

datasets = pytest.importorskip("datasets")

RUN_COLUMNS = ["run_id", "run_part", "run_model", "run_subject"]


def _one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("folkscope: error: "), err
    return err


def _table_of(split, run: Path) -> pd.DataFrame:
    frame = split.to_pandas()
    rows = frame[frame["run_id"] == "/".join(run.parts[-3:])]
    return rows.drop(columns=RUN_COLUMNS).reset_index(drop=True)


def test_an_exported_run_loads_from_its_folder_with_the_run_folders_tables_and_metrics(capsys, risk_run, tmp_path):
    out = tmp_path / "export"
    assert main(["export", str(risk_run), "--hf", str(out)]) == 0
    assert "exported 1 run(s)" in capsys.readouterr().out.replace("\n  ", " ")
    loaded = datasets.load_from_disk(str(out))
    assert isinstance(loaded, datasets.DatasetDict)
    declared = [name for name, spec in PARTS["risk"].tables.items() if spec.file.endswith(".parquet")]
    assert sorted(loaded) == sorted(["runs", *declared])  # one part: the tables keep their own names
    for name in declared:
        pd.testing.assert_frame_equal(_table_of(loaded[name], risk_run), read_table(risk_run, name), check_dtype=False)
    (row,) = loaded["runs"].to_list()
    manifest = read_manifest(risk_run)
    assert (row["run_part"], row["run_model"], row["run_subject"]) == ("risk", "export-fake", "NISTIncome")
    assert row["fingerprint"] == manifest.fingerprint and json.loads(row["config"]) == manifest.config
    metrics = json.loads((risk_run / "metrics.json").read_text())
    flat, skipped = flat_metrics(metrics)
    assert row["metric/model/unweighted/overall/roc_auc"] == metrics["model"]["unweighted"]["overall"]["roc_auc"]
    assert {k: row[f"metric/{k}"] for k in flat} == flat and row["metrics_not_finite"] == skipped
    assert [c.split(":")[0] for c in row["caveats"]] == [c["code"] for c in manifest.caveats]


def test_runs_of_two_parts_keep_their_tables_apart_and_say_whose_each_row_is(risk_run, numeric_run, tmp_path):
    out = tmp_path / "mixed"
    assert main(["export", str(risk_run), str(numeric_run), "--hf", str(out)]) == 0
    loaded = datasets.load_from_disk(str(out))
    assert "risk_scores" in loaded and "numeric_problems" in loaded and "scores" not in loaded
    assert loaded["runs"]["run_part"] == ["risk", "numeric"]
    pd.testing.assert_frame_equal(
        _table_of(loaded["numeric_probabilities"], numeric_run),
        read_table(numeric_run, "probabilities"),
        check_dtype=False,
    )
    assert set(loaded["numeric_problems"]["run_part"]) == {"numeric"}


def test_a_study_folder_exports_every_finished_cell(capsys, tmp_path):
    plan = tmp_path / "tiny.toml"
    plan.write_text(
        'name = "tiny"\n[[models]]\nmodel = "fake"\ninference_backend = "fake"\n[risk]\ntasks = ["NISTIncome"]\n'
        "options = { subsampling = 0.03, n_bootstrap = 10, no_baselines = true, no_cache = true }\n"
        "vary = { chat = [false, true] }\n"
    )
    results = tmp_path / "results"
    argv = ["study", "run", str(plan), "--results-dir", str(results), "--no-estimate", "--no-leaderboard"]
    assert main(argv) == 0
    capsys.readouterr()
    study = results / "study-tiny"
    cells = json.loads((study / "cells.json").read_text())["cells"]
    assert main(["export", str(study), "--hf", str(tmp_path / "export")]) == 0
    loaded = datasets.load_from_disk(str(tmp_path / "export"))
    assert sorted(loaded["runs"]["run_id"]) == sorted(c["folder"] for c in cells) and len(cells) == 2
    assert loaded["scores"].num_rows == sum(len(read_table(results / c["folder"], "scores")) for c in cells)


def test_the_card_names_model_task_metrics_with_intervals_caveats_and_data_terms(risk_run, tmp_path):
    out = tmp_path / "card"
    assert main(["export", str(risk_run), "--hf", str(out)]) == 0
    card = (out / "README.md").read_text()
    header, body = card.split("---\n")[1], card.split("---\n", 2)[2]
    assert (
        "license: other" in header
        and "- folkscope" in header
        and "  - split: scores\n    path: data/scores-*" in header
    )
    assert "model: `export-fake`" in body and "task: `NISTIncome`" in body
    auc = json.loads((risk_run / "metrics.json").read_text())["model"]["unweighted"]
    low, high = auc["intervals"]["roc_auc"]["low"], auc["intervals"]["roc_auc"]["high"]
    assert f"{auc['overall']['roc_auc']:.3f} [{low:.3f}, {high:.3f}]" in body  # AUC with its interval
    for caveat in read_manifest(risk_run).caveats:
        assert caveat["message"] in body
    assert "- NIST ACS 2019 excerpt: public domain" in body and "no licence" not in body


def _copy_with_data(run: Path, where: Path, data: dict) -> Path:
    copy = where / "NISTIncome" / "export-fake" / run.name
    shutil.copytree(run, copy)
    dataclasses.replace(read_manifest(copy), data=data).write(copy)
    return copy


def test_data_without_a_licence_is_said_so_and_never_pushed_openly(capsys, risk_run, tmp_path, monkeypatch):
    bare = _copy_with_data(
        risk_run, tmp_path, {"source": "RABBI authors' resumes", "licence": "none stated (no licence file)"}
    )
    assert main(["export", str(bare), "--hf", str(tmp_path / "out")]) == 0
    card = (tmp_path / "out" / "README.md").read_text()
    assert "license: unknown" in card and "carries no licence" in card and "must not be redistributed" in card
    monkeypatch.setenv("HF_TOKEN", "hf_test_token_not_real")
    err = _one_line_error(capsys, ["export", str(bare), "--hf", str(tmp_path / "o2"), "--push-to-hub", "me/x"])
    assert "carries no licence" in err and "--private" in err and not (tmp_path / "o2").exists()


def test_an_earlier_export_is_replaced_whole(risk_run, numeric_run, tmp_path):
    out = tmp_path / "again"
    assert main(["export", str(risk_run), str(numeric_run), "--hf", str(out)]) == 0
    assert main(["export", str(numeric_run), "--hf", str(out)]) == 0
    loaded = datasets.load_from_disk(str(out))
    assert "risk_scores" not in loaded and "problems" in loaded and loaded["runs"].num_rows == 1
    assert not [p for p in out.iterdir() if p.name.startswith(".")] and not list(tmp_path.glob(".again*"))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "{tmp}/missing", "--hf", "{tmp}/o"], "does not exist; pass a run folder"),
        (["export", "{results}", "--hf", "{tmp}/o"], "is neither a run folder"),
        (["export", "{run}/metrics.json", "--hf", "{tmp}/o"], "is a file; pass a run folder"),
        (["export", "{run}", "--hf", "{results}"], "a folder with other files in it, not an earlier export"),
        (["export", "{run}", "--hf", "{run}/metrics.json"], "is a file, not a folder"),
        (["export", "{run}", "--hf", "{run}/dataset"], "lies inside the run folder"),
        (["export", "{run}"], "nothing to do: pass --hf DIR"),
        (["export", "{run}", "--push-to-hub", "me/x"], "add --hf DIR"),
        (["export", "{run}", "--hf", "{tmp}/o", "--private"], "--private applies to --push-to-hub"),
        (["export", "{run}", "--hf", "{tmp}/o", "--push-to-hub", "no-owner"], "is not a repo id"),
    ],
)
def test_bad_inputs_are_refused_in_one_line_before_anything_is_written(
    capsys, risk_run, results, tmp_path, monkeypatch, argv, message
):
    monkeypatch.setenv("HF_TOKEN", "hf_test_token_not_real")
    filled = [a.format(tmp=tmp_path, run=risk_run, results=results) for a in argv]
    assert message in _one_line_error(capsys, filled)
    assert not (tmp_path / "o").exists()


def test_push_without_a_token_is_refused_before_anything_is_written(capsys, risk_run, tmp_path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no stored login either
    err = _one_line_error(capsys, ["export", str(risk_run), "--hf", str(tmp_path / "o"), "--push-to-hub", "me/x"])
    assert "needs a Hugging Face token" in err and not (tmp_path / "o").exists()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz._-0123456789", min_size=1, max_size=12).filter(
            lambda n: n not in (".", "..", "manifest.json", "cells.json", "config.json")
        ),
        max_size=4,
        unique=True,
    )
)
def test_any_folder_that_is_neither_a_run_nor_a_study_is_refused_in_one_line(capsys, tmp_path_factory, names):
    folder = tmp_path_factory.mktemp("not-a-run")
    for name in names:
        (folder / name).write_text("{}")
    out = folder.parent / f"{folder.name}-export"
    assert main(["export", str(folder), "--hf", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is neither a run folder" in err and not out.exists()


def test_push_to_hub_uploads_the_card_then_the_tables_through_the_hub_clients(capsys, risk_run, tmp_path, monkeypatch):
    """The network boundary is huggingface_hub's HfApi and datasets' push_to_hub: recorded here, never called."""
    import huggingface_hub

    calls = []
    monkeypatch.setenv("HF_TOKEN", "hf_test_token_not_real")
    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", lambda self, repo, **kw: calls.append(("repo", repo, kw)))
    monkeypatch.setattr(
        huggingface_hub.HfApi,
        "upload_file",
        lambda self, **kw: calls.append(("card", Path(kw["path_or_fileobj"]).read_text(), kw)),
    )
    monkeypatch.setattr(
        datasets.DatasetDict,
        "push_to_hub",
        lambda self, repo, **kw: calls.append(("tables", repo, {s: self[s].num_rows for s in self}, kw)),
    )
    out = tmp_path / "pushed"
    argv = ["export", str(risk_run), "--hf", str(out), "--push-to-hub", "me/folkscope-results", "--private"]
    assert main(argv) == 0
    assert "pushed to https://huggingface.co/datasets/me/folkscope-results (private)" in capsys.readouterr().out
    (_, repo, repo_kw), (_, card, card_kw), (_, tables_repo, splits, tables_kw) = calls
    assert repo == tables_repo == "me/folkscope-results" and repo_kw["private"] and tables_kw["private"]
    assert repo_kw["repo_type"] == card_kw["repo_type"] == "dataset" and card_kw["path_in_repo"] == "README.md"
    assert card == (out / "README.md").read_text()
    assert splits == {s: len(d) for s, d in datasets.load_from_disk(str(out)).items()}


def test_the_command_prints_folkscope_lines_only(risk_run, tmp_path):
    """datasets' "Saving the dataset ... 100%|" bars and other libraries' chatter stay off the terminal."""
    out = tmp_path / "quiet"
    proc = subprocess.run(
        [sys.executable, "-m", "folkscope.cli.main", "export", str(risk_run), "--hf", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "TQDM_DISABLE": ""},
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.splitlines()[0].startswith("exported 1 run(s) ")
    assert proc.stdout.splitlines()[-1] == f"dataset: {out}"
    assert "%|" not in proc.stdout and "Saving the dataset" not in proc.stdout


def test_quieting_the_libraries_restores_their_bars_and_loggers_for_a_python_caller():
    import logging

    from datasets.utils import logging as ds_logging

    from folkscope._quiet import quiet_libraries

    ds_logging.enable_progress_bar()
    level = logging.getLogger("mlflow").level
    with quiet_libraries():
        assert not ds_logging.is_progress_bar_enabled() and logging.getLogger("mlflow").level == logging.ERROR
        print("a library's own line")  # to folkscope's log, not the terminal
    assert ds_logging.is_progress_bar_enabled() and logging.getLogger("mlflow").level == level
