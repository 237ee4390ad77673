"""Folders and files a command is told to use are checked before any work, as one line (issue 28, item 17).

Found by the third fault campaign: ``--cache-dir`` naming a file,
``leaderboard --output`` under a file and ``prompts --output
/dev/null/x.jsonl`` ended in tracebacks, after the data (and for the cache,
the model) had loaded. The checks live in :mod:`folkscope.paths`; these
tests drive them through the commands, with the loading steps replaced by a
tripwire so a check that came too late fails the test.
"""

from __future__ import annotations

import doctest
import os
from pathlib import Path

import pytest

from folkscope import paths
from folkscope.cli.main import main, run_acs_benchmark_main


@pytest.fixture
def blocker(tmp_path: Path) -> Path:
    """A file standing where a folder belongs."""
    path = tmp_path / "a-file"
    path.write_text("not a folder")
    return path


@pytest.fixture
def tripwire(monkeypatch):
    """Loading survey rows or a model fails the test: every path check must come first."""

    def boom(*_args, **_kwargs):
        raise AssertionError("work started before the paths were checked")

    monkeypatch.setattr("folkscope.engine.Engine.from_config", boom)
    monkeypatch.setattr("folkscope.risk.run.Benchmark.make_benchmark", boom)
    monkeypatch.setattr("folkscope.data.ACSDataset.make_from_task", boom)
    monkeypatch.setattr("folkscope.data.pums.download_pums", boom)
    monkeypatch.setattr("folkscope.engine.models.download_models", boom)
    monkeypatch.setattr("folkscope.epidemiology.load_dataset", boom)
    monkeypatch.setattr("folkscope.report.compare.compare_runs", boom)
    monkeypatch.setattr("folkscope.report.leaderboard.write_leaderboard", boom)


def _one_line(capsys, argv, *, call=main) -> str:
    code = call([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


FAKE = ["--inference-backend", "fake", "--model", "fk"]


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--task", "NISTIncome"],
        ["numeric", "run", "--limit", "2"],
        ["epidemiology", "run", "--dataset", "anes96"],
        ["evidence", "--task", "NISTIncome"],
    ],
    ids=lambda c: c[0] if c[0] != "epidemiology" else "epidemiology run",
)
def test_a_cache_dir_that_is_a_file_is_refused_before_any_work(capsys, tmp_path, blocker, tripwire, command):
    err = _one_line(capsys, [*command, *FAKE, "--cache-dir", blocker, "--results-dir", tmp_path / "results"])
    assert f"{blocker} is a file, not a folder; pass another --cache-dir" in err
    assert not (tmp_path / "results").exists()


def test_run_acs_benchmark_checks_the_cache_dir_too(capsys, blocker, tripwire):
    err = _one_line(
        capsys, ["--task", "NISTIncome", *FAKE, "--cache-dir", blocker / "cache"], call=run_acs_benchmark_main
    )
    assert "pass another --cache-dir" in err


def test_no_cache_means_the_cache_dir_is_not_used(tmp_path, blocker):
    from folkscope.cli.engine_args import engine_config_from_args
    from folkscope.cli.main import build_parser

    args = build_parser().parse_args(["numeric", "run", *FAKE, "--no-cache", "--cache-dir", str(blocker)])
    assert engine_config_from_args(args).use_cache is False


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--task", "ACSIncome", *FAKE],
        ["prompts", "--task", "ACSIncome"],
        ["epidemiology", "run", "--dataset", "nhanes", *FAKE],
        ["data", "download"],
    ],
)
def test_a_data_dir_under_a_file_is_refused_before_any_download(capsys, blocker, tripwire, command):
    err = _one_line(capsys, [*command, "--data-dir", blocker / "data"])
    assert f"{blocker} is a file, not a folder; pass another --data-dir" in err


