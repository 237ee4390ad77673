"""Time bulk prompt rendering: 160,000 ACSIncome rows, default prompt, both answer orderings.

Target (``shared/spec/performance.md``, "render prompts in bulk"): at most
5 s on 2 CPU cores. The rows are ACSIncome-shaped and offline:

- ``--source codebook`` (default): every column drawn independently from its
  real code list (all occupations, places of birth, ages 17-94, hours 1-99),
  so each column has as many distinct values as real data and nearly every
  row is unique: the honest case for per-distinct-value rendering.
- ``--source fixture``: the 10 bundled real rows resampled (few distinct values).

Timed: ``PromptRenderer.render`` (feature blocks, question, orderings) plus
forming the full text of every row in every ordering. Best of ``--repeat``.

Usage::

    .venv/bin/python benchmarks/prompt_render.py [--rows 160000] [--source codebook|fixture] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

TARGET_SECONDS = 5.0


def codebook_rows(rows: int, seed: int = 0) -> pd.DataFrame:
    """ACSIncome feature rows drawn from each column's real codes (raw survey encoding: floats for some)."""
    from folkscope.tasks import get_task

    task = get_task("ACSIncome")
    rng = np.random.default_rng(seed)
    data = {}
    for name in task.features:
        col = task.column_to_text(name)
        if name == "AGEP":
            values = rng.integers(17, 95, rows)
        elif name == "WKHP":
            values = rng.integers(1, 100, rows).astype(float)
        else:
            codes = np.array(sorted(col.values), dtype=float)
            values = codes[rng.integers(0, len(codes), rows)]
        data[name] = values
    frame = pd.DataFrame(data, index=pd.RangeIndex(rows, name="row_id"))
    frame["PINCP>50000"] = rng.integers(0, 2, rows)
    return frame


def fixture_rows(rows: int, seed: int = 0) -> pd.DataFrame:
    from folkscope.data import load_bundled

    sample = load_bundled("acs-income-10")
    pick = np.random.default_rng(seed).integers(0, len(sample), rows)
    frame = sample.iloc[pick].reset_index(drop=True)
    frame.index.name = "row_id"
    return frame


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=160_000)
    parser.add_argument("--source", choices=("codebook", "fixture"), default="codebook")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    from folkscope.prompting import PromptRenderer

    frame = codebook_rows(args.rows) if args.source == "codebook" else fixture_rows(args.rows)
    X, y = frame.drop(columns="PINCP>50000"), frame["PINCP>50000"]
    renderer = PromptRenderer("ACSIncome")
    best, total_chars, n_prompts = float("inf"), 0, 0
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        batch = renderer.render(X, y)
        texts = [batch.full_texts(o) for o in range(batch.n_slots)]
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        n_prompts = sum(len(t) for t in texts)
        total_chars = sum(sum(map(len, t)) for t in texts)
        del batch, texts
    distinct = int(X.drop_duplicates().shape[0])
    rate = args.rows / best
    status = "OK" if best <= TARGET_SECONDS else "SLOW"
    print(
        f"prompt_render: {args.rows:,} ACSIncome rows ({args.source}, {distinct:,} distinct) -> {n_prompts:,} prompts "
        f"({total_chars / n_prompts:,.0f} chars each) in {best:.3f} s best of {args.repeat} "
        f"= {rate:,.0f} rows/s [{status}: target <= {TARGET_SECONDS:.0f} s]"
    )
    return 0 if best <= TARGET_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
