"""How much risk scores move with the batch budget: the deviation the run identity guards against.

Usage: ``python benchmarks/batch_invariance.py [--model default] [--subsampling 0.2] [--budgets auto,4096,1024,256]``

Scores the same NISTIncome test rows once per batch budget (no result cache,
so every budget computes every row) and prints, for each budget against the
first: how many rows' scores differ at all, the largest absolute difference,
and the AUC. Rows batched differently (padding, which rows share a pass) can
differ in the last bits, which is why the budget is part of a run's identity
(cache namespace and run folder) rather than a setting a resume may change.
On 2 CPU cores the default model takes a few minutes for the default slice.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--subsampling", type=float, default=0.2)
    parser.add_argument("--budgets", default="auto,4096,1024,256")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default=None)
    args = parser.parse_args(argv)

    from folkscope.engine import Engine
    from folkscope.metrics import roc_auc_score
    from folkscope.risk.run import Benchmark

    scores: dict[str, np.ndarray] = {}
    labels = None
    for name in args.budgets.split(","):
        budget = None if name == "auto" else int(name)
        engine = Engine.from_model(
            args.model, device=args.device, dtype=args.dtype, use_cache=False, batch_tokens=budget, progress=False
        )
        bench = Benchmark.make_benchmark("NISTIncome", model=engine, subsampling=args.subsampling, baselines=False)
        X, y = bench.dataset.get_test()
        start = time.perf_counter()
        scores[name] = bench.classifier.predict_proba(X)[:, 1]
        seconds = time.perf_counter() - start
        labels = y.to_numpy()
        planned = engine.backend.identity().get("batch_tokens")
        print(
            f"budget {name} (planned {planned} tokens): {len(X)} rows in {seconds:.1f} s", file=sys.stderr, flush=True
        )
        engine.close()
    first, reference = next(iter(scores.items()))
    summary = {}
    for name, values in scores.items():
        diff = np.abs(values - reference)
        summary[name] = {
            "rows": int(len(values)),
            "rows_differing": int((diff > 0).sum()),
            "max_abs_diff": float(diff.max()),
            "auc": float(roc_auc_score(labels, values)),
        }
    print(json.dumps({"model": args.model, "device": args.device, "reference": first, "budgets": summary}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