def test_a_leaderboard_of_a_missing_folder_fails_and_creates_nothing(capsys, tmp_path, tripwire):
    missing = tmp_path / "no-such-results"
    err = _one_line(capsys, ["leaderboard", missing])
    assert f"RESULTS_DIR {missing} does not exist" in err
    assert not missing.exists()


def test_a_leaderboard_of_an_empty_name_is_not_the_current_folder(capsys, tmp_path, tripwire, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = _one_line(capsys, ["leaderboard", ""])
    assert "RESULTS_DIR is empty" in err and not (tmp_path / "leaderboard").exists()


def test_a_leaderboard_site_under_a_file_is_refused(capsys, tmp_path, blocker, tripwire):
    err = _one_line(capsys, ["leaderboard", tmp_path, "--output", blocker / "site"])
    assert "cannot write the leaderboard site" in err and "pass another --output" in err


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (
            "/dev/null/x.jsonl",
            "cannot write /dev/null/x.jsonl: /dev/null is a file, not a folder; pass another --output",
        ),
        ("BLOCKER/x.jsonl", "is a file, not a folder; pass another --output"),
        ("TMP", "is a folder; name the file to write in it"),
    ],
)
def test_prompts_output_is_checked_before_any_row_is_read(capsys, tmp_path, blocker, tripwire, output, message):
    output = output.replace("BLOCKER", str(blocker)).replace("TMP", str(tmp_path))
    err = _one_line(capsys, ["prompts", "--task", "NISTIncome", "--output", output])
    assert message in err


def test_prompts_hf_dataset_under_a_file_is_refused(capsys, blocker, tripwire):
    assert "pass another --hf-dataset" in _one_line(
        capsys, ["prompts", "--task", "NISTIncome", "--hf-dataset", blocker / "ds"]
    )


def test_compare_output_is_checked_before_the_runs_are_read(capsys, tmp_path, blocker, tripwire):
    err = _one_line(capsys, ["compare", tmp_path / "a", tmp_path / "b", "--output", blocker / "x.json"])
    assert "pass another --output" in err


def test_generate_output_is_checked_before_the_data_is_read(capsys, blocker, tripwire):
    err = _one_line(
        capsys, ["epidemiology", "generate", "--dataset", "anes96", "--n", "1", "--output", blocker / "tasks.json"]
    )
    assert "pass another --output" in err


def test_download_models_save_dir_under_a_file_is_refused(capsys, blocker, tripwire):
    assert "pass another --save-dir" in _one_line(
        capsys, ["download-models", "--model", "x/y", "--save-dir", blocker / "m"]
    )


def test_the_checks_create_nothing(tmp_path):
    paths.check_writable_dir(tmp_path / "a" / "b")
    paths.check_output_file(tmp_path / "c" / "out.jsonl")
    paths.check_folder_path(tmp_path / "d", flag="--data-dir")
    assert os.listdir(tmp_path) == []


def test_the_path_module_examples_run():
    assert doctest.testmod(paths, optionflags=doctest.ELLIPSIS).failed == 0


def test_allocation_responses_output_under_a_file_is_refused_before_the_log_is_read(
    capsys, tmp_path, blocker, monkeypatch
):
    def boom(*_args, **_kwargs):
        raise AssertionError("the log was read before --output was checked")

    monkeypatch.setattr("folkscope.allocation.read_responses", boom)
    log = tmp_path / "log.jsonl"
    log.write_text("")
    err = _one_line(capsys, ["allocation", "responses", log, "--output", blocker / "table.csv"])
    assert f"{blocker} is a file, not a folder" in err


def test_allocation_study_output_under_a_file_is_refused_before_the_runs_are_read(
    capsys, tmp_path, blocker, monkeypatch
):
    def boom(*_args, **_kwargs):
        raise AssertionError("the runs were read before --output was checked")

    monkeypatch.setattr("folkscope.allocation.study", boom)
    err = _one_line(capsys, ["allocation", "study", tmp_path, "--output", blocker / "tables"])
    assert "pass another --output" in err
