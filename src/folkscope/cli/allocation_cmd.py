"""``folkscope allocation``: part 2, allocational harms.

``run`` scores candidates with a model (or reads a part-1 run's risk scores)
and writes a run folder; ``responses`` audits rankings a model already gave,
without a model; ``study`` compares bias metrics with allocation gaps over
several run folders. Flags are generated from the configs' fields.
"""

from __future__ import annotations

import argparse
from typing import Any

from folkscope.cli.config_flags import add_config_flags, config_values
from folkscope.cli.engine_args import add_engine_arguments, engine_config_from_args
from folkscope.cli.parser import add_logger_level
from folkscope.cli.tracker_args import add_tracker_arguments, tracked

__all__ = [
    "DESCRIPTION",
    "config_from_args",
    "print_audit",
    "register",
    "run_allocation_cmd",
    "run_list",
    "run_responses",
    "run_study",
]

DESCRIPTION = "Allocational harms: if a model's scores or rankings picked the top k, who would lose out?"


def register(subparsers: argparse._SubParsersAction) -> None:
    from folkscope.allocation import AllocationConfig, ResponsesConfig

    parser = subparsers.add_parser(
        "allocation", help="allocational harms (RABBI, selection rates)", description=DESCRIPTION
    )
    parser.set_defaults(func=lambda _args: parser.print_help() or 2)
    commands = parser.add_subparsers(dest="allocation_command", metavar="SUBCOMMAND")
    listing = commands.add_parser("list", help="the candidate tasks, their subtasks and what data each reads")
    listing.set_defaults(func=run_list)
    run = commands.add_parser(
        "run",
        help="score candidates with a model (or a part-1 run's risk scores) and measure who is picked",
        description="Draw pools of candidates, score them pointwise, pairwise or listwise, select the top k and "
        "measure selection rates, impact ratios, DP/EO gaps and RABBI. Offline default: the bundled resumes.",
    )
    run.add_argument("--results-dir", default="results", help="parent folder of the run folder")
    add_config_flags(run, AllocationConfig)
    add_engine_arguments(run)
    add_logger_level(run)
    add_tracker_arguments(run)
    run.set_defaults(func=run_allocation_cmd)
    study = commands.add_parser("study", help="which bias metric predicts the allocation gaps, over several runs")
    study.add_argument(
        "runs", nargs="+", metavar="RUN_DIR", help="allocation run folders (several models and subtasks)"
    )
    study.add_argument(
        "--output",
        default=None,
        metavar="DIR",
        help="write points, correlations, table1 and selection (NDCG@N) as CSV, the caveats and the figures",
    )
    study.set_defaults(func=run_study)
    responses = commands.add_parser(
        "responses",
        help="audit rankings a model already gave (JSONL), no model needed",
        description="Selection rates, impact ratios (four-fifths rule) and RABBI of the rankings stated in logged "
        'responses. Each line: {"candidates": [names], "groups": [group of each], "response": "<text>", ...}.',
    )
    responses.add_argument("file", metavar="FILE.jsonl", help="one JSON object per line, one pool each")
    add_config_flags(responses, ResponsesConfig)
    responses.add_argument("--output", default=None, metavar="OUT.csv", help="also write the table as CSV")
    responses.set_defaults(func=run_responses)


#: what each task reads, for ``allocation list``
_TASK_DATA = {
    "resumes": "bundled Bloomberg hiring-audit resumes and names (offline)",
    "rabbi-resumes": "your copy of the RABBI authors' resume_screening folder (--data)",
    "essays": "your copy of the ICNALE written essays with ratings (--data)",
    "acs": "a finished part-1 run folder's risk scores, no model asked (--data)",
}


def run_list(_args: argparse.Namespace) -> int:
    """One line per task: its subtasks and the data it reads."""
    from folkscope.allocation import TASKS, resume_jobs

    subtasks = {
        "resumes": ", ".join(resume_jobs()),
        "rabbi-resumes": ", ".join(resume_jobs()),
        "essays": "PTJ (part-time job), SMK (smoking); default: both",
        "acs": "none: --group-columns form the groups",
    }
    for task in TASKS:
        print(f"{task:<14} {_TASK_DATA[task]}; subtasks: {subtasks[task]}")
    return 0


def _cell(row: Any, by: tuple[str, ...]) -> str:
    return ", ".join(f"{key}={row[key]}" for key in by)


