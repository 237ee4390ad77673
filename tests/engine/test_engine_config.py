"""EngineConfig: one checked object for every engine setting, built from the same flags by every command."""

from __future__ import annotations

import argparse

import pytest

from folkscope.cli.engine_args import add_engine_arguments, engine_config_from_args
from folkscope.engine import Engine, EngineConfig
from folkscope.errors import ConfigError


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"backend": "tpu"}, "unknown inference backend 'tpu'; choose one of transformers, vllm, litellm, fake"),
        ({"backend": "litellm"}, "--use-web-api-model needs --model set to a litellm model id"),
        ({"backend": "litellm", "model": "openai/x", "dtype": "float16"}, "--dtype does not apply to web API models"),
        (
            {"backend": "litellm", "model": "openai/x", "max_model_len": 10},
            "--max-model-len applies to --inference-backend vllm, not to web API",
        ),
        ({"backend": "litellm", "model": "openai/x", "batch_tokens": 64}, "--batch-tokens applies to local backends"),
        ({"max_rpm": 60}, "--max-api-rpm applies to web API models; add --use-web-api-model"),
        ({"backend": "fake", "tensor_parallel_size": 2}, "--tensor-parallel-size applies to --inference-backend vllm"),
        ({"batch_tokens": 0}, "--batch-tokens must be >= 1, got 0"),
        ({"backend": "vllm", "gpu_memory_utilization": 1.5}, r"--gpu-memory-utilization must be in \(0, 1\]"),
        ({"model": ""}, "model must be a model handle"),
    ],
)
def test_each_wrong_combination_is_one_line_naming_the_flag(kwargs, message):
    with pytest.raises(ConfigError, match=message) as info:
        EngineConfig(**kwargs)
    assert "\n" not in str(info.value)


def test_backend_options_carry_only_what_the_backend_takes():
    assert EngineConfig(batch_tokens=2048, device="cpu").backend_options() == {"batch_tokens": 2048}
    vllm = EngineConfig(backend="vllm", batch_tokens=8192, max_model_len=4096, vllm_dtype="bfloat16")
    assert vllm.backend_options() == {"batch_tokens": 8192, "max_model_len": 4096, "vllm_dtype": "bfloat16"}
    api = EngineConfig(backend="litellm", model="openai/m", api_base="http://127.0.0.1:9/v1", assistant_prefill=True)
    assert api.backend_options() == {"api_base": "http://127.0.0.1:9/v1", "assistant_prefill": True}


def test_round_trip_and_unknown_keys():
    config = EngineConfig(model="m", backend="fake", cache_dir="/tmp/c", use_cache=False)
    assert EngineConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ConfigError, match=r"unknown EngineConfig key\(s\) gpu; known keys: api_base, "):
        EngineConfig.from_dict({"gpu": True})


def test_the_flags_are_generated_from_the_fields_and_build_the_same_object():
    parser = argparse.ArgumentParser()
    add_engine_arguments(parser)
    flags = {a for action in parser._actions for a in action.option_strings}
    for field in EngineConfig.__dataclass_fields__.values():
        assert field.metadata["flag"] in flags  # every field has its flag
        assert field.metadata["doc"]  # and its help
    args = parser.parse_args(["--model", "openai/m", "--use-web-api-model", "--max-api-rpm", "30", "--no-cache"])
    assert engine_config_from_args(args) == EngineConfig(
        model="openai/m", backend="litellm", max_rpm=30, use_cache=False
    )
    args = parser.parse_args(["--inference-backend", "litellm", "--model", "openai/m"])
    assert engine_config_from_args(args).backend == "litellm"  # the backend's own name works too
    with pytest.raises(ConfigError, match="exclude each other"):
        engine_config_from_args(
            parser.parse_args(["--use-web-api-model", "--inference-backend", "vllm", "--model", "x"])
        )


def test_engine_from_config_builds_the_described_engine(tmp_path):
    engine = Engine.from_config(EngineConfig(model="demo", backend="fake", cache_dir=str(tmp_path)), prompt_version="v")
    assert engine.identity()["backend"]["model"]["name"] == "demo" and engine.cache is not None
    assert engine.cache.path.parent == tmp_path
    engine.close()
    assert Engine.from_config(EngineConfig(model="demo", backend="fake", use_cache=False)).cache is None
