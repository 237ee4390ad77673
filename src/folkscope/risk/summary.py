"""The console summary of a risk run (``folkscope run`` and ``folkscope rescore``): caveats, population, metrics,
then the answer and the page, all fitted to the terminal (:mod:`folkscope.report.terminal`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from folkscope.engine.usage import usage_line
from folkscope.report.numbers import fixed
from folkscope.report.terminal import caveat_lines, closing_lines, fit_table, say
from folkscope.risk.answer import answer
from folkscope.risk.evaluate import compare_table
from folkscope.runs import read_caveats

__all__ = ["diagnostics_line", "population_line", "print_summary"]


def population_line(report: dict[str, Any] | None) -> str:
    """``population: 15,423 of 27,253 rows kept (left out with a blank filter column: 4,247 PINCP, ...)``, or ""."""
    if not report:
        return ""
    line = f"population: {report['rows_kept']:,} of {report['rows_in']:,} rows kept by the task's filters"
    blanks = {c: n for c, n in report.get("left_out_for_blank_filter_column", {}).items() if n}
    if blanks:
        line += " (left out with a blank filter column: " + ", ".join(f"{n:,} {c}" for c, n in blanks.items()) + ")"
    return line


def diagnostics_line(diag: dict[str, Any] | None) -> str:
    """``diagnostics: order bias 0.83, answer-letter mass (median) 0.18, scores 5-95% in [0.497, 0.502]``, or "".

    Examples
    --------
    >>> diagnostics_line({"order_bias": {"mean_abs_difference": 0.83}, "answer_mass": {"median": 0.18},
    ...                   "spread": {"q05": 0.497, "q95": 0.502}})
    'diagnostics: order bias 0.830, answer-letter mass (median) 0.180, scores 5-95% in [0.497, 0.502]'
    """
    if not diag:
        return ""
    parts = []
    if diag.get("order_bias"):
        parts.append(f"order bias {diag['order_bias']['mean_abs_difference']:.3f}")
    if diag.get("answer_mass"):
        parts.append(f"answer-letter mass (median) {diag['answer_mass']['median']:.3f}")
    if diag.get("spread"):
        parts.append(f"scores 5-95% in [{diag['spread']['q05']:.3f}, {diag['spread']['q95']:.3f}]")
    return "diagnostics: " + ", ".join(parts) if parts else ""


#: the table's columns in the order they are kept when the terminal is narrow (the rest follow, then are dropped)
_FIRST_COLUMNS = ("n", "AUC", "ECE", "Brier", "Accuracy", "Log loss", "Balanced accuracy")


def print_summary(run_dir: str | Path, metrics: dict[str, Any]) -> None:
    """Caveats and the population kept, the model and baselines in a table that fits the terminal, then the answer
    (the page's headline) and the page."""
    run_dir = Path(run_dir)
    config = run_dir / "config.json"
    record = json.loads(config.read_text()) if config.is_file() else {}
    population = population_line(record.get("data", {}).get("population"))

    print(f"run folder: {run_dir}")
    # before the numbers they qualify, one line each; the page has them whole
    for line in caveat_lines(c.message for c in read_caveats(run_dir)):
        print(line)
    if population:
        say(population)
    note = (record.get("data", {}).get("population") or {}).get("note")
    if note:  # rows that brought their label or no weights: how they were read, in one line
        say(f"data: {note}")
    scoring = metrics.get("scoring", {})
    cut = (
        f"; prompts cut to the context size ({scoring['context_size']} tokens): {scoring['truncated_prompts']}"
        if scoring.get("truncated_prompts")
        else ""
    )
    say(
        f"scored {scoring.get('rows', '?')} test rows; NaN scores: {scoring.get('nan_scores', 0)}{cut}; "
        f"threshold {scoring.get('threshold', 0.5):.3f}"
    )
    table = compare_table(
        {"model": metrics["model"], **metrics.get("recalibrated", {}), **metrics.get("baselines", {})}
    )
    order = [c for c in _FIRST_COLUMNS if c in table.columns]
    table = table[order + [c for c in table.columns if c not in order]]
    counts = {"n": lambda v: "n/a" if v != v else f"{v:,.0f}"}  # row counts, not scores
    for line in fit_table(table, index=True, keep=2, formatters=counts, float_format=lambda v: f"{v:.3f}"):
        print(line)
    for line in (
        usage_line(scoring.get("engine_stats") or {}, scoring.get("backend_stats") or {}),
        diagnostics_line(metrics.get("diagnostics")),
    ):
        if line:
            say(line)
    at = (metrics.get("selective_accuracy") or {}).get("at_coverage") or {}
    if at:
        shown = [
            ("all rows" if float(c) >= 1 else f"{float(c):.0%} most confident") + f" {fixed(v)}" for c, v in at.items()
        ]
        say("selective accuracy: " + ", ".join(shown))
    importance = metrics.get("feature_importance")
    if importance:
        ranked = ", ".join(f"{col} {row['importance']:+.3f}" for col, row in list(importance.items())[:5])
        say(f"feature importance (AUC drop when permuted): {ranked}")
    for line in closing_lines(answer(metrics["model"], metrics.get("baselines")), run_dir / "report.html"):
        print(line)
