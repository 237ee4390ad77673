"""The planner on hand-built token sequences (no model): coverage, budgets, sharing, back-off."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.engine.backoff import AdaptiveBudget, Planned, is_out_of_memory, run_with_backoff
from folkscope.engine.batching import Batch, Unit, _split_by_width, lcp, plan_batches, trie_tokens
from folkscope.errors import BackendError, ConfigError


def reconstruct(batch: Batch, i: int) -> tuple[int, ...]:
    """Follow the leaf row of the batch's ``i``-th unit back through its parents: the full sequence it sees."""
    k, row = batch.leaves[i]
    seq: tuple[int, ...] = ()
    while True:
        seq = batch.passes[k].segments[row] + seq
        parent = batch.passes[k].parents[row]
        if parent is None:
            return seq
        assert parent[0] < k, "a parent runs in an earlier pass"
        k, row = parent


def check_plan(units: list[Unit], batches: list[Batch], budget: int | None = None) -> None:
    seen = [u for b in batches for u in b.units]
    assert sorted(seen) == list(range(len(units))), "every unit exactly once"
    completed = [j for b in batches for j in b.complete]
    assert sorted(completed) == sorted({u.job for u in units}), "every job completes exactly once"
    for b in batches:
        for i, u in enumerate(b.units):
            assert reconstruct(b, i) == units[u].tokens
            assert b.cuts[i] <= units[u].shareable
            k, row = b.leaves[i]
            assert len(b.passes[k].segments[row]) == len(units[u].tokens) - b.cuts[i]
        for p in b.passes:
            assert len(p.parents) == p.rows
            assert all(len(s) > 0 for s in p.segments), "no empty rows"
        assert set(b.complete) <= set(b.jobs)
        if budget is not None and len(b.jobs) > 1:
            assert b.cost <= budget


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


def test_acs_like_plan_runs_the_prefix_tree():
    units = acs_like()
    batches = plan_batches(units, batch_tokens=4096)
    check_plan(units, batches, 4096)
    desc = units[0].tokens[:60]
    # every batch starts with the description alone, the same tokens each time (a backend keeps its cache)
    assert all(b.passes[0].segments == (desc,) and b.passes[0].parents == (None,) for b in batches)
    run_after_first_description = sum(b.tokens_run for b in batches) - 60 * (len(batches) - 1)
    assert run_after_first_description <= 1.01 * trie_tokens(u.tokens for u in units)
    # the two orderings of a row continue the same row node
    for b in batches:
        leaf_parent = {u: b.passes[k].parents[row] for u, (k, row) in zip(b.units, b.leaves)}
        for u in b.units:
            if u % 2 == 0:
                assert leaf_parent[u] == leaf_parent[u + 1] is not None


def test_tree_levels_run_deeper_prefixes_once():
    """Rows sharing their first features share a node below the description; exactly the trie is run."""
    desc = tuple(range(100, 120))
    units = []
    for r, (age, rest) in enumerate([(1, 30), (1, 31), (1, 32), (2, 33), (2, 34), (3, 35)]):
        row = (age,) * 12 + (rest,) * 40
        for o in range(2):
            toks = desc + row + (50 + o,) * 10
            units.append(Unit(2 * r + o, toks, len(toks) - 1))
    (batch,) = plan_batches(units, batch_tokens=100_000, pass_overhead=0)
    check_plan(units, [batch])
    assert batch.tokens_run == trie_tokens(u.tokens for u in units)
    # description / age nodes / row nodes / leaves; age 3 has one row, so its row node continues the
    # description directly and is 12 tokens longer: with passes free, it runs in a pass of its own
    assert [(p.rows, p.width) for p in batch.passes] == [(1, 20), (2, 12), (5, 40), (1, 52), (12, 10)]
    assert sorted(batch.passes[2].parents) == [(1, 0), (1, 0), (1, 0), (1, 1), (1, 1)]
    assert batch.passes[3].parents == ((0, 0),)


def test_a_level_not_worth_a_pass_is_merged_into_the_next():
    """A level of short shared prefixes saves fewer tokens than a pass costs: its tokens go to its children."""
    desc = tuple(range(100, 120))
    units = []
    for r, (age, rest) in enumerate([(1, 30), (1, 31), (2, 33), (2, 34)]):
        row = (age,) * 9 + (rest,) * 40
        units.append(Unit(r, desc + row + (7,), len(desc) + len(row)))
    deep = plan_batches(units, batch_tokens=100_000, pass_overhead=0)[0]
    flat = plan_batches(units, batch_tokens=100_000, pass_overhead=100)[0]
    check_plan(units, [deep])
    check_plan(units, [flat])
    assert len(deep.passes) == 3 and len(flat.passes) == 2
    assert flat.tokens_run == deep.tokens_run + 2 * 9


def test_rows_of_very_different_lengths_go_in_different_passes():
    desc = tuple(range(100, 120))
    short = [Unit(i, desc + (i,) * 3, 22) for i in range(6)]
    long = [Unit(6 + i, desc + (50 + i,) * 200, 219) for i in range(2)]
    units = short + long
    (batch,) = plan_batches(units, batch_tokens=100_000)
    check_plan(units, [batch])
    assert [(p.rows, p.width) for p in batch.passes] == [(1, 20), (6, 3), (2, 200)]
    (together,) = plan_batches(units, batch_tokens=100_000, pass_overhead=10_000)
    assert [(p.rows, p.width) for p in together.passes] == [(1, 20), (8, 200)]


