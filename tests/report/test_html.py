"""The HTML report: escaped text, every plot linked, honest counts, atomic write."""

from __future__ import annotations

import os
from html.parser import HTMLParser

import numpy as np
import pytest

from folkscope.errors import ConfigError
from folkscope.risk.evaluate import evaluate_scores
from folkscope.risk.report import write_report

from .conftest import EVIL, GROUP_LABELS


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def parse(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(text)
    return parser.tags


CONFIG = {
    "model": EVIL,
    "task": "ACSIncome <i>",
    "prompt": {"system": "</pre><script>x()</script>"},
    "versions": {"folkscope": "0.1.0"},
}


@pytest.fixture(scope="module")
def page(run_dir, model_metrics, baseline_metrics):
    run, plots = run_dir
    path = write_report(
        run,
        config=CONFIG,
        metrics=model_metrics,
        plots=plots,
        baselines=baseline_metrics,
        notes=["note with <img src=x onerror=1>"],
    )
    return path, path.read_text(encoding="utf-8")


def test_untrusted_text_is_escaped(page):
    path, text = page
    assert path.name == "report.html"
    tags = parse(text)
    names = [t for t, _ in tags]
    assert "script" not in names and "i" not in names and "b" not in names
    assert all(a["src"].startswith("plots/") for t, a in tags if t == "img")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # model name, also a baseline name
    assert "ACSIncome &lt;i&gt;" in text
    assert "&lt;img src=x onerror=1&gt;" in text
    assert "&lt;b&gt;Asian&lt;/b&gt; $x$" in text  # group name from the labels
    assert "&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;" in text  # config value
    assert not any(k.startswith("on") for _, a in tags for k in a)


def test_every_plot_is_linked_and_shown(page, run_dir):
    _, text = page
    _, plots = run_dir
    tags = parse(text)
    imgs = {a["src"] for t, a in tags if t == "img"}
    links = {a["href"] for t, a in tags if t == "a"}
    assert set(plots.values()) <= imgs and set(plots.values()) <= links
    assert "file missing" not in text


def test_sections_counts_and_tables(page, model_metrics):
    _, text = page
    for heading in (
        "All metrics",
        "Per-group metrics and gaps (unweighted)",
        "Per-group metrics and gaps (survey-weighted)",
        "Model vs baselines",
        "Configuration",
        "By RAC1P",
        "By SEX",
        "ΔSCE",
    ):
        assert heading in text
    assert "excluded: NaN score</td><td>3 " in text
    assert "<td>logistic regression</td>" in text and "[" in text  # baseline row (its key read as words) and intervals
    ece = model_metrics["unweighted"]["overall"]["ece"]
    assert f"{ece:.4f}" in text
    assert "http://" not in text and "https://" not in text  # no external assets


def test_no_temporary_files_left(page, run_dir):
    run, _ = run_dir
    assert sorted(os.listdir(run)) == ["plots", "report.html"]


def test_undefined_and_unweighted_only_runs(tmp_path, scores):
    metrics = evaluate_scores(scores.drop(columns="weight").assign(label=1), n_bootstrap=0, group_labels=GROUP_LABELS)
    path = write_report(tmp_path, config={}, metrics=metrics, plots={"roc": "plots/roc.png"}, baselines=None, notes=[])
    text = path.read_text(encoding="utf-8")
    assert "No survey weights" in text and "No baselines" in text
    assert 'title="undefined">n/a' in text and "Single-class groups" in text
    assert "(file missing)" in text


@pytest.mark.parametrize("bad", ["/etc/passwd", "../outside.png", "javascript:alert(1)"])
def test_plot_paths_must_stay_in_the_run_folder(tmp_path, model_metrics, bad):
    with pytest.raises(ConfigError):
        write_report(tmp_path, config={}, metrics=model_metrics, plots={"x": bad}, notes=[])
    assert os.listdir(tmp_path) == []


def test_run_folder_metrics_with_scoring_counts(tmp_path, model_metrics, baseline_metrics):
    wrapped = {
        "model": model_metrics,
        "baselines": baseline_metrics,
        "scoring": {
            "rows": 240,
            "nan_scores": 3,
            "unparseable": 2,
            "notes": ["2 answers had no <parseable> probability"],
            "engine": {"backend": "<fake>"},
        },
    }
    path = write_report(
        tmp_path,
        config={"model_name": "m", "task": {"name": "ACSIncome"}},
        metrics=wrapped,
        plots={},
        notes=wrapped["scoring"]["notes"],
    )
    text = path.read_text(encoding="utf-8")
    assert "<h1>m on ACSIncome</h1>" in text
    assert "<td>unparseable</td><td>2</td>" in text and "&lt;fake&gt;" in text
    assert "no &lt;parseable&gt; probability" in text
    assert "<td>logistic regression</td>" in text  # baselines taken from the wrapper


def test_the_answer_comes_first(page, model_metrics, baseline_metrics):
    """A reader meets what ran, then AUC and ECE with their intervals read against the best baseline, the baselines
    and the calibration plot, then groups, and only then the full metrics, diagnostics and counters."""
    _, text = page
    overall = model_metrics["unweighted"]["overall"]
    headline = text.index('class="headline"')
    reading = text[headline : text.index("</p>", headline)]
    assert f"{overall['roc_auc']:.3f}" in reading and f"{overall['ece']:.3f}" in reading
    best = max(baseline_metrics.items(), key=lambda kv: kv[1]["unweighted"]["overall"]["roc_auc"])
    assert (
        f"The {best[0].replace('_', '-')} baseline reaches AUC {best[1]['unweighted']['overall']['roc_auc']:.3f}"
        in reading
    )
    order = [
        headline,
        text.index("<h2>Model vs baselines</h2>"),
        text.index('src="plots/calibration.png"'),
        text.index("<h2>Per-group metrics and gaps (unweighted)</h2>"),
        text.index("<h2>All metrics</h2>"),
        text.index("<h2>Rows, exclusions and undefined metrics</h2>"),
    ]
    assert order == sorted(order)


def test_the_reading_says_when_auc_shows_no_signal(tmp_path, scores):
    """An AUC whose interval includes 0.5 is read as no signal, in words, next to the number."""
    noise = scores.assign(risk_score=np.random.default_rng(3).random(len(scores)))
    metrics = evaluate_scores(noise, n_bootstrap=200, seed=0)
    low = metrics["unweighted"]["intervals"]["roc_auc"]["low"]
    assert low <= 0.5  # random scores: the interval covers chance
    text = write_report(tmp_path, config={}, metrics=metrics, plots={}, notes=[]).read_text(encoding="utf-8")
    assert "no signal, the interval includes chance (0.5)" in text  # the same sentence as the terminal (risk.answer)
