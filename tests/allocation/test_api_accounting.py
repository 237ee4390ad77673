"""An allocation run on a web API reports what it paid (calls, retries, tokens, cost) and stores it in its folder,
through the engine's one accounting mechanism (:func:`folkscope.engine.run_accounting`) that ``folkscope run`` uses."""

from __future__ import annotations

import json

import pytest

from folkscope.allocation import AllocationConfig, bloomberg_resumes, draw_pools, rescore, run_allocation
from folkscope.allocation.summary import print_summary
from folkscope.engine import Engine, EngineConfig, ResultCache
from folkscope.engine.backends.fake import FakeBackend
from folkscope.testing import FakeSource, FaultPlan, LocalOpenAIServer

pytest.importorskip("litellm")

PRICED = "gpt-3.5-turbo-instruct"  # a model litellm has a price for, served locally


def _letters(text: str) -> dict[str, float] | None:
    """After the answer cue, A/B/C among the top log-probabilities (so no echo is needed)."""
    return (
        {" A": 0.4, "A": 0.1, " B": 0.2, "B": 0.1, " C": 0.05, "C": 0.05} if text.rstrip().endswith("Answer:") else None
    )


def test_an_allocation_run_on_a_web_api_reports_and_stores_what_it_paid(monkeypatch, tmp_path, capsys):
    from folkscope.engine.backends.api import LiteLLMBackend

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    pool = draw_pools(bloomberg_resumes("software engineer", names_per_group=1).frame, rounds=1, pool_size=3, seed=0)
    config = AllocationConfig(
        engine=EngineConfig(model=PRICED, backend="litellm"),
        mode="pairwise",
        names_per_group=1,
        rounds=1,
        pool_size=3,
        k_max=1,
        n_bootstrap=0,
        chat=False,
        reference=pool["candidate_id"].iloc[0].split("/")[1],
    )
    source = FakeSource(FakeBackend(next_token_probs=_letters), model_id=PRICED)
    with LocalOpenAIServer(source, faults=FaultPlan(schedule={0: "429"}), max_lifetime=120) as url:
        backend = LiteLLMBackend(f"text-completion-openai/{PRICED}", api_base=url, backoff_base=0.01, max_concurrency=2)
        engine = Engine(backend, cache=ResultCache(tmp_path / "cache"), progress=False)
        result = run_allocation(config, tmp_path / "results", engine=engine)
        engine.close()
    session = backend.stats
    assert (
        session.api_calls == 7 and session.retries == 1 and session.cost_usd > 0
    )  # 3 pairs x 2 orders, one 429 retried
    for name in ("scoring.json", "metrics.json"):
        stored = json.loads((result.folder / name).read_text())
        billed = stored["engine_stats"]["billed"]
        assert stored["engine_stats"]["billed_answers"] == 6 and billed["api_calls"] == 6
        assert (
            billed["cost_usd"] == pytest.approx(session.cost_usd) and billed["prompt_tokens"] == session.prompt_tokens
        )
        assert stored["backend_stats"]["retries"] == 1 and stored["backend_stats"]["api_calls"] == 7
    print_summary(result.folder, result.metrics)
    out = " ".join(capsys.readouterr().out.split())  # lines folded to the terminal, read as one text
    line = out[out.index("web API:") :]
    assert f"this run's 6 answers cost ${session.cost_usd:.4f}" in line and "7 calls for 6 answers, 1 retries" in line
    assert rescore(result.folder)["engine_stats"] == result.metrics["engine_stats"]  # rescore keeps what was paid
    assert "web API: this run" in (result.folder / "report.html").read_text()


def test_a_local_run_stores_its_counts_and_bills_nothing(tmp_path, capsys):
    config = AllocationConfig(
        engine=EngineConfig(model="fake", backend="fake"), names_per_group=1, rounds=2, k_max=1, n_bootstrap=0
    )
    result = run_allocation(config, tmp_path, engine=Engine(FakeBackend(), cache=None, progress=False))
    stored = json.loads((result.folder / "metrics.json").read_text())
    assert (
        stored["engine_stats"]["computed"] == 8 and "billed" not in stored["engine_stats"] and "backend_stats" in stored
    )
    print_summary(result.folder, result.metrics)
    assert "web API" not in capsys.readouterr().out
