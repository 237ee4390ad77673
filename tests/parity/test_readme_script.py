"""folktexts 0.7.1's README, run as a script with only its imports changed (issue 29).

The steps are the README's Python examples in order ("Example usage", the
transformers backend, the benchmark, chain of thought, fitting a
threshold), followed by what a folktexts user does with the results next:
``predict_proba(X)[:, 1]``, ``get_params`` and ``clone``, ``results['ece']``,
``plot_results()``, ``save_results()``, ``results_dir``. Nineteen steps;
on main before issue 29 six of them failed.

Substitutions, none in the calls themselves:

- imports: ``folktexts.X`` becomes the folkscope module holding the name
  (each original is in a comment);
- the vLLM example (``load_vllm_model``, ``VLLMClassifier``) needs a CUDA GPU;
  the README's own alternative, the transformers backend, runs instead;
- the model: a random one-layer Llama saved with the default model's
  tokenizer stands in for ``"gpt2"`` (no download, seconds on a CPU);
- the data: ``ACSDataset.make_from_task("ACSIncome")`` downloads the 2018
  ACS; here it reads the bundled ACSIncome sample (folktexts' own 10 real
  rows, each listed six times so that every split has rows) through
  ``data_file=``, with ``PINCP`` written back from the fixture's label;
- chain of thought generates 8 tokens per answer instead of 512 (a random
  model never ends its reasoning; the benchmark's call is unchanged).
"""

from __future__ import annotations

import textwrap
import traceback

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("transformers")

#: (what the step does, its code); later steps use what earlier ones made
STEPS = [
    (
        "import load_model_tokenizer",
        "from folkscope.engine import load_model_tokenizer  # from folktexts.llm_utils import load_model_tokenizer",
    ),
    (
        "import TransformersLLMClassifier",
        "from folkscope import TransformersLLMClassifier  # from folktexts.classifier import TransformersLLMClassifier",
    ),
    ("import ACSDataset", "from folkscope import ACSDataset  # from folktexts.acs import ACSDataset"),
    (
        "import Benchmark, BenchmarkConfig",
        "from folkscope import Benchmark, BenchmarkConfig  # from folktexts.benchmark import Benchmark, BenchmarkConfig",
    ),
    ("load the model", "model, tokenizer = load_model_tokenizer(MODEL)"),
    ("build the classifier", 'clf = TransformersLLMClassifier(model=model, tokenizer=tokenizer, task="ACSIncome")'),
    ("load the ACS data", 'dataset = ACSDataset.make_from_task("ACSIncome", data_file=ACS_ROWS)'),
    ("split off the test rows", "X_test, y_test = dataset.get_test()"),
    ("score the test rows", "test_scores = clf.predict_proba(X_test)"),
    ("take the positive class's column", "positive_scores = test_scores[:, 1]"),
    ("fit the threshold", "clf.fit(*dataset[0:100])"),
    ("predict labels", "test_preds = clf.predict(X_test)"),
    (
        "use it as a scikit-learn estimator",
        "from sklearn.base import clone\nparams = clf.get_params()\ncopy = clone(clf)",
    ),
    (
        "build a numeric benchmark",
        'bench = Benchmark.make_benchmark(\n    task="ACSIncome", dataset=dataset,\n    model=model, tokenizer=tokenizer,\n'
        "    numeric_risk_prompting=True,\n)",
    ),
    ("run it", "bench_results = bench.run(results_root_dir=RESULTS)"),
    ("read the flat results", "ece = bench_results['ece']"),
    (
        "plot, save, find the results",
        "plots = bench.plot_results(show_plots=False)\nbench.save_results()\nresults_dir = bench.results_dir",
    ),
    ("configure chain of thought", "config = BenchmarkConfig(cot_prompting=True, enable_thinking=True)"),
    (
        "run a chain-of-thought benchmark",
        'bench = Benchmark.make_benchmark(\n    task="ACSIncome", dataset=dataset,\n    model=model, tokenizer=tokenizer, '
        "config=config,\n)\ncot_results = bench.run(results_root_dir=RESULTS)",
    ),
]


def run_steps(namespace: dict) -> list[str]:
    """Run every step in order; return the failures (step, error), as a folktexts user would meet them."""
    failures = []
    for i, (what, code) in enumerate(STEPS, 1):
        try:
            exec(compile(textwrap.dedent(code), f"readme_step_{i}", "exec"), namespace)  # noqa: S102 - the README's code
        except Exception as exc:  # noqa: BLE001 - every failing step is reported, not only the first
            failures.append(f"step {i} ({what}): {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-2)}")
    return failures


@pytest.fixture()
def readme_inputs(tmp_path, monkeypatch):
    from transformers import AutoTokenizer

    import folkscope.engine.cache as cache_module
    import folkscope.risk.run as benchmark_module
    from folkscope.data import load_bundled
    from folkscope.engine import ensure_default_model
    from folkscope.testing.models import build_random_model

    monkeypatch.setattr(cache_module, "default_cache_dir", lambda: tmp_path / "engine-cache")
    classifier = benchmark_module.LLMClassifier
    monkeypatch.setattr(
        benchmark_module, "LLMClassifier", lambda *a, **kw: classifier(*a, **{**kw, "max_new_tokens": 8})
    )
    tokenizer = AutoTokenizer.from_pretrained(ensure_default_model())
    model_dir = build_random_model(
        tmp_path / "tiny-llama",
        arch="llama",
        tokenizer=tokenizer,
        config={
            "hidden_size": 16,
            "intermediate_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 2,
        },
    )
    rows = load_bundled("acs-income-10")
    rows["PINCP"] = np.where(rows.pop("PINCP>50000") == 1, 75_000, 20_000)
    rows["PWGTP"] = 1
    rows = pd.concat([rows] * 6, ignore_index=True)
    rows.to_csv(tmp_path / "acs_income.csv", index=False)
    return {"MODEL": str(model_dir), "ACS_ROWS": str(tmp_path / "acs_income.csv"), "RESULTS": str(tmp_path / "results")}


def test_folktexts_readme_runs_with_its_imports_changed(readme_inputs):
    namespace = dict(readme_inputs)
    failures = run_steps(namespace)
    assert not failures, f"{len(STEPS) - len(failures)} of {len(STEPS)} README steps pass; failing:\n" + "\n".join(
        failures
    )
    # the results mean what they mean in folktexts
    n = len(namespace["X_test"])
    assert namespace["test_scores"].shape == (n, 2) and np.allclose(namespace["test_scores"].sum(axis=1), 1)
    assert (
        set(namespace["test_preds"]) <= {0, 1} and namespace["copy"].get_params().keys() == namespace["params"].keys()
    )
    results = namespace["bench_results"]
    assert 0 <= namespace["ece"] <= 1 and results["n_samples"] == n and results["config"]["numeric_risk_prompting"]
    assert len(list(namespace["results_dir"].glob("results.bench-*.json"))) == 1  # the numeric benchmark's, saved
    assert namespace["plots"] and all(p.endswith(".png") for p in namespace["plots"].values())
    assert namespace["cot_results"]["config"]["cot_prompting"] and namespace["cot_results"]["config"]["enable_thinking"]
