"""Auditing logged rankings without a model: hand-computed tables, messy files, and Bloomberg's own published rates."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from folkscope.allocation import ResponsesConfig, audit_responses, read_responses
from folkscope.cli.main import main
from folkscope.errors import ConfigError, DataError

#: the project's test-only data, beside the checkout (FOLKSCOPE_SHARED_DATA elsewhere)
SHARED_DATA = Path(os.environ.get("FOLKSCOPE_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
BLOOMBERG = SHARED_DATA / "bloomberg-gpt-hiring-audit"


def _line(names, groups, response, **extra):
    return json.dumps({"candidates": names, "groups": groups, "response": response, **extra})


def test_audit_by_hand(tmp_path):
    lines = [
        _line(["Ann Wu", "Bo Lee", "Cy Ng"], ["A", "B", "B"], "1. Bo Lee\n2. Ann Wu\n3. Cy Ng", job="x"),
        _line(["Di Ray", "Ed Fox", "Flo Kim"], ["A", "B", "B"], "ed fox first, then di ray.", job="x"),
        _line(["Gus Oh", "Hal Yu", "Ivy Li"], ["A", "B", "B"], "Ivy Li is the only one I would hire.", job="y"),
        _line(["Jo Ma", "Kai Su", "Lu Xi"], ["A", "B", "B"], "I will not rank people.", job="y"),
        "",
    ]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines))
    audit = audit_responses(read_responses(path), config=ResponsesConfig(k=1, reference="A"))
    assert (audit.n_responses, audit.n_unparseable, audit.unparseable_lines) == (4, 1, [4])
    table = audit.table.set_index("group")
    # A: never first in 3 pools; B: 6 appearances, 3 selections
    assert table.loc["A", "appearances"] == 3 and table.loc["A", "selected"] == 0
    assert table.loc["B", "selection_rate"] == 0.5 and table.loc["A", "impact_ratio"] == 0.0
    by_job = audit_responses(read_responses(path), config=ResponsesConfig(k=2, by=("job",))).table
    assert by_job["job"].tolist() == ["x", "x", "y", "y"]
    # job y, k=2: Ivy first, Gus and Hal tie for the last place -> A gets 0.5 of a place
    assert by_job.set_index(["job", "group"]).loc[("y", "A"), "selected"] == 0.5
    assert "rabbi" in by_job and by_job["rabbi"].isna().all()  # no reference: no RABBI


def test_bad_files_and_flags_are_one_clear_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_line(["Ann Wu"], ["A"], "Ann Wu") + "\n{not json\n")
    with pytest.raises(DataError, match="line 2 is not valid JSON .*; each line must be one JSON object"):
        read_responses(bad)
    bad.write_text(_line(["Ann Wu", "Bo Lee"], ["A"], "Ann Wu"))
    with pytest.raises(DataError, match="line 1: 'groups' must list one group per candidate"):
        audit_responses(read_responses(bad))
    bad.write_text(_line(["Ann Wu", "Bo Lee"], ["A", " "], "Ann Wu"))
    with pytest.raises(DataError, match="non-blank"):
        audit_responses(read_responses(bad))
    ok = tmp_path / "ok.jsonl"
    ok.write_text(_line(["Ann Wu", "Bo Lee"], ["A", "B"], "1. Ann Wu"))
    with pytest.raises(ConfigError, match="k=3 is larger than the pool"):
        audit_responses(read_responses(ok), config=ResponsesConfig(k=3))
    with pytest.raises(ConfigError, match="reference group 'C' never appears"):
        audit_responses(read_responses(ok), config=ResponsesConfig(reference="C"))
    with pytest.raises(DataError, match="no key 'job'"):
        audit_responses(read_responses(ok), config=ResponsesConfig(by=("job",)))
    with pytest.raises(DataError, match="no responses file"):
        read_responses(tmp_path / "missing.jsonl")


def test_the_command_leads_with_the_answer_and_writes_the_table(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text(
        "\n".join(_line(["Ann Wu", "Bo Lee"], ["A", "B"], f"1. {w}") for w in ["Bo Lee", "Bo Lee", "Ann Wu"])
    )
    out = tmp_path / "audit.csv"
    assert main(["allocation", "responses", str(log), "--reference", "B", "--output", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("audited 3 of 3 responses") and "lowest impact ratio: A" in printed[1]
    assert pd.read_csv(out).set_index("group").loc["A", "selection_rate"] == pytest.approx(1 / 3)


def _bloomberg_records(limit=None):
    records = []
    with tarfile.open(BLOOMBERG / "intermediary" / "resume_ranking_runs.tar.xz", "r:xz") as archive:
        for member in archive:
            if not member.isfile() or "oversampled" in member.name:
                continue
            run = json.load(archive.extractfile(member))
            context = run["context"]
            records.append(
                {
                    "candidates": context["default_order"],
                    "groups": context["demo_order"],
                    "response": run["choices"][0]["message"]["content"],
                    "job": context["job"],
                    "model": member.name.split("/")[1],
                }
            )
    return records


@pytest.mark.skipif(
    not BLOOMBERG.is_dir(), reason=f"the Bloomberg hiring-audit data is not at {BLOOMBERG} (set FOLKSCOPE_SHARED_DATA)"
)
def test_bloomberg_logged_rankings_reproduce_its_published_top_one_counts():
    """8,000 logged GPT-3.5/GPT-4 rankings (Apache-2.0): each group's top-1 count per (model, job) within 3 of Bloomberg's.

    One answer ranks nobody ("it is difficult to rank the candidates ... however, MEAGAN KLEIN, ALFREDA BRANCH, and
    ANTOINE WARE seem to have relevant experience"): it is left out, where Bloomberg counted its first name as the top."""
    audit = audit_responses(_bloomberg_records(), config=ResponsesConfig(k=1, by=("model", "job"), reference="W_M"))
    assert audit.n_responses == 8000 and audit.n_unparseable == 1
    published = pd.read_csv(BLOOMBERG / "output" / "performance_ranking.csv")
    merged = audit.table.merge(published, left_on=["model", "job", "group"], right_on=["model", "job", "demo"])
    short = (merged["model"] == "gpt-3.5-turbo") & (merged["job"] == "HR specialist")  # the cell of the answer left out
    assert len(merged) == 64 and (merged["appearances"] == 1000 - short.astype(int)).all()
    assert (merged["selected"] - merged["top"]).abs().max() <= 3
    assert (
        merged["selected"] - merged["top"]
    ).sum() == -1  # every other run crowns exactly one candidate in both counts
