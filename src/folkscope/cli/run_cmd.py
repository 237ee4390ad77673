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

from folkscope.cli.engine_args import add_engine_arguments, engine_config_from_args
from folkscope.cli.data_args import add_data_source_arguments, data_options, parse_subsampling
from folkscope.cli.prompts_cmd import add_prompt_arguments, prompt_config_from_args
from folkscope.prompting.config import field_doc
from folkscope.tasks.task import WORDINGS

__all__ = ["DESCRIPTION", "add_arguments", "benchmark_options", "config_from_args", "register", "run"]

DESCRIPTION = "Benchmark risk scores produced by a language model on ACS data."


def _doc(name: str) -> str:
    from folkscope.risk.config import BenchmarkConfig

    return field_doc(BenchmarkConfig, name).replace("%", "%%")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of ``run_acs_benchmark`` (folktexts names) plus folkscope's own."""
    core = parser.add_argument_group("model, task and folders")
    core.add_argument("--task", default="ACSIncome", help="task name (ACS* download Census PUMS data; NIST* use bundled rows offline)")
    core.add_argument("--results-dir", default="results", help="directory under which the run folder is written")
    core.add_argument("--data-dir", default=None, help="root folder for downloaded survey data (default $FOLKSCOPE_HOME/data)")
    core.add_argument("--seed", type=int, default=42, help=_doc("seed"))
    core.add_argument("--subsampling", type=parse_subsampling, default=None, help=_doc("subsampling"))
    core.add_argument("--fit-threshold", type=int, default=None, help=_doc("fit_threshold"))
    core.add_argument("--recalibrate", type=int, default=None, metavar="N", help=_doc("recalibrate"))
    core.add_argument("--feature-importance", action="store_true", help=_doc("feature_importance"))
    core.add_argument("--importance-repeats", type=int, default=3, metavar="N", help=_doc("importance_repeats"))
    core.add_argument("--importance-rows", type=int, default=None, metavar="N", help=_doc("importance_rows"))
    core.add_argument("--use-feature-subset", default=None, help="comma-separated features to use instead of the task's")
    core.add_argument("--use-population-filter", action="append", default=None, metavar="FILTER", help="population filter such as 'SEX=2' or 'AGEP=18..35' (repeatable)")
    core.add_argument("--no-baselines", action="store_true", help="skip the logistic-regression and GBM baselines")
    core.add_argument("--n-bootstrap", type=int, default=1000, help=_doc("n_bootstrap"))
    core.add_argument("--sce-pair", action="append", default=None, metavar="COL=A,B", help=_doc("sce_pairs"))
    core.add_argument("--wording", choices=WORDINGS, default="folktexts", help=_doc("wording"))
    add_data_source_arguments(parser.add_argument_group("data source (default: Census PUMS download for ACS tasks, bundled rows for NIST tasks)"))
    engine = parser.add_argument_group("inference")
    engine.add_argument("--batch-size", type=int, default=None, help=_doc("batch_size"))
    engine.add_argument("--context-size", type=int, default=None, help=_doc("context_size"))
    engine.add_argument("--numeric-readout", default="greedy", choices=["greedy", "expected"], help=_doc("numeric_readout"))
    engine.add_argument("--max-new-tokens", type=int, default=512, help=_doc("max_new_tokens"))
    engine.add_argument("--temperature", type=float, default=None, help=_doc("temperature"))
    add_engine_arguments(parser, model_group=core, inference_group=engine)
    prompts = parser.add_argument_group("prompts")
    add_prompt_arguments(prompts)
    parser.add_argument(
        "--logger-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"], help="logging level"
    )


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
    prompt_config_from_args(args)  # the prompt flags' own checks (e.g. few-shot options without --few-shot)
    return BenchmarkConfig(
        numeric_risk_prompting=args.numeric_risk_prompting,
        cot_prompting=args.cot_prompting,
        enable_thinking=args.enable_thinking,
        few_shot=args.few_shot,
        reuse_few_shot_examples=args.reuse_few_shot_examples,
        compose_few_shot_examples=args.compose_few_shot_examples or "random",
        example_order=args.example_order,
        few_shot_hide_question=args.few_shot_hide_question,
        variation=tuple(args.variation or ()),
        use_chat_template=args.use_chat_template,
        system_prompt=args.system_prompt,
        chat_prompt=args.chat_prompt,
        correct_order_bias=not args.dont_correct_order_bias,
        numeric_readout=args.numeric_readout,
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
        context_size=args.context_size,
        batch_size=args.batch_size,
        fit_threshold=args.fit_threshold,
        recalibrate=args.recalibrate,
        feature_importance=args.feature_importance,
        importance_repeats=args.importance_repeats,
        importance_rows=args.importance_rows,
        subsampling=args.subsampling,
        seed=args.seed,
        feature_subset=tuple(c.strip() for c in args.use_feature_subset.split(",") if c.strip()) if args.use_feature_subset else None,
        population_filter=tuple(args.use_population_filter or ()),
        n_bootstrap=args.n_bootstrap,
        sce_pairs=tuple(args.sce_pair or ()),
        baselines=not args.no_baselines,
        wording=args.wording,
    )


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


