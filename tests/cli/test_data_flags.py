"""Flags folktexts lacks or got wrong, each tested as a user types it.

On main (2026-11-25): ``run`` had no ``--temperature`` (folktexts 0.7.1 has
it), always read all 51 state files (no ``--states``/``--year``/``--horizon``),
could not read the user's own rows, refused ``--few-shot 0`` and
``--subsampling 500`` that ``prompts`` accepts, hashed ``--batch-size`` into the
run folder while nothing read it, exited 2 without matplotlib, accepted
``--use-population-filter AGEP=abc`` and reported "no row passes" later, ended
``prompts --tokenizer default`` in a hub traceback, and needed Python for a web
API's assistant prefill.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from data.http_fixture import FixtureServer  # tests/ is on sys.path (rootdir conftest)
from data.test_pums import CA, CA_ZIP, TX, TX_ZIP
from folkscope.cli.main import build_parser, main
from folkscope.data import load_bundled
from folkscope.data.pums import BASE_URL_ENV

FAKE = ["--model", "cli-fake", "--inference-backend", "fake", "--no-cache", "--n-bootstrap", "10", "--no-baselines"]


def _run_dir(out: str) -> Path:
    return Path(out.split("run folder: ")[1].splitlines()[0])


def _one_line_error(capsys, argv) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _config(argv: list[str]):
    from folkscope.cli.run_cmd import config_from_args

    return config_from_args(build_parser().parse_args(["run", *argv]))[1]


# -- folktexts' flags with folktexts' meaning -----------------------------------------------------


def test_few_shot_0_is_zero_shot_in_run_as_in_prompts():
    assert _config(["--few-shot", "0"]).few_shot is None
    assert _config(["--few-shot", "0"]).to_dict() == _config([]).to_dict()  # one run folder for one prompt


def test_subsampling_takes_a_fraction_or_a_row_count_in_run_as_in_prompts(capsys, tmp_path):
    assert _config(["--subsampling", "0.25"]).subsampling == 0.25
    assert _config(["--subsampling", "1"]).subsampling == 1.0  # folktexts' float: all rows
    assert _config(["--subsampling", "500"]).subsampling == 500
    assert main(["run", *FAKE, "--task", "NISTIncome", "--subsampling", "40", "--results-dir", str(tmp_path)]) == 0
    metrics = json.loads((_run_dir(capsys.readouterr().out) / "metrics.json").read_text())
    assert metrics["scoring"]["rows"] == 40  # 40 test rows, not a fraction


def test_temperature_samples_chain_of_thought_and_is_ignored_with_a_warning_elsewhere():
    from folkscope.prompting import PromptConfigWarning
    from folkscope.risk import BenchmarkConfig

    assert _config(["--cot-prompting", "--temperature", "0.7"]).generation_temperature == 0.7
    assert _config(["--cot-prompting"]).generation_temperature == 0.0  # folktexts: greedy
    with pytest.warns(PromptConfigWarning, match="implies chain-of-thought"):
        assert _config(["--enable-thinking"]).generation_temperature == 1.0  # folktexts: 1.0 when thinking
    with pytest.warns(PromptConfigWarning, match="temperature=0.7 is ignored"):
        config = _config(["--temperature", "0.7"])
    assert config.temperature is None and config.to_dict() == BenchmarkConfig().to_dict()
    with pytest.raises(Exception, match="temperature must be a number >= 0"):
        BenchmarkConfig(cot_prompting=True, temperature=-1)


def test_a_sampled_chain_of_thought_is_seeded_per_row(tmp_path):
    """Temperature reaches the engine; each row has its own stream, so the same row gets the same text in any batch."""
    from folkscope.engine import Engine
    from folkscope.engine.backends.fake import FakeBackend
    from folkscope.prompting import PromptConfig
    from folkscope.risk import LLMClassifier

    X = load_bundled("acs-income-10").drop(columns="PINCP>50000")
    engine = Engine(FakeBackend(), cache=None, progress=False)
    sent = []
    real_generate = engine.generate
    engine.generate = lambda requests, **kw: sent.extend(requests) or real_generate(requests, **kw)  # type: ignore[method-assign]
    clf = LLMClassifier(
        engine, "ACSIncome", prompt_config=PromptConfig(cot_prompting=True), temperature=0.8, seed=3, max_new_tokens=8
    )
    clf.predict_proba(X)
    clf.predict_proba(X.iloc[[4, 2]])
    assert {r.settings.temperature for r in sent} == {0.8}
    seeds = [r.settings.seed for r in sent]
    assert len(set(seeds[:10])) == 10 and seeds[10:] == [seeds[4], seeds[2]]


def test_batch_size_is_recorded_but_never_splits_a_run_folder(capsys, tmp_path):
    folders = []
    for extra in ([], ["--batch-size", "4"]):
        assert (
            main(
                ["run", *FAKE, "--task", "NISTIncome", "--subsampling", "0.01", "--results-dir", str(tmp_path), *extra]
            )
            == 0
        )
        folders.append(_run_dir(capsys.readouterr().out))
    assert folders[0] == folders[1]
    assert json.loads((folders[1] / "config.json").read_text())["scheduling"]["batch_size"] == 4


def test_batch_size_is_the_web_api_concurrency_unless_given():
    from folkscope.risk import Benchmark

    seen = {}

    class Stop(Exception):
        pass

    def fake_from_model(model, **options):
        seen.update(options)
        raise Stop

    import folkscope.risk.run as benchmark

    original = benchmark.Engine.from_model
    benchmark.Engine.from_model = fake_from_model  # type: ignore[method-assign]
    try:
        for options, expected in (({}, 16), ({"max_concurrency": 3}, 3)):
            seen.clear()
            with pytest.raises(Stop):
                Benchmark.make_benchmark(
                    "NISTIncome",
                    model="openai/x",
                    backend="litellm",
                    backend_options=options,
                    batch_size=16,
                    subsampling=0.01,
                )
            assert seen["max_concurrency"] == expected
    finally:
        benchmark.Engine.from_model = original  # type: ignore[method-assign]


def test_assistant_prefill_is_a_flag():
    from folkscope.cli.engine_args import engine_from_args

    args = build_parser().parse_args(["run", "--use-web-api-model", "--model", "openai/x", "--assistant-prefill"])
    assert engine_from_args(args) == ("litellm", {"assistant_prefill": True})
    assert engine_from_args(build_parser().parse_args(["run", "--use-web-api-model", "--model", "openai/x"])) == (
        "litellm",
        {},
    )


# -- which rows: --states, --year, --horizon, --data-file -----------------------------------------


@pytest.fixture
def pums_server(monkeypatch):
    with FixtureServer({CA: CA_ZIP, TX: TX_ZIP}) as srv:
        monkeypatch.setenv(BASE_URL_ENV, srv.url())
        yield srv


def test_states_year_and_horizon_choose_the_census_files(capsys, tmp_path, pums_server):
    argv = [
        "prompts",
        "--task",
        "ACSIncome",
        "--data-dir",
        str(tmp_path),
        "--states",
        "ca,TX",
        "--year",
        "2018",
        "--horizon",
        "1-Year",
        "--split",
        "train",
        "--output",
        str(tmp_path / "p.jsonl"),
    ]
    assert main(argv) == 0
    assert sorted(pums_server.requests) == sorted([CA, TX])  # two state files, not 51
    lines = (tmp_path / "p.jsonl").read_text().splitlines()
    assert len(lines) // 2 > 10  # two answer orderings per row; one state's file holds only 10 rows


def test_a_missing_state_file_or_a_bad_state_is_one_line(capsys, tmp_path, pums_server):
    base = ["prompts", "--task", "ACSIncome", "--data-dir", str(tmp_path)]
    assert "unknown state" in _one_line_error(capsys, [*base, "--states", "CA,ZZ"]).lower()
    assert "horizon must be one of" in _one_line_error(capsys, [*base, "--horizon", "3-Year"])


def test_pums_flags_with_a_source_they_do_not_apply_to_are_refused(capsys, tmp_path):
    err = _one_line_error(capsys, ["run", *FAKE, "--task", "NISTIncome", "--states", "CA"])
    assert "--states selects Census PUMS files, which task NISTIncome (bundled NIST excerpt) does not read" in err


@pytest.fixture
def user_rows(tmp_path) -> Path:
    rows = load_bundled("nist-national").head(300)
    path = tmp_path / "my rows.csv"
    rows.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_data_file_runs_a_task_on_the_users_rows(capsys, tmp_path, user_rows, suffix):
    path = user_rows
    if suffix == ".parquet":
        path = tmp_path / "rows.parquet"
        pd.read_csv(user_rows).to_parquet(path)
    assert (
        main(["run", *FAKE, "--task", "NISTIncome", "--data-file", str(path), "--results-dir", str(tmp_path / "r")])
        == 0
    )
    run_dir = _run_dir(capsys.readouterr().out)
    data = json.loads((run_dir / "config.json").read_text())["data"]
    assert data["source"] == "file" and data["path"] == str(path.resolve()) and len(data["sha256"]) == 64
    assert data["rows"] <= 300 and data["test_rows"] == round(data["rows"] * 0.1)
    assert main(["prompts", "--task", "NISTIncome", "--data-file", str(path), "--show", "1"]) == 0
    assert "### row" in capsys.readouterr().out


def test_a_data_file_missing_task_columns_lists_them(capsys, tmp_path, user_rows):
    rows = pd.read_csv(user_rows).drop(columns=["AGEP", "SEX"])
    rows.to_csv(tmp_path / "short.csv", index=False)
    err = _one_line_error(capsys, ["run", *FAKE, "--task", "NISTIncome", "--data-file", str(tmp_path / "short.csv")])
    assert "needs column(s) AGEP, SEX, which the data does not have" in err


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("rows.txt", "a,b\n1,2\n", "cannot tell the format from the name"),
        ("absent.csv", None, "does not exist"),
        ("empty.csv", "", "cannot be read as csv"),
        ("bad.parquet", "not parquet", "cannot be read as parquet"),
    ],
)
def test_bad_data_files_are_one_line(capsys, tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    assert message in _one_line_error(capsys, ["prompts", "--task", "NISTIncome", "--data-file", str(path)])


# -- small defects ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flt", "message"),
    [
        ("AGEP=abc", "column AGEP is numeric (age), but 'abc' is not a number"),
        ("SEX=female", "column SEX holds codes (1 Male, 2 Female), but 'female' is not a number; write e.g. 'SEX=1'"),
    ],
)
def test_a_text_value_for_a_numeric_column_is_refused_before_any_data_loads(capsys, tmp_path, flt, message):
    import folkscope.data.dataset as dataset

    def never(*args, **kwargs):
        raise AssertionError("data was loaded")

    original = dataset.ACSDataset.make_from_task
    dataset.ACSDataset.make_from_task = never  # type: ignore[method-assign]
    try:
        assert message in _one_line_error(capsys, ["run", *FAKE, "--task", "ACSIncome", "--use-population-filter", flt])
    finally:
        dataset.ACSDataset.make_from_task = original  # type: ignore[method-assign]


def test_without_matplotlib_a_run_writes_everything_but_plots_and_says_so(capsys, tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    assert main(["run", *FAKE, "--task", "NISTIncome", "--subsampling", "0.01", "--results-dir", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    run_dir = _run_dir(captured.out)
    assert "Plots skipped: matplotlib is not installed" in captured.err
    assert (run_dir / "metrics.json").is_file() and not (run_dir / "plots").exists()
    assert "Plots skipped" in (run_dir / "report.html").read_text()


def test_tokenizer_default_is_the_default_model(capsys):
    pytest.importorskip("transformers")
    argv = ["prompts", "--task", "NISTIncome", "--use-chat-template", "--tokenizer", "default", "--show", "1"]
    assert main(argv) == 0
    assert "<|im_start|>system" in capsys.readouterr().out  # SmolLM2's chat template
