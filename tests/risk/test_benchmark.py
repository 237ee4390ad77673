"""Benchmark runs end to end on real bundled rows: run folder contents, resume, rescore, errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from folkscope.engine import Engine
from folkscope.errors import ConfigError, DataError
from folkscope.report import open_result
from folkscope.risk.analysis import rescore
from folkscope.risk.config import BenchmarkConfig
from folkscope.risk.run import Benchmark


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    engine = Engine.from_model("seeded-fake", backend="fake", cache_dir=root / "cache")
    bench = Benchmark.make_benchmark("NISTIncome", model=engine, subsampling=0.05, n_bootstrap=50, fit_threshold=40)
    metrics = bench.run(root)
    return bench, metrics, root


def test_run_folder_is_self_describing(finished_run):
    bench, metrics, root = finished_run
    run_dir = bench.run_dir
    assert run_dir.parent.parent == root / "NISTIncome"
    assert run_dir.name.startswith(bench.classifier.prompt_config.name + "-")
    for name in ("config.json", "scores.parquet", "metrics.json", "report.html"):
        assert (run_dir / name).is_file(), name
    assert list((run_dir / "plots").glob("*.png"))
    record = json.loads((run_dir / "config.json").read_text())
    assert record["fingerprint"] == bench.fingerprint()
    assert record["task"]["name"] == "NISTIncome" and record["data"]["source"] == "nist-national"
    assert {"numpy", "pandas", "folkscope"} <= set(record["versions"])
    assert record["engine"]["backend"]["model"]["name"] == "seeded-fake"


def test_scores_table_holds_rows_labels_groups_weights_and_baselines(finished_run):
    bench, _, _ = finished_run
    table = pd.read_parquet(bench.run_dir / "scores.parquet")
    test_frame = bench.dataset.get_frame("test")
    assert table["row_id"].tolist() == test_frame.index.tolist()
    assert table["label"].tolist() == test_frame["PINCP>50000"].tolist()
    assert np.allclose(table["weight"], test_frame["PWGTP"].astype(float))
    assert {"RAC1P", "SEX", "risk_score", "score_ordering_0", "score_ordering_1"} <= set(table.columns)
    assert {"baseline_logistic_regression", "baseline_gradient_boosting"} <= set(table.columns)
    assert np.allclose(table["risk_score"], table[["score_ordering_0", "score_ordering_1"]].mean(axis=1))


def test_metrics_json_has_model_baselines_and_counts(finished_run):
    bench, metrics, _ = finished_run
    on_disk = json.loads((bench.run_dir / "metrics.json").read_text())
    assert on_disk == json.loads(json.dumps({k: metrics[k] for k in on_disk}))
    assert set(on_disk["baselines"]) == {"logistic_regression", "gradient_boosting"}
    assert on_disk["scoring"]["rows"] == len(bench.dataset.split_ids("test"))
    assert on_disk["scoring"]["nan_scores"] == 0
    assert 0.0 <= on_disk["scoring"]["threshold"] <= 1.0


def test_results_hold_folktexts_flat_keys_and_files_beside_metrics_json(finished_run):
    """folktexts' results["ece"], results.bench-<hash>.json and the predictions CSV (before issue 29: a KeyError, no files)."""
    from folkscope.metrics import evaluate_predictions

    bench, results, root = finished_run
    table = pd.read_parquet(bench.run_dir / "scores.parquet")
    flat = evaluate_predictions(
        table["label"],
        table["risk_score"],
        sensitive_attribute=table["RAC1P"],
        threshold=results["threshold"],
        model_name=bench.model_name,
    )
    for key, value in flat.items():
        assert results[key] == (pytest.approx(value, abs=1e-12) if isinstance(value, float) else value), key
    overall = results["model"]["unweighted"]["overall"]
    assert results["accuracy"] == overall["accuracy"] and results["ece"] == pytest.approx(overall["ece"], abs=1e-12)
    assert (
        results["threshold_fitted_on"] == 40
        and results["sensitive_attribute"] == "RAC1P"
        and results["n_unscored"] == 0
    )
    saved = json.loads((bench.run_dir / f"results.bench-{hash(bench)}.json").read_text())
    assert saved["ece"] == results["ece"] and "model" not in saved and saved["results_dir"] == bench.run_dir.as_posix()
    predictions = pd.read_csv(results["predictions_path"], index_col=0)
    assert list(predictions.columns) == ["risk_score", "label"] and np.allclose(
        predictions["risk_score"], table["risk_score"]
    )
    assert bench.results_dir == bench.run_dir and bench.results_root_dir == root and bench.llm_clf is bench.classifier
    assert bench.save_results() == bench.run_dir / f"results.bench-{hash(bench)}.json"
    plots = bench.plot_results(show_plots=False)
    assert plots and all(path.endswith(".png") for path in plots.values()) and results["plots"] == plots


