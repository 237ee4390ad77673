"""The leaderboard over 100 run folders of every part, made with the fake backend: how long `folkscope leaderboard` takes.

Run from the repository root::

    PYTHONPATH=src python benchmarks/leaderboard_scale.py [--runs 100] [--folder /tmp/folkscope-board]

Makes the runs once (real runs of each part through the CLI, the fake
backend answering: risk on the same NISTIncome rows by 20 fake models under
both prompt styles, numeric datasets, allocation subtasks and epidemiology tasks; a
rerun reuses the folder), then times the site with and without figures
and prints the seconds per run folder. The figure-free time is the floor a
user without matplotlib sees; figures are drawn by matplotlib, one PNG each.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import time
from pathlib import Path

from folkscope.cli.main import main as folkscope
from folkscope.report.leaderboard import find_runs, write_leaderboard

_FAKE = ["--model", "fake", "--inference-backend", "fake", "--no-cache"]


def _commands(n: int, root: Path) -> list[list[str]]:
    """n run commands spread over the four parts (risk has most, as in the papers' studies)."""
    out = ["--results-dir", str(root)]
    # one set of rows, many models and both prompt styles: one table, as in the folktexts paper's study
    risk = (
        [
            "run",
            *_FAKE[:1],
            f"fake-{i:02d}",
            *_FAKE[2:],
            "--task",
            "NISTIncome",
            "--subsampling",
            "0.02",
            "--n-bootstrap",
            "100",
            *style,
            *out,
        ]
        for i in itertools.count()
        for style in ([], ["--numeric-risk-prompting"])
    )
    numeric = (
        ["numeric", *_FAKE, "--dataset", d, "--limit", "20", "--seed", str(seed), *out]
        for seed in itertools.count()
        for d in ("colors", "wordproblems")
    )
    allocation = (
        ["allocation", "run", *_FAKE, "--rounds", "4", "--n-bootstrap", "100", "--seed", str(seed), *out]
        for seed in itertools.count()
    )
    epidemiology = (
        ["epidemiology", "run", *_FAKE, "--tasks", "acs_income_by_sex,anes96_vote_by_party", "--seed", str(seed), *out]
        for seed in itertools.count()
    )
    counts = {"risk": n * 4 // 10, "numeric": n * 2 // 10, "allocation": n * 2 // 10}
    counts["epidemiology"] = n - sum(counts.values())
    streams = {"risk": risk, "numeric": numeric, "allocation": allocation, "epidemiology": epidemiology}
    return [cmd for part, k in counts.items() for cmd in itertools.islice(streams[part], k)]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/folkscope-board"))
    args = parser.parse_args()
    root = args.folder / "results"
    found, _ = find_runs(root) if root.is_dir() else ({}, [])
    have = sum(map(len, found.values()))
    if have < args.runs:
        start = time.perf_counter()
        for i, cmd in enumerate(_commands(args.runs, root), 1):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                code = folkscope(cmd)
            if code != 0:
                raise SystemExit(f"run {i} failed: folkscope {' '.join(cmd)}")
            print(f"\rmade {i}/{args.runs} runs", end="", flush=True)
        print(f"\nmaking the runs: {time.perf_counter() - start:.1f} s")
    found, problems = find_runs(root)
    print(
        f"run folders: {sum(map(len, found.values()))} ({', '.join(f'{len(v)} {k}' for k, v in found.items())}); unreadable: {len(problems)}"
    )
    for draw in (False, True):
        start = time.perf_counter()
        site = write_leaderboard(root, args.folder / ("site" if draw else "site-tables"), draw=draw)
        secs = time.perf_counter() - start
        print(
            f"folkscope leaderboard, {'with' if draw else 'without'} figures: {secs:6.2f} s "
            f"({1000 * secs / max(site.n_runs, 1):.0f} ms per run; {len(site.tables)} tables, {len(site.figures)} figures)"
        )


if __name__ == "__main__":
    main()
