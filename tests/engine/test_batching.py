"""The planner on hand-built token sequences (no model): coverage, budgets, sharing, back-off."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.engine.backoff import AdaptiveBudget, Planned, is_out_of_memory, run_with_backoff
from folkscope.engine.batching import Batch, Unit, lcp, plan_batches
from folkscope.errors import BackendError, ConfigError


def reconstruct(batch: Batch, row: int) -> tuple[int, ...]:
    """Follow a leaf row back through its parents: the full token sequence it sees."""
    seq = batch.passes[-1].segments[row]
    parent = batch.passes[-1].parents[row] if batch.passes[-1].parents else None
    for p in reversed(batch.passes[:-1]):
        seq = p.segments[parent] + seq
        parent = p.parents[parent] if p.parents else None
    return seq


def check_plan(units: list[Unit], batches: list[Batch]) -> None:
    seen = [u for b in batches for u in b.units]
    assert sorted(seen) == list(range(len(units))), "every unit exactly once"
    completed = [j for b in batches for j in b.complete]
    assert sorted(completed) == sorted({u.job for u in units}), "every job completes exactly once"
    for b in batches:
        for row, (u, cut) in enumerate(zip(b.units, b.cuts)):
            assert reconstruct(b, row) == units[u].tokens
            assert cut <= units[u].shareable
            assert len(b.passes[-1].segments[row]) >= 1
        for p in b.passes[:1]:  # the first pass has no past: none of its rows may be empty
            assert all(len(s) > 0 for s in p.segments)


def acs_like(n_rows: int = 30, seed: int = 0) -> list[Unit]:
    rng = random.Random(seed)
    desc = tuple(range(1000, 1060))
    units = []
    for r in range(n_rows):
        row = tuple(rng.randrange(2000, 3000) for _ in range(rng.randint(120, 180)))
        for o in range(2):
            toks = desc + row + tuple(rng.randrange(3000, 4000) for _ in range(20))
            units.append(Unit(2 * r + o, toks, len(toks) - 1))
    return units


def test_lcp():
    assert lcp((), (1,)) == 0
    assert lcp(tuple(range(200)), tuple(range(150)) + (7,)) == 150
    assert lcp((1, 2), (1, 2)) == 2


def test_unit_checks_shareable():
    with pytest.raises(ConfigError):
        Unit(0, (1, 2), 2)


def test_acs_like_plan_shares_description_and_rows():
    units = acs_like()
    batches = plan_batches(units, batch_tokens=4096)
    check_plan(units, batches)
    total = sum(len(u.tokens) for u in units)
    run = sum(b.tokens_run for b in batches)
    # description once per batch, each row once, each ordering's question once
    assert run / total < 0.5
    assert all(len(b.passes) == 3 for b in batches)
    assert all(b.cost <= 4096 for b in batches)
    # the two orderings of a row end up in the same cluster (the leaf parents agree)
    for b in batches:
        parents = dict(zip(b.units, b.passes[-1].parents))
        for u in b.units:
            if u % 2 == 0:
                assert parents[u] == parents[u + 1]


def test_flat_plan_has_no_reuse_and_sorts_by_length():
    units = acs_like()
    batches = plan_batches(units, batch_tokens=4096, share_prefixes=False)
    check_plan(units, batches)
    assert all(len(b.passes) == 1 for b in batches)
    assert sum(b.tokens_run for b in batches) == sum(len(u.tokens) for u in units)
    widths = [b.passes[0].width for b in batches]
    assert widths == sorted(widths)


def test_multi_unit_job_shares_its_prompt():
    prompt = tuple(range(100))
    units = [Unit(0, prompt, 99), Unit(0, prompt + (500, 501), 99), Unit(0, prompt + (600,), 99)]
    (batch,) = plan_batches(units, batch_tokens=10_000)
    check_plan(units, [batch])
    assert batch.tokens_run < 110
    assert batch.complete == (0,)


def test_jobs_are_not_split_unless_too_big():
    units = acs_like(20)
    for budget in (700, 1500, 3000):
        batches = plan_batches(units, batch_tokens=budget)
        check_plan(units, batches)
        for b in batches:
            assert set(b.jobs) == set(b.complete)


def test_oversized_job_is_split_by_units_and_completes_once():
    prompt = tuple(range(50))
    units = [Unit(7, prompt + tuple(range(100 + 10 * k, 110 + 10 * k)), 49) for k in range(12)]
    batches = plan_batches(units, batch_tokens=200)
    check_plan(units, batches)
    assert len(batches) > 1
    assert [b.complete for b in batches] == [()] * (len(batches) - 1) + [(7,)]
    flat = plan_batches(units, batch_tokens=200, share_prefixes=False)
    check_plan(units, flat)
    assert [b.complete for b in flat][-1] == (7,)


def test_single_token_prompts_do_not_make_empty_first_pass_rows():
    units = [Unit(0, (5,), 0), Unit(1, (5,), 0), Unit(2, (6, 7), 1)]
    check_plan(units, plan_batches(units, batch_tokens=100, min_shared=1))


def test_plan_is_deterministic():
    units = acs_like(15, seed=3)
    assert plan_batches(units, batch_tokens=2000) == plan_batches(list(units), batch_tokens=2000)


def test_invalid_budget():
    with pytest.raises(ConfigError):
        plan_batches([Unit(0, (1, 2), 1)], batch_tokens=0)


token_seqs = st.lists(st.integers(0, 5), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), token_seqs, st.lists(token_seqs, min_size=1, max_size=3)), min_size=1, max_size=12),
    st.integers(8, 300),
    st.booleans(),
    st.integers(1, 8),
)
def test_any_plan_covers_everything_exactly(jobs, budget, share, min_shared):
    prefix_pool = [tuple(range(100, 100 + 10 * k)) for k in range(7)]
    units = []
    for job, (pfx, body, tails) in enumerate(jobs):
        prompt = prefix_pool[pfx] + tuple(body)
        for tail in tails:
            units.append(Unit(job, prompt + tuple(tail[:-1]), len(prompt) - 1))
    check_plan(units, plan_batches(units, batch_tokens=budget, share_prefixes=share, min_shared=min_shared))


# ------------------------------------------------------------------ back-off


def test_is_out_of_memory():
    class OutOfMemoryError(RuntimeError):
        pass

    assert is_out_of_memory(OutOfMemoryError("CUDA error"))
    assert is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate"))
    assert is_out_of_memory(MemoryError())
    assert not is_out_of_memory(RuntimeError("shape mismatch"))
    assert not is_out_of_memory(KeyError("out of memory"))


def test_budget_shrinks_and_stops():
    b = AdaptiveBudget(1000, minimum=16)
    assert b.shrink(1000) and b.tokens == 500
    assert b.shrink(300) and b.tokens == 150
    assert not AdaptiveBudget(16, minimum=16).shrink(16)


def _plan_chunks(jobs, budget):
    size = max(1, budget // 10)
    return [Planned(list(jobs[i : i + size]), tuple(jobs[i : i + size]), 10 * len(jobs[i : i + size]), len(jobs[i : i + size]))
            for i in range(0, len(jobs), size)]  # fmt: skip


def test_backoff_shrinks_replans_and_loses_nothing():
    ran = []

    def execute(batch):
        if len(batch) > 3:
            raise RuntimeError("CUDA out of memory (fake)")
        ran.append(list(batch))
        return batch

    budget = AdaptiveBudget(100, minimum=10)
    out = [r for _, r in run_with_backoff(list(range(20)), plan=_plan_chunks, execute=execute, budget=budget)]
    assert sorted(j for r in out for j in r) == list(range(20))
    assert budget.tokens <= 30 and budget.shrinks >= 2


def test_backoff_skips_done_batches_and_reraises_other_errors():
    calls = []
    out = list(
        run_with_backoff(range(6), plan=_plan_chunks, execute=lambda b: calls.append(b) or b,
                         budget=AdaptiveBudget(20), done=lambda j: j < 4)  # fmt: skip
    )
    assert calls == [[4, 5]] and len(out) == 1

    def broken(batch):
        raise ValueError("not memory")

    with pytest.raises(ValueError):
        list(run_with_backoff(range(4), plan=_plan_chunks, execute=broken, budget=AdaptiveBudget(20)))


def test_backoff_gives_up_on_a_single_row():
    def always_oom(batch):
        raise RuntimeError("out of memory")

    with pytest.raises(BackendError, match="cannot be split"):
        list(run_with_backoff(range(3), plan=_plan_chunks, execute=always_oom, budget=AdaptiveBudget(40, minimum=10)))
