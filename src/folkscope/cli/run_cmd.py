"""``folkscope run`` / ``run_acs_benchmark``: benchmark a model's risk scores on a survey task.

Every folktexts ``run_acs_benchmark`` flag is accepted with the same meaning;
they all go into one :class:`~folkscope.risk.BenchmarkConfig`, which checks
every option and combination before any data or model is loaded.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from folkscope.cli.config_flags import add_config_flags, config_values
from folkscope.cli.data_args import add_data_source_arguments, data_options
from folkscope.cli.engine_args import add_engine_arguments, engine_config_from_args
from folkscope.cli.parser import add_logger_level
from folkscope.cli.prompts_cmd import prompt_config_from_args
from folkscope.paths import check_folder_path, check_writable_dir

__all__ = ["DESCRIPTION", "add_arguments", "benchmark_options", "config_from_args", "register", "run"]

DESCRIPTION = "Benchmark risk scores produced by a language model on ACS data."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of ``run_acs_benchmark`` (folktexts names) plus folkscope's own.

    The run's options are generated from :class:`~folkscope.risk.BenchmarkConfig`'s
    fields and the engine's from :class:`~folkscope.engine.EngineConfig`'s; only
    the task, the folders and the data source are this command's own.
    """
    from folkscope.risk.config import INFERENCE, PROMPTS, RUN, BenchmarkConfig

    core = parser.add_argument_group("model, task and folders")
    core.add_argument("--task", default="ACSIncome", help="task name (ACS* download Census PUMS data; NIST* use bundled rows offline)")
    core.add_argument("--results-dir", default="results", help="directory under which the run folder is written")
    core.add_argument("--data-dir", default=None, help="root folder for downloaded survey data (default $FOLKSCOPE_HOME/data)")
    add_data_source_arguments(parser.add_argument_group("data source (default: Census PUMS download for ACS tasks, bundled rows for NIST tasks)"))
    engine = parser.add_argument_group("inference")
    prompts = parser.add_argument_group("prompts")
    add_config_flags(parser, BenchmarkConfig, groups={RUN: core, INFERENCE: engine, PROMPTS: prompts})
    add_engine_arguments(parser, model_group=core, inference_group=engine)
    add_logger_level(parser)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run", aliases=["risk"], help="benchmark risk scores of a model on a task (= run_acs_benchmark; alias: risk)", description=DESCRIPTION
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def config_from_args(args: argparse.Namespace) -> Any:
    """The :class:`BenchmarkConfig` of parsed flags."""
    from folkscope.risk.config import BenchmarkConfig

    engine_config_from_args(args)  # the backend flags' own checks, before anything is loaded
    if args.data_dir is not None:
        check_folder_path(args.data_dir, flag="--data-dir")
    prompt_config_from_args(args)  # the prompt flags' own checks and warnings (few-shot options without --few-shot)
    return BenchmarkConfig(**config_values(args, BenchmarkConfig))


def _fmt(value: Any, ci: Any = None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "   n/a"
    text = f"{value:6.3f}"
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci:
        text += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
    return text


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


def print_summary(run_dir: Path, metrics: dict[str, Any]) -> None:
    """The population kept, then the main metrics of the model and baselines, one line each."""
    import json

    config = run_dir / "config.json"
    record = json.loads(config.read_text()) if config.is_file() else {}
    population = population_line(record.get("data", {}).get("population"))
    from folkscope.engine.usage import usage_line
    from folkscope.risk.evaluate import compare_table
    from folkscope.runs import caveat_lines

    print(f"run folder: {run_dir}")
    for line in caveat_lines(run_dir):  # before the numbers they qualify
        print(line)
    if population:
        print(population)
    note = (record.get("data", {}).get("population") or {}).get("note")
    if note:  # rows that brought their label or no weights: how they were read, in one line
        print(f"data: {note}")
    scoring = metrics.get("scoring", {})
    cut = f"; prompts cut to the context size ({scoring['context_size']} tokens): {scoring['truncated_prompts']}" if scoring.get("truncated_prompts") else ""
    print(f"scored {scoring.get('rows', '?')} test rows; NaN scores: {scoring.get('nan_scores', 0)}{cut}; "
          f"threshold {scoring.get('threshold', 0.5):.3f}")  # fmt: skip
    table = compare_table({"model": metrics["model"], **metrics.get("recalibrated", {}), **metrics.get("baselines", {})})
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
        shown = [("all rows" if float(c) >= 1 else f"{float(c):.0%} most confident") + f" {_fmt(v).strip()}" for c, v in at.items()]
        print("selective accuracy: " + ", ".join(shown))
    importance = metrics.get("feature_importance")
    if importance:
        ranked = ", ".join(f"{col} {row['importance']:+.3f}" for col, row in list(importance.items())[:5])
        print(f"feature importance (AUC drop when permuted): {ranked}")
    print(f"report: {run_dir / 'report.html'}")


def benchmark_options(args: argparse.Namespace) -> dict[str, Any]:
    """The engine and data flags as :meth:`Benchmark.make_benchmark <folkscope.risk.Benchmark.make_benchmark>` keywords (``run`` and ``evidence``)."""
    return {"model": engine_config_from_args(args), "data_dir": args.data_dir, **data_options(args)}


def run(args: argparse.Namespace) -> int:
    from folkscope.risk.benchmark import Benchmark

    config = config_from_args(args)
    check_writable_dir(args.results_dir)  # before the data and the model load
    bench = Benchmark.make_benchmark(args.task, config=config, **benchmark_options(args))
    metrics = bench.run(args.results_dir)
    print_summary(bench.run_dir, metrics)
    return 0
