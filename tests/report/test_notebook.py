"""Jupyter displays: a run's result, a comparison and a leaderboard table render as HTML that leads with the answer,
holds the numbers, and escapes every name (a model, a folder, a title) like the pages do."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from folkscope.cli.main import main
from folkscope.numeric.run import NumericRun
from folkscope.report import BoardTable, open_result
from folkscope.report.compare import compare_runs

EVIL = "<script>alert(1)</script>"
NUMERIC = ["numeric", "run", "--inference-backend", "fake", "--no-cache", "--model", "fake", "--limit", "20"]
VOID = {"br", "img", "meta", "hr", "input", "link"}


class _Tags(HTMLParser):
    """Every tag in order, checking each one opened is closed in order; and the text, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, (self.open, tag)
        self.open.pop()

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.text.append(data.strip())


def _parsed(html: str) -> _Tags:
    tags = _Tags()
    tags.feed(html)
    tags.close()
    assert not tags.open, tags.open  # valid-ish: every element closed
    assert "script" not in tags.tags and EVIL not in html  # the hostile name is text, never a tag
    return tags


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A base and a chat numeric run on the fake backend, copied under a hostile folder name, the base one also
    renamed to a hostile model."""
    root = tmp_path_factory.mktemp("notebook")
    folders = []
    for name, extra in (("base", ["--no-heatmap"]), ("chat", ["--no-heatmap", "--chat"])):
        assert main([*NUMERIC, *extra, "--results-dir", str(root / name)]) == 0
        (manifest,) = (root / name).rglob("manifest.json")
        folders.append(shutil.copytree(manifest.parent, root / "<script>alert(1)<" / "script>" / name))
    manifest_file = folders[0] / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["engine"]["backend"]["model"]["name"] = EVIL  # where the leaderboard reads the model name
    manifest_file.write_text(json.dumps(manifest))
    return folders[0], folders[1]


def test_a_run_result_leads_with_its_answer_then_metrics_with_intervals(runs) -> None:
    result = open_result(runs[0])
    html = result._repr_html_()
    tags = _parsed(html)
    assert tags.text[0] == result.answer and EVIL in result.answer  # the answer first, naming the model
    assert html.index(result.answer.replace("<", "&lt;").replace(">", "&gt;")) < html.index("<table")
    wd = result.metrics["summary"]["calibration_distance"]
    assert f"{wd['mean']:.3f} [{wd['low']:.3f}, {wd['high']:.3f}]" in " ".join(tags.text)  # WD with its interval
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert repr(result).startswith("<RunResult numeric · ") and len(repr(result)) < 200 and "\n" not in repr(result)
    assert NumericRun(runs[0], {})._repr_html_() == html  # what run_numeric returns displays the same


def test_a_comparison_leads_with_the_difference_and_escapes_the_folders(runs) -> None:
    comparison = compare_runs(*runs, replicates=50)
    html = comparison._repr_html_()
    tags = _parsed(html)
    assert tags.text[0] == comparison.lead()
    metric, scope = comparison.headline[0]
    d = comparison.differences
    row = d[(d["metric"] == metric) & (d["scope"] == scope)].iloc[0]
    assert f"{row['difference']:.3f} [{row['low']:.3f}, {row['high']:.3f}]" in " ".join(tags.text)
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 2  # run A's and run B's folder


def test_a_leaderboard_table_leads_with_its_answer_and_escapes_names() -> None:
    frame = pd.DataFrame(
        {"model": [EVIL, "b"], "AUC": [0.71234, np.nan], "AUC low": [0.6, np.nan], "AUC high": [0.8, np.nan]}
    )
    table = BoardTable("risk", "t", EVIL, frame, intervals={"AUC": ("AUC low", "AUC high")}, lead=f"Best: {EVIL}")
    tags = _parsed(table._repr_html_())
    assert tags.text[0] == f"Best: {EVIL}" and tags.text[1] == EVIL  # the answer, then the title
    assert "0.712 [0.600, 0.800]" in " ".join(tags.text) and tags.text[-1] == "n/a"  # b's AUC is undefined
