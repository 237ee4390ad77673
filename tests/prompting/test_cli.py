"""``folkscope prompts`` end to end on the offline NISTIncome task."""

from __future__ import annotations

import argparse
import json

import pytest

from folkscope.cli import prompts_cmd
from folkscope.errors import ConfigError
from folkscope.prompting import FewShotConfig, PromptConfig

BASE = ["prompts", "--task", "NISTIncome", "--subsampling", "0.02", "--seed", "7"]


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="folkscope")
    prompts_cmd.register(root.add_subparsers(dest="command"))
    return root


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


def test_jsonl_output_end_to_end(tmp_path, capsys):
    out = tmp_path / "prompts.jsonl"
    assert run([*BASE, "--output", str(out), "--variation", "format=bullet", "connector=="]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    from folkscope.data import ACSDataset

    X_test, y_test = ACSDataset.make_from_task("NISTIncome", subsampling=0.02, seed=7).get_test()
    assert len(records) == 2 * len(X_test)
    assert [r["row_id"] for r in records[::2]] == list(X_test.index)
    assert [r["label"] for r in records[::2]] == list(y_test)
    first = records[0]
    assert first["prompt"].startswith(
        "The following data corresponds to a survey respondent. The survey was conducted among US residents in 2019."
    )
    assert "\n- age = " in first["prompt"] and first["prompt"].endswith("B. Above $50,000.\nAnswer:")
    assert first["prompt_config"] == PromptConfig(format="bullet", connector="=").name
    assert f"wrote {len(records)} prompts" in capsys.readouterr().err


def test_print_mode_shows_every_ordering(capsys):
    assert run([*BASE, "--show", "2", "--dont-correct-order-bias"]) == 0
    out = capsys.readouterr().out
    assert out.count("### row ") == 2 and "ordering 0 (A=0, B=1)" in out and "ordering 1" not in out
    assert out.count("\nAnswer:\n") == 2


def test_chat_print_and_tokenizer_rendering(tmp_path, capsys, local_tokenizer):
    _, folder = local_tokenizer
    assert run([*BASE, "--use-chat-template", "--system-prompt", "Be a demographer."]) == 0
    out = capsys.readouterr().out
    assert "[system]\nBe a demographer.\n[user]\nThe following data" in out
    assert "[assistant prefill]\nIf had to select one of the options, my answer would be" in out  # folktexts' prefill
    jsonl = tmp_path / "chat.jsonl"
    assert (
        run(
            [
                *BASE,
                "--use-chat-template",
                "--tokenizer",
                str(folder),
                "--output",
                str(jsonl),
                "--chat-prompt",
                "Answer:",
            ]
        )
        == 0
    )
    rec = json.loads(jsonl.read_text().splitlines()[0])
    assert rec["prompt"].startswith("<|system|>\nYou are a helpful assistant. You answer multiple-choice questions")
    assert rec["prompt"].endswith("<|assistant|>\n<think>\n\n</think>\n\nAnswer:")


def test_few_shot_flags_and_hf_export(tmp_path, capsys):
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "qa"
    argv = [
        *BASE,
        "--few-shot",
        "4",
        "--compose-few-shot-examples",
        "2,2",
        "--example-order",
        "3,2,1,0",
        "--reuse-few-shot-examples",
        "--few-shot-hide-question",
        "--hf-dataset",
        str(out),
    ]
    assert run(argv) == 0
    assert "%|" not in capsys.readouterr().err  # datasets' progress bars stay off the terminal
    assert set(datasets.load_from_disk(str(out))) == {"train", "test"}
    meta = json.loads((out / "prompt_config.json").read_text())
    expected = PromptConfig(
        few_shot=FewShotConfig(
            n_shots=4, composition=(2, 2), example_order=(3, 2, 1, 0), reuse_examples=True, hide_question=True, seed=7
        )
    )
    assert meta["prompt_config_name"] == expected.name
    assert (out / "parquet" / "train.parquet").is_file() and (out / "parquet" / "test.parquet").is_file()
    import pandas as pd

    prompt = pd.read_parquet(out / "parquet" / "test.parquet")["prompt"].iloc[0]
    assert [line for line in prompt.splitlines() if line.startswith("Answer")] == [
        "Answer: B",
        "Answer: B",
        "Answer: A",
        "Answer: A",
        "Answer:",
    ]


@pytest.mark.parametrize(
    ("flags", "match"),
    [
        (["--few-shot", "2", "--use-chat-template"], "few-shot"),
        (["--cot-prompting", "--use-chat-template"], "chain-of-thought"),
        (["--variation", "colour=red"], "unknown variation key"),
        (["--variation", "format"], "key=value"),
        (["--few-shot", "3", "--example-order", "0,1"], "permutation"),
        (["--reuse-few-shot-examples"], "--few-shot"),
        (["--numeric-risk-prompting", "--cot-prompting"], "choose one"),
    ],
)
def test_invalid_flags_fail_before_any_data_is_loaded(monkeypatch, flags, match):
    from folkscope.data import ACSDataset

    def no_data(*args, **kwargs):
        raise AssertionError("data was loaded before the prompt flags were checked")

    monkeypatch.setattr(ACSDataset, "make_from_task", classmethod(no_data))
    with pytest.raises(ConfigError, match=match):
        run([*BASE, *flags])


def test_few_shot_larger_than_the_training_split_is_a_config_error():
    with pytest.raises(ConfigError, match="training split has only"):
        run(["prompts", "--task", "NISTIncome", "--subsampling", "5", "--few-shot", "6"])


def test_system_prompt_without_chat_template_warns():
    args = parser().parse_args([*BASE, "--system-prompt", "x"])
    with pytest.warns(UserWarning, match="no effect"):
        cfg = prompts_cmd.prompt_config_from_args(args)
    assert cfg.system_prompt == "x"


def test_prompt_flags_are_reusable_on_another_parser():
    p = argparse.ArgumentParser(prog="run_acs_benchmark")
    p.add_argument("--seed", type=int, default=42)
    prompts_cmd.add_prompt_arguments(p)
    args = p.parse_args(
        [
            "--numeric-risk-prompting",
            "--variation",
            "granularity=low",
            "order=AGEP,SEX",
            "--variation",
            "show_question=false",
        ]
    )
    cfg = prompts_cmd.prompt_config_from_args(args)
    assert cfg == PromptConfig(
        numeric_risk_prompting=True, granularity="low", order=("AGEP", "SEX"), show_question=False
    )
    help_text = p.format_help()
    for flag in (
        "--cot-prompting",
        "--enable-thinking",
        "--few-shot",
        "--compose-few-shot-examples",
        "--example-order",
        "--few-shot-hide-question",
        "--use-chat-template",
        "--system-prompt",
        "--chat-prompt",
        "--dont-correct-order-bias",
        "--reuse-few-shot-examples",
    ):
        assert flag in help_text


def test_feature_subset_and_population_filter(tmp_path):
    out = tmp_path / "p.jsonl"
    argv = [
        "prompts",
        "--task",
        "NISTIncome",
        "--subsampling",
        "0.05",
        "--use-feature-subset",
        "SEX,AGEP",
        "--use-population-filter",
        "SEX=2",
        "--numeric-risk-prompting",
        "--output",
        str(out),
    ]
    assert run(argv) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records and all(r["ordering"] == 0 and r["mode"] == "numeric" for r in records)
    for r in records:
        info = r["prompt"].split("Information:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert info[0] == "- The sex is: Female." and info[1].startswith("- The age is: ") and len(info) == 2


def test_few_shot_draw_flag(tmp_path):
    """--few-shot-draw seeded keeps folkscope's per-row draws; like every few-shot sub-flag it needs --few-shot."""
    out = tmp_path / "prompts.jsonl"
    assert run([*BASE, "--few-shot", "2", "--few-shot-draw", "seeded", "--output", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records[0]["prompt_config"] == PromptConfig(few_shot=FewShotConfig(n_shots=2, seed=7, draw="seeded")).name
    assert len({r["prompt"].rsplit("\nInformation:\n", 1)[0] for r in records}) > 1  # rows get their own examples
    with pytest.raises(ConfigError, match="--few-shot-draw"):
        run([*BASE, "--few-shot-draw", "seeded"])
