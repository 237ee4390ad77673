"""Every part records what its engine did and paid through the one mechanism (:func:`folkscope.engine.run_accounting`),
and every part's summary prints the web-API line (:func:`folkscope.engine.usage_line`) from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from folkscope.cli.main import main

FAKE = ["--inference-backend", "fake", "--model", "fake", "--no-cache"]
#: part -> its command line on the fake backend, and where its metrics.json keeps the engine's counts
COMMANDS = {
    "risk": (
        ["run", *FAKE, "--task", "NISTPoverty", "--subsampling", "0.02", "--n-bootstrap", "10", "--no-baselines"],
        "scoring",
    ),
    "allocation": (
        ["allocation", "run", *FAKE, "--names-per-group", "1", "--rounds", "2", "--k", "1", "--n-bootstrap", "0"],
        None,
    ),
    "epidemiology": (["epidemiology", "run", *FAKE, "--tasks", "acs_income_by_sex"], None),
    "numeric": (["numeric", "run", *FAKE, "--limit", "10", "--no-heatmap"], None),
}
PAID = {
    "engine_stats": {
        "requested": 4,
        "billed_answers": 4,
        "unbilled_answers": 0,
        "billed": {"api_calls": 5, "prompt_tokens": 400, "completion_tokens": 4, "cost_usd": 0.002},
    },
    "backend_stats": {
        "requests": 4,
        "api_calls": 5,
        "retries": 1,
        "prompt_tokens": 400,
        "completion_tokens": 4,
        "cost_usd": 0.002,
        "cost_known": True,
    },
}


@pytest.mark.parametrize("part", sorted(COMMANDS))
def test_every_part_stores_its_engine_counts_and_prints_what_it_paid(part, tmp_path, capsys):
    argv, under = COMMANDS[part]
    assert main([*argv, "--results-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    (folder,) = [p.parent for p in tmp_path.rglob("manifest.json")]
    metrics = json.loads((folder / "metrics.json").read_text())
    stored = metrics[under] if under else metrics
    assert (
        stored["engine_stats"]["requested"] > 0 and "billed" not in stored["engine_stats"]
    )  # a local model bills nothing
    assert stored["backend_stats"]["requests"] > 0
    # the same summary on a web API's counts: the line every part prints
    paid = {**metrics, under: {**stored, **PAID}} if under else {**metrics, **PAID}
    _summary(part, folder, paid)
    out = capsys.readouterr().out
    assert "web API: this run's 4 answers cost $0.0020" in out and "5 calls for 4 answers, 1 retries" in out


def _summary(part: str, folder: Path, metrics: dict) -> None:
    from folkscope.registry import part as registered

    registered(part).load("summarise")(folder, metrics)