def test_flat_plan_has_no_reuse_and_sorts_by_length():
    units = acs_like()
    batches = plan_batches(units, batch_tokens=4096, share_prefixes=False)
    check_plan(units, batches, 4096)
    assert all(len(b.passes) == 1 for b in batches)
    assert sum(b.tokens_run for b in batches) == sum(len(u.tokens) for u in units)
    widths = [b.passes[0].width for b in batches]
    assert widths == sorted(widths)


def test_multi_unit_job_shares_its_prompt():
    prompt = tuple(range(100))
    units = [Unit(0, prompt, 99), Unit(0, prompt + (500, 501), 99), Unit(0, prompt + (600,), 99)]
    (batch,) = plan_batches(units, batch_tokens=10_000)
    check_plan(units, [batch])
    assert batch.tokens_run == 99 + 1 + 3 + 2
    assert batch.complete == (0,)


def test_jobs_are_not_split_unless_too_big():
    units = acs_like(20)
    for budget in (700, 1500, 3000):
        batches = plan_batches(units, batch_tokens=budget)
        check_plan(units, batches, budget)
        for b in batches:
            assert set(b.jobs) == set(b.complete)


def test_oversized_job_is_split_by_units_and_completes_once():
    prompt = tuple(range(50))
    units = [Unit(7, prompt + tuple(range(100 + 10 * k, 110 + 10 * k)), 49) for k in range(12)]
    batches = plan_batches(units, batch_tokens=200)
    check_plan(units, batches)
    assert len(batches) > 1
    assert [b.complete for b in batches] == [()] * (len(batches) - 1) + [(7,)]
    assert all(b.jobs == (7,) for b in batches)
    flat = plan_batches(units, batch_tokens=200, share_prefixes=False)
    check_plan(units, flat)
    assert [b.complete for b in flat][-1] == (7,)


def test_single_token_prompts_do_not_make_empty_rows():
    units = [Unit(0, (5,), 0), Unit(1, (5,), 0), Unit(2, (6, 7), 1)]
    check_plan(units, plan_batches(units, batch_tokens=100, min_shared=1))


def test_plan_is_deterministic():
    units = acs_like(15, seed=3)
    assert plan_batches(units, batch_tokens=2000) == plan_batches(list(units), batch_tokens=2000)


@pytest.mark.parametrize("option", [{"batch_tokens": 0}, {"min_shared": 0}, {"pass_overhead": -1}])
def test_invalid_options(option):
    with pytest.raises(ConfigError, match=next(iter(option))):
        plan_batches([Unit(0, (1, 2), 1)], **{"batch_tokens": 10, **option})


def test_split_by_width_is_the_best_contiguous_split():
    assert _split_by_width([], 5) == []
    assert _split_by_width([4], 5) == [[0]]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=8), st.integers(0, 40))
def test_split_by_width_matches_brute_force(lengths, overhead):
    lengths = sorted(lengths)
    n = len(lengths)

    def cost(groups):
        return sum(len(g) * lengths[g[-1]] + overhead for g in groups)

    best = min(
        cost([list(range(a, b)) for a, b in zip((0, *cuts), (*cuts, n))])
        for k in range(n)
        for cuts in itertools.combinations(range(1, n), k)
    )
    groups = _split_by_width(lengths, overhead)
    assert [i for g in groups for i in g] == list(range(n))
    assert cost(groups) == best


token_seqs = st.lists(st.integers(0, 5), min_size=1, max_size=30)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), token_seqs, st.lists(token_seqs, min_size=1, max_size=3)), min_size=1, max_size=12
    ),
    st.integers(8, 300),
    st.booleans(),
    st.integers(1, 8),
    st.integers(0, 64),
)
def test_any_plan_covers_everything_exactly(jobs, budget, share, min_shared, overhead):
    prefix_pool = [tuple(range(100, 100 + 10 * k)) for k in range(7)]
    units = []
    for job, (pfx, body, tails) in enumerate(jobs):
        prompt = prefix_pool[pfx] + tuple(body)
        for tail in tails:
            units.append(Unit(job, prompt + tuple(tail[:-1]), len(prompt) - 1))
    batches = plan_batches(
        units, batch_tokens=budget, share_prefixes=share, min_shared=min_shared, pass_overhead=overhead
    )
    check_plan(units, batches, budget)
    assert sum(b.tokens_run for b in batches) <= sum(len(u.tokens) for u in units)


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
    return [
        Planned(
            list(jobs[i : i + size]), tuple(jobs[i : i + size]), 10 * len(jobs[i : i + size]), len(jobs[i : i + size])
        )
        for i in range(0, len(jobs), size)
    ]


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
        run_with_backoff(
            range(6),
            plan=_plan_chunks,
            execute=lambda b: calls.append(b) or b,
            budget=AdaptiveBudget(20),
            done=lambda j: j < 4,
        )
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
