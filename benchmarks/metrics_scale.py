"""Metrics at ACS scale: ECE / AUC / group metrics on 10^7 rows, RABBI on 2 x 10^6.

Run from the repository root::

    PYTHONPATH=src python benchmarks/metrics_scale.py [--rows 10000000] [--rabbi-rows 1000000]

Prints wall-clock seconds per step and the process's peak resident set size
so far (``resource.getrusage``: a high-water mark that includes the input
arrays). Data are synthetic and seeded: ACS-like group shares (RAC1P codes),
PWGTP-like integer survey weights, scores rounded to 4 decimals (many ties).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import folkscope.metrics as fm


def peak_rss_mib() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # kilobytes on Linux, bytes on macOS
    return usage / (1024 * 1024) if sys.platform == "darwin" else usage / 1024


def timed(label: str, fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    out = fn()
    secs = time.perf_counter() - start
    print(f"{label:<48} {secs:7.2f} s   peak RSS {peak_rss_mib():7.0f} MiB", flush=True)
    return out


def risk_scores(n: int, rng: np.random.Generator) -> None:
    shares = np.array([0.72, 0.12, 0.01, 0.001, 0.002, 0.06, 0.002, 0.05, 0.035])

    def make() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        groups = rng.choice(np.arange(1, 10), size=n, p=shares / shares.sum())
        y = (rng.random(n) < 0.37).astype(np.int8)
        p = np.round(np.clip(0.25 + 0.35 * y + 0.15 * rng.standard_normal(n), 0, 1), 4)
        w = rng.integers(1, 200, size=n).astype(np.float64)
        return y, p, groups, w

    y, p, groups, w = timed(f"generate {n:,} rows", make)
    timed("expected_calibration_error (uniform, 10 bins)", lambda: fm.expected_calibration_error(y, p))
    timed(
        "expected_calibration_error (quantile, 10 bins)",
        lambda: fm.expected_calibration_error(y, p, strategy="quantile"),
    )
    timed(
        "expected_calibration_error (uniform, weighted)", lambda: fm.expected_calibration_error(y, p, sample_weight=w)
    )
    timed("roc_auc_score", lambda: fm.roc_auc_score(y, p))
    timed("roc_auc_score (weighted)", lambda: fm.roc_auc_score(y, p, sample_weight=w))
    timed("brier_score_loss", lambda: fm.brier_score_loss(y, p))
    res = timed("groupwise_metrics (9 groups + overall, 11)", lambda: fm.groupwise_metrics(y, p, groups))
    timed("groupwise_metrics (weighted)", lambda: fm.groupwise_metrics(y, p, groups, sample_weight=w))
    print(f"  ECE overall {res.overall['ece']:.4f}, max-min across groups {res.gaps.loc['ece', 'max_minus_min']:.4f}")


def allocation(m: int, rng: np.random.Generator) -> None:
    a = np.round(rng.normal(0.52, 0.2, m), 3)
    b = np.round(rng.normal(0.50, 0.2, m), 3)
    value = timed(f"rabbi (2 groups of {m:,})", lambda: fm.rabbi(a, b))
    timed("rabbi (weighted path)", lambda: fm.rabbi(a, b, weights_a=np.ones(m)))
    test = timed("rabbi_test (with Mann-Whitney p-value)", lambda: fm.rabbi_test(a, b))
    print(f"  RABBI = {value:.5f}, Mann-Whitney p = {test.pvalue:.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rabbi-rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"folkscope.metrics at scale (numpy {np.__version__}); baseline peak RSS {peak_rss_mib():.0f} MiB")
    start = time.perf_counter()
    risk_scores(args.rows, rng)
    allocation(args.rabbi_rows, rng)
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