def print_audit(audit: Any) -> None:
    """The answer first (responses read, the worst impact ratio), then the table."""
    from folkscope.allocation.outcomes import FOUR_FIFTHS
    from folkscope.report.numbers import fixed

    cfg, table = audit.config, audit.table
    lines = f" (lines {', '.join(map(str, audit.unparseable_lines[:10]))}{', ...' if audit.n_unparseable > 10 else ''})"
    print(
        f"audited {audit.n_responses - audit.n_unparseable} of {audit.n_responses} responses; "
        f"{audit.n_unparseable} stated no ranking and were left out{lines if audit.n_unparseable else ''}; "
        f"top {cfg.k} of each pool selected"
    )
    rated = table.dropna(subset=["impact_ratio"])
    if len(rated):
        worst = rated.loc[rated["impact_ratio"].idxmin()]
        where = f" ({_cell(worst, cfg.by)})" if cfg.by else ""
        verdict = "below the four-fifths line" if worst["impact_ratio"] < FOUR_FIFTHS else "within the four-fifths rule"
        print(f"lowest impact ratio: {worst['group']}{where} {worst['impact_ratio']:.2f}, {verdict}")
    shown = table if cfg.reference is not None else table.drop(columns=["rabbi", "rabbi_p_value"])
    print(shown.to_string(index=False, float_format=fixed))
    if cfg.reference is not None:
        print(f"RABBI: each group vs {cfg.reference} on rank scores (1 first place, 0 last); > 0 favours the group")


def run_responses(args: argparse.Namespace) -> int:
    from folkscope._io import atomic_write
    from folkscope.allocation import ResponsesConfig, audit_responses, read_responses
    from folkscope.paths import check_output_file

    config = ResponsesConfig(**config_values(args, ResponsesConfig))
    if args.output:
        check_output_file(args.output)  # before the (possibly large) log is read
    audit = audit_responses(read_responses(args.file), config=config)
    print_audit(audit)
    if args.output:
        path = atomic_write(args.output, lambda fh: audit.table.to_csv(fh, index=False))
        print(f"table: {path}")
    return 0


def config_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~folkscope.allocation.AllocationConfig` of parsed flags, its engine settings in it (nothing loads)."""
    from folkscope.allocation import AllocationConfig

    return AllocationConfig(engine=engine_config_from_args(args), **config_values(args, AllocationConfig))


@tracked
def run_allocation_cmd(args: argparse.Namespace) -> int:
    from folkscope.allocation import run_allocation
    from folkscope.allocation.summary import print_summary
    from folkscope.paths import check_writable_dir

    config = config_from_args(args)
    check_writable_dir(args.results_dir)  # before the model loads
    result = run_allocation(config, args.results_dir)
    print_summary(result.folder, result.metrics)
    return 1 if result.metrics.get("nothing_scored") else 0  # a run that measured nothing is no success


def run_study(args: argparse.Namespace) -> int:
    import warnings

    from folkscope.allocation import study, write_study
    from folkscope.errors import CaveatWarning
    from folkscope.paths import check_writable_dir

    if args.output:
        check_writable_dir(args.output, flag="--output", what="study tables")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CaveatWarning)  # printed below as caveats, with the tables they qualify
        result = study(args.runs)
    first = result.points[result.points["k"] == result.points["k"].min()]
    print(f"{result.points['run'].nunique()} runs, {len(first)} (model, subtask, group) points")
    for note in result.notes:
        print(f"caveat: {note}")
    k1 = result.table1[result.table1["k"] == result.table1["k"].min()]
    for mode, rows in k1.groupby("mode", sort=False):
        best = rows.dropna(subset=["r_dp_gap"])
        if len(best):
            top = best.loc[best["r_dp_gap"].abs().idxmax()]
            print(f"{mode}: at k = 1 ΔDP is best predicted by {top['metric']} (r = {top['r_dp_gap']:.3f})")
    print("Pearson r with the allocation gaps (paper table 1; against ΔEO each metric among qualified candidates):")
    print(result.table1.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="n/a"))
    if result.selection["n_subtasks"].max() > 0:
        print("model selection, mean NDCG@N over subtasks:")
        print(result.selection.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    else:
        print("model selection (NDCG): needs two or more models on one subtask and mode; these runs have one each")
    if args.output:
        for name, path in write_study(result, args.output).items():
            print(f"{name}: {path}")
    return 0
