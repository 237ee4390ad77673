"""JSONL writer and Hugging Face dataset export, round trips."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from folkscope.data import ACSDataset, load_bundled
from folkscope.errors import ConfigError
from folkscope.prompting import (
    FewShotConfig,
    PromptConfig,
    PromptRenderer,
    export_hf_dataset,
    prompts_frame,
    write_prompts_jsonl,
)


@pytest.fixture(scope="module")
def fixture_batch():
    frame = load_bundled("acs-income-10")
    return PromptRenderer("ACSIncome").render(frame.drop(columns="PINCP>50000"), frame["PINCP>50000"])


@pytest.fixture(scope="module")
def nist():
    return ACSDataset.make_from_task("NISTIncome", subsampling=0.02, seed=5)


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_jsonl_has_one_line_per_row_and_ordering(tmp_path, fixture_batch):
    path = tmp_path / "out" / "prompts.jsonl"
    n = write_prompts_jsonl(fixture_batch, path, split="test")
    records = read_jsonl(path)
    assert n == len(records) == 20
    first, second = records[0], records[1]
    assert (first["row_id"], first["ordering"], second["row_id"], second["ordering"]) == (1, 0, 1, 1)
    assert first["prompt"] == fixture_batch.full_texts(0)[0]
    assert second["prompt"] == fixture_batch.full_texts(1)[0]
    assert first["choices"] == [
        {"letter": "A", "text": "Below $50,000", "label": 0},
        {"letter": "B", "text": "Above $50,000", "label": 1},
    ]
    assert second["choices"][0] == {"letter": "A", "text": "Above $50,000", "label": 1}
    assert (first["label"], first["answer"], second["answer"]) == (0, "A", "B")
    assert first["candidates"] == [" A", " B"] and first["split"] == "test" and first["mode"] == "multiple_choice"
    assert first["prompt_config"] == PromptConfig().name
    assert [r["row_id"] for r in records[::2]] == [1, 2, 8, 9, 14, 424, 614, 623, 656, 766]
    assert list(tmp_path.joinpath("out").iterdir()) == [path]  # no temporary file left behind


def test_jsonl_chat_prompts_carry_messages(tmp_path):
    frame = load_bundled("acs-income-10")
    cfg = PromptConfig(use_chat_template=True, system_prompt="Be brief.")
    batch = PromptRenderer("ACSIncome", cfg).render(frame.drop(columns="PINCP>50000"), frame["PINCP>50000"])
    write_prompts_jsonl(batch, tmp_path / "chat.jsonl")
    rec = read_jsonl(tmp_path / "chat.jsonl")[1]
    assert "prompt" not in rec
    assert rec["messages"][0] == {"role": "system", "content": "Be brief."}
    assert rec["messages"][1]["content"] == batch[0].user_text(1)
    assert rec["prefill"] == "If had to select one of the options, my answer would be"


def test_jsonl_with_tokenizer_stores_the_rendered_chat(tmp_path, local_tokenizer):
    tokenizer, _ = local_tokenizer
    frame = load_bundled("acs-income-10")
    batch = PromptRenderer("ACSIncome", PromptConfig(use_chat_template=True)).render(frame.drop(columns="PINCP>50000"))
    write_prompts_jsonl(batch, tmp_path / "chat.jsonl", tokenizer=tokenizer)
    rec = read_jsonl(tmp_path / "chat.jsonl")[0]
    assert rec["prompt"].startswith("<|system|>\nYou are a helpful assistant. You answer multiple-choice questions")
    assert rec["prompt"].endswith(
        "<|assistant|>\n<think>\n\n</think>\n\nIf had to select one of the options, my answer would be"
    )
    assert "label" not in rec  # no labels were given


def test_failed_write_leaves_the_old_file_untouched(tmp_path, fixture_batch):
    path = tmp_path / "prompts.jsonl"
    path.write_text("old\n", encoding="utf-8")

    class Broken:
        chat_template = "x"

        def apply_chat_template(self, *a, **k):
            raise RuntimeError("boom")

    chat = PromptRenderer("ACSIncome", PromptConfig(use_chat_template=True)).render(load_bundled("acs-income-10"))
    with pytest.raises(ConfigError, match="refused these messages .boom."):
        write_prompts_jsonl(chat, path, tokenizer=Broken())
    assert path.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["prompts.jsonl"]


def test_numeric_frame_has_one_prompt_per_row():
    frame = load_bundled("acs-income-10")
    batch = PromptRenderer("ACSIncome", PromptConfig(numeric_risk_prompting=True)).render(
        frame.drop(columns="PINCP>50000"), frame["PINCP>50000"]
    )
    table = prompts_frame(batch)
    assert len(table) == 10 and set(table["ordering"]) == {0}
    assert table["answer"].isna().all() and table["choices"].map(len).eq(0).all()
    assert table["prompt"].str.endswith("Answer (between 0 and 1): 0.").all()


def test_hf_export_round_trip(tmp_path, nist):
    datasets = pytest.importorskip("datasets")
    cfg = PromptConfig(few_shot=FewShotConfig(n_shots=2, reuse_examples=True), format="bullet")
    out = export_hf_dataset(nist, cfg, tmp_path / "qa", splits=("train", "test"))
    meta = json.loads((out / "prompt_config.json").read_text())
    assert meta["prompt_config_name"] == cfg.name and meta["task"] == "NISTIncome"
    assert PromptConfig.from_dict(meta["prompt_config"]) == cfg

    on_disk = datasets.load_from_disk(str(out))  # the folder itself is the dataset
    card = (out / "README.md").read_text()
    assert f"prompt configuration `{cfg.name}`" in card and "- NIST ACS 2019 excerpt: public domain" in card
    assert "  - split: test\n    path: parquet/test.parquet" in card
    loaded = datasets.load_dataset(
        "parquet",
        data_files={s: str(out / "parquet" / f"{s}.parquet") for s in ("train", "test")},
        cache_dir=str(tmp_path / "hf-cache"),
    )
    X_test, y_test = nist.get_test()
    assert set(on_disk) == set(loaded) == {"train", "test"}
    assert loaded["test"].num_rows == on_disk["test"].num_rows == 2 * len(X_test)
    assert meta["splits"] == {"train": 2 * len(nist.get_train()[0]), "test": 2 * len(X_test)}

    from folkscope.prompting import render_dataset

    expected = prompts_frame(render_dataset(nist, cfg, split="test"), split="test")
    got = loaded["test"].to_pandas()
    assert list(got["prompt"]) == list(expected["prompt"])
    assert list(got["row_id"]) == list(expected["row_id"])
    assert list(got["label"]) == list(y_test.repeat(2))
    assert [list(c) for c in got["choices"]] == [list(c) for c in expected["choices"]]
    assert list(got["answer"]) == list(expected["answer"])
    assert set(got["split"]) == {"test"}
    assert on_disk["test"][0]["prompt"] == got["prompt"][0]
    parquet = pd.read_parquet(out / "parquet" / "test.parquet")
    assert list(parquet["prompt"]) == list(got["prompt"])


def test_hf_export_replaces_an_earlier_export_and_refuses_other_folders(tmp_path, nist):
    datasets = pytest.importorskip("datasets")
    out = export_hf_dataset(nist, None, tmp_path / "qa", splits=("train", "test"))
    export_hf_dataset(nist, None, out, splits=("test",))
    assert set(datasets.load_from_disk(str(out))) == {"test"} and not (out / "train").exists()
    assert [p.name for p in (out / "parquet").iterdir()] == ["test.parquet"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not an earlier export"):
        export_hf_dataset(nist, None, tmp_path / "other", splits=("test",))
    with pytest.raises(ConfigError, match="cannot be named 'parquet'"):
        export_hf_dataset(nist, None, tmp_path / "qa2", splits=("parquet",))


def test_hf_export_rejects_empty_split(tmp_path, nist):
    pytest.importorskip("datasets")
    with pytest.raises(ConfigError, match="val"):
        export_hf_dataset(nist, None, tmp_path / "qa", splits=("val",))


@pytest.mark.parametrize(
    "cfg", [PromptConfig(), PromptConfig(numeric_risk_prompting=True), PromptConfig(use_chat_template=True)]
)
def test_jsonl_lines_equal_the_records(tmp_path, cfg):
    from folkscope.prompting import iter_prompt_records

    frame = load_bundled("acs-income-10")
    batch = PromptRenderer("ACSIncome", cfg).render(frame.drop(columns="PINCP>50000"), frame["PINCP>50000"])
    write_prompts_jsonl(batch, tmp_path / "p.jsonl", split="train")
    lines = (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines()
    records = list(iter_prompt_records(batch, split="train"))
    assert lines == [json.dumps(r, ensure_ascii=False) for r in records]
