"""``folkscope evidence``: a model's risk-score metrics as features are added one at a time.

Takes every flag of ``folkscope run`` (each step is such a run, with
``--use-feature-subset`` set to the step's features; ``--use-feature-subset``
itself picks the features the order is drawn from), plus ``--order`` (the
task's order, a permutation-importance file, or a list of columns) and
``--step``. See :func:`folkscope.risk.evidence_sweep`.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import Any

from folkscope.cli.run_cmd import add_arguments, benchmark_options, config_from_args
from folkscope.report.numbers import fixed
from folkscope.report.terminal import caveat_lines, closing_lines, fit_table, say
from folkscope.runs import read_caveats

__all__ = ["DESCRIPTION", "parse_order", "register", "run"]

DESCRIPTION = (
    "Evidence sweep: benchmark a model's risk scores with the first 1, 2, ..., n features of an order "
    "(one run folder per step), then tabulate and plot AUC, ECE, Brier and accuracy against the features shown."
)


def parse_order(text: str) -> str | list[str]:
    """``task``, a permutation-importance file (or the run folder holding one), or ``COL1,COL2,...``.

    Examples
    --------
    >>> parse_order("task"), parse_order("AGEP, SEX")
    ('task', ['AGEP', 'SEX'])
    """
    text = text.strip()
    if text == "task":
        return "task"
    path = Path(text).expanduser()
    if text.lower().endswith(".csv") or path.exists():
        from folkscope.risk.evidence import importance_order

        return importance_order(path)
    return [c.strip() for c in text.split(",") if c.strip()]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "evidence", help="evidence sweep: metrics as features are added one at a time", description=DESCRIPTION
    )
    add_arguments(parser)
    sweep = parser.add_argument_group("evidence sweep")
    sweep.add_argument(
        "--order",
        default="task",
        metavar="task|IMPORTANCE.csv|COL1,COL2,...",
        help="order the features are added in: 'task' (the task's order, default), a feature_importance.csv of a run "
        "with --feature-importance (or its run folder; most important first), or comma-separated columns",
    )
    sweep.add_argument(
        "--step",
        type=int,
        default=1,
        metavar="N",
        help="features added per step (default 1; the paper's figures add 2)",
    )
    parser.set_defaults(func=run)


def _metric(row: Any, name: str) -> str:
    return fixed(row[name], row.get(f"{name}_low"), row.get(f"{name}_high"))


def print_sweep(table: Any) -> None:
    """The steps' caveats, one line per step in a table fitted to the terminal and where the files are, then the
    answer (AUC and ECE with every feature of the order) and the last step's page."""
    import pandas as pd

    attrs = table.attrs
    final = table.iloc[-1]
    steps: dict[str, list[str]] = {}  # a caveat -> the steps it holds for: each step is a run that may mislead
    for _, row in table.iterrows():
        for caveat in read_caveats(row["run_dir"]):
            steps.setdefault(caveat.message, []).append(str(row["k"]))
    for line in caveat_lines(f"k = {', '.join(ks)}: {message}" for message, ks in steps.items()):
        print(line)
    first = table.iloc[0]
    say(
        f"from {first['k']} to {final['k']} features: AUC {fixed(first['roc_auc'])} -> {fixed(final['roc_auc'])}, "
        f"ECE {fixed(first['ece'])} -> {fixed(final['ece'])} (95% bootstrap intervals in brackets)"
    )
    rows = pd.DataFrame(
        {
            "k": table["k"],
            "added": table["added_feature"],
            "AUC": [_metric(row, "roc_auc") for _, row in table.iterrows()],
            "ECE": [_metric(row, "ece") for _, row in table.iterrows()],
            "Brier": [fixed(v) for v in table["brier"]],
            "accuracy": [fixed(v) for v in table["accuracy"]],
        }
    )
    print("\n".join(fit_table(rows, keep=3, where="evidence_sweep.csv")))
    sweep_dir = Path(attrs["sweep_dir"])
    print(f"table: {sweep_dir / 'evidence_sweep.csv'} (and evidence_sweep.json)")
    if attrs.get("plot"):
        print(f"plot: {attrs['plot']}")
    elif importlib.util.find_spec("matplotlib") is None:
        say("plot skipped: matplotlib is not installed (pip install 'folkscope[plots]'); the table has every number")
    print(f"run folders (one per step, each with its report.html): {sweep_dir.parent}")
    available = attrs.get("available") or []
    shown = "all" if len(available) == final["k"] else f"{final['k']} of {len(available)}"
    answer = (
        f"evidence sweep of {attrs.get('model', '?')} on {attrs.get('task', '?')}: with {shown} features, "
        f"AUC {_metric(final, 'roc_auc')}, ECE {_metric(final, 'ece')}"
    )
    print("\n".join(closing_lines(answer, Path(final["run_dir"]) / "report.html")))


def run(args: argparse.Namespace) -> int:
    from folkscope.errors import ConfigError
    from folkscope.paths import check_writable_dir
    from folkscope.risk.evidence import evidence_sweep

    engine_config, config = config_from_args(args)
    if args.step < 1:
        raise ConfigError(f"--step must be >= 1, got {args.step}", parameter="step", value=args.step)
    order = parse_order(args.order)
    check_writable_dir(args.results_dir)  # before the data and the model load
    table = evidence_sweep(
        args.task,
        order=order,
        config=config,
        results_dir=args.results_dir,
        step=args.step,
        **benchmark_options(args, engine_config),
    )
    print_sweep(table)
    return 0
