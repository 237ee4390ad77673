"""Time the numeric-calibration analysis on the full colors grid (165,000 problems), no model.

Usage: ``python benchmarks/numeric_analysis_scale.py``. Model probabilities are random
(a Random_1 baseline scaled to PM = 0.8), so only the timings mean anything.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from folkscope.metrics import random_baseline
from folkscope.numeric import (
    classify_cells,
    generate_problems,
    heatmap_data,
    order_bias,
    problem_metrics,
    problems_frame,
    summarize_metrics,
)


def main() -> None:
    t0 = time.perf_counter()
    problems = generate_problems("colors")
    frame = problems_frame(problems)
    t1 = time.perf_counter()
    pi = 0.8 * random_baseline(len(problems), 2, random_state=0)
    probs = pd.DataFrame(
        {
            "problem_id": np.repeat(frame["problem_id"].to_numpy(), 2),
            "position": np.tile([0, 1], len(problems)),
            "option": np.column_stack([frame["first"], frame["second"]]).ravel(),
            "ideal_prob": np.array([p.ideal for p in problems]).ravel(),
            "model_prob": pi.ravel(),
        }
    )
    t2 = time.perf_counter()
    metrics = problem_metrics(probs)
    summary = summarize_metrics(metrics, frame["pair"])
    t3 = time.perf_counter()
    cells = classify_cells(probs, frame)
    heat = heatmap_data(cells)
    bias, _ = order_bias(probs)
    t4 = time.perf_counter()
    print(f"{len(problems)} problems, {len(cells)} cells, {len(heat)} ordered pairs")
    print(
        f"generate {t1 - t0:.1f}s  table {t2 - t1:.1f}s  metrics+CI {t3 - t2:.1f}s  cells+heatmap+bias {t4 - t3:.1f}s"
    )
    print({k: round(v["mean"], 3) for k, v in summary.items()}, bias)


if __name__ == "__main__":
    main()
