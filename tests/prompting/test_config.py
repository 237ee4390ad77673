"""PromptConfig / FewShotConfig: validation, invalid combinations, fingerprints and names."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from folkscope.errors import ConfigError
from folkscope.prompting import PROMPT_FORMAT_VERSION, FewShotConfig, PromptConfig, PromptConfigWarning, field_doc


# -- invalid combinations -------------------------------------------------------------------
def test_few_shot_with_chat_template_raises():
    with pytest.raises(ConfigError, match="few-shot") as info:
        PromptConfig(few_shot=FewShotConfig(n_shots=2), use_chat_template=True)
    assert info.value.parameter == "few_shot"


def test_cot_with_chat_template_raises():
    with pytest.raises(ConfigError, match="chain-of-thought") as info:
        PromptConfig(cot_prompting=True, use_chat_template=True)
    assert info.value.parameter == "use_chat_template"


def test_cot_with_few_shot_raises():
    with pytest.raises(ConfigError, match="zero-shot"):
        PromptConfig(cot_prompting=True, few_shot=FewShotConfig(n_shots=1))


def test_numeric_and_cot_are_exclusive():
    with pytest.raises(ConfigError, match="choose one"):
        PromptConfig(numeric_risk_prompting=True, cot_prompting=True)


@pytest.mark.parametrize("name", ["system_prompt", "chat_prompt"])
def test_system_or_chat_prompt_without_chat_template_warns(name):
    with pytest.warns(PromptConfigWarning, match="--" + name.replace("_", "-")):
        cfg = PromptConfig(**{name: "Be brief."})
    assert getattr(cfg, name) == "Be brief."


def test_system_prompt_with_chat_template_does_not_warn():
    PromptConfig(use_chat_template=True, system_prompt="You are a demographer.", chat_prompt="Answer:")


def test_enable_thinking_alone_turns_on_cot_with_a_warning():
    with pytest.warns(PromptConfigWarning, match="chain-of-thought"):
        cfg = PromptConfig(enable_thinking=True)
    assert cfg.cot_prompting and cfg.mode == "cot"


def test_numeric_chat_prompt_must_end_with_zero_point():
    with pytest.raises(ConfigError, match="0\\.") as info:
        PromptConfig(numeric_risk_prompting=True, use_chat_template=True, chat_prompt="My estimate:")
    assert info.value.parameter == "chat_prompt"
    PromptConfig(numeric_risk_prompting=True, use_chat_template=True, chat_prompt="My estimate: 0.")
    with pytest.raises(ConfigError, match="must end with '0.'"):  # no prefill: nothing to read digits after
        PromptConfig(numeric_risk_prompting=True, use_chat_template=True, chat_prompt=None)


@pytest.mark.parametrize(
    ("mode", "system", "prefill"),
    [
        (
            {},
            "You are a helpful assistant. You answer multiple-choice questions based on the information provided. "
            "Respond with a single answer choice.\n",
            "If had to select one of the options, my answer would be",
        ),
        (
            {"numeric_risk_prompting": True},
            "You are a helpful assistant. You provide numeric probability estimates "
            "based on the information provided.\n",
            "Answer (between 0 and 1): 0.",
        ),
        ({"cot_prompting": True}, None, ""),
    ],
)
def test_chat_defaults_are_folktexts_per_question_mode(mode, system, prefill):
    cfg = PromptConfig(use_chat_template="cot_prompting" not in mode, **mode)
    assert (cfg.system_prompt, cfg.chat_prompt) == ("default", "default")
    assert (cfg.chat_system_prompt, cfg.chat_prefill) == (system, prefill)
    bare = PromptConfig(
        use_chat_template="cot_prompting" not in mode, system_prompt=None, chat_prompt="Answer: 0.", **mode
    )
    assert (bare.chat_system_prompt, bare.chat_prefill) == (None, "Answer: 0.")
    assert PromptConfig.from_dict(bare.to_dict()) == bare


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"format": "table"}, "format"),
        ({"granularity": "medium"}, "granularity"),
        ({"connector": ""}, "connector"),
        ({"connector": " is "}, "connector"),
        ({"connector": "is\n"}, "connector"),
        ({"order": "AGEP,SCHL"}, "order"),
        ({"order": ("AGEP", "AGEP")}, "order"),
        ({"order": ("AGEP", "1X")}, "order"),
        ({"show_question": "false"}, "show_question"),
        ({"numeric_risk_prompting": 1}, "numeric_risk_prompting"),
        ({"system_prompt": 3}, "system_prompt"),
        ({"ordering_scheme": "random"}, "ordering_scheme"),
        ({"max_orderings": 0}, "max_orderings"),
        ({"few_shot": 4}, "few_shot"),
    ],
)
def test_invalid_values_name_the_parameter(kwargs, parameter):
    with pytest.raises(ConfigError) as info:
        PromptConfig(**kwargs)
    assert info.value.parameter == parameter
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"n_shots": 0}, "n_shots"),
        ({"n_shots": True}, "n_shots"),
        ({"n_shots": 4, "composition": "2,1"}, "composition"),
        ({"n_shots": 4, "composition": "two,two"}, "composition"),
        ({"n_shots": 4, "composition": (4,)}, "composition"),
        ({"n_shots": 2, "composition": (3, -1)}, "composition"),
        ({"n_shots": 3, "example_order": (0, 1)}, "example_order"),
        ({"n_shots": 3, "example_order": (0, 1, 1)}, "example_order"),
        ({"n_shots": 3, "example_order": (1, 2, 3)}, "example_order"),
        ({"n_shots": 3, "example_order": "2,x,0"}, "example_order"),
        ({"reuse_examples": "yes"}, "reuse_examples"),
    ],
)
def test_invalid_few_shot_values(kwargs, parameter):
    with pytest.raises(ConfigError) as info:
        FewShotConfig(**kwargs)
    assert info.value.parameter == parameter


def test_few_shot_normalises_strings():
    fs = FewShotConfig(n_shots=4, composition="2, 2", example_order="3,2,1,0")
    assert fs.composition == (2, 2) and fs.example_order == (3, 2, 1, 0)
    assert FewShotConfig(n_shots=4, composition="Balanced").composition == "balanced"


# -- serialisation, fingerprint and names --------------------------------------------------
def test_unknown_keys_are_rejected():
    with pytest.raises(ConfigError, match="colour") as info:
        PromptConfig.from_dict({"colour": "red"})
    assert info.value.value == ["colour"]
    with pytest.raises(ConfigError, match="shots"):
        PromptConfig.from_dict({"few_shot": {"shots": 3}})


def test_round_trip_through_json():
    cfg = PromptConfig(
        numeric_risk_prompting=True,
        few_shot=FewShotConfig(n_shots=4, composition=(1, 3), example_order=(3, 1, 0, 2), reuse_examples=True, seed=7),
        format="comma",
        order=("SEX",),
        custom_prompt_suffix="Be precise.",
    )
    again = PromptConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert again == cfg
    assert again.fingerprint() == cfg.fingerprint()
    assert again.name == cfg.name


def test_fingerprint_hashes_canonical_json_with_format_version():
    cfg = PromptConfig()
    canonical = cfg.canonical_json()
    assert json.loads(canonical)["prompt_format_version"] == PROMPT_FORMAT_VERSION
    assert canonical == json.dumps(json.loads(canonical), sort_keys=True, separators=(",", ":"))
    import hashlib

    assert cfg.fingerprint() == hashlib.sha256(canonical.encode()).hexdigest()


def test_names_are_deterministic_across_processes():
    code = (
        "from folkscope.prompting import PromptConfig, FewShotConfig;"
        "print(PromptConfig().name);"
        "print(PromptConfig(format='bullet', connector='=', few_shot=FewShotConfig(n_shots=4, composition='balanced', reuse_examples=True)).name)"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    here = f"{PromptConfig().name}\n"
    here += (
        PromptConfig(
            format="bullet",
            connector="=",
            few_shot=FewShotConfig(n_shots=4, composition="balanced", reuse_examples=True),
        ).name
        + "\n"
    )
    assert runs[0] == here


def test_names_differ_for_every_distinct_config_and_read_well():
    configs = [
        PromptConfig(),
        PromptConfig(numeric_risk_prompting=True),
        PromptConfig(cot_prompting=True),
        PromptConfig(use_chat_template=True),
        PromptConfig(correct_order_bias=False),
        PromptConfig(format="bullet"),
        PromptConfig(format="comma"),
        PromptConfig(connector="="),
        PromptConfig(granularity="low"),
        PromptConfig(order=("SEX",)),
        PromptConfig(custom_prompt_prefix="x"),
        PromptConfig(custom_prompt_suffix="x"),
        PromptConfig(show_question=False),
        PromptConfig(few_shot=FewShotConfig(n_shots=2)),
        PromptConfig(few_shot=FewShotConfig(n_shots=2, reuse_examples=True)),
        PromptConfig(few_shot=FewShotConfig(n_shots=2, composition="balanced")),
        PromptConfig(few_shot=FewShotConfig(n_shots=2, composition=(2, 0))),
        PromptConfig(few_shot=FewShotConfig(n_shots=2, example_order=(1, 0))),
        PromptConfig(few_shot=FewShotConfig(n_shots=2, hide_question=True)),
        PromptConfig(few_shot=FewShotConfig(n_shots=2, seed=1)),
    ]
    names = [c.name for c in configs]
    assert len(set(names)) == len(names)
    assert names[0].startswith("mc-zeroshot-") and len(names[0]) == len("mc-zeroshot-") + 8
    assert names[1].startswith("num-zeroshot-")
    assert names[2].startswith("cot-zeroshot-")
    assert names[3].startswith("mc-chat-")
    assert "noob" in names[4] and "var" in names[5]
    assert names[14].startswith("mc-fs2-reuse-")
    assert all(n == n.strip() and "/" not in n and " " not in n for n in names)


def test_equal_configs_have_equal_names_regardless_of_argument_order():
    a = PromptConfig(format="bullet", connector="=", order=["AGEP"])  # a list is accepted and stored as a tuple
    b = PromptConfig(order=("AGEP",), connector="=", format="bullet")
    assert a == b and a.name == b.name and hash(a) == hash(b)


def test_configs_are_frozen():
    cfg = PromptConfig()
    with pytest.raises(AttributeError):
        cfg.format = "bullet"  # type: ignore[misc]


def test_every_field_is_documented():
    from dataclasses import fields

    for cls in (PromptConfig, FewShotConfig):
        for f in fields(cls):
            assert len(field_doc(cls, f.name)) > 10, f.name


def test_variations_lists_only_non_defaults():
    assert PromptConfig().variations() == {}
    assert PromptConfig(granularity="low", show_question=False).variations() == {
        "granularity": "low",
        "show_question": False,
    }


def test_field_doc_serves_every_config_class_and_names_a_missing_field():
    from folkscope.errors import ConfigError
    from folkscope.risk.config import BenchmarkConfig

    assert "threshold" in field_doc(BenchmarkConfig, "fit_threshold")
    with pytest.raises(ConfigError, match="BenchmarkConfig has no field 'temprature'"):
        field_doc(BenchmarkConfig, "temprature")


def test_an_absurd_shot_count_with_an_order_is_refused_at_once():
    """--few-shot 1000000000 --example-order 0,1 built a list of a billion indices (MemoryError, or the kernel's kill)."""
    import time

    from folkscope.prompting.config import FewShotConfig

    start = time.perf_counter()
    with pytest.raises(ConfigError, match="example_order must be a permutation of 0..999999999"):
        FewShotConfig(n_shots=1_000_000_000, example_order=(0, 1))
    assert time.perf_counter() - start < 1.0
