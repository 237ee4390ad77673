"""``folkscope numeric`` on every backend ``folkscope run`` supports: web APIs and vLLM give the fake model's numbers.

The web-API run goes through the real litellm backend and a local
OpenAI-compatible server answering from the fake model; the vLLM run through
the vLLM backend over the vLLM stand-in (vLLM needs a CUDA GPU). Both must
reproduce the probabilities the fake backend gives directly.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from folkscope.cli.main import main
from folkscope.engine import Engine, EngineConfig, ResolvedModel
from folkscope.engine.backends.fake import FakeBackend
from folkscope.numeric import NumericConfig, run_numeric

GRID = ["--dataset", "colors", "--numbers", "1,3,9", "--words", "red,blue", "--templates", "shirts", "--no-heatmap"]


def _probabilities(folder: Path) -> pd.DataFrame:
    return (
        pd.read_parquet(folder / "probabilities.parquet").sort_values(["problem_id", "position"]).reset_index(drop=True)
    )


def _run(capsys, argv) -> Path:
    assert main(["numeric", "run", *argv]) == 0
    return Path(capsys.readouterr().out.split("run folder: ")[1].splitlines()[0])


def test_numeric_on_a_web_api_gives_the_fake_models_probabilities(capsys, tmp_path, monkeypatch):
    pytest.importorskip("litellm")
    from folkscope.testing import FakeSource, LocalOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    direct = _run(
        capsys,
        [*GRID, "--model", "fake", "--inference-backend", "fake", "--no-cache", "--results-dir", str(tmp_path / "a")],
    )
    with LocalOpenAIServer(FakeSource(FakeBackend()), max_lifetime=120) as url:
        api_flags = ["--use-web-api-model", "--model", "openai/fake", "--api-base", url, "--max-api-concurrency", "4"]
        web = _run(
            capsys, [*GRID, *api_flags, "--cache-dir", str(tmp_path / "cache"), "--results-dir", str(tmp_path / "b")]
        )
        # the chat form reads options from the chat endpoint's top log-probabilities, which hold none of these
        # multi-token words: one clear line, and the answers stay cached for a rerun
        assert (
            main(
                [
                    "numeric",
                    "run",
                    *GRID,
                    "--chat",
                    *api_flags,
                    "--assistant-prefill",
                    "--cache-dir",
                    str(tmp_path / "cache"),
                    "--results-dir",
                    str(tmp_path / "c"),
                ]
            )
            == 2
        )
        err = capsys.readouterr().err
        assert "no problem has every option scored (18 left out)" in err and "try the base form" in err
        assert err.strip().splitlines()[-1].startswith("folkscope: error: chat-")
    a, b = _probabilities(direct), _probabilities(web)
    assert len(a) == len(b) > 0 and (a["problem_id"] == b["problem_id"]).all()
    np.testing.assert_allclose(b["model_prob"], a["model_prob"], atol=1e-6)
    manifest = json.loads((web / "manifest.json").read_text())
    assert manifest["part"] == "numeric" and manifest["engine"]["backend"]["backend"] == "litellm"


def test_numeric_on_vllm_gives_the_fake_models_probabilities(tmp_path, monkeypatch):
    from engine.vllm_standin import StandInLLM, make_vllm_module  # tests/engine, on the path as pytest set it
    from folkscope.engine.backends.vllm import VLLMBackend

    monkeypatch.setitem(sys.modules, "vllm", make_vllm_module())
    config = NumericConfig(
        dataset="colors",
        engine=EngineConfig(model="fake", backend="vllm"),
        numbers=(1, 3, 9),
        words=("red", "blue"),
        templates=("shirts",),
    )
    model = ResolvedModel("fake", "fake", "/nonexistent/fake-model", "local", "0")
    engine = Engine(VLLMBackend.from_model(model, llm=StandInLLM(FakeBackend())), cache=None, progress=False)
    vllm_run = run_numeric(config, tmp_path / "v", engine=engine, heatmap=False)
    fake = dataclasses.replace(config, engine=EngineConfig(model="fake", backend="fake", use_cache=False))
    fake_run = run_numeric(fake, tmp_path / "f", heatmap=False)
    np.testing.assert_allclose(
        _probabilities(vllm_run.folder)["model_prob"], _probabilities(fake_run.folder)["model_prob"], atol=1e-6
    )


def test_engine_flags_reach_numeric_and_are_checked_before_any_model_loads(capsys, tmp_path, monkeypatch):
    assert main(["numeric", "run", *GRID, "--max-api-rpm", "5", "--results-dir", str(tmp_path)]) == 2
    assert "--max-api-rpm applies to web API models; add --use-web-api-model" in capsys.readouterr().err
    built = []
    real = Engine.from_config.__func__

    def spy(cls, config, **kwargs):
        built.append(config)
        return real(cls, config, **kwargs)

    monkeypatch.setattr(Engine, "from_config", classmethod(spy))
    _run(
        capsys,
        [
            *GRID,
            "--model",
            "fk",
            "--inference-backend",
            "fake",
            "--batch-tokens",
            "512",
            "--dtype",
            "float32",
            "--cache-dir",
            str(tmp_path / "c"),
            "--results-dir",
            str(tmp_path),
        ],
    )
    (config,) = built
    assert (config.model, config.backend, config.batch_tokens, config.dtype, config.cache_dir) == (
        "fk",
        "fake",
        512,
        "float32",
        str(tmp_path / "c"),
    )
