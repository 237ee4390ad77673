"""Evidence sweeps: one benchmark per prefix of a feature order, a table, a plot and the ``folkscope evidence`` command.

The fake backend on the bundled NISTIncome rows keeps every sweep to a
fraction of a second per step; the per-run plots (not what is tested here)
are stubbed out, the sweep's own plot is drawn.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pandas as pd
import pytest

import folkscope.risk.plots
from folkscope.cli.main import main
from folkscope.engine import Engine
from folkscope.errors import ConfigError
from folkscope.risk import Benchmark, BenchmarkConfig, evidence_sweep, importance_order
from folkscope.runs import read_caveats
from folkscope.tasks.task import get_task

FEATURES = get_task("NISTIncome").features
SMALL = {"subsampling": 0.03, "n_bootstrap": 10, "baselines": False}
CLI_SMALL = [
    "--model",
    "cli-fake",
    "--inference-backend",
    "fake",
    "--task",
    "NISTIncome",
    "--subsampling",
    "0.03",
    "--n-bootstrap",
    "10",
    "--no-baselines",
]


@pytest.fixture(autouse=True)
def no_run_plots(monkeypatch):
    """Each step's own run plots take most of a run's time and are covered elsewhere; the sweep plot is still drawn."""
    monkeypatch.setattr(folkscope.risk.plots, "make_all_plots", lambda *args, **kwargs: {})


def _config(run_dir: str) -> dict:
    return json.loads((Path(run_dir) / "config.json").read_text())


def _overall(metrics: dict) -> dict:
    section = metrics["model"]["unweighted"]
    return {
        **{k: section["overall"][k] for k in ("roc_auc", "ece", "brier", "accuracy")},
        "intervals": section["intervals"],
    }


def test_task_order_sweep_adds_one_feature_per_step_and_ends_with_the_full_run(tmp_path, monkeypatch):
    loads = []
    from_model = Engine.from_model
    monkeypatch.setattr(Engine, "from_model", lambda *a, **k: loads.append(a) or from_model(*a, **k))
    cache = tmp_path / "cache"
    table = evidence_sweep(
        "NISTIncome", model="sweep-fake", backend="fake", results_dir=tmp_path / "results", cache_dir=cache, **SMALL
    )

    assert len(loads) == 1  # one engine for every step
    assert table["k"].tolist() == list(range(1, len(FEATURES) + 1))
    assert table["added_feature"].tolist() == list(FEATURES)
    assert table["features"].tolist() == [",".join(FEATURES[:k]) for k in range(1, len(FEATURES) + 1)]
    assert {"roc_auc_low", "roc_auc_high", "ece_low", "ece_high", "brier", "accuracy"} <= set(table.columns)
    assert table["run_dir"].nunique() == len(FEATURES)
    for k, run_dir in zip(table["k"], table["run_dir"]):
        record = _config(run_dir)
        assert record["task"]["features"] == list(FEATURES[:k])
        subset = record["benchmark_config"]["feature_subset"]
        assert subset == (None if k == len(FEATURES) else list(FEATURES[:k]))  # the last step is the plain run
    stats = [
        json.loads((Path(d) / "metrics.json").read_text())["scoring"]["engine_stats"]["requested"]
        for d in table["run_dir"]
    ]
    assert len(set(stats)) == 1  # each step records its own requests, not a running total

    full = Benchmark.make_benchmark(
        "NISTIncome", model="sweep-fake", backend="fake", cache_dir=cache, config=BenchmarkConfig(**SMALL)
    )
    metrics = full.run(tmp_path / "plain")
    assert full.run_dir.name == Path(table["run_dir"].iloc[-1]).name
    assert _overall(metrics) == _overall(json.loads((Path(table["run_dir"].iloc[-1]) / "metrics.json").read_text()))
    last = table.iloc[-1]
    assert last["roc_auc"] == metrics["model"]["unweighted"]["overall"]["roc_auc"]
    assert last["ece_low"] == metrics["model"]["unweighted"]["intervals"]["ece"]["low"]

    sweep_dir = Path(table.attrs["sweep_dir"])
    assert sweep_dir.parent == Path(table["run_dir"].iloc[0]).parent and sweep_dir.name.startswith("evidence-")
    assert sorted(p.name for p in sweep_dir.iterdir()) == [
        "evidence_sweep.csv",
        "evidence_sweep.json",
        "evidence_sweep.png",
    ]
    assert Path(table.attrs["plot"]).stat().st_size > 1000
    pd.testing.assert_frame_equal(pd.read_csv(sweep_dir / "evidence_sweep.csv"), table, check_dtype=False)
    record = json.loads((sweep_dir / "evidence_sweep.json").read_text())
    assert (
        record["complete"]
        and record["order"] == list(FEATURES)
        and record["steps"][1]["features"] == list(FEATURES[:2])
    )

    again = evidence_sweep(
        "NISTIncome", model="sweep-fake", backend="fake", results_dir=tmp_path / "results", cache_dir=cache, **SMALL
    )
    pd.testing.assert_frame_equal(again, table)  # a rerun lands in the same folders with the same numbers
    assert again.attrs["sweep_dir"] == table.attrs["sweep_dir"]


def test_step_size_and_a_subset_as_the_features_available(tmp_path):
    config = BenchmarkConfig(feature_subset=("AGEP", "EDU", "SEX"), **SMALL)
    table = evidence_sweep(
        "NISTIncome", model="sweep-fake", backend="fake", config=config, step=2, results_dir=tmp_path, use_cache=False
    )
    assert table["k"].tolist() == [2, 3]
    assert table["added_feature"].tolist() == ["AGEP+EDU", "SEX"]
    assert _config(table["run_dir"].iloc[-1])["benchmark_config"]["feature_subset"] == ["AGEP", "EDU", "SEX"]
    plain = Benchmark.make_benchmark("NISTIncome", model="sweep-fake", backend="fake", config=config, use_cache=False)
    assert plain.run_folder(tmp_path) == Path(table["run_dir"].iloc[-1])  # the same run as `run --use-feature-subset`
    other = evidence_sweep(
        "NISTIncome",
        model="sweep-fake",
        backend="fake",
        config=config,
        order=["SEX", "AGEP"],
        results_dir=tmp_path,
        use_cache=False,
    )
    assert other["features"].tolist() == ["SEX", "SEX,AGEP"]  # an order may leave features out
    assert other.attrs["sweep_dir"] != table.attrs["sweep_dir"]


def test_order_by_an_importance_file(tmp_path):
    importance = pd.DataFrame(
        {"column": ["SEX", "EDU", "AGEP"], "importance": [0.01, 0.2, 0.05], "std": 0.0}
    ).set_index("column")
    path = tmp_path / "feature_importance.csv"
    importance.to_csv(path)
    assert (
        importance_order(path) == importance_order(tmp_path) == importance_order(importance) == ["EDU", "AGEP", "SEX"]
    )
    table = evidence_sweep(
        "NISTIncome",
        model="sweep-fake",
        backend="fake",
        order=importance_order(path),
        results_dir=tmp_path / "results",
        use_cache=False,
        **SMALL,
    )
    assert table["added_feature"].tolist() == ["EDU", "AGEP", "SEX"]
    assert [_config(d)["task"]["features"] for d in table["run_dir"]] == [
        ["EDU"],
        ["EDU", "AGEP"],
        ["EDU", "AGEP", "SEX"],
    ]


@pytest.mark.parametrize(
    ("order", "kwargs", "message"),
    [
        ([], {}, "order is empty"),
        ("", {}, "order is empty"),
        (["AGEP", "SEX", "AGEP"], {}, "order lists AGEP more than once"),
        (["AGEP", "NOPE\nX"], {}, "order names NOPE\\nX, not among the features of task NISTIncome"),
        (["AGEP", "DEYE"], {"feature_subset": ("AGEP", "SEX")}, "order names DEYE"),
        ([3], {}, "order must list column names"),
        (None, {"step": 0}, "step must be a positive integer"),
    ],
)
def test_bad_orders_fail_in_one_line_before_any_model_loads(tmp_path, monkeypatch, order, kwargs, message):
    def refuse(*args, **kwargs):
        raise AssertionError("a benchmark was built")

    monkeypatch.setattr(Benchmark, "make_benchmark", refuse)
    step = kwargs.pop("step", 1)
    with pytest.raises(ConfigError) as exc:
        evidence_sweep(
            "NISTIncome",
            model="sweep-fake",
            backend="fake",
            order=order,
            step=step,
            results_dir=tmp_path,
            **SMALL,
            **kwargs,
        )
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_an_unknown_keyword_is_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="unexpected keyword argument 'subsample'"):
        evidence_sweep("NISTIncome", model="sweep-fake", backend="fake", results_dir=tmp_path, subsample=0.1)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--order", "AGEP,NOPE"], "order names NOPE"),
        (["--order", "AGEP,AGEP"], "more than once"),
        (["--order", "{tmp}/missing.csv"], "does not exist"),
        (["--order", ","], "order is empty"),
        (["--step", "0"], "--step must be >= 1"),
    ],
)
def test_cli_refuses_bad_orders_in_one_line(capsys, tmp_path, extra, message):
    extra = [e.format(tmp=tmp_path) for e in extra]
    code = main(
        [
            "evidence",
            *CLI_SMALL,
            "--model",
            str(tmp_path / "never-loaded"),
            "--inference-backend",
            "transformers",
            "--results-dir",
            str(tmp_path),
            *extra,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "NISTIncome").exists()


def test_cli_sweeps_by_importance_ends_with_the_answer_and_writes_the_files(capsys, tmp_path):
    pd.DataFrame({"column": ["EDU", "AGEP", "SEX"], "importance": [0.2, 0.05, 0.01]}).to_csv(
        tmp_path / "imp.csv", index=False
    )
    code = main(
        [
            "evidence",
            *CLI_SMALL,
            "--results-dir",
            str(tmp_path / "results"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--order",
            str(tmp_path / "imp.csv"),
        ]
    )
    printed = capsys.readouterr().out.splitlines()
    caveats = [line for line in printed if line.startswith("caveat: ")]
    assert code == 0
    assert printed[: len(caveats)] == caveats  # first: what the numbers below rest on
    out = printed[len(caveats) :]
    # the end: the answer (folded to the terminal), then the last step's page
    start = max(i for i, line in enumerate(out) if line.startswith("answer: "))
    answer = " ".join(" ".join(out[start:-1]).split())
    assert answer.startswith("answer: evidence sweep of cli-fake on NISTIncome: with 3 of 15 features, AUC ")
    assert "ECE" in answer and "[" in answer  # with its interval
    head = next(i for i, line in enumerate(out) if line.split()[:2] == ["k", "added"])
    steps = [line.split()[:2] for line in out[head + 1 : head + 4]]
    assert steps == [["1", "EDU"], ["2", "AGEP"], ["3", "SEX"]]
    files = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in out if line.startswith(("table: ", "plot: "))}
    table = Path(files["table"].split(" (")[0])
    assert table.is_file() and (table.parent / "evidence_sweep.json").is_file() and Path(files["plot"]).is_file()
    sweep = pd.read_csv(table)
    assert sweep["added_feature"].tolist() == ["EDU", "AGEP", "SEX"]
    assert out[-1] == f"report: {Path(sweep['run_dir'].iloc[-1]) / 'report.html'}"
    recorded: dict[str, list[str]] = {}
    for k, folder in zip(sweep["k"], sweep["run_dir"]):
        for c in read_caveats(folder):
            recorded.setdefault(c.message, []).append(str(k))
    # the fake model's order bias: one line per caveat, naming the steps it holds for
    assert recorded and [line.split(":")[1] for line in caveats] == [
        f" k = {', '.join(ks)}" for ks in recorded.values()
    ]


def test_without_matplotlib_the_plot_is_skipped_with_a_note(capsys, tmp_path, monkeypatch):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else find_spec(name, *a)
    )
    code = main(["evidence", *CLI_SMALL, "--results-dir", str(tmp_path), "--no-cache", "--order", "AGEP"])
    out = capsys.readouterr().out
    assert code == 0 and "plot skipped: matplotlib is not installed" in out
    assert not list(tmp_path.rglob("evidence_sweep.png")) and list(tmp_path.rglob("evidence_sweep.csv"))


def test_plot_refuses_a_table_that_is_not_a_sweep(tmp_path):
    from folkscope.risk.plots import plot_evidence_sweep

    with pytest.raises(ConfigError, match="needs column"):
        plot_evidence_sweep(pd.DataFrame({"k": [1]}), tmp_path / "x.png")


def test_docstring_examples_run():
    import folkscope.cli.evidence_cmd
    import folkscope.risk.evidence

    for module in (folkscope.risk.evidence, folkscope.cli.evidence_cmd):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0
