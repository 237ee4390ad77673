"""The leaderboard site over real run folders of every part: tables, numbers, files, links, escaping, CLI.

The runs are made once per module through the CLI: SmolLM2-135M-Instruct
(the default model) and the fake backend on the same bundled NISTIncome
rows, plus one numeric, one allocation and one epidemiology run with the
fake backend. The same site is also checked in a real browser, at the end
(headless Chromium through ``tests/report/browser.py``).
"""

from __future__ import annotations

import html
import itertools
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from folkscope.cli.main import main
from folkscope.errors import ConfigError, DataError
from folkscope.report.board import BoardTable
from folkscope.report.leaderboard import find_runs, write_leaderboard
from folkscope.runs import read_caveats

RISK = ["--task", "NISTIncome", "--subsampling", "0.02", "--n-bootstrap", "50"]


def _run(argv: list[str]) -> None:
    assert main(argv) == 0


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("results")
    cache = ["--cache-dir", str(root.parent / "cache")]
    _run(["run", "--model", "default", *RISK, "--results-dir", str(root), *cache])
    _run(["run", "--model", "fake", "--inference-backend", "fake", *RISK, "--results-dir", str(root), "--no-cache"])
    _run(
        [
            "numeric",
            "run",
            "--model",
            "fake",
            "--inference-backend",
            "fake",
            "--limit",
            "20",
            "--results-dir",
            str(root),
            "--no-cache",
        ]
    )
    _run(
        [
            "allocation",
            "run",
            "--model",
            "fake",
            "--inference-backend",
            "fake",
            "--rounds",
            "4",
            "--n-bootstrap",
            "50",
            "--results-dir",
            str(root),
            "--no-cache",
        ]
    )
    _run(
        [
            "epidemiology",
            "run",
            "--model",
            "fake",
            "--inference-backend",
            "fake",
            "--tasks",
            "acs_income_by_sex,anes96_vote_by_party",
            "--results-dir",
            str(root),
            "--no-cache",
        ]
    )
    return root


@pytest.fixture(scope="module")
def site(results: Path):
    return write_leaderboard(results)


def _table(site, key: str) -> BoardTable:
    return next(t for t in site.tables if t.key == key)


def _run_dir(results: Path, *parts: str) -> Path:
    (found,) = [p.parent for p in results.glob("/".join([*parts, "*", "manifest.json"]))]
    return found


def test_every_part_is_found_and_tabled(site) -> None:
    assert site.runs_by_part == {"risk": 2, "numeric": 1, "allocation": 1, "epidemiology": 1}
    keys = {t.key for t in site.tables}
    assert {
        "risk-nistincome",
        "numeric-colors",
        "allocation-metric-validity",
        "epidemiology-summary",
        "epidemiology-nist-acs",
        "epidemiology-anes96",
    } <= keys
    assert not site.notes


def test_risk_rows_are_the_runs_own_numbers(site, results: Path) -> None:
    table = _table(site, "risk-nistincome").frame
    assert sorted(table.loc[table["kind"] == "model", "model"]) == ["SmolLM2-135M-Instruct", "fake"]
    # both runs score the same rows, so the baselines are one row each, not one per run
    assert sorted(table.loc[table["kind"] == "baseline", "model"]) == ["gradient boosting", "logistic regression"]
    metrics = json.loads((_run_dir(results, "NISTIncome", "SmolLM2-135M-Instruct") / "metrics.json").read_text())
    overall = metrics["model"]["unweighted"]["overall"]
    row = table[table["model"] == "SmolLM2-135M-Instruct"].iloc[0]
    assert row["AUC"] == overall["roc_auc"] and row["ECE"] == overall["ece"] and row["n"] == overall["n"]
    assert row["AUC low"] == metrics["model"]["unweighted"]["intervals"]["roc_auc"]["low"]
    gaps = [g["gaps"]["sce"]["max_minus_min"] for g in metrics["model"]["unweighted"]["groups"].values()]
    assert row["Max SCE gap"] == pytest.approx(max(abs(g) for g in gaps))


def test_epidemiology_summary_is_the_mean_of_task_scores(site, results: Path) -> None:
    metrics = json.loads((_run_dir(results, "epidemiology-*", "fake") / "metrics.json").read_text())
    scores = {s["task"]: s["score"] for s in metrics["scores"]}
    summary = _table(site, "epidemiology-summary").frame.iloc[0]
    assert summary["mean score"] == pytest.approx(sum(scores.values()) / 2)
    assert summary["nist-acs (data)"] == pytest.approx(scores["acs_income_by_sex"])
    assert summary["low (dim)"] == pytest.approx(summary["mean score"])


