"""``folkscope leaderboard RESULTS_DIR``: every run under a results folder side by side, as a static site.

The console gives each table's one-line lead, the counts, and ends with the
answer and the site's page, fitted to the terminal; the site itself is
:func:`folkscope.report.leaderboard.write_leaderboard`'s.
"""

from __future__ import annotations

import argparse
import time

from folkscope.report.terminal import closing_lines, say


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "leaderboard",
        help="tables and figures of every run under a results folder, as a static site",
        description="Scan RESULTS_DIR for run folders of every part and write a static site (index.html, tables as CSV "
        "and JSON, figures): one sortable table per part and task, each row linking to its run page.",
    )
    parser.add_argument(
        "results_dir", metavar="RESULTS_DIR", help="the folder your runs were written to (--results-dir)"
    )
    parser.add_argument(
        "--output", metavar="SITE_DIR", default=None, help="where to write the site (default: RESULTS_DIR/leaderboard)"
    )
    parser.add_argument("--no-figures", action="store_true", help="tables only (figures need the plots extra anyway)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from folkscope.paths import check_existing_dir, check_writable_dir
    from folkscope.report.leaderboard import DEFAULT_SITE, write_leaderboard

    # both folders before any run is read: a missing results folder is never created, a site is never half-written
    results = check_existing_dir(
        args.results_dir, flag="RESULTS_DIR", what="the folder your runs were written to (their --results-dir)"
    )
    check_writable_dir(args.output or results / DEFAULT_SITE, flag="--output", what="the leaderboard site")
    start = time.perf_counter()
    site = write_leaderboard(args.results_dir, args.output, draw=False if args.no_figures else None)
    leads = [f"{table.title}: {table.lead}" for table in site.tables if table.lead]
    for lead in leads if len(leads) > 1 else ():  # one table: its lead is the answer, said last
        say(lead)
    parts = ", ".join(f"{n} {name}" for name, n in site.runs_by_part.items()) or "none"
    say(
        f"{site.n_runs} runs ({parts}); {len(site.tables)} tables, {len(site.figures)} figures in "
        f"{time.perf_counter() - start:.1f} s"
    )
    for note in site.notes:
        say(f"not shown: {note}")
    print("\n".join(closing_lines(_answer(site.n_runs, parts, leads), site.index)))
    return 0


def _answer(n_runs: int, parts: str, leads: list[str]) -> str:
    """One table: its lead. Several: how many runs stand side by side (each table's lead is a line above)."""
    if len(leads) == 1:
        return leads[0]
    if not leads:
        return f"{n_runs} runs ({parts}); no table compares them"
    return f"{n_runs} runs ({parts}) side by side in {len(leads)} tables; each table's lead is above"
