"""The batch budget is part of a run's identity: answers batched under another budget are never mixed in.

Rows batched differently can differ in the last bits (padding, pass
composition); on main, the automatic budget and ``--batch-tokens 4096`` wrote
to the same run folder and shared cache entries. Tiny random-initialised
model with a locally trained tokenizer.
"""

from __future__ import annotations

import pytest

from folkscope.engine import Engine, ResultCache, ScoreRequest

pytest.importorskip("transformers")


def _backend(model_dir, **options):
    from folkscope.engine.backends.hf import HFBackend

    return HFBackend(str(model_dir), device="cpu", **options)


def test_the_automatic_budget_is_known_before_the_model_loads_and_is_part_of_the_identity(random_init_llama_dir):
    auto = _backend(random_init_llama_dir)
    identity = auto.identity()
    assert auto._model is None  # the identity (hence the cache namespace and run folder) needs no model
    assert isinstance(identity["batch_tokens"], int) and 1024 <= identity["batch_tokens"] <= 16384
    assert _backend(random_init_llama_dir).identity() == identity  # the same on every run of this machine
    same = _backend(random_init_llama_dir, batch_tokens=identity["batch_tokens"])
    assert same.identity() == identity  # naming the automatic budget explicitly is the same run
    other = _backend(random_init_llama_dir, batch_tokens=96)
    assert other.identity()["batch_tokens"] == 96
    assert Engine(other, progress=False).namespace != Engine(auto, progress=False).namespace


def test_answers_computed_under_another_budget_are_recomputed_not_reused(random_init_llama_dir, tmp_path):
    requests = [ScoreRequest(f"Row {i}: age {20 + i}, county {i * 7 % 11}.\nAnswer:", (" A", " B")) for i in range(12)]
    small = Engine(_backend(random_init_llama_dir, batch_tokens=96), cache=ResultCache(tmp_path), progress=False)
    small.score(requests)
    large = Engine(_backend(random_init_llama_dir, batch_tokens=4096), cache=ResultCache(tmp_path), progress=False)
    large.score(requests)
    assert large.stats.cached == 0 and large.stats.computed == 12
    again = Engine(_backend(random_init_llama_dir, batch_tokens=96), cache=ResultCache(tmp_path), progress=False)
    again.score(requests)
    assert again.stats.cached == 12 and again.stats.computed == 0
    for engine in (small, large, again):
        engine.close()


def test_two_budgets_write_two_run_folders(random_init_llama_dir, tmp_path):
    from folkscope.risk.benchmark import Benchmark

    def folder(batch_tokens):
        engine = Engine(_backend(random_init_llama_dir, batch_tokens=batch_tokens), cache=None, progress=False)
        bench = Benchmark.make_benchmark("NISTIncome", model=engine, subsampling=0.01, baselines=False)
        return bench.run_folder(tmp_path)

    assert folder(96) != folder(4096) and folder(96) == folder(96)


def test_a_run_that_ran_out_of_memory_says_its_answers_may_differ_in_the_last_bits(random_init_llama_dir, tmp_path):
    from folkscope.risk.benchmark import Benchmark

    backend = _backend(random_init_llama_dir, batch_tokens=4096)
    run = backend._run_scores
    failures = []

    def out_of_memory_once(*args):
        if not failures:
            failures.append(1)
            raise RuntimeError("CPU out of memory (injected by the test)")
        return run(*args)

    backend._run_scores = out_of_memory_once
    engine = Engine(backend, cache=None, progress=False)
    bench = Benchmark.make_benchmark("NISTIncome", model=engine, subsampling=0.01, baselines=False, n_bootstrap=10)
    metrics = bench.run(tmp_path)
    assert metrics["scoring"]["backend_stats"]["oom_backoffs"] == 1
    assert any("halved 1 time(s)" in note and "last bits" in note for note in metrics["scoring"]["notes"])
    assert backend.identity()["batch_tokens"] == 4096  # the run's identity keeps the budget it was planned with