def _dollars(cost: Any) -> str:
    return f"${cost:.4f}" if isinstance(cost, (int, float)) else "unknown (litellm has no price for this model)"


def api_usage_line(engine_stats: dict[str, Any], backend_stats: dict[str, Any]) -> str | None:
    """What a web-API run cost: its answers over every session that paid for them, then this session's traffic.

    Examples
    --------
    >>> engine = {"billed_answers": 40, "unbilled_answers": 0,
    ...           "billed": {"api_calls": 41, "prompt_tokens": 4000, "completion_tokens": 40, "cost_usd": 0.0061}}
    >>> backend = {"requests": 10, "api_calls": 11, "retries": 1, "prompt_tokens": 1000, "completion_tokens": 10,
    ...            "cost_usd": 0.0015, "cost_known": True}
    >>> print(api_usage_line(engine, backend))
    web API: this run's 40 answers cost $0.0061 (41 calls, 4000 prompt + 40 completion tokens, all sessions); this session: 11 calls for 10 answers, 1 retries, 1000 prompt + 10 completion tokens, $0.0015
    """
    if "cost_usd" not in backend_stats:
        return None
    billed = engine_stats.get("billed") or {}
    answers = engine_stats.get("billed_answers", 0)
    line = (
        f"web API: this run's {answers} answers cost {_dollars(billed.get('cost_usd'))} ({billed.get('api_calls', 0)} calls, "
        f"{billed.get('prompt_tokens', 0)} prompt + {billed.get('completion_tokens', 0)} completion tokens, all sessions)"
    )
    unknown = engine_stats.get("unbilled_answers", 0)
    if unknown:
        line += f", plus {unknown} cached answers stored before costs were recorded (cost unknown)"
    session_cost = backend_stats.get("cost_usd") if backend_stats.get("cost_known", True) else None
    return line + (
        f"; this session: {backend_stats.get('api_calls', 0)} calls for {backend_stats.get('requests', 0)} answers, "
        f"{backend_stats.get('retries', 0)} retries, {backend_stats.get('prompt_tokens', 0)} prompt + "
        f"{backend_stats.get('completion_tokens', 0)} completion tokens, {_dollars(session_cost)}"
    )


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
    from folkscope.risk.evaluate import compare_table

    print(f"run folder: {run_dir}")
    if population:
        print(population)
    scoring = metrics.get("scoring", {})
    print(f"scored {scoring.get('rows', '?')} test rows; NaN scores: {scoring.get('nan_scores', 0)}; threshold {scoring.get('threshold', 0.5):.3f}")
    table = compare_table({"model": metrics["model"], **metrics.get("recalibrated", {}), **metrics.get("baselines", {})})
    counts = {"n": lambda v: "n/a" if v != v else f"{v:,.0f}"} if "n" in table.columns else {}  # row counts, not scores
    print(table.to_string(formatters=counts, float_format=lambda v: f"{v:.3f}"))
    line = api_usage_line(scoring.get("engine_stats") or {}, scoring.get("backend_stats") or {})
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
    from folkscope.logs import check_writable_dir
    from folkscope.risk.benchmark import Benchmark

    config = config_from_args(args)
    check_writable_dir(args.results_dir)  # before the data and the model load
    bench = Benchmark.make_benchmark(args.task, config=config, **benchmark_options(args))
    metrics = bench.run(args.results_dir)
    print_summary(bench.run_dir, metrics)
    return 0
