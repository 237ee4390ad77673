"""Web-API cost of exact scoring: prompt tokens per row, echo scoring against top-k-first, from one run.

A NISTIncome multiple-choice risk run (both answer orders, letter variants
``A``/`` A``/...) goes through the real stack (Benchmark -> Engine ->
LiteLLMBackend -> litellm -> HTTP) to the local OpenAI-compatible server
over the fake model, twice on the same rows: ``score_mode="echo"`` (the old
path, kept as an option: every candidate sent as ``prompt + candidate``
with echo) and ``score_mode="topk"`` (one ``logprobs=k`` request per prompt,
echo only for candidates the bound rule cannot leave out). The result cache
is off, so every request is sent; the tokens are the ones the server billed.

Two fake models: ``plain`` (the bundled server's model: answer letters get
hashed, small probabilities, so many rows need echo for a letter that is
missing from the top-k and could matter) and ``answers`` (a model that puts
its mass on the answer letters after the cue, as an instruction-tuned model
does: the top-k table settles nearly every row). Printed per model: rows,
HTTP requests and prompt tokens per row for each path, the token ratio, and
the largest difference between the two paths' risk scores (the documented
tolerance is ``MISSING_TOLERANCE`` = 1e-3 of probability mass).

Usage::

    python benchmarks/api_cost.py                      # subsampling 0.005 of NISTIncome's rows
    python benchmarks/api_cost.py --subsampling 0.01 --top-logprobs 5
"""

from __future__ import annotations

import argparse
import os
import time
import zlib

import numpy as np


def letter_rule(text: str) -> dict[str, float] | None:
    """After the answer cue, most of the mass on the answer letters (prompt-dependent), as a real model would."""
    if not text.rstrip().endswith("Answer:"):
        return None
    h = zlib.crc32(text.encode()) % 997 / 997
    return {" A": 0.2 + 0.5 * h, " B": 0.75 - 0.5 * h, "A": 0.02, "B": 0.02}


def run_once(url: str, score_mode: str, subsampling: float, top_logprobs: int) -> dict[str, object]:
    from folkscope.engine import Engine
    from folkscope.engine.backends.api import LiteLLMBackend
    from folkscope.risk.config import BenchmarkConfig
    from folkscope.risk.run import Benchmark

    backend = LiteLLMBackend(
        "openai/fake", api_base=url, score_mode=score_mode, top_logprobs=top_logprobs, max_concurrency=8
    )
    engine = Engine(backend, cache=None, progress=False)
    config = BenchmarkConfig(subsampling=subsampling, baselines=False, n_bootstrap=10)
    bench = Benchmark.make_benchmark("NISTIncome", model=engine, config=config)
    X, _ = bench.dataset.get_test()
    start = time.perf_counter()
    scores = bench.classifier.predict_proba(X)[:, 1]
    seconds = time.perf_counter() - start
    stats = backend.stats
    engine.close()
    return {
        "rows": len(X),
        "scores": np.asarray(scores, dtype=float),
        "calls": stats.api_calls,
        "prompt_tokens": stats.prompt_tokens,
        "echoed": stats.echo_candidates,
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--subsampling", type=float, default=0.005, help="share of NISTIncome's rows (test split scored)"
    )
    parser.add_argument("--top-logprobs", type=int, default=20, help="k of the top-k request")
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("OPENAI_API_KEY", "sk-local-benchmark")  # the local server does not check it

    from folkscope.engine.backends.fake import FakeBackend
    from folkscope.testing import FakeSource, LocalOpenAIServer

    print(
        f"NISTIncome multiple-choice, subsampling {args.subsampling}, k={args.top_logprobs}; tokens as billed by the local server"
    )
    header = (
        f"{'model':8} {'path':5} {'rows':>5} {'requests/row':>12} {'prompt tok/row':>15} {'echoed cands':>12} {'s':>6}"
    )
    print(header)
    for name, rule in (("plain", None), ("answers", letter_rule)):
        with LocalOpenAIServer(
            FakeSource(FakeBackend(next_token_probs=rule)), max_lifetime=1800, idle_timeout=600
        ) as url:
            runs = {mode: run_once(url, mode, args.subsampling, args.top_logprobs) for mode in ("echo", "topk")}
        for mode, r in runs.items():
            n = int(r["rows"])  # type: ignore[call-overload]
            echoed = "-" if mode == "echo" else str(r["echoed"])
            print(
                f"{name:8} {mode:5} {n:5d} {int(r['calls']) / n:12.2f} {int(r['prompt_tokens']) / n:15.0f} {echoed:>12} {float(r['seconds']):6.1f}"
            )  # type: ignore[call-overload]
        old, new = runs["echo"], runs["topk"]
        ratio = int(old["prompt_tokens"]) / max(int(new["prompt_tokens"]), 1)  # type: ignore[call-overload]
        diff = float(np.nanmax(np.abs(np.asarray(old["scores"]) - np.asarray(new["scores"]))))
        same_nan = bool(np.array_equal(np.isnan(old["scores"]), np.isnan(new["scores"])))  # type: ignore[arg-type]
        print(
            f"{name:8} echo/topk prompt tokens: {ratio:.1f}x fewer; largest risk-score difference {diff:.2e}; same rows scored: {same_nan}"
        )


if __name__ == "__main__":
    main()
