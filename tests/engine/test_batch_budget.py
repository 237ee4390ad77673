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
    from folkscope.risk.run import Benchmark

    def folder(batch_tokens):
        engine = Engine(_backend(random_init_llama_dir, batch_tokens=batch_tokens), cache=None, progress=False)
        bench = Benchmark.make_benchmark("NISTIncome", model=engine, subsampling=0.01, baselines=False)
        return bench.run_folder(tmp_path)

    assert folder(96) != folder(4096) and folder(96) == folder(96)


def test_a_run_that_ran_out_of_memory_says_its_answers_may_differ_in_the_last_bits(random_init_llama_dir, tmp_path):
    from folkscope.risk.run import Benchmark

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


def _budget_for(config, device="cpu", dtype="float32") -> int:
    """The automatic budget of a model of this shape, without weights (the estimate needs none)."""
    import torch
    import transformers

    from folkscope.engine.backends.hf import HFBackend

    backend = HFBackend.__new__(HFBackend)
    backend._torch, backend._transformers, backend.device, backend.dtype, backend.strategy = (
        torch,
        transformers,
        device,
        dtype,
        "optimized",
    )
    return backend._estimate_budget(config)


def test_a_cpu_batch_is_bounded_work_so_a_kill_loses_seconds_not_minutes():
    """Issue 28 (13): answers are saved per batch, and a batch of the automatic CPU budget took minutes.

    The budget now also bounds a batch's work (2 * parameters * tokens): the
    default model's shape gets about 3,700 tokens instead of 16384 (a batch
    of 16384 took up to a minute on a busy 2-core machine), a 1.7B model the
    1024 floor, and a tiny model is not held back.
    """
    from transformers import LlamaConfig

    from folkscope.engine.backends.hf import CPU_BATCH_FLOP

    def llama(hidden, inter, layers, heads, kv_heads):
        return LlamaConfig(
            hidden_size=hidden,
            intermediate_size=inter,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=kv_heads,
            vocab_size=49152,
            tie_word_embeddings=True,
        )

    smollm2_135m = llama(576, 1536, 30, 9, 3)
    params = 134_515_008
    budget = _budget_for(smollm2_135m)
    assert 2 * params * budget <= CPU_BATCH_FLOP and 3000 <= budget < 16384
    assert _budget_for(llama(2048, 8192, 24, 32, 32)) == 1024  # SmolLM2-1.7B's shape: the floor
    assert _budget_for(llama(32, 64, 2, 4, 2)) >= 4096  # a tiny model: memory sets the budget, as before
