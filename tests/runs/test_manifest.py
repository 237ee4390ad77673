"""manifest.json: written by every part, read without the part, legacy folders recognised, damage refused in one line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from folkscope._json import fingerprint
from folkscope.errors import ConfigError, DataError
from folkscope.registry import PARTS, part
from folkscope.runs import (
    MANIFEST_FILE,
    Manifest,
    RunFolder,
    check_same_run,
    read_manifest,
    read_table,
    run_path,
    safe_name,
)


def test_a_manifest_round_trips_and_declares_its_parts_tables(tmp_path):
    m = Manifest(
        part="numeric", fingerprint="f" * 64, config={"dataset": "colors"}, engine={"backend": {"backend": "fake"}}
    )
    m.write(tmp_path)
    data = json.loads((tmp_path / MANIFEST_FILE).read_text())
    assert data["schema"] == 1 and data["part"] == "numeric" and "legacy" not in data
    assert data["tables"]["probabilities"]["file"] == "probabilities.parquet"
    assert data["versions"]["python"] and data["created"].endswith("+00:00")
    back = read_manifest(tmp_path)
    assert back == m and not back.legacy


def test_unknown_part_and_missing_fingerprint_are_refused():
    with pytest.raises(
        ConfigError, match="unknown part 'astrology'; known parts: risk, numeric, allocation, epidemiology"
    ):
        Manifest(part="astrology", fingerprint="x", config={})
    with pytest.raises(ConfigError, match="fingerprint"):
        Manifest(part="risk", fingerprint="", config={})


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "does not hold a manifest"),
        ('{"schema": 99, "part": "risk"}', "manifest schema 99 is not the one this folkscope reads"),
    ],
)
def test_a_damaged_or_newer_manifest_is_one_clear_line(tmp_path, content, message):
    (tmp_path / MANIFEST_FILE).write_text(content)
    with pytest.raises(DataError, match=message) as info:
        read_manifest(tmp_path)
    assert "\n" not in str(info.value)


def test_folders_from_before_manifests_are_recognised_by_their_config(tmp_path):
    risk = tmp_path / "risk"
    risk.mkdir()
    (risk / "config.json").write_text(
        json.dumps({"benchmark_config": {}, "prompt_config": {}, "fingerprint": "abc", "engine": {"e": 1}})
    )
    numeric = tmp_path / "numeric"
    numeric.mkdir()
    config = {"dataset": "colors", "n_numbers": 2, "scales": ["small"]}
    (numeric / "config.json").write_text(json.dumps(config))
    r, n = read_manifest(risk), read_manifest(numeric)
    assert (r.part, r.fingerprint, r.engine, r.legacy) == ("risk", "abc", {"e": 1}, True)
    assert (n.part, n.fingerprint, n.legacy) == ("numeric", fingerprint(config), True)


def test_a_folder_that_is_no_run_is_one_clear_line(tmp_path):
    with pytest.raises(DataError, match="is not a finished run folder: no manifest.json or config.json"):
        read_manifest(tmp_path)
    (tmp_path / "config.json").write_text('{"something": "else"}')
    with pytest.raises(DataError, match="matches no known part"):
        read_manifest(tmp_path)


def test_another_part_reads_a_declared_table_through_the_manifest(tmp_path):
    Manifest(part="risk", fingerprint="f" * 64, config={}).write(tmp_path)
    pd.DataFrame({"row_id": [1, 2], "risk_score": [0.2, 0.9]}).to_parquet(tmp_path / "scores.parquet")
    assert read_table(tmp_path, "scores")["risk_score"].tolist() == [0.2, 0.9]
    with pytest.raises(DataError, match="declares no table 'cells'; its tables: feature_importance, metrics, scores"):
        read_table(tmp_path, "cells")
    with pytest.raises(DataError, match=r"has no feature_importance.csv \(feature_importance: permutation importance"):
        read_table(tmp_path, "feature_importance")
    with pytest.raises(DataError, match="not a table file; read it as JSON"):
        (tmp_path / "metrics.json").write_text("{}")
        read_table(tmp_path, "metrics")


def test_a_folder_of_another_configuration_is_refused_before_anything_is_staged(tmp_path):
    final = tmp_path / "run"
    with RunFolder(final, fingerprint="a" * 64) as staging:
        Manifest(part="risk", fingerprint="a" * 64, config={}).write(staging)
    check_same_run(final, "a" * 64)  # the same run: fine
    with pytest.raises(ConfigError, match="holds a run of another configuration; pass another --results-dir"):
        with RunFolder(final, fingerprint="b" * 64):
            pass
    assert sorted(p.name for p in tmp_path.iterdir()) == [".run.lock", "run"]  # no staging copy left behind


def test_an_unfinished_attempt_of_another_configuration_is_refused_too(tmp_path):
    final = tmp_path / "run"
    with pytest.raises(RuntimeError), RunFolder(final, fingerprint="a" * 64) as staging:
        Manifest(part="numeric", fingerprint="a" * 64, config={}).write(staging)
        raise RuntimeError("killed")
    with pytest.raises(ConfigError, match="another configuration"):
        with RunFolder(final, fingerprint="c" * 64):
            pass


def test_one_layout_for_every_part():
    path = run_path(
        "results", subject="numeric-colors", model="org/My Model", variant="chat", fingerprint="0123456789abcdef"
    )
    assert path.parts == ("results", "numeric-colors", "org-My-Model", "chat-01234567")
    assert safe_name("..", fallback="model") == "model" and safe_name("a b/c") == "a-b-c"


def test_every_registered_part_names_importable_entry_points():
    for entry in PARTS.values():
        assert callable(entry.load("rescore")) and callable(entry.load("summarise"))
        assert entry.tables and all(spec.file for spec in entry.tables.values())
    with pytest.raises(ConfigError, match="unknown part"):
        part("nope")


@pytest.mark.parametrize(
    "name",
    [
        "folkscope.runs.manifest",
        "folkscope.runs.layout",
        "folkscope.registry",
        "folkscope._json",
        "folkscope._config",
        "folkscope.engine.config",
    ],
)
def test_docstring_examples_run(name):
    import doctest
    import importlib

    failures, tried = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert failures == 0 and tried > 0