def test_tables_are_written_as_csv_and_json(site) -> None:
    record = json.loads((site.folder / "leaderboard.json").read_text())
    assert [t["key"] for t in record["tables"]] == [t.key for t in site.tables]
    for table in site.tables:
        csv = pd.read_csv(site.folder / "tables" / f"{table.key}.csv")
        assert list(csv.columns) == list(table.frame.columns) and len(csv) == len(table.frame)
    risk = next(t for t in record["tables"] if t["key"] == "risk-nistincome")
    assert risk["intervals"]["AUC"] == ["AUC low", "AUC high"] and len(risk["rows"]) == 4


def test_page_leads_with_answers_and_links_every_run(site, results: Path) -> None:
    page = site.index.read_text()
    assert page.index("Best AUC:") < page.index("<table")
    for folder in [p.parent for p in results.rglob("manifest.json") if "leaderboard" not in p.parts]:
        link = Path(os.path.relpath(folder / "report.html", site.folder)).as_posix()
        assert f'href="{link}"' in page, folder
    assert "script-src 'sha256-" in html.unescape(page)  # the one inline script, allowed by its hash


def test_model_names_are_escaped(results: Path, tmp_path: Path) -> None:
    copy = tmp_path / "results"
    shutil.copytree(_run_dir(results, "numeric-colors", "fake"), copy / "n" / "evil" / "base-1")
    manifest_file = copy / "n" / "evil" / "base-1" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["engine"]["backend"]["model"]["name"] = "<img src=x onerror=alert(1)>"  # where the board reads the name
    manifest_file.write_text(json.dumps(manifest))
    page = write_leaderboard(copy, draw=False).index.read_text()
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_a_damaged_run_is_listed_not_fatal(results: Path, tmp_path: Path) -> None:
    copy = tmp_path / "results"
    shutil.copytree(_run_dir(results, "numeric-colors", "fake"), copy / "good")
    (copy / "bad").mkdir()
    (copy / "bad" / "manifest.json").write_text("{not json")
    (copy / ".run.staging").mkdir()
    (copy / ".run.staging" / "manifest.json").write_text("{}")
    site = write_leaderboard(copy, draw=False)
    assert site.runs_by_part == {"numeric": 1}
    assert len(site.notes) == 1 and "bad" in site.notes[0]  # figures were asked off, so no note about matplotlib


