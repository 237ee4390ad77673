"""A script written for folktexts 0.7.1 runs after changing its import lines only.

On main (2026-11-25) none of these names existed and
``make_benchmark(model=hf_model, tokenizer=tok)`` raised TypeError. The
script below follows folktexts' README; only the imports (commented: the
folktexts originals) differ. It runs the default model on folktexts' own 10
real ACSIncome rows.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")

SCRIPT = textwrap.dedent(
    """
    # from folktexts.llm_utils import load_model_tokenizer
    # from folktexts.classifier import TransformersLLMClassifier
    # from folktexts.acs import ACSTaskMetadata
    # from folktexts.benchmark import Benchmark, BenchmarkConfig
    from folkscope.engine import load_model_tokenizer
    from folkscope.risk import TransformersLLMClassifier, Benchmark, BenchmarkConfig
    from folkscope.tasks import ACSTaskMetadata

    model, tokenizer = load_model_tokenizer(MODEL)
    task = ACSTaskMetadata.get_task("ACSIncome")
    clf = TransformersLLMClassifier(model=model, tokenizer=tokenizer, task=task)
    test_scores = clf.predict_proba(X_test)
    clf.fit(*dataset[0:5])
    test_preds = clf.predict(X_test)

    bench = Benchmark.make_benchmark(
        task="ACSIncome", dataset=dataset,
        model=model, tokenizer=tokenizer,
        numeric_risk_prompting=True,
    )
    bench_results = bench.run(results_root_dir=RESULTS)
    """
)


def test_a_folktexts_script_runs_with_its_imports_changed(tmp_path, monkeypatch):
    import folkscope.engine.cache as cache_module
    from folkscope.data import Dataset, load_bundled

    monkeypatch.setattr(
        cache_module, "default_cache_dir", lambda: tmp_path / "engine-cache"
    )  # fresh: the model really runs
    rows = load_bundled("acs-income-10")
    rows["PINCP"] = np.where(rows.pop("PINCP>50000") == 1, 75_000, 20_000)  # the fixture keeps only the label
    rows["PWGTP"] = 1
    dataset = Dataset(rows, "ACSIncome", test_size=0.5, seed=0)
    X_test, _ = dataset.get_test()
    namespace = {"MODEL": "default", "RESULTS": str(tmp_path / "results"), "dataset": dataset, "X_test": X_test}
    exec(compile(SCRIPT, "folktexts_script.py", "exec"), namespace)  # noqa: S102 - our own test script
    proba = namespace["test_scores"]
    assert proba.shape == (len(X_test), 2) and np.allclose(proba.sum(axis=1), 1)  # folktexts' [1 - risk, risk]
    scores = proba[:, 1]
    assert np.isfinite(scores).all() and ((scores > 0) & (scores < 1)).all()
    assert set(namespace["test_preds"]) <= {0, 1} and 0 <= namespace["clf"].threshold <= 1
    results = namespace["bench_results"]
    assert results["scoring"]["rows"] == len(X_test) and results["n_samples"] == len(X_test)
    bench = namespace["bench"]
    assert bench.config.numeric_risk_prompting and bench.run_dir.is_dir()
    assert (
        bench.run_dir.parts[-2] == Path(namespace["model"].name_or_path).name
    )  # the loaded model's own name, as in folktexts


def test_loaded_models_are_told_apart_by_their_weights(tmp_path):
    """Random-initialised tiny Llamas: two loaded models under one name never share cached answers (the cache keys on a weights fingerprint)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from folkscope.engine import Engine, ensure_default_model

    tokenizer = AutoTokenizer.from_pretrained(ensure_default_model())
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
    )
    torch.manual_seed(0)
    a = LlamaForCausalLM(config)
    torch.manual_seed(1)
    b = LlamaForCausalLM(config)
    engines = [Engine.from_loaded(m, tokenizer, name="same-name", cache_dir=tmp_path, device="cpu") for m in (a, a, b)]
    assert engines[0].namespace == engines[1].namespace != engines[2].namespace


def test_folktexts_arguments_the_engine_cannot_honour_are_refused_in_one_line():
    from folkscope.errors import ConfigError
    from folkscope.risk import Benchmark, TransformersLLMClassifier

    with pytest.raises(ConfigError, match="encode_row"):
        TransformersLLMClassifier(object(), object(), "ACSIncome", encode_row=lambda row: "text")
    with pytest.raises(ConfigError, match="unknown inference option"):
        TransformersLLMClassifier(object(), object(), "ACSIncome", temperature_scaling=2)
    with pytest.raises(ConfigError, match="needs its tokenizer"):
        Benchmark.make_benchmark("NISTIncome", model=object(), subsampling=0.01)
    with pytest.raises(ConfigError, match="ACS task"):
        Benchmark.make_acs_benchmark("NISTIncome")
