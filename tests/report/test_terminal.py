"""The terminal helpers every summary is built from: tables that fit, one-line caveats, the closing block (issue 32)."""

from __future__ import annotations

import pandas as pd
import pytest

from folkscope.report.terminal import caveat_lines, closing_lines, fit_line, fit_table, terminal_width, wrap

WIDE = pd.DataFrame(
    {"model": ["model", "logistic_regression"], **{f"metric {i}": [0.1 * i, 0.2 * i] for i in range(1, 14)}}
)


def test_a_wide_table_drops_its_last_columns_and_says_how_many_the_page_has():
    lines = fit_table(WIDE, width=80, float_format=lambda v: f"{v:.3f}")
    assert all(len(line) <= 80 for line in lines)
    head = lines[0].split()
    assert head[:3] == ["model", "metric", "1"]  # the first columns are the ones kept
    kept = sum(1 for c in WIDE.columns[1:] if c in lines[0])
    assert lines[-1].startswith(f"({13 - kept} more columns in the report")
    assert fit_table(WIDE, width=300, float_format=lambda v: f"{v:.3f}")[-1].split()[0] == "logistic_regression"


def test_keep_columns_stay_and_long_text_is_cut_not_the_numbers():
    frame = pd.DataFrame({"task": ["a very long task name " * 4], "score": [12.345], "low": [1.0]})
    lines = fit_table(frame, width=40, keep=2, float_format=lambda v: f"{v:.3f}")
    assert all(len(line) <= 40 for line in lines) and "12.345" in lines[1] and "…" in lines[1]
    assert lines[-1] == "(1 more column in the report: low)"


def test_caveats_stay_one_line_each_and_are_never_dropped():
    long = "Answer order drives the answer: a row's score changes by 0.33 on average when the options change places."
    lines = caveat_lines(["Scores collapse.", long, long.replace("0.33", "0.41")], width=60)
    assert lines[0] == "caveat: Scores collapse."
    assert len(lines) == 2 and all(len(line) <= 60 for line in lines)
    assert lines[1].startswith("caveat: Answer order") and lines[1].endswith("(2 caveats; details in the report)")


def test_the_closing_block_is_the_answer_then_the_page():
    answer = "AUC 0.601 [0.487, 0.693]: no signal, the interval includes chance (0.5); ECE 0.202 [0.209, 0.356]."
    page = "/a/long/" + "x" * 90 + "/report.html"
    lines = closing_lines(answer, page, width=60)
    assert lines[0] == "" and lines[1].startswith("answer: AUC 0.601") and lines[-1] == f"report: {page}"
    assert all(len(line) <= 60 and line.startswith(" " * 8) for line in lines[2:-1])
    assert " ".join(" ".join(lines[1:-1]).split()) == f"answer: {answer}"


def test_a_path_is_never_broken_and_the_width_follows_columns(monkeypatch):
    path = "/tmp/results/NISTIncome/cli-fake/mc-zeroshot-d63d167a-42f1bc0d/report.html"
    assert [line.strip() for line in wrap(f"run folders: {path}", width=40)] == ["run folders:", path]
    assert fit_line("short", width=40) == "short"
    monkeypatch.setenv("COLUMNS", "93")
    assert terminal_width() == 93
    monkeypatch.setenv("COLUMNS", "10")
    assert terminal_width() == 40  # never laid out narrower than that


@pytest.mark.parametrize("width", [40, 80, 120])
def test_fit_table_fits_every_width(width):
    assert all(len(line) <= width for line in fit_table(WIDE, width=width, float_format=lambda v: f"{v:.3f}"))
