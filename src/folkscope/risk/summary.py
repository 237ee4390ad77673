"""The console summary of a risk run (``folkscope run`` and ``folkscope rescore``): caveats, population, metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from folkscope.engine.usage import usage_line
from folkscope.report.numbers import fixed
from folkscope.risk.evaluate import compare_table
from folkscope.runs import caveat_lines

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


def print_summary(run_dir: str | Path, metrics: dict[str, Any]) -> None:
    """Caveats and the population kept, then the main metrics of the model and baselines, one line each."""
    run_dir = Path(run_dir)
    config = run_dir / "config.json"
    record = json.loads(config.read_text()) if config.is_file() else {}
    population = population_line(record.get("data", {}).get("population"))

    print(f"run folder: {run_dir}")
    for line in caveat_lines(run_dir):  # before the numbers they qualify
        print(line)
    if population:
        print(population)
    note = (record.get("data", {}).get("population") or {}).get("note")
    if note:  # rows that brought their label or no weights: how they were read, in one line
        print(f"data: {note}")
    scoring = metrics.get("scoring", {})
    cut = (
        f"; prompts cut to the context size ({scoring['context_size']} tokens): {scoring['truncated_prompts']}"
        if scoring.get("truncated_prompts")
        else ""
    )
    print(
        f"scored {scoring.get('rows', '?')} test rows; NaN scores: {scoring.get('nan_scores', 0)}{cut}; "
        f"threshold {scoring.get('threshold', 0.5):.3f}"
    )
    table = compare_table(
        {"model": metrics["model"], **metrics.get("recalibrated", {}), **metrics.get("baselines", {})}
    )
    counts = {"n": lambda v: "n/a" if v != v else f"{v:,.0f}"} if "n" in table.columns else {}  # row counts, not scores
    print(table.to_string(formatters=counts, float_format=lambda v: f"{v:.3f}"))
    line = usage_line(scoring.get("engine_stats") or {}, scoring.get("backend_stats") or {})
    if line:
        print(line)
    line = diagnostics_line(metrics.get("diagnostics"))
    if line:
        print(line)
    at = (metrics.get("selective_accuracy") or {}).get("at_coverage") or {}
    if at:
        shown = [
            ("all rows" if float(c) >= 1 else f"{float(c):.0%} most confident") + f" {fixed(v)}" for c, v in at.items()
        ]
        print("selective accuracy: " + ", ".join(shown))
    importance = metrics.get("feature_importance")
    if importance:
        ranked = ", ".join(f"{col} {row['importance']:+.3f}" for col, row in list(importance.items())[:5])
        print(f"feature importance (AUC drop when permuted): {ranked}")
    print(f"report: {run_dir / 'report.html'}")