def test_without_matplotlib_the_site_says_so_and_keeps_every_table(results: Path, tmp_path: Path, monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    site = write_leaderboard(results, tmp_path / "site")
    assert not site.figures and any("matplotlib is not installed" in n for n in site.notes)
    assert {t.key for t in site.tables} >= {"risk-nistincome", "numeric-colors", "epidemiology-summary"}


def test_the_site_folder_is_not_scanned_as_runs(site, results: Path) -> None:
    runs, problems = find_runs(results)
    assert sum(map(len, runs.values())) == 5 and not problems


def test_missing_results_folder_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no results folder at .*--results-dir"):
        write_leaderboard(tmp_path / "nowhere")


def test_board_table_refuses_unsafe_keys_and_missing_interval_columns() -> None:
    frame = pd.DataFrame({"model": ["a"], "AUC": [0.5], "run": [""]})
    with pytest.raises(DataError, match="not file-safe"):
        BoardTable(part="risk", key="../x", title="x", frame=frame)
    with pytest.raises(DataError, match="interval columns"):
        BoardTable(part="risk", key="x", title="x", frame=frame, intervals={"AUC": ("AUC low", "AUC high")})


def test_cli_prints_the_leads_then_ends_with_the_answer_and_the_site(results: Path, tmp_path: Path, capsys) -> None:
    out_dir = tmp_path / "site"
    assert main(["leaderboard", str(results), "--output", str(out_dir), "--no-figures"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("NISTIncome: Best AUC:")
    assert "5 runs (" in out and lines[-1] == f"report: {out_dir / 'index.html'}"
    assert any(line.startswith("answer: ") for line in lines[-4:-1])
    assert not list(out_dir.glob("figures/*.png"))


# ----------------------------------------------------------------------------- in a real browser
ARTIFACTS = Path(os.environ.get("FOLKSCOPE_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))


@pytest.fixture(scope="module")
def browser():
    from tests.report.browser import Browser, BrowserUnavailable

    try:
        with Browser() as opened:
            yield opened
    except BrowserUnavailable as exc:
        pytest.skip(f"browser test skipped: {exc} (scripts/test.sh installs it when run as root with apt)")


def test_browser_reports_errors_it_sees(browser, tmp_path: Path) -> None:
    """The checks below mean something: a console error and a missing image are caught."""
    page = tmp_path / "broken.html"
    page.write_text(
        '<!DOCTYPE html><html><body><img src="missing.png"><script>console.error("boom")</script></body></html>'
    )
    errors = browser.open(page).errors
    assert any("boom" in e for e in errors) and any("missing.png" in e or "ERR_FILE_NOT_FOUND" in e for e in errors), (
        errors
    )


def test_site_opens_without_errors_images_links_and_sorting(browser, site) -> None:
    load = browser.open(site.index)
    assert load.errors == []
    images = browser.evaluate(
        "Promise.all(Array.from(document.images).map(i => { i.loading = 'eager'; "
        "return i.decode().then(() => [i.src, true], () => [i.src, false]); }))"
    )
    assert len(images) == len(site.figures) >= 4 and all(ok for _, ok in images), images
    links = browser.evaluate("Array.from(document.links).map(a => a.href)")
    assert links and not [u for u in links if not u.startswith("file://")]
    for url in links:
        target, _, anchor = url.removeprefix("file://").partition("#")
        assert Path(target).exists(), url
        if anchor:
            assert browser.evaluate(f"document.getElementById({json.dumps(anchor)}) !== null"), url
    table = "document.querySelector('table[data-key=risk-nistincome]')"
    read_auc = (
        f"(() => {{ const t = {table}; const col = Array.from(t.tHead.rows[0].cells).findIndex(c => c.textContent.trim() === 'AUC');"
        " return [col, Array.from(t.tBodies[0].rows).map(r => r.cells[col].getAttribute('data-sort'))]; })()"
    )
    col, before = browser.evaluate(read_auc)
    values = sorted(float(v) for v in before if v)
    browser.evaluate(f"{table}.tHead.rows[0].cells[{col}].click()")
    assert [float(v) for v in browser.evaluate(read_auc)[1]] == values
    browser.evaluate(f"{table}.tHead.rows[0].cells[{col}].click()")
    assert [float(v) for v in browser.evaluate(read_auc)[1]] == values[::-1]
    shot = browser.screenshot(ARTIFACTS / "leaderboard-index.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_run_page_opens_without_errors(browser, results: Path) -> None:
    pages = sorted(p for p in results.rglob("report.html") if "leaderboard" not in p.parts)
    assert len(pages) == 5
    for page in pages:
        load = browser.open(page)
        assert load.errors == [], page
        assert browser.evaluate(
            "Array.from(document.images).every(i => i.getAttribute('src') && !i.src.startsWith('http'))"
        )
    risk_page = next(p for p in pages if "NISTIncome" in p.parts and "fake" not in p.parts)
    browser.open(risk_page)
    browser.screenshot(ARTIFACTS / "risk-run-page.png")


def test_compare_the_two_risk_runs_of_the_site(results: Path, tmp_path: Path, capsys) -> None:
    """The default model against the fake backend on the same rows: a paired table, written as CSV."""
    a, b = _run_dir(results, "NISTIncome", "SmolLM2-135M-Instruct"), _run_dir(results, "NISTIncome", "fake")
    out = tmp_path / "diff.csv"
    assert main(["compare", str(a), str(b), "--replicates", "200", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    table = pd.read_csv(out)
    auc = table[table["title"] == "AUC"].iloc[0]
    metrics = [
        json.loads((f / "metrics.json").read_text())["model"]["unweighted"]["overall"]["roc_auc"] for f in (a, b)
    ]
    assert auc["a"] == pytest.approx(metrics[0]) and auc["difference"] == pytest.approx(metrics[1] - metrics[0])
    assert auc["low"] <= auc["difference"] <= auc["high"]
    lines = printed.splitlines()
    # the default model's scores collapse: said before the difference, which would otherwise favour its small ECE unremarked
    assert lines[0].startswith("caveat: A: Scores collapse")
    start = next(i for i, line in enumerate(lines) if line.startswith("answer: "))
    follow = [line.strip() for line in itertools.takewhile(lambda line: line.startswith(" "), lines[start + 1 :])]
    lead = " ".join([lines[start].removeprefix("answer: "), *follow])  # the answer, folded to the width, as one text
    assert lead.startswith("B's AUC is") and "shared rows" in lead and lines[-1].startswith("report: ")


def test_a_collapsed_run_is_marked_wherever_its_numbers_are_shown(site, results: Path) -> None:
    """The default model's scores all lie near 0.5: its manifest records the caveat, and the site marks its row and says why."""
    folder = _run_dir(results, "NISTIncome", "SmolLM2-135M-Instruct")
    assert "scores-collapse" in {c.code for c in read_caveats(folder)}
    table = _table(site, "risk-nistincome").frame
    row = table[table["model"] == "SmolLM2-135M-Instruct"].iloc[0]
    assert "Scores collapse" in row["caveats"]
    assert (table.loc[table["kind"] == "baseline", "caveats"] == "").all()  # the baselines are not the model
    csv = pd.read_csv(site.folder / "tables" / "risk-nistincome.csv", keep_default_na=False)
    assert "Scores collapse" in csv.loc[csv["model"] == "SmolLM2-135M-Instruct", "caveats"].iloc[0]
    assert "caveats" not in _table(site, "risk-nistincome").metric_columns
    page = (site.folder / "index.html").read_text(encoding="utf-8")
    marked = page.split('data-key="risk-nistincome"')[1].split("</table>")[0]
    smol = next(r for r in marked.split("<tr") if "SmolLM2-135M-Instruct" in r)
    assert smol.count('class="caveat"') == len(_table(site, "risk-nistincome").metric_columns) and "caveat-mark" in smol
    assert (
        "Caveats: the marked numbers may not mean what they seem." in page
        and "with caveats, marked in the table" in page
    )


def test_epidemiology_rows_keep_readouts_apart_and_count_unscored_tasks() -> None:
    """Two likelihood runs read out differently are two rows; a task no answer could score is counted, not averaged."""
    from folkscope.epidemiology.board import _summary, _task_rows

    def metrics(readout: str, scores: list[float]) -> dict:
        rows = [
            {
                "task": f"t{i}",
                "score": s,
                "score_low": s,
                "score_high": s,
                "distance": 0.1,
                "mean_baseline": 0.2,
                "worst": 0.5,
                "best": 0.01,
                "dataset": "d",
                "dimension": "low",
            }
            for i, s in enumerate(scores)
        ]
        return {
            "model": "m",
            "mode": "likelihood",
            "config": {
                "mode": "likelihood",
                "likelihood_readout": readout,
                "likelihood_levels": "paper",
                "best_reference": "paper",
            },
            "scores": rows,
        }

    frame = pd.concat(
        [
            _task_rows(Path("a"), metrics("argmax", [float("nan"), 4.0])),
            _task_rows(Path("b"), metrics("expected", [1.0, 3.0])),
        ]
    )
    summary = _summary(frame).frame.set_index("mode")
    assert summary.loc["likelihood", "mean score"] == 4.0 and summary.loc["likelihood", "unscored"] == 1
    assert (
        summary.loc["likelihood (expected)", "mean score"] == 2.0 and summary.loc["likelihood (expected)", "tasks"] == 2
    )
    # a run made before the paper's defaults (every level asked, Kish's n) is another row, never mixed in
    old = metrics("argmax", [5.0])
    old["config"] = {"mode": "likelihood", "likelihood_readout": "argmax"}
    assert set(_task_rows(Path("c"), old)["mode"]) == {"likelihood (all levels) (design-effect best)"}


def test_one_model_has_one_name_on_every_parts_board(tmp_path: Path) -> None:
    """``--model default`` is SmolLM2-135M-Instruct on every board: numeric showed the handle, so one model was listed twice."""
    import doctest

    import folkscope.runs.manifest as manifests
    from folkscope.numeric.board import _row
    from folkscope.runs import Manifest

    manifest = Manifest(
        part="numeric",
        fingerprint="ab" * 32,
        config={"model": "default", "dataset": "colors"},
        engine={"backend": {"model": {"name": "SmolLM2-135M-Instruct"}}},
    )
    row = _row(tmp_path, manifest, {"config": {"model": "default", "chat": True}, "n_problems": 4})
    assert row["model"] == "SmolLM2-135M-Instruct" == manifest.model_name
    assert (
        Manifest(part="numeric", fingerprint="ab", config={"model": "gpt2"}).model_name == "gpt2"
    )  # no engine recorded
    assert doctest.testmod(manifests).failed == 0
