"""The vLLM backend, driven through a stand-in of vLLM backed by the fake language model.

Every log-probability of the stand-in comes from ``FakeBackend.logprobs``, so
the vLLM backend must give the fake backend's numbers (to 1e-9) for every
request kind and every scoring method. One test runs the real vLLM engine
wherever it is installed and a CUDA GPU is visible.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from folkscope.engine import (
    ChatPrompt,
    Engine,
    GenerateRequest,
    GenerationSettings,
    NextTokenRequest,
    PrefixGroupRequest,
    ResolvedModel,
    ResultCache,
    ScoreRequest,
)
from folkscope.engine.backends.fake import FakeBackend
from folkscope.engine.backends.vllm import VLLMBackend
from folkscope.errors import BackendError, ConfigError, MissingDependencyError

from .vllm_standin import StandInLLM, make_vllm_module

MODEL = ResolvedModel("fake", "fake", "/nonexistent/fake-model", "local", "0")
DESCRIPTION = "The following data describes a survey respondent in the United States.\n"
CANDS = (" A", " B", "A", " Below $50,000", " Above $50,000 per year")
METHODS = ["prompt_logprobs", "forced", "token_ids", "auto"]


def rule(text: str) -> dict[str, float] | None:
    """Fixed next-token probabilities that make generations stop on a string and on end-of-sequence."""
    if text.endswith("Q:"):
        return {"y": 0.9}
    if text.endswith("Q:y"):
        return {"e": 0.9}
    if text.endswith("Q:ye"):
        return {"s": 0.9}
    if text.startswith("Bye") and len(text) >= 8:
        return {"\x00": 0.99}
    return None


@pytest.fixture()
def vllm_module(monkeypatch):
    """The stand-in module as ``vllm`` (what ``require("vllm")`` returns)."""
    module = make_vllm_module()
    monkeypatch.setitem(sys.modules, "vllm", module)
    return module


def backend_for(
    fake: FakeBackend | None = None, *, llm: StandInLLM | None = None, **options
) -> tuple[VLLMBackend, StandInLLM]:
    llm = llm if llm is not None else StandInLLM(fake or FakeBackend())
    return VLLMBackend.from_model(MODEL, llm=llm, **options), llm


def rows(n: int) -> list[str]:
    return [
        f"{DESCRIPTION}- Age: {20 + k} years old.\n- Occupation: {['nurse', 'cook', 'clerk'][k % 3]}.\n"
        for k in range(n)
    ]


def score_requests() -> list[ScoreRequest]:
    reqs = [ScoreRequest(r + "Answer:", CANDS) for r in rows(5)]
    reqs.append(
        ScoreRequest(
            ChatPrompt([("system", "Be brief."), ("user", "Income?")], prefill="Answer:"), (" yes", " no thanks")
        )
    )
    reqs.append(ScoreRequest("x", ("y", "yz", "yzw")))  # candidates sharing their first tokens
    return reqs


def assert_scores_equal(got, expected) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.logprobs, e.logprobs, rtol=0, atol=1e-9)
        assert g.num_tokens == e.num_tokens and g.prompt_tokens == e.prompt_tokens


# ---------------------------------------------------------------------- same numbers as the fake backend
@pytest.mark.parametrize("method", METHODS)
def test_every_request_kind_matches_the_fake_backend(vllm_module, method):
    fake = FakeBackend(next_token_probs=rule)
    backend, _ = backend_for(FakeBackend(next_token_probs=rule), scoring=method)
    engine = Engine(backend, cache=None, progress=False)
    reference = Engine(fake, cache=None, progress=False)

    assert_scores_equal(engine.score(score_requests()), reference.score(score_requests()))

    groups = [
        PrefixGroupRequest(
            r, ("Q: income?\nA. low\nB. high\nAnswer:", "Q: income?\nA. high\nB. low\nAnswer:"), (" A", " B", " high")
        )
        for r in rows(3)
    ]
    for got, exp in zip(engine.score_groups(groups), reference.score_groups(groups)):
        assert_scores_equal(got.results, exp.results)

    nexts = [NextTokenRequest(r + "Answer:", ("A", " A", "B", " B")) for r in rows(4)]
    for got, exp in zip(engine.next_token(nexts), reference.next_token(nexts)):
        np.testing.assert_allclose(got.logprobs, exp.logprobs, rtol=0, atol=1e-9)
        assert got.prompt_tokens == exp.prompt_tokens
    assert backend.scoring_method() == ("token_ids" if method == "auto" else method)


def test_generation_matches_the_fake_backend(vllm_module):
    backend, _ = backend_for(FakeBackend(next_token_probs=rule))
    engine = Engine(backend, cache=None, progress=False)
    reference = Engine(FakeBackend(next_token_probs=rule), cache=None, progress=False)
    reqs = [
        GenerateRequest("Echo Q:", GenerationSettings(max_new_tokens=10, stop=("es",))),
        GenerateRequest("Bye now", GenerationSettings(max_new_tokens=10)),
        GenerateRequest("Tell me more", GenerationSettings(max_new_tokens=6)),
        GenerateRequest(
            ChatPrompt([("user", "Hi")], prefill="Sure"), GenerationSettings(max_new_tokens=5, temperature=0.7, seed=3)
        ),
        GenerateRequest("Sampled", GenerationSettings(max_new_tokens=7, temperature=1.3, seed=11)),
    ]
    got, expected = engine.generate(reqs), reference.generate(reqs)
    assert got == expected
    assert [r.finish_reason for r in got[:3]] == ["stop", "eos", "length"]
    assert got[0].text == "y" and got[0].completion_tokens == 3
    assert backend.stats.generated_tokens == sum(r.completion_tokens for r in got)


def test_engine_from_model_builds_the_backend(vllm_module):
    llm = StandInLLM()
    engine = Engine.from_model(MODEL, backend="vllm", llm=llm, dtype="bf16", use_cache=False, progress=False)
    assert engine.backend.name == "vllm"
    assert engine.identity()["backend"]["dtype"] == "bfloat16"
    (res,) = engine.score([ScoreRequest("2+2=", ("4", "5"))])
    assert res.logprobs[0] < 0
    with pytest.raises(ConfigError, match="needs a CUDA GPU"):
        Engine.from_model(MODEL, backend="vllm", llm=llm, device="cpu")


# ---------------------------------------------------------------------- ordering, chunks, resume
def test_submissions_are_sorted_so_shared_prefixes_sit_together(vllm_module):
    backend, llm = backend_for(scoring="forced")
    backend.scoring_method()  # the self-check's calls come first
    first = len(llm.calls)
    fam_a, fam_b = "Family A: shared description.\n", "Family B: another one.\n"
    reqs = [ScoreRequest((fam_a if k % 2 else fam_b) + f"row {k}\nAnswer:", (" A", " B")) for k in range(8)]
    list(backend.score(reqs))
    (call,) = llm.calls[first:]
    assert call == sorted(call)
    prefix = tuple(backend.tokenizer.encode(fam_a))
    in_a = [seq[: len(prefix)] == prefix for seq in call]
    start = in_a.index(True)
    assert all(in_a[start : start + in_a.count(True)])  # one contiguous block


def test_chunks_are_yielded_as_they_complete(vllm_module):
    backend, llm = backend_for(scoring="prompt_logprobs", chunk_sequences=4)
    reqs = [ScoreRequest(r, (" A", " B")) for r in rows(6)]
    batches = list(backend.score(reqs))
    assert len(llm.calls) == 3 and len(batches) >= 2
    assert sorted(i for b in batches for i, _ in b) == list(range(6))
    assert backend.stats.requests == 6 and backend.stats.batches == 3


def test_done_requests_are_never_recomputed(vllm_module):
    backend, llm = backend_for(scoring="prompt_logprobs", window=4)
    reqs = [ScoreRequest(f"Row {k}: something.\nAnswer:", (" A", " B")) for k in range(12)]
    done = [k % 3 == 0 or k >= 9 for k in range(12)]
    batches = list(backend.score(reqs, done=done))
    assert sorted(i for b in batches for i, _ in b) == [k for k in range(12) if not done[k]]
    submitted = {seq for call in llm.calls for seq in call}
    for k, finished in enumerate(done):
        prompt = tuple(backend.tokenizer.encode(reqs[k].prompt))
        assert any(seq[: len(prompt)] == prompt for seq in submitted) != finished
    assert not list(backend.score(reqs, done=[True] * 12))
    with pytest.raises(ConfigError, match="done has 2 flags"):
        list(backend.score(reqs, done=[False, False]))


def test_a_killed_run_resumes_without_recomputing(vllm_module, tmp_path):
    reqs = [ScoreRequest(r + "Answer:", CANDS) for r in rows(6)]
    expected = Engine(FakeBackend(), cache=None, progress=False).score(reqs)
    cache = ResultCache(tmp_path / "cache")
    first, llm = backend_for(llm=StandInLLM(fail_on_call=1), scoring="prompt_logprobs", chunk_sequences=10)
    with pytest.raises(RuntimeError, match="killed"):
        Engine(first, cache=cache, progress=False).score(reqs)
    saved = first.stats.requests
    assert 0 < saved < 6
    second, llm2 = backend_for(scoring="prompt_logprobs", chunk_sequences=10)
    engine = Engine(second, cache=cache, progress=False)
    assert_scores_equal(engine.score(reqs), expected)
    assert engine.stats.cached == saved and second.stats.requests == 6 - saved
    cache.close()


# ---------------------------------------------------------------------- prefix caching and exactness guards
def test_sampled_methods_reuse_the_prefix_cache_and_stats_count_it(vllm_module):
    reqs = [ScoreRequest(DESCRIPTION * 2 + r + "Answer:", CANDS) for r in rows(4)]
    runs = {}
    for method in ("token_ids", "prompt_logprobs"):
        backend, llm = backend_for(scoring=method)
        backend.scoring_method()
        before = llm.tokens_computed
        list(backend.score(reqs))
        assert backend.stats.tokens_run == llm.tokens_computed - before
        runs[method] = backend.stats
    assert runs["token_ids"].logical_tokens == runs["prompt_logprobs"].logical_tokens
    # prompt-logprob requests bypass vLLM's cache: each candidate re-runs its prompt
    assert runs["prompt_logprobs"].unique_token_ratio > 1.5
    assert runs["token_ids"].unique_token_ratio < 0.5


def test_prompt_logprobs_served_from_the_cache_are_recomputed(vllm_module):
    fake = FakeBackend()
    prompt = "x" * 32  # two full cache blocks: the second candidate's prompt is entirely cached
    reqs = [ScoreRequest(prompt, ("A", "B", "CD"))]
    expected = Engine(fake, cache=None, progress=False).score(reqs)
    backend, llm = backend_for(llm=StandInLLM(fake, stale_prompt_logprobs=True), scoring="prompt_logprobs")
    assert_scores_equal(Engine(backend, cache=None, progress=False).score(reqs), expected)
    assert len(llm.calls) == 2  # the suspect requests went again, salted

    backend, _ = backend_for(
        llm=StandInLLM(fake, stale_prompt_logprobs=True, honour_salt=False), scoring="prompt_logprobs"
    )
    with pytest.raises(BackendError, match="enable_prefix_caching=False"):
        list(backend.score(reqs))


def test_auto_falls_back_when_forced_logprobs_are_post_processed(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", make_vllm_module(token_ids=False))
    fake = FakeBackend()
    reqs = score_requests()
    backend, _ = backend_for(llm=StandInLLM(fake, logprobs_mode="processed"))
    assert_scores_equal(
        Engine(backend, cache=None, progress=False).score(reqs), Engine(fake, cache=None, progress=False).score(reqs)
    )
    assert backend.scoring_method() == "prompt_logprobs"

    forced, _ = backend_for(llm=StandInLLM(fake, logprobs_mode="processed"), scoring="forced")
    with pytest.raises(BackendError, match="self-check failed"):
        list(forced.score(reqs))
    token_ids, _ = backend_for(scoring="token_ids")
    with pytest.raises(ConfigError, match="logprob_token_ids"):
        list(token_ids.score(reqs))
    raw, _ = backend_for(llm=StandInLLM(fake))
    assert raw.scoring_method() == "forced"


# ---------------------------------------------------------------------- options, identity, lifecycle
@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"gpu_memory_utilization": 0}, "gpu_memory_utilization"),
        ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization"),
        ({"gpu_memory_utilization": "most"}, "gpu_memory_utilization"),
        ({"max_model_len": 0}, "max_model_len"),
        ({"vllm_dtype": "int8"}, "vllm_dtype"),
        ({"dtype": "float16", "vllm_dtype": "bfloat16"}, "disagree"),
        ({"tensor_parallel_size": 0}, "tensor_parallel_size"),
        ({"tensor_parallel_size": 1.5}, "tensor_parallel_size"),
        ({"device": "cpu"}, "needs a CUDA GPU"),
        ({"device": "mps"}, "needs a CUDA GPU"),
        ({"device": "cuda:1"}, "CUDA_VISIBLE_DEVICES"),
        ({"seed": -1}, "seed"),
        ({"scoring": "topk"}, "scoring"),
        ({"chunk_sequences": 0}, "chunk_sequences"),
        ({"batch_tokens": -5}, "batch_tokens"),
        ({"enable_prefix_caching": "yes"}, "enable_prefix_caching"),
    ],
)
def test_bad_options_are_config_errors(vllm_module, options, match):
    with pytest.raises(ConfigError, match=match):
        VLLMBackend.from_model(MODEL, llm=StandInLLM(), **options)


def test_identity_holds_what_changes_the_numbers(vllm_module):
    base, _ = backend_for()
    ident = base.identity()
    assert ident["backend"] == "vllm" and ident["model"] == MODEL.identity()
    assert (ident["dtype"], ident["tensor_parallel_size"], ident["max_model_len"]) == ("auto", 1, None)
    for options in ({"vllm_dtype": "float16"}, {"tensor_parallel_size": 2}, {"max_model_len": 2048}):
        assert backend_for(**options)[0].identity() != ident
    same = backend_for(gpu_memory_utilization=0.5, chunk_sequences=7, seed=3, scoring="forced")[0]
    assert same.identity() == ident


def test_missing_vllm_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm now raises ImportError
    with pytest.raises(MissingDependencyError, match=r"pip install 'folkscope\[vllm\]'"):
        Engine.from_model(MODEL, backend="vllm", use_cache=False)


def test_engine_is_built_lazily_with_prefix_caching(vllm_module, monkeypatch, tmp_path, locally_trained_tokenizer):
    folder = tmp_path / "model"
    locally_trained_tokenizer.save_pretrained(folder)
    (folder / "config.json").write_text('{"max_position_embeddings": 1024, "eos_token_id": [2, 7]}')
    model = ResolvedModel("tiny", "tiny", str(folder), "local", "r1")
    backend = VLLMBackend.from_model(
        model, tensor_parallel_size=1, max_model_len=512, batch_tokens=8192, vllm_dtype="fp16"
    )
    assert backend.max_length == 512 and not vllm_module.engines
    assert backend.count_tokens(["hello world", ChatPrompt([("user", "hi")])])[0] > 0
    assert backend.is_single_token(" A") in (True, False)
    pytest.importorskip("torch")
    with pytest.raises(ConfigError, match="needs a CUDA GPU"):  # this machine has none
        _ = backend.llm
    monkeypatch.setattr(VLLMBackend, "_check_gpu", lambda self: None)
    llm = backend.llm
    assert llm.engine_kwargs == {
        "model": str(folder),
        "tokenizer": str(folder),
        "dtype": "float16",
        "tensor_parallel_size": 1,
        "gpu_memory_utilization": 0.85,
        "seed": 0,
        "enable_prefix_caching": True,
        "max_model_len": 512,
        "max_num_batched_tokens": 8192,
    }
    assert backend._eos == {2, 7, locally_trained_tokenizer.eos_token_id}
    backend.close()
    assert backend._llm is None
    assert backend.llm is not llm  # rebuilt on next use


def test_close_drops_an_injected_engine(vllm_module):
    backend, _ = backend_for()
    assert backend.render(ChatPrompt([("user", "Hi")], prefill="Ok")).endswith("<|assistant|>\nOk")
    backend.close()
    with pytest.raises(BackendError, match="closed"):
        list(backend.score([ScoreRequest("a", ("b",))]))


def test_prompts_beyond_max_model_len_are_config_errors(vllm_module):
    backend, _ = backend_for(max_model_len=10)
    with pytest.raises(ConfigError, match="context window of 10 tokens"):
        list(backend.score([ScoreRequest("a" * 9, ("bc",))]))
    with pytest.raises(ConfigError, match="context window"):
        list(backend.generate([GenerateRequest("a" * 5, GenerationSettings(max_new_tokens=6))]))
    with pytest.raises(ConfigError, match="single tokens"):
        list(backend.next_token([NextTokenRequest("a", ("bc",))]))


# ---------------------------------------------------------------------- the real engine
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::UserWarning")
def test_real_vllm_matches_transformers(tmp_path, locally_trained_tokenizer):
    pytest.importorskip("vllm", reason="vLLM is not installed (folkscope[vllm]; it needs a CUDA GPU)")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("vLLM needs a CUDA GPU")
    from folkscope.engine.backends.hf import HFBackend
    from folkscope.testing import build_random_model

    # head size 64: vLLM's attention kernels support only common head sizes
    shape = {
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "max_position_embeddings": 512,
    }
    folder = build_random_model(tmp_path / "llama", arch="llama", tokenizer=locally_trained_tokenizer, config=shape)
    hf = Engine(HFBackend(str(folder), device="cpu", dtype="float32"), cache=None, progress=False)
    first = VLLMBackend.from_model(
        str(folder), vllm_dtype="float32", gpu_memory_utilization=0.3, max_model_len=512, scoring="prompt_logprobs"
    )
    scores = [ScoreRequest(r + "Answer:", CANDS) for r in rows(4)]
    groups = [
        PrefixGroupRequest(r, ("Q: income?\nA. low\nB. high\nAnswer:", "Q: other order\nAnswer:"), (" A", " B"))
        for r in rows(2)
    ]
    nexts = [NextTokenRequest(r + "Answer:", ("A", " A", "B", " B")) for r in rows(3)]
    want_s, want_g, want_n = hf.score(scores), hf.score_groups(groups), hf.next_token(nexts)
    try:
        for method in ("prompt_logprobs", "auto", "forced"):
            backend = (
                first
                if method == "prompt_logprobs"
                else VLLMBackend.from_model(str(folder), vllm_dtype="float32", llm=first.llm, scoring=method)
            )
            engine = Engine(backend, cache=None, progress=False)
            for got, exp in zip(engine.score(scores), want_s):
                np.testing.assert_allclose(got.logprobs, exp.logprobs, atol=1e-3)
            for got, exp in zip(engine.score_groups(groups), want_g):
                for g, e in zip(got.results, exp.results):
                    np.testing.assert_allclose(g.logprobs, e.logprobs, atol=1e-3)
            for got, exp in zip(engine.next_token(nexts), want_n):
                np.testing.assert_allclose(got.logprobs, exp.logprobs, atol=1e-3)
        gens = [GenerateRequest(r, GenerationSettings(max_new_tokens=8)) for r in rows(2)]
        assert Engine(first, cache=None, progress=False).generate(gens) == hf.generate(gens)
    finally:
        first.close()


def test_folktexts_vllm_classifier_over_a_loaded_llm_gives_the_fake_backends_scores(vllm_module):
    """folktexts' VLLMClassifier(llm, tokenizer, task): the stand-in LLM's scores equal the fake backend's on 10 real rows."""
    from folkscope.data import load_bundled
    from folkscope.risk import LLMClassifier, VLLMClassifier

    X = load_bundled("acs-income-10").drop(columns="PINCP>50000")
    llm = StandInLLM()
    clf = VLLMClassifier(llm, llm.get_tokenizer(), "ACSIncome", model_name_or_path=MODEL, use_cache=False)
    clf.engine.progress = False
    # vLLM cuts prompts to the context size (600 tokens, here the fake's bytes); the fake backend does when asked
    reference = LLMClassifier(Engine(FakeBackend(cut_prompts=True), cache=None, progress=False), "ACSIncome")
    np.testing.assert_allclose(clf.predict_proba(X), reference.predict_proba(X), rtol=0, atol=1e-9)
    with pytest.raises(ConfigError, match="pass model_name_or_path"):
        VLLMClassifier(object(), None, "ACSIncome")
