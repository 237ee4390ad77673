"""Running a study: resumable cell by cell, the same bytes whether it ran straight through, was killed and resumed,
or ran on a local Ray cluster; failures recorded and the rest run; the leaderboard at the end."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import pytest

from folkscope.cli.main import main

from .studies import folder_bytes, kill, start_held, study

#: a small grid on the stand-in model: 3 parts, 5 cells, seconds to run
PLAN = """
name = "tiny"
[[models]]
model = "fake"
label = "stand-in"
inference_backend = "fake"
[risk]
tasks = ["NISTIncome"]
options = { subsampling = 0.05, n_bootstrap = 10, no_baselines = true }
vary = { numeric_risk_prompting = [false, true] }
[epidemiology]
tasks = ["acs_income_by_sex"]
vary = { mode = ["qa", "likelihood"] }
[numeric]
tasks = ["distributions"]
options = { limit = 8 }
"""


def plan_file(tmp_path: Path, text: str = PLAN) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(text)
    return path


def run(folder: Path, *extra: str, plan: Path | None = None) -> subprocess.CompletedProcess:
    return study(folder, plan or plan_file(folder), *extra)


@pytest.fixture(scope="module")
def straight(tmp_path_factory) -> tuple[Path, str]:
    """The tiny study run straight through, once for the module."""
    tmp = tmp_path_factory.mktemp("straight")
    done = run(tmp, "--results-dir", "results")
    assert done.returncode == 0, done.stderr
    return tmp / "results", done.stdout


def test_a_study_runs_every_cell_then_writes_the_leaderboard_and_says_where(straight):
    results, out = straight
    lines = out.strip().splitlines()
    assert lines[0] == "study tiny: 5 cells (risk, epidemiology, numeric; 1 model): 0 done, 5 to run"
    assert max(map(len, lines)) <= 80  # folded to the terminal (80 columns without one)
    assert "cost before starting" in out and "stand-in: 5 cells, about" in out
    assert sum(line.startswith("[") and " cells, " in line for line in lines) == 5  # one progress line per cell
    assert "[5/5 cells, 0 left]" in out
    assert lines[-2:] == [
        "answer: 5 of 5 cells done",
        f"report: {Path('results') / 'leaderboard' / 'index.html'}",
    ]
    assert f"study folder: {Path('results') / 'study-tiny'}" in out
    ledger = json.loads((results / "study-tiny" / "cells.json").read_text())
    assert [c["status"] for c in ledger["cells"]] == ["done"] * 5
    for cell in ledger["cells"]:
        assert (results / cell["folder"] / "manifest.json").is_file()
        assert cell["command"].startswith(f"folkscope {cell['part']} run ")
    assert (results / "leaderboard" / "index.html").is_file()
    assert (results / "study-tiny" / "plan.toml").is_file()


def test_a_rerun_finds_every_cell_done_and_runs_nothing(straight, tmp_path):
    results, _ = straight
    before = folder_bytes(results)
    done = run(results.parent, "--results-dir", "results", "--no-estimate")
    assert done.returncode == 0, done.stderr
    assert "5 done, 0 to run" in done.stdout and "running " not in done.stdout
    assert folder_bytes(results) == before


def test_a_dry_run_lists_each_cell_its_status_and_command_and_writes_nothing(straight, tmp_path):
    results, _ = straight
    done = run(results.parent, "--results-dir", "results", "--dry-run", "--no-estimate")
    assert done.returncode == 0
    assert done.stdout.count("[done] ") == 5 and "folkscope numeric run --task distributions" in done.stdout
    fresh = run(tmp_path, "--results-dir", "fresh", "--dry-run", "--no-estimate")
    assert fresh.stdout.count("[to run] ") == 5 and not (tmp_path / "fresh").exists()


def test_a_study_killed_after_two_cells_resumes_and_leaves_the_same_bytes(straight, tmp_path):
    """The kill happens at a known point: the study holds after its second cell until the test has killed it."""
    results, _ = straight
    proc, _ = start_held(tmp_path, plan_file(tmp_path), 2, "--results-dir", "results", "--no-estimate")
    kill(proc)
    ledger = json.loads((tmp_path / "results" / "study-tiny" / "cells.json").read_text())
    assert len(ledger["cells"]) == 2
    resumed = run(tmp_path, "--results-dir", "results", "--no-estimate")
    assert resumed.returncode == 0, resumed.stderr
    assert "2 done, 3 to run" in resumed.stdout and resumed.stdout.count("running ") == 3
    assert folder_bytes(tmp_path / "results") == folder_bytes(results)


def test_a_failing_cell_is_recorded_the_others_run_and_the_study_exits_1(tmp_path):
    broken = PLAN.replace("options = { limit = 8 }", 'options = { limit = 8, template_file = "missing.json" }')
    broken = broken.replace("[numeric]", "[numeric]")
    path = plan_file(tmp_path, broken)
    (tmp_path / "missing.json").write_text("{not json")
    done = run(tmp_path, "--results-dir", "results", "--no-estimate", plan=path)
    assert done.returncode == 1
    ledger = json.loads((tmp_path / "results" / "study-tiny" / "cells.json").read_text())
    assert [c["status"] for c in ledger["cells"]] == ["done"] * 4 + ["failed"]
    assert "missing.json" in ledger["cells"][-1]["error"]
    assert "answer: 4 of 5 cells done, 1 failed" in done.stdout


def test_two_studies_in_one_folder_at_once_the_second_is_refused_in_one_line(tmp_path):
    proc, _ = start_held(tmp_path, plan_file(tmp_path), 1, "--results-dir", "results", "--no-estimate")
    try:
        second = run(tmp_path, "--results-dir", "results", "--no-estimate")
        assert second.returncode == 2
        assert second.stderr.strip().splitlines() == [
            "folkscope: error: another process is running study 'tiny' in results; wait for it, or pass another "
            "--results-dir"
        ]
    finally:
        kill(proc)


def test_on_a_local_ray_cluster_the_study_leaves_the_same_bytes(straight, tmp_path):
    pytest.importorskip("ray")
    results, _ = straight
    done = run(tmp_path, "--results-dir", "results", "--ray-address", "local", "--jobs", "2", "--no-estimate")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Ray cluster " in done.stdout and "2 cells at once" in done.stdout
    assert folder_bytes(tmp_path / "results") == folder_bytes(results)
    logging.getLogger(__name__).info("ray study output:\n%s", done.stdout)


def test_jobs_without_a_cluster_is_one_line(tmp_path, capsys):
    assert main(["study", "run", "demo", "--jobs", "2"]) == 2
    assert "--jobs applies with --ray-address" in capsys.readouterr().err


def test_the_cost_is_measured_per_shape_priced_for_a_web_api_and_never_downloads(tmp_path, monkeypatch, capsys):
    """ACSIncome's Census file is not here: sizing the study says so instead of fetching it; NISTIncome is measured
    on the stand-in (its distinct requests, the same for both models), and the web-API model is priced."""
    pytest.importorskip("litellm")
    monkeypatch.setenv("FOLKSCOPE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("folkscope.data.download._fetch", _no_network)
    plan = tmp_path / "acs.toml"
    plan.write_text(
        'name = "acs"\n[[models]]\nmodel = "openai/gpt-4o-mini"\nuse_web_api_model = true\n'
        '[[models]]\nmodel = "fake"\ninference_backend = "fake"\n'
        '[risk]\ntasks = ["ACSIncome", "NISTIncome"]\noptions = { subsampling = 0.05 }\n'
    )
    assert main(["study", "run", str(plan), "--dry-run", "--results-dir", str(tmp_path / "r")]) == 0
    text = " ".join(capsys.readouterr().out.split())
    fake = int(text.split("fake: 2 cells, about ")[1].split(" ")[0].replace(",", ""))
    api = text.split("openai/gpt-4o-mini: 2 cells, about ")[1]
    assert int(api.split(" ")[0].replace(",", "")) == fake > 0  # the same prompts whatever the model
    assert "prompt tokens (text bytes / 4), about $" in api and "at litellm's price" in api
    assert text.count("1 cell not measured: its data is downloaded when it runs") == 2
    assert not (tmp_path / "r").exists()


def _no_network(*_args, **_kwargs):
    raise AssertionError("sizing a study tried to download a file")