def test_rerun_reuses_every_model_answer_and_gives_identical_results(finished_run):
    bench, metrics, root = finished_run
    engine = Engine.from_model("seeded-fake", backend="fake", cache_dir=root / "cache")
    again = Benchmark.make_benchmark("NISTIncome", model=engine, subsampling=0.05, n_bootstrap=50, fit_threshold=40)
    assert again.run_folder(root) == bench.run_dir
    rerun = again.run(root)
    assert rerun["model"] == metrics["model"] and rerun["baselines"] == metrics["baselines"]
    stats = rerun["scoring"]["engine_stats"]
    assert stats["computed"] == 0 and stats["cached"] == stats["unique"] > 0, stats


def test_rescore_recomputes_the_same_metrics_without_a_model(finished_run):
    bench, metrics, _ = finished_run
    again = rescore(bench.run_dir)
    assert again["model"] == metrics["model"] and again["baselines"] == metrics["baselines"]


def test_rescore_of_a_folder_that_is_not_a_run(tmp_path):
    with pytest.raises(DataError, match="not a finished run folder"):
        rescore(tmp_path)


def test_another_configuration_never_shares_a_folder(finished_run):
    bench, _, root = finished_run
    engine = Engine.from_model("seeded-fake", backend="fake", use_cache=False)
    other = Benchmark.make_benchmark(
        "NISTIncome", model=engine, subsampling=0.05, n_bootstrap=50, numeric_risk_prompting=True
    )
    assert other.run_folder(root) != bench.run_dir


def test_a_folder_holding_another_run_is_refused(finished_run, tmp_path):
    bench, _, _ = finished_run
    target = bench.run_folder(tmp_path)
    target.mkdir(parents=True)
    (target / "config.json").write_text(json.dumps({"fingerprint": "something-else"}))
    with pytest.raises(ConfigError, match="holds a run of another configuration"):
        bench.run(tmp_path)


def test_feature_subset_and_population_filter_reach_the_prompts():
    engine = Engine.from_model("seeded-fake", backend="fake", use_cache=False)
    bench = Benchmark.make_benchmark(
        "NISTIncome", model=engine, subsampling=0.05, feature_subset=("AGEP", "EDU"), population_filter=("SEX=2",)
    )
    assert bench.dataset.task.features == ("AGEP", "EDU")
    assert (bench.dataset.data["SEX"] == 2).all()


def test_invalid_options_fail_before_any_model_loads():
    with pytest.raises(ConfigError, match="few-shot prompting cannot be combined with the chat template"):
        BenchmarkConfig(few_shot=2, use_chat_template=True)
    with pytest.raises(ConfigError, match="subsampling"):
        BenchmarkConfig(subsampling=2.0)
    with pytest.raises(ConfigError, match="either config= or"):
        Benchmark.make_benchmark("NISTIncome", model="x", config=BenchmarkConfig(), seed=3)
    assert BenchmarkConfig.from_dict(BenchmarkConfig(variation=("format=bullet",)).to_dict()).variation == (
        "format=bullet",
    )
    with pytest.raises(ConfigError, match="unknown BenchmarkConfig key"):
        BenchmarkConfig.from_dict({"temprature": 1})


def test_chain_of_thought_runs_keep_the_generations_and_count_unparseable_ones(tmp_path):
    from folkscope.engine.backends.fake import FakeBackend

    def answer(prompt: str) -> str:
        return "Thinking... Probability: 30%" if "The sex is: Female." in prompt else "No idea."

    engine = Engine(FakeBackend("cot-fake", responses=answer), cache=None)
    bench = Benchmark.make_benchmark(
        "NISTIncome",
        model=engine,
        subsampling=0.02,
        cot_prompting=True,
        baselines=False,
        n_bootstrap=10,
        context_size=None,
    )  # whole prompts: the answer depends on a feature line
    metrics = bench.run(tmp_path)
    table = pd.read_parquet(bench.run_dir / "scores.parquet")
    men = table["SEX"] == 1
    assert table.loc[men, "risk_score"].isna().all() and np.allclose(table.loc[~men, "risk_score"], 0.3)
    assert (table.loc[men, "generation"] == "No idea.").all()
    assert metrics["scoring"]["unparseable_generations"] == int(men.sum()) == metrics["scoring"]["nan_scores"]
    assert metrics["model"]["counts"]["n_excluded"] == int(men.sum())  # excluded from metrics, and counted


def test_a_finished_benchmark_displays_its_result_in_jupyter(finished_run):
    bench, _, _ = finished_run
    result = open_result(bench.run_dir)
    html = bench._repr_html_()
    assert html == result._repr_html_() and html.index(result.answer) < html.index("<table")
    assert "seeded-fake" in result.answer and result.part == "risk"
    fresh = Benchmark.make_benchmark(
        "NISTIncome", model=Engine.from_model("seeded-fake", backend="fake", use_cache=False)
    )
    assert fresh._repr_html_() is None  # not run yet: the notebook shows the plain repr
