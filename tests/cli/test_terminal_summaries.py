"""Every command, read in an 80-column terminal, fits it and ends with its one-line answer and its page (issue 32).

One fake-backend run per part (the fake model answers by letter position, so
its caveats are long, as a person meets them), then ``rescore``, ``compare``,
``evidence`` and ``leaderboard`` on them, each printed at ``COLUMNS=80``.
The answer printed is the part's ``answer()`` of the run's metrics, the
function the page's headline uses too.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from folkscope.cli.main import main

WIDTH = 80
FAKE = ["--model", "cli-fake", "--inference-backend", "fake", "--no-cache"]
RUNS = {
    "risk": ["run", "--task", "NISTIncome", "--subsampling", "0.03", "--n-bootstrap", "20"],
    "numeric": ["numeric", "run", "--dataset", "colors", "--limit", "40", "--no-heatmap"],
    "allocation": ["allocation", "run", "--rounds", "4", "--n-bootstrap", "20"],
    "epidemiology": ["epidemiology", "run", "--tasks", "acs_income_by_sex,anes96_vote_by_party"],
}


def _printed(argv: list[str]) -> str:
    """What ``folkscope ARGV`` prints on stdout in an 80-column terminal."""
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setenv("COLUMNS", str(WIDTH))
        assert main([str(a) for a in argv]) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("results")


@pytest.fixture(scope="module")
def runs(root: Path) -> dict[str, tuple[Path, str]]:
    """part -> (its run folder, what its run command printed)."""
    done = {}
    for part, argv in RUNS.items():
        out = _printed([*argv, *FAKE, "--results-dir", root])
        done[part] = (Path(out.split("run folder: ")[1].splitlines()[0]), out)
    return done


def _answer_and_page(out: str, *roots: Path) -> tuple[str, str]:
    """Check that ``out`` fits 80 columns and ends with ``answer: ...`` then ``report: ...``; return both."""
    lines = out.splitlines()
    for line in lines:  # a path is never cut (a cut path cannot be opened): only what is around it must fit
        path = next((word for word in line.split() if any(str(root) in word for root in roots)), "")
        assert len(line) - len(path) <= WIDTH, f"{len(line)} characters: {line!r}"
    assert lines[-1].startswith("report: "), lines[-3:]
    start = max(i for i, line in enumerate(lines) if line.startswith("answer: "))
    assert lines[start - 1] == "" and all(line.startswith(" " * len("answer: ")) for line in lines[start + 1 : -1])
    answer = " ".join(" ".join(lines[start:-1]).removeprefix("answer: ").split())
    return answer, lines[-1].removeprefix("report: ")


def _metrics(folder: Path) -> dict:
    return json.loads((folder / "metrics.json").read_text())


def _expected(part: str, metrics: dict) -> str:
    """The part's one-line answer of ``metrics``, as one line of single spaces."""
    if part == "risk":
        from folkscope.risk.answer import answer

        text = answer(metrics["model"], metrics.get("baselines"))
    else:
        from importlib import import_module

        text = import_module(f"folkscope.{part}.answer").answer(metrics)
    return " ".join(text.split())


@pytest.mark.parametrize("part", list(RUNS))
def test_each_run_fits_80_columns_and_ends_with_the_answer_and_the_page(runs, root, part):
    folder, out = runs[part]
    answer, page = _answer_and_page(out, root)
    assert page == str(folder / "report.html") and Path(page).is_file()
    assert answer == _expected(part, _metrics(folder))


@pytest.mark.parametrize("part", list(RUNS))
def test_rescore_prints_the_same_ending(runs, root, part):
    folder, _ = runs[part]
    answer, page = _answer_and_page(_printed(["rescore", folder]), root)
    assert page == str(folder / "report.html") and answer == _expected(part, _metrics(folder))


def test_the_risk_table_is_cut_to_the_width_and_says_what_the_page_has(runs):
    _, out = runs["risk"]
    assert "more columns in the report" in out and "AUC" in out and "ECE" in out
    assert sum(line.startswith("caveat: ") for line in out.splitlines()) >= 1  # kept, one line each


def test_numeric_prints_a_table_for_people_not_json(runs):
    folder, out = runs["numeric"]
    assert "{" not in out and '"' not in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)
    assert "PM (mass on the options)" in out and "WD (from the stated odds)" in out


def test_compare_evidence_and_leaderboard_end_the_same_way(runs, root, tmp_path):
    risk, _ = runs["risk"]
    again = _printed(["run", *RUNS["risk"][1:], *FAKE, "--dont-correct-order-bias", "--results-dir", root])
    other = Path(again.split("run folder: ")[1].splitlines()[0])
    answer, page = _answer_and_page(_printed(["compare", risk, other, "--replicates", "20"]), root)
    assert answer.startswith("B's AUC is ") and page == str(other / "report.html")
    output = tmp_path / "diff.json"
    answer, page = _answer_and_page(
        _printed(["compare", risk, other, "--replicates", "20", "--output", output]), root, tmp_path
    )
    assert page == str(output) and json.loads(output.read_text())["lead"] == answer

    sweep = _printed(
        ["evidence", *RUNS["risk"][1:], *FAKE, "--no-baselines", "--order", "AGEP,SEX", "--results-dir", root]
    )
    answer, page = _answer_and_page(sweep, root)
    assert answer.startswith("evidence sweep of cli-fake on NISTIncome: with 2 of ") and page.endswith("report.html")

    site = tmp_path / "site"
    answer, page = _answer_and_page(_printed(["leaderboard", root, "--output", site, "--no-figures"]), root, tmp_path)
    assert page == str(site / "index.html") and "runs (" in answer
