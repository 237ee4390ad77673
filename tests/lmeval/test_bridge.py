"""lm-eval both ways on the stand-in model: every part exports its questions; a log of them imports as the same run.

The log here is written in lm-eval's own layout from the fake engine's
log-likelihoods (tests/lmeval/logs.py), so the import must give back the
risk scores of the same command run on that engine directly, exactly; the
real lm_eval on a real (tiny, random) model is test_harness.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from folkscope.cli.main import build_parser, main
from folkscope.engine import Engine
from folkscope.errors import ConfigError, DataError
from folkscope.lmeval import export_task, import_samples, read_task
from folkscope.runs import read_manifest

from .logs import write_log

RISK = ["risk", "run", "--task", "NISTIncome", "--limit", "6", "--n-bootstrap", "20"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("tasks")
    return export_task(build_parser(), RISK, out)


def test_export_writes_an_lm_eval_task_of_every_question(exported):
    folder = exported.folder
    assert exported.name == "folkscope_risk_nistincome" and exported.part == "risk"
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md",
        "docs.jsonl",
        "folkscope.json",
        "folkscope_risk_nistincome.yaml",
        "utils.py",
    ]
    meta, items = read_task(folder)
    assert meta["command"] == RISK and meta["context_size"] == 600
    # 6 rows x 2 orderings of the answers, each scored on both letters with and without a leading space
    assert exported.documents == len(items) == 12 and exported.continuations == 48
    assert all(choices == ("A", " A", "B", " B") for _, choices in items)
    assert all(context.endswith("Answer:") for context, _ in items)
    yaml = (folder / "folkscope_risk_nistincome.yaml").read_text(encoding="utf-8")
    assert 'target_delimiter: ""' in yaml and "custom_dataset: !function utils.load_docs" in yaml


def test_every_part_exports(tmp_path):
    commands = {
        "numeric": ["numeric", "run", "--limit", "2"],
        "allocation": ["allocation", "run", "--limit", "1", "--no-chat"],
        "epidemiology": ["epidemiology", "run", "--limit", "1"],
    }
    for part, command in commands.items():
        task = export_task(build_parser(), command, tmp_path)
        assert task.part == part and task.name.startswith(f"folkscope_{part}_") and task.documents > 0
        assert task.name.count(part) == 1  # numeric-colors -> folkscope_numeric_colors


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (["risk", "run", "--task", "NISTIncome", "--limit", "6", "--use-chat-template"], "chat prompts"),
        (["risk", "run", "--task", "NISTIncome", "--limit", "6", "--numeric-risk-prompting"], "next-token"),
        (["risk", "run", "--task", "NISTIncome", "--model", "gpt2"], "drop --model"),
        (["risk", "list"], "run command"),
        ([], "run command"),
        (["risk", "run", "--task", "NoSuchTask"], "NoSuchTask"),
    ],
)
def test_what_cannot_travel_is_refused_in_one_line(tmp_path, command, says):
    with pytest.raises(ConfigError, match=says) as caught:
        export_task(build_parser(), command, tmp_path)
    assert "\n" not in str(caught.value)
    assert not any(tmp_path.iterdir())


def test_import_gives_the_scores_of_the_same_engine_exactly(exported, tmp_path):
    engine = Engine.from_model("demo", backend="fake", use_cache=False)
    write_log(exported.folder, tmp_path / "lm-eval-out", engine, model="demo")
    imported = import_samples(build_parser(), [tmp_path / "lm-eval-out"], exported.folder, tmp_path / "results")
    assert imported.model == "demo" and imported.folder.parts[-3:-1] == ("NISTIncome", "demo")
    main(
        [*RISK, "--inference-backend", "fake", "--model", "demo", "--no-cache", "--results-dir", str(tmp_path / "own")]
    )
    own_folder = next((tmp_path / "own" / "NISTIncome" / "demo").iterdir())
    mine, theirs = (pd.read_parquet(f / "scores.parquet").set_index("row_id") for f in (own_folder, imported.folder))
    ordering = [c for c in mine.columns if c.startswith("score_ordering_")]
    assert len(ordering) == 2
    np.testing.assert_allclose(theirs.loc[mine.index, ["risk_score", *ordering]], mine[["risk_score", *ordering]])
    own_metrics = json.loads((own_folder / "metrics.json").read_text())["model"]["unweighted"]["overall"]
    metrics = json.loads((imported.folder / "metrics.json").read_text())["model"]["unweighted"]["overall"]
    assert metrics["ece"] == pytest.approx(own_metrics["ece"]) and metrics["roc_auc"] == own_metrics["roc_auc"]
    manifest = read_manifest(imported.folder)
    assert manifest.part == "risk" and manifest.engine["backend"]["backend"] == "replay"


def test_import_cli_prints_the_run_and_its_answer_last(exported, tmp_path, capsys):
    engine = Engine.from_model("demo", backend="fake", use_cache=False)
    write_log(exported.folder, tmp_path / "out", engine, model="org/demo-model")
    code = main(
        ["lm-eval", "import", str(tmp_path / "out"), "--task-dir", str(exported.folder), "--results-dir", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("replaying 48 log-likelihoods of demo-model from ")
    assert "answer: AUC" in out and out.rstrip().splitlines()[-1].startswith("report:")


def test_a_log_that_changed_the_contexts_is_refused(exported, tmp_path):
    engine = Engine.from_model("demo", backend="fake", use_cache=False)
    write_log(exported.folder, tmp_path / "fewshot", engine, model="demo", results={"n-shot": {exported.name: 5}})
    with pytest.raises(ConfigError, match="--num_fewshot"):
        import_samples(build_parser(), [tmp_path / "fewshot"], exported.folder, tmp_path / "r")
    log = write_log(exported.folder, tmp_path / "partial", engine, model="demo")
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:-1]) + "\n")  # lm_eval --limit: the last question unanswered
    with pytest.raises(DataError, match="answers 44 of the task's 48"):
        import_samples(build_parser(), [tmp_path / "partial"], exported.folder, tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_import_needs_one_log_and_a_task_folder(exported, tmp_path):
    with pytest.raises(ConfigError, match="no samples_folkscope_risk_nistincome_"):
        import_samples(build_parser(), [tmp_path], exported.folder, tmp_path / "r")
    with pytest.raises(ConfigError, match="holds folkscope_risk_nistincome: pass one"):
        import_samples(build_parser(), [tmp_path], exported.folder.parent, tmp_path / "r")
    engine = Engine.from_model("demo", backend="fake", use_cache=False)
    first = write_log(exported.folder, tmp_path / "two", engine, model="demo")
    first.rename(first.with_name(first.name.replace("10-00-00", "11-00-00")))
    write_log(exported.folder, tmp_path / "two", engine, model="demo")
    with pytest.raises(ConfigError, match="2 logs of folkscope_risk_nistincome"):
        import_samples(build_parser(), [tmp_path / "two"], exported.folder, tmp_path / "r")


def test_cli_export_says_what_to_run_next(tmp_path, capsys):
    code = main(["lm-eval", "export", "--output", str(tmp_path), "--name", "mine", "--", *RISK])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and lines[0] == "answer: lm-eval task mine: 12 questions, 48 log-likelihoods to compute"
    assert "max_length=600" in lines[2] and f"--include_path {tmp_path}" in lines[2]
    assert Path(tmp_path / "mine" / "mine.yaml").is_file()


@pytest.mark.parametrize(
    ("command", "table", "column"),
    [
        (["numeric", "run", "--limit", "2"], "probabilities.parquet", "model_prob"),
        (["allocation", "run", "--limit", "1", "--no-chat", "--n-bootstrap", "20"], "scores.parquet", "score"),
        (["epidemiology", "run", "--limit", "1"], "model.parquet", None),
    ],
    ids=["numeric", "allocation", "epidemiology"],
)
def test_every_part_imports_as_its_own_run_on_the_same_engine(tmp_path, command, table, column):
    task = export_task(build_parser(), command, tmp_path / "tasks")
    write_log(task.folder, tmp_path / "out", Engine.from_model("demo", backend="fake", use_cache=False), model="demo")
    imported = import_samples(build_parser(), [tmp_path / "out"], task.folder, tmp_path / "results")
    assert read_manifest(imported.folder).part == task.part
    main(
        [
            *command,
            "--inference-backend",
            "fake",
            "--model",
            "demo",
            "--no-cache",
            "--results-dir",
            str(tmp_path / "own"),
        ]
    )
    (own,) = (p for p in (tmp_path / "own").glob("*/demo/*") if p.is_dir())
    mine, theirs = pd.read_parquet(own / table), pd.read_parquet(imported.folder / table)
    numbers = [column] if column else [c for c in mine.columns if mine[c].dtype.kind == "f"]
    assert numbers and len(mine) == len(theirs) > 0
    np.testing.assert_allclose(theirs[numbers].to_numpy(float), mine[numbers].to_numpy(float))
    if task.part == "numeric":  # the log holds no tokenization: the multi-token share is unknown, not 0
        assert json.loads((imported.folder / "metrics.json").read_text())["multi_token_share"] is None
