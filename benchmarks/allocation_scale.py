"""Allocation at scale: RABBI on 2 x 10^6 candidates and top-k outcomes over 10^5 rounds, time and memory.

Run from the repository root::

    PYTHONPATH=src python benchmarks/allocation_scale.py [--candidates 2000000] [--rounds 100000]

Targets (issue [allocation]): RABBI in <= 2 s and O(n log n); top-k
outcomes for k = 1..5 over 10^5 rounds in seconds. Prints wall-clock seconds
and the process's peak resident set size per step, the growth of RABBI's time
as n doubles (n log n grows by a bit over 2x; a loop over pairs by 4x), and
RABBI against the all-pairs definition on a small sample (the same number).
Data are synthetic and seeded: 8 groups (race x gender), scores rounded to 3
decimals so ties are common, as with real model scores.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import folkscope.metrics as fm
from folkscope.allocation import selection_table
from metrics_scale import peak_rss_mib  # the sibling benchmark's memory probe (the script's folder is on the path)


def timed(label: str, fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    secs = time.perf_counter() - start
    print(f"{label:<60} {secs:7.2f} s   peak RSS {peak_rss_mib():7.0f} MiB", flush=True)
    return out, secs


def all_pairs_rabbi(a: np.ndarray, b: np.ndarray) -> float:
    """The definition, literally: every (a, b) pair (O(n_a n_b); small samples only)."""
    diff = a[:, None] - b[None, :]
    return float(np.sign(diff).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--candidates", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    n = args.candidates
    print(f"allocation at scale (numpy {np.__version__}); baseline peak RSS {peak_rss_mib():.0f} MiB")
    half = n // 2
    a = np.round(rng.normal(0.52, 0.2, half), 3)
    b = np.round(rng.normal(0.50, 0.2, half), 3)
    fm.rabbi(a[:100], b[:100])  # imports scipy's rankdata once, outside the timings
    _, t_quarter = timed(f"rabbi, 2 groups of {half // 4:,}", lambda: fm.rabbi(a[: half // 4], b[: half // 4]))
    _, t_half = timed(f"rabbi, 2 groups of {half // 2:,}", lambda: fm.rabbi(a[: half // 2], b[: half // 2]))
    value, t_full = timed(f"rabbi, 2 groups of {half:,} ({n:,} candidates)", lambda: fm.rabbi(a, b))
    print(
        f"  time ratio per doubling of n: {t_half / t_quarter:.2f}x then {t_full / t_half:.2f}x "
        "(n log n: ~2.1x; all pairs: 4x)"
    )
    test, _ = timed("rabbi_test (with the Mann-Whitney p-value)", lambda: fm.rabbi_test(a, b))
    print(
        f"  RABBI = {value:.5f}, p = {test.pvalue:.3g}; target <= 2 s: {'met' if t_full <= 2 else 'MISSED'} ({t_full:.2f} s)"
    )
    small = 3000
    exact, t_pairs = timed(f"all-pairs definition on 2 x {small:,}", lambda: all_pairs_rabbi(a[:small], b[:small]))
    fast, t_fast = timed(f"rabbi on the same 2 x {small:,}", lambda: fm.rabbi(a[:small], b[:small]))
    print(
        f"  same value: {abs(exact - fast) < 1e-12} ({fast:.6f}); rank-based is {t_pairs / max(t_fast, 1e-9):.0f}x faster here"
    )

    groups = np.array(
        [
            "White men",
            "White women",
            "Black men",
            "Black women",
            "Asian men",
            "Asian women",
            "Hispanic men",
            "Hispanic women",
        ]
    )
    cand_group = groups[rng.integers(0, 8, n)]
    scores = np.round(rng.beta(5, 2, n) - 0.02 * (cand_group == "Black men"), 3)
    members = [np.flatnonzero(cand_group == g) for g in groups]

    def pools() -> pd.DataFrame:
        chosen = np.column_stack([m[rng.integers(0, len(m), args.rounds)] for m in members])
        flat = chosen.ravel()
        return pd.DataFrame(
            {
                "pool": np.repeat(np.arange(args.rounds), 8),
                "candidate_id": flat,
                "group": cand_group[flat],
                "qualified": (scores[flat] > 0.6).astype(int),
                "score": scores[flat],
            }
        )

    scored, _ = timed(f"draw {args.rounds:,} pools of one candidate per group", pools)
    table, t_sel = timed(
        f"top-k outcomes, k = 1..5, over {len(scored):,} appearances",
        lambda: selection_table(scored, reference="White men"),
    )
    at1 = table[table["k"] == 1].set_index("group")
    print(
        f"  k=1: Black men selection rate {at1.loc['Black men', 'selection_rate']:.4f}, impact ratio "
        f"{at1.loc['Black men', 'impact_ratio']:.3f}; {t_sel / 5:.2f} s per k"
    )


if __name__ == "__main__":
    main()
