"""``folkscope run`` / ``run_acs_benchmark``: every folktexts 0.7.1 flag (its run_acs_benchmark parser), one-line errors, a real run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from folkscope.cli.main import main, run_acs_benchmark_main

FOLKTEXTS_FLAGS = """--model --task --results-dir --data-dir --few-shot --batch-size --context-size --fit-threshold
--subsampling --seed --use-web-api-model --inference-backend --gpu-memory-utilization --max-model-len --vllm-dtype
--tensor-parallel-size --dont-correct-order-bias --numeric-risk-prompting --cot-prompting --enable-thinking
--reuse-few-shot-examples --compose-few-shot-examples --example-order --few-shot-hide-question --variation
--use-chat-template --chat-prompt --system-prompt --use-feature-subset --use-population-filter --max-api-rpm
--logger-level --temperature""".split()


def test_every_folktexts_flag_is_accepted(capsys):
    with pytest.raises(SystemExit) as exc:
        run_acs_benchmark_main(["--help"])
    assert exc.value.code == 0
    help_text = capsys.readouterr().out
    missing = [flag for flag in FOLKTEXTS_FLAGS if flag not in help_text]
    assert not missing, missing


def _one_line_error(capsys, argv, prog=main):
    code = prog(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--task", "ACSIncom"], "unknown task 'ACSIncom'"),
        (["--few-shot", "2", "--use-chat-template"], "few-shot prompting cannot be combined with the chat template"),
        (["--variation", "colour=red"], "unknown variation key"),
        (["--use-population-filter", "AGEP>>3"], "population filter 'AGEP>>3': > needs a number"),
        (["--use-feature-subset", "AGEP,NOPE"], "no text mapping for feature(s) NOPE"),
        (["--use-web-api-model", "--device", "cpu"], "--device does not apply to web API models"),
        (["--use-web-api-model", "--inference-backend", "vllm"], "exclude each other"),
        (["--use-web-api-model", "--vllm-dtype", "bfloat16"], "--vllm-dtype applies to --inference-backend vllm"),
        (["--max-api-rpm", "30"], "--max-api-rpm applies to web API models; add --use-web-api-model"),
        (["--tensor-parallel-size", "2"], "--tensor-parallel-size applies to --inference-backend vllm"),
        (["--reuse-few-shot-examples"], "few-shot"),
    ],
)
def test_bad_input_fails_in_one_line_before_loading_a_model(capsys, tmp_path, argv, message):
    err = _one_line_error(capsys, ["run", "--model", str(tmp_path / "never-loaded"), "--task", "NISTIncome", *argv])
    assert message in err


def test_web_api_runs_need_an_explicit_model_id(capsys):
    err = _one_line_error(capsys, ["run", "--use-web-api-model", "--task", "NISTIncome"])
    assert "--use-web-api-model needs --model set to a litellm model id" in err


def test_backend_flags_become_backend_options():
    from folkscope.cli.engine_args import engine_from_args
    from folkscope.cli.main import build_parser

    parse = build_parser().parse_args
    args = parse(
        [
            "run",
            "--model",
            "openai/m",
            "--use-web-api-model",
            "--max-api-rpm",
            "60",
            "--api-base",
            "http://127.0.0.1:9/v1",
        ]
    )
    assert engine_from_args(args) == ("litellm", {"max_rpm": 60, "api_base": "http://127.0.0.1:9/v1"})
    args = parse(["run", "--inference-backend", "vllm", "--tensor-parallel-size", "2", "--max-model-len", "4096"])
    assert engine_from_args(args) == ("vllm", {"max_model_len": 4096, "tensor_parallel_size": 2})
    assert engine_from_args(parse(["run"])) == ("transformers", {})
    assert engine_from_args(parse(["run", "--batch-tokens", "2048"])) == ("transformers", {"batch_tokens": 2048})
    args = parse(["run", "--inference-backend", "vllm", "--batch-tokens", "8192"])
    assert engine_from_args(args) == ("vllm", {"batch_tokens": 8192})


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--batch-tokens", "0"], "--batch-tokens must be >= 1"),
        (
            ["--model", "openai/m", "--use-web-api-model", "--batch-tokens", "64"],
            "--batch-tokens applies to local backends",
        ),
    ],
)
def test_bad_batch_budgets_are_refused_in_one_line(capsys, argv, message):
    assert message in _one_line_error(capsys, ["run", "--task", "NISTIncome", *argv])


def test_run_acs_benchmark_alias_prints_errors_the_same_way(capsys):
    assert "unknown task" in _one_line_error(capsys, ["--task", "Nope"], prog=run_acs_benchmark_main)


def test_fake_backend_run_writes_a_folder_and_prints_metrics(capsys, tmp_path):
    argv = [
        "run",
        "--model",
        "cli-fake",
        "--inference-backend",
        "fake",
        "--task",
        "NISTIncome",
        "--subsampling",
        "0.03",
        "--results-dir",
        str(tmp_path),
        "--no-cache",
        "--n-bootstrap",
        "20",
        "--no-baselines",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "run folder:" in out and "ECE" in out and "AUC" in out
    run_dir = Path(out.split("run folder: ")[1].splitlines()[0])
    assert (run_dir / "report.html").is_file()
    config = json.loads((run_dir / "config.json").read_text())
    assert config["benchmark_config"]["subsampling"] == 0.03 and config["benchmark_config"]["baselines"] is False


@pytest.mark.slow
def test_default_model_scores_real_rows_end_to_end(capsys, tmp_path):
    """The main job on a small slice: SmolLM2-135M-Instruct on bundled NIST rows, through the CLI."""
    argv = [
        "run",
        "--model",
        "default",
        "--task",
        "NISTIncome",
        "--subsampling",
        "0.01",
        "--results-dir",
        str(tmp_path),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--n-bootstrap",
        "20",
        "--no-baselines",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    run_dir = Path(out.split("run folder: ")[1].splitlines()[0])
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["scoring"]["rows"] == 15 and metrics["scoring"]["nan_scores"] == 0
    assert metrics["scoring"]["min_answer_mass"] > 0.01  # the model does answer with a letter
    assert run_dir.parts[-2] == "SmolLM2-135M-Instruct"


def test_rescore_command_recomputes_a_finished_run(capsys, tmp_path):
    argv = [
        "run",
        "--model",
        "cli-fake",
        "--inference-backend",
        "fake",
        "--task",
        "NISTPoverty",
        "--subsampling",
        "0.02",
        "--results-dir",
        str(tmp_path),
        "--no-cache",
        "--n-bootstrap",
        "10",
        "--no-baselines",
    ]
    assert main(argv) == 0
    run_dir = Path(capsys.readouterr().out.split("run folder: ")[1].splitlines()[0])
    before = json.loads((run_dir / "metrics.json").read_text())
    (run_dir / "metrics.json").unlink()
    assert main(["rescore", str(run_dir)]) == 0
    assert "ECE" in capsys.readouterr().out
    assert json.loads((run_dir / "metrics.json").read_text())["model"] == before["model"]
    assert "not a finished run folder" in _one_line_error(capsys, ["rescore", str(tmp_path)])


def test_each_flag_reaches_the_one_config_object():
    from folkscope.cli.main import build_parser
    from folkscope.cli.run_cmd import config_from_args

    args = build_parser().parse_args(
        [
            "run",
            "--task",
            "NISTIncome",
            "--few-shot",
            "4",
            "--reuse-few-shot-examples",
            "--compose-few-shot-examples",
            "2,2",
            "--example-order",
            "3,2,1,0",
            "--few-shot-hide-question",
            "--variation",
            "format=bullet",
            "connector==",
            "--numeric-risk-prompting",
            "--dont-correct-order-bias",
            "--fit-threshold",
            "100",
            "--subsampling",
            "0.5",
            "--seed",
            "7",
            "--use-feature-subset",
            "AGEP,EDU",
            "--use-population-filter",
            "SEX=2",
            "--use-population-filter",
            "AGEP>=30",
            "--batch-size",
            "8",
            "--context-size",
            "900",
            "--recalibrate",
            "50",
            "--feature-importance",
            "--numeric-readout",
            "expected",
            "--max-new-tokens",
            "64",
            "--n-bootstrap",
            "99",
            "--no-baselines",
        ]
    )
    _, config = config_from_args(args)
    assert (config.few_shot, config.reuse_few_shot_examples, config.compose_few_shot_examples) == (4, True, "2,2")
    assert (config.example_order, config.few_shot_hide_question) == ("3,2,1,0", True)
    assert config.variation == ("format=bullet", "connector==")
    assert config.numeric_risk_prompting and not config.correct_order_bias
    assert (config.fit_threshold, config.subsampling, config.seed) == (100, 0.5, 7)
    assert config.feature_subset == ("AGEP", "EDU") and config.population_filter == ("SEX=2", "AGEP>=30")
    assert (config.batch_size, config.context_size, config.recalibrate) == (8, 900, 50)
    assert config.feature_importance and config.numeric_readout == "expected" and config.max_new_tokens == 64
    assert config.n_bootstrap == 99 and config.baselines is False
    prompt = config.prompt_config()
    assert prompt.format == "bullet" and prompt.connector == "=" and prompt.few_shot.composition == (2, 2)
    _, chat = config_from_args(
        build_parser().parse_args(["run", "--use-chat-template", "--system-prompt", "S", "--chat-prompt", "P"])
    )
    assert (chat.use_chat_template, chat.system_prompt, chat.chat_prompt) == (True, "S", "P")
    from folkscope.prompting import PromptConfigWarning

    with pytest.warns(PromptConfigWarning, match="enable_thinking implies chain-of-thought"):  # as folktexts warns
        _, cot = config_from_args(build_parser().parse_args(["run", "--enable-thinking"]))
    assert cot.prompt_config().mode == "cot" and cot.enable_thinking


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--task", "NISTIncome", "--inference-backend", "fake"],
        ["numeric", "run", "--dataset", "colors", "--inference-backend", "fake", "--numbers", "1,2"],
    ],
)
def test_an_unwritable_results_folder_fails_in_one_line_before_the_model_loads(capsys, tmp_path, monkeypatch, command):
    from folkscope.engine import Engine

    def never(*args, **kwargs):
        raise AssertionError("the model was loaded before the results folder was checked")

    monkeypatch.setattr(Engine, "from_model", never)
    (tmp_path / "taken").write_text("a file where the results folder should go")
    err = _one_line_error(
        capsys, [*command, "--model", "cli-fake", "--results-dir", str(tmp_path / "taken" / "results")]
    )
    assert "cannot write results to" in err and "taken is a file, not a folder; pass another --results-dir" in err


def test_piped_run_prints_progress_lines_in_rows_and_the_cache_reuse(capsys, tmp_path, monkeypatch):
    """Not a terminal (pytest captures stderr, as nohup or a pipe would): plain progress lines, then on a rerun the cache line."""
    monkeypatch.setenv("FOLKSCOPE_PROGRESS_INTERVAL", "0")
    argv = [
        "run",
        "--model",
        "cli-fake",
        "--inference-backend",
        "fake",
        "--task",
        "NISTIncome",
        "--subsampling",
        "0.03",
        "--results-dir",
        str(tmp_path / "results"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--n-bootstrap",
        "10",
        "--no-baselines",
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    lines = [
        line for line in captured.err.splitlines() if line.startswith("scoring:")
    ]  # the diagnostics' warnings follow
    rows = json.loads((Path(captured.out.split("run folder: ")[1].splitlines()[0]) / "metrics.json").read_text())[
        "scoring"
    ]["rows"]
    assert lines[0] == f"scoring: 0/{rows} rows (0%), starting"
    assert lines[-1].startswith(f"scoring: {rows}/{rows} rows (100%), ") and "done in" in lines[-1]
    run_dir = Path(captured.out.split("run folder: ")[1].splitlines()[0])
    assert f"scoring: {rows}/{rows} rows (100%)" in (run_dir / "run.log").read_text()
    assert main(argv) == 0
    assert (
        capsys.readouterr().err.splitlines()[0]
        == f"scoring: all {rows} rows already answered (result cache); nothing to compute"
    )
