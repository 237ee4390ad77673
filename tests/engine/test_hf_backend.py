"""The transformers backend on random-initialised tiny models with a locally trained tokenizer.

The optimised path (prefix reuse, hidden-state readout at read positions
only) must equal the model's own full-logits forward within 1e-5 in float32.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from folkscope.engine import ChatPrompt, Engine, PrefixGroupRequest, ScoreRequest
from folkscope.engine.tokens import encode_continuations
from folkscope.errors import BackendError, ConfigError
from folkscope.testing import sample_sentences

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

DESCRIPTION = "The following data describes a survey respondent in the United States.\n"
CANDS = (" A", " B", "A", " Below $50,000", " Above $50,000 per year")


def reference_logprobs(model, tokenizer, prompt, candidates) -> list[float]:
    """Independent reference: one unpadded sequence per candidate, full logits, log-softmax, sum."""
    text = (
        prompt
        if isinstance(prompt, str)
        else tokenizer.apply_chat_template(
            [{"role": m.role, "content": m.content} for m in prompt.messages],
            tokenize=False,
            add_generation_prompt=True,
        )
        + prompt.prefill
    )
    ids = tokenizer(text, add_special_tokens=isinstance(prompt, str)).input_ids
    out = []
    for cand in candidates:
        c = encode_continuations(tokenizer, [cand])[0]
        seq = torch.tensor([ids + list(c)])
        with torch.no_grad():
            logp = torch.log_softmax(model(seq).logits[0].double(), -1)
        out.append(float(sum(logp[len(ids) - 1 + t, c[t]] for t in range(len(c)))))
    return out


def rows(n: int, seed: int = 0) -> list[str]:
    return [s.split("Question")[0] for s in sample_sentences(n, seed=seed)]


def orderings() -> tuple[str, str]:
    return (
        "Question: income?\nA. Below $50,000\nB. Above $50,000\nAnswer:",
        "Question: income?\nA. Above $50,000\nB. Below $50,000\nAnswer:",
    )


@pytest.fixture(params=["random_init_llama_dir", "random_init_gpt2_dir"])
def model_dir(request):
    return request.getfixturevalue(request.param)


def make(model_dir, **options):
    from folkscope.engine.backends.hf import HFBackend

    return HFBackend(str(model_dir), **{"device": "cpu", **options})


def test_optimised_equals_full_logits_single_and_multi_token(model_dir):
    backend = make(model_dir, batch_tokens=1500)
    engine = Engine(backend, cache=None, progress=False)
    texts = rows(12)
    reqs = [ScoreRequest(DESCRIPTION + r + q, CANDS) for r in texts for q in orderings()]
    got = engine.score(reqs)
    assert backend.stats.forward_passes > backend.stats.batches  # shared-prefix passes did run
    assert backend.stats.tokens_run < 0.6 * backend.stats.logical_tokens
    for req, res in zip(reqs[:6], got[:6]):
        np.testing.assert_allclose(
            res.logprobs, reference_logprobs(backend.model, backend.tokenizer, req.prompt, CANDS), atol=1e-5
        )
    naive = Engine(make(model_dir, strategy="naive", batch_tokens=1500), cache=None, progress=False).score(reqs)
    np.testing.assert_allclose([r.logprobs for r in got], [r.logprobs for r in naive], atol=1e-5)


def test_prefix_groups_equal_full_logits(model_dir):
    backend = make(model_dir, batch_tokens=1200)
    engine = Engine(backend, cache=None, progress=False)
    groups = [PrefixGroupRequest(DESCRIPTION + r, orderings(), CANDS) for r in rows(10, seed=1)]
    got = engine.score_groups(groups)
    for group, res in zip(groups[:3], got[:3]):
        for suffix, one in zip(group.suffixes, res.results):
            want = reference_logprobs(backend.model, backend.tokenizer, group.prefix + suffix, CANDS)
            np.testing.assert_allclose(one.logprobs, want, atol=1e-5)
    naive = Engine(make(model_dir, strategy="naive"), cache=None, progress=False).score_groups(groups)
    for a, b in zip(got, naive):
        np.testing.assert_allclose([r.logprobs for r in a.results], [r.logprobs for r in b.results], atol=1e-5)


def test_chat_prompts_equal_full_logits(model_dir):
    backend = make(model_dir)
    engine = Engine(backend, cache=None, progress=False)
    prompts = [
        ChatPrompt([("system", DESCRIPTION), ("user", r + orderings()[0])], prefill="Answer:") for r in rows(4, seed=2)
    ]
    got = engine.score([ScoreRequest(p, CANDS) for p in prompts])
    for p, res in zip(prompts, got):
        np.testing.assert_allclose(
            res.logprobs, reference_logprobs(backend.model, backend.tokenizer, p, CANDS), atol=1e-5
        )


def test_many_permutations_of_one_question(random_init_llama_dir):
    """120 answer orderings share one question: one prefix pass, 120 short suffix rows."""
    import itertools

    backend = make(random_init_llama_dir, batch_tokens=4096)
    options = ["under 20", "20 to 40", "40 to 60", "60 to 80", "over 80"]
    suffixes = tuple(
        "".join(f"{'ABCDE'[i]}. {o}\n" for i, o in enumerate(perm)) + "Answer:"
        for perm in itertools.permutations(options)
    )
    group = PrefixGroupRequest(
        DESCRIPTION + rows(1)[0] + "Question: age group?\n", suffixes, (" A", " B", " C", " D", " E")
    )
    (res,) = Engine(backend, cache=None, progress=False).score_groups([group])
    assert len(res.results) == 120
    assert backend.stats.tokens_run < 0.45 * backend.stats.logical_tokens
    for k in (0, 77, 119):
        want = reference_logprobs(backend.model, backend.tokenizer, group.prefix + suffixes[k], group.candidates)
        np.testing.assert_allclose(res.results[k].logprobs, want, atol=1e-5)


def _oom_when_big(backend, limit, error):
    original = backend._run_passes

    def patched(passes, reads, **options):
        if sum(p.rows * p.width for p in passes) > limit:
            raise error
        return original(passes, reads, **options)

    backend._run_passes = patched


@pytest.mark.parametrize(
    "error",
    [
        torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB"),
        RuntimeError("[enforce fail] out of memory"),
    ],
    ids=["torch.cuda.OutOfMemoryError", "RuntimeError"],
)
def test_out_of_memory_shrinks_the_batch_and_completes(random_init_llama_dir, error):
    reqs = [ScoreRequest(DESCRIPTION + r + q, CANDS[:2]) for r in rows(16, seed=3) for q in orderings()]
    want = Engine(make(random_init_llama_dir, batch_tokens=8192), cache=None, progress=False).score(reqs)
    backend = make(random_init_llama_dir, batch_tokens=8192)
    _oom_when_big(backend, 800, error)
    got = Engine(backend, cache=None, progress=False).score(reqs)
    assert backend.stats.oom_backoffs >= 1 and backend.budget.tokens < 8192
    np.testing.assert_allclose([r.logprobs for r in got], [r.logprobs for r in want], atol=1e-5)


def test_global_prefix_cache_is_kept_across_batches_and_scores_stay_exact(random_init_llama_dir):
    reqs = [PrefixGroupRequest(DESCRIPTION + r, orderings(), CANDS[:2]) for r in rows(12, seed=5)]
    small = make(random_init_llama_dir, batch_tokens=1200)  # several batches, all starting with the description
    got = Engine(small, cache=None, progress=False).score_groups(reqs)
    naive = make(random_init_llama_dir, batch_tokens=1200, strategy="naive")
    want = Engine(naive, cache=None, progress=False).score_groups(reqs)
    assert small.stats.batches >= 3
    # every batch after the first starts from the kept cache of the description
    assert small.stats.reused_prefix_tokens >= (small.stats.batches - 1) * 8
    np.testing.assert_allclose(
        [r.logprobs for g in got for r in g.results], [r.logprobs for g in want for r in g.results], atol=1e-5
    )


def test_out_of_memory_in_generation_shrinks_too(random_init_llama_dir):
    from folkscope.engine import GenerateRequest, GenerationSettings

    backend = make(random_init_llama_dir, batch_tokens=4096)
    original = backend._run_generation

    def patched(prompts, settings):
        if len(prompts) > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return original(prompts, settings)

    backend._run_generation = patched
    reqs = [GenerateRequest(f"Person {i}:", GenerationSettings(max_new_tokens=4)) for i in range(7)]
    got = Engine(backend, cache=None, progress=False).generate(reqs)
    assert len(got) == 7 and backend.stats.oom_backoffs >= 1


def test_identity_and_cache_namespace_follow_dtype(random_init_llama_dir):
    f32 = make(random_init_llama_dir, dtype="float32")
    bf16 = make(random_init_llama_dir, dtype="bf16")
    assert f32.identity()["dtype"] == "float32" and bf16.identity()["dtype"] == "bfloat16"
    assert f32.identity()["model"]["revision"].startswith("local-")
    assert Engine(f32).namespace != Engine(bf16).namespace
    (res,) = Engine(bf16, cache=None, progress=False).score([ScoreRequest("Hello", (" A", " B"))])
    assert all(np.isfinite(res.logprobs))


def test_prompts_longer_than_the_context_window_are_refused_before_running(random_init_llama_dir):
    backend = make(random_init_llama_dir)
    long_prompt = " ".join(["word"] * 1200)
    with pytest.raises(ConfigError, match=r"1 prompts .* exceed the model's context window of 1024 tokens"):
        Engine(backend, cache=None, progress=False).score(
            [ScoreRequest(long_prompt, (" A",)), ScoreRequest("short", (" A",))]
        )


def test_invalid_options(random_init_llama_dir):
    with pytest.raises(ConfigError, match="strategy"):
        make(random_init_llama_dir, strategy="fast")
    with pytest.raises(ConfigError, match="dtype"):
        make(random_init_llama_dir, dtype="int8")
    with pytest.raises(ConfigError, match="device"):
        make(random_init_llama_dir, device="tpu")


def test_no_chat_template_is_a_clear_error(random_init_llama_dir, tmp_path):
    import shutil

    import transformers

    folder = tmp_path / "no-template"
    shutil.copytree(random_init_llama_dir, folder)
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    tok.chat_template = None
    (folder / "chat_template.jinja").unlink(missing_ok=True)
    tok.save_pretrained(folder)
    engine = Engine(make(folder), cache=None, progress=False)
    engine.backend._tokenizer.chat_template = None
    with pytest.raises(ConfigError, match="no chat template"):
        engine.score([ScoreRequest(ChatPrompt([("user", "hi")]), (" A",))])


def test_sliding_window_models_run_without_prefix_sharing(tmp_path, locally_trained_tokenizer):
    from folkscope.testing import build_random_model

    folder = build_random_model(tmp_path / "mistral-like", tokenizer=locally_trained_tokenizer)
    import json

    cfg = json.loads((folder / "config.json").read_text())
    cfg["sliding_window"] = 64
    (folder / "config.json").write_text(json.dumps(cfg))
    backend = make(folder)
    assert not backend.share_prefixes


def test_self_check_rejects_a_broken_readout(random_init_llama_dir, monkeypatch):
    from folkscope.engine.backends.hf import HFBackend

    backend = make(random_init_llama_dir)
    monkeypatch.setattr(HFBackend, "_head", lambda self, h: self._lm_head(h).float() * 3.0)
    with pytest.raises(BackendError, match="self-check failed"):
        backend.model
    assert backend._model is None


def test_from_loaded_wraps_an_in_memory_model(random_init_llama_dir):
    import transformers

    from folkscope.engine.backends.hf import HFBackend

    model = transformers.AutoModelForCausalLM.from_pretrained(random_init_llama_dir)
    tok = transformers.AutoTokenizer.from_pretrained(random_init_llama_dir)
    backend = HFBackend.from_loaded(model, tok, name="in-memory", revision="r1", device="cpu")
    assert backend.identity()["model"] == {"name": "in-memory", "revision": "r1", "source": "local"}
    (res,) = Engine(backend, cache=None, progress=False).score([ScoreRequest("Hello", (" A",))])
    assert res.logprobs[0] == pytest.approx(reference_logprobs(model, tok, "Hello", (" A",))[0], abs=1e-5)


def test_random_prompt_mixtures_match_naive(random_init_llama_dir):
    """Unrelated prompts, shared descriptions and duplicates mixed: still exact."""
    rng = random.Random(5)
    texts = rows(20, seed=6)
    reqs = []
    for _ in range(30):
        body = rng.choice(texts)
        prompt = rng.choice(["", DESCRIPTION, "Other task.\n"]) + body[: rng.randint(5, len(body))]
        reqs.append(ScoreRequest(prompt, tuple(rng.sample(CANDS, rng.randint(1, 4)))))
    got = Engine(make(random_init_llama_dir, batch_tokens=900), cache=None, progress=False).score(reqs)
    want = Engine(make(random_init_llama_dir, strategy="naive", batch_tokens=900), cache=None, progress=False).score(
        reqs
    )
    unshared_backend = make(random_init_llama_dir, share_prefixes=False, batch_tokens=900)
    unshared = Engine(unshared_backend, cache=None, progress=False).score(reqs)
    assert unshared_backend.stats.forward_passes == unshared_backend.stats.batches
    for a, b, c in zip(got, want, unshared):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-5)
        np.testing.assert_allclose(c.logprobs, b.logprobs, atol=1e-5)


def test_deep_prefix_trees_with_rows_skipping_levels_match_naive(random_init_llama_dir):
    """Prompts that branch at several depths: passes whose rows continue different earlier passes stay exact."""
    rng = random.Random(11)
    phrases = [s.split("\n")[k] + "\n" for s in rows(6, seed=8) for k in range(3)]
    reqs = []
    for _ in range(40):
        depth = rng.randint(1, 4)
        body = "".join(phrases[rng.randrange(3 * d, 3 * d + 3) % len(phrases)] for d in range(depth))
        reqs.append(ScoreRequest(DESCRIPTION + body + "Answer:", tuple(rng.sample(CANDS, 2))))
    backend = make(random_init_llama_dir, batch_tokens=20_000)
    _ = backend.model  # load (and self-check) before recording the plan's passes
    seen = []
    original = backend._run_passes

    def recording(passes, reads, **options):
        seen.append(passes)
        return original(passes, reads, **options)

    backend._run_passes = recording
    got = Engine(backend, cache=None, progress=False).score(reqs)
    want = Engine(make(random_init_llama_dir, strategy="naive", batch_tokens=20_000), cache=None, progress=False).score(
        reqs
    )
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-5)
    mixed = [p for passes in seen for p in passes if len({None if a is None else a[0] for a in p.parents}) > 1]
    assert mixed, "the plan had no pass whose rows continue different passes"
    assert max(len(passes) for passes in seen) >= 4


def test_default_budget_comes_from_free_memory_before_the_first_plan(random_init_llama_dir, monkeypatch):
    from folkscope.engine.backends import _token

    planned = []
    original = _token.plan_batches

    def recording(units, *, batch_tokens, **options):
        planned.append(batch_tokens)
        return original(units, batch_tokens=batch_tokens, **options)

    monkeypatch.setattr(_token, "plan_batches", recording)
    backend = make(random_init_llama_dir)
    assert backend._model is None  # nothing loaded until there is work
    Engine(backend, cache=None, progress=False).score([ScoreRequest(DESCRIPTION + r, CANDS[:2]) for r in rows(3)])
    assert 1024 <= backend.budget.tokens <= 16384
    assert planned and set(planned) == {backend.budget.tokens}
    naive = make(random_init_llama_dir, strategy="naive")
    _ = naive.model
    assert naive.budget.tokens <= backend.budget.tokens  # full logits cost memory per token too


def test_cached_forward_passes_raise_no_deprecation_on_this_transformers(random_init_llama_dir, capfd):
    """Scoring through shared prefixes and cached generation, with every warning an error.

    transformers 5.24 renamed ``past_key_values`` to ``cache`` and warns (a
    FutureWarning for the argument, a log line for the output attribute);
    the backend must use whichever name the installed release takes.
    """
    import inspect
    import warnings

    from folkscope.engine import GenerateRequest, GenerationSettings

    backend = make(random_init_llama_dir, strategy="optimized")
    engine = Engine(backend, cache=None, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = engine.score_groups([PrefixGroupRequest(DESCRIPTION + rows(1)[0], orderings(), (" A", " B"))])
        gen = engine.generate([GenerateRequest("Hello", GenerationSettings(max_new_tokens=4))])
    assert np.isfinite(res[0].results[0].logprobs).all() and gen[0].completion_tokens >= 1
    expected = (
        "cache" if "cache" in inspect.signature(backend.model.base_model.forward).parameters else "past_key_values"
    )
    assert backend._cache_arg == expected
    assert "deprecated" not in capfd.readouterr().err


def test_cache_argument_follows_the_forward_signature():
    from folkscope.engine.backends.hf import cache_argument

    class Renamed:  # transformers >= 5.24
        def forward(self, input_ids=None, attention_mask=None, cache=None, use_cache=None, **kwargs): ...

    class Old:  # earlier releases
        def forward(self, input_ids=None, attention_mask=None, past_key_values=None, use_cache=None, **kwargs): ...

    assert cache_argument(Renamed().forward) == "cache"
    assert cache_argument(Old().forward) == "past_key_values"
    assert cache_argument(len) == "past_key_values"  # no readable signature: the name every release accepts
