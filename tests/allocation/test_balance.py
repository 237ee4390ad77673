"""Group and resume are never confounded: every group meets the same resumes, as candidates and in the pools drawn.

With the bundled Bloomberg resumes and fewer than 8 names per group, each group used to get its own
subset of resumes (candidate j of group g held resume (j + g) % 8), so a gap between groups was a gap
between resumes. The resume is read from the candidate id (``.../resume-<r>``), as old and new code write it.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.allocation import AllocationConfig, CandidateSet, bloomberg_resumes, draw_pools, run_allocation
from folkscope.engine import Engine, EngineConfig
from folkscope.engine.backends.fake import FakeBackend
from folkscope.errors import DataError
from folkscope.runs import read_table


def _resume(ids: pd.Series) -> pd.Series:
    return ids.str.rsplit("/", n=1).str[1]


def _seen(frame: pd.DataFrame, ids: pd.Series) -> dict[str, Counter]:
    """Per group, how often each resume is seen among ``ids`` (candidate ids, repeated as often as they appear)."""
    group = frame.set_index("candidate_id").loc[ids.to_numpy(), "group"].to_numpy()
    return {g: Counter(part) for g, part in _resume(ids).groupby(group)}


def test_with_the_default_settings_every_group_sees_the_same_resumes():
    config = AllocationConfig()
    frame = bloomberg_resumes("software engineer", names_per_group=config.names_per_group, seed=config.seed).frame
    candidates = _seen(frame, frame["candidate_id"])
    assert len(candidates) == 8 and len({tuple(sorted(c.items())) for c in candidates.values()}) == 1
    pools = draw_pools(frame, rounds=config.rounds, pool_size=config.pool_size, seed=config.seed)
    appearances = _seen(frame, pools["candidate_id"])
    assert len({tuple(sorted(c.items())) for c in appearances.values()}) == 1
    assert sum(next(iter(appearances.values())).values()) == config.rounds


def test_a_run_scores_every_group_on_the_same_resumes(tmp_path):
    engine = Engine(FakeBackend(), cache=None)
    config = AllocationConfig(engine=EngineConfig(model="fake", backend="fake"), rounds=6, k_max=1, n_bootstrap=0)
    result = run_allocation(config, tmp_path, engine=engine)
    scores = read_table(result.folder, "scores")
    seen = {g: tuple(sorted(Counter(_resume(part["candidate_id"])).items())) for g, part in scores.groupby("group")}
    assert len(set(seen.values())) == 1
    candidates = read_table(result.folder, "candidates")
    assert (candidates["item"] == _resume(candidates["candidate_id"])).all()


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 20), rounds=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_any_names_rounds_and_seed_stay_balanced(n, rounds, seed):
    frame = bloomberg_resumes("retail", names_per_group=n, seed=seed).frame
    assert len({tuple(sorted(c.items())) for c in _seen(frame, frame["candidate_id"]).values()}) == 1
    pools = draw_pools(frame, rounds=rounds, seed=seed)
    assert pools.groupby("pool").size().eq(8).all()
    assert len({tuple(sorted(c.items())) for c in _seen(frame, pools["candidate_id"]).values()}) == 1
    if n % 8 == 0:  # the audit's design: a pool of 8 holds the 8 resumes, one name of every group each (in whole blocks
        # of n rounds: a last, shorter block of m < 8 rounds can only keep the balance on m resumes)
        whole = pools[pools["pool"] < rounds // n * n]
        assert _resume(whole["candidate_id"]).groupby(whole["pool"].to_numpy()).nunique().eq(8).all()


def _unbalanced() -> CandidateSet:
    frame = pd.DataFrame(
        {
            "candidate_id": list("abcd"),
            "group": ["x", "x", "y", "y"],
            "qualified": 1,
            "name": ["Ann", "Bo", "Cy", "Di"],
            "text": ["r0 Ann", "r1 Bo", "r1 Cy", "r2 Di"],
            "item": ["resume-0", "resume-1", "resume-1", "resume-2"],
        }
    )
    return CandidateSet("resumes", "job", "A job.", frame, {})


def test_a_design_that_cannot_be_balanced_is_one_clear_line():
    cs = _unbalanced()
    for call in (
        cs.check_balanced,
        lambda: draw_pools(cs.frame, rounds=4),
        lambda: draw_pools(cs.frame, rounds=4, pool_size=2),
    ):
        with pytest.raises(
            DataError, match="group 'x' holds items resume-0, resume-1 but group 'y' holds resume-1, resume-2"
        ) as info:
            call()
        assert "\n" not in str(info.value) and "confounded" in str(info.value)
    half = cs.frame.assign(item=["resume-0", "", "resume-0", ""])
    with pytest.raises(DataError, match="2 candidate.s. have no item while others do"):
        draw_pools(half, rounds=2)
