"""The result cache under damage: what can be read is kept, what cannot is recomputed, nothing is deleted whole.

Each case reproduces a defect found by fault injection: random bytes in the
middle of the file (was a raw sqlite3.DatabaseError), a truncated file or a
damaged header (the only fix offered was deleting every paid answer), a row
edited to valid JSON with wrong numbers (used silently), and the file deleted
during a run (unnoticed).
"""

from __future__ import annotations

import json
import os
import sqlite3

import numpy as np
import pytest

from folkscope.engine import Engine, ResultCache, ScoreRequest
from folkscope.engine.backends.fake import FakeBackend

REQS = [
    ScoreRequest(f"Row {i}: a fairly long text so that the store spans many pages {i * 7919}. Answer:", ("A", "B"))
    for i in range(3000)
]


def fresh(tmp_path) -> Engine:
    return Engine(FakeBackend(batch_tokens=20_000), cache=ResultCache(tmp_path), prompt_version="v1", progress=False)


@pytest.fixture()
def filled(tmp_path):
    """A store holding the answers to REQS, checkpointed into the main file, and the answers themselves."""
    engine = fresh(tmp_path)
    answers = engine.score(REQS)
    engine.cache._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.close()
    return tmp_path, answers


def rerun(folder):
    engine = fresh(folder)
    out = engine.score(REQS)
    return engine, out


def test_random_bytes_in_the_middle_keep_the_rest_and_recompute_the_lost(filled, caplog):
    folder, answers = filled
    path = folder / "results.sqlite"
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.seek(size // 2)
        fh.write(np.random.default_rng(0).bytes(2048))
    engine, out = rerun(folder)
    assert out == answers  # the same numbers
    recomputed = engine.stats.computed
    assert 0 < recomputed < len(REQS) // 4, recomputed  # most answers survived
    assert engine.stats.cached + recomputed == len(REQS)
    ((aside, kept),) = engine.cache.salvaged
    assert kept + recomputed >= len(REQS) - engine.stats.damaged and aside.exists()
    assert "was damaged" in caplog.text
    engine.close()
    engine, again = rerun(folder)  # and the repaired store now holds everything
    assert again == answers and engine.stats.computed == 0


def test_a_truncated_file_keeps_its_readable_rows(filled):
    folder, answers = filled
    path = folder / "results.sqlite"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    engine, out = rerun(folder)
    assert out == answers and 0 < engine.stats.cached < len(REQS)


def test_a_damaged_header_is_moved_aside_and_everything_recomputed(filled):
    folder, answers = filled
    path = folder / "results.sqlite"
    with open(path, "r+b") as fh:
        fh.write(b"\x00" * 100)
    engine, out = rerun(folder)
    assert out == answers and engine.stats.computed == len(REQS)
    assert engine.cache.salvaged and engine.cache.salvaged[0][0].exists()


def test_a_row_edited_to_other_valid_numbers_is_caught_by_its_checksum(filled):
    folder, answers = filled
    with sqlite3.connect(folder / "results.sqlite") as conn:
        key, text = conn.execute("SELECT key, result FROM results LIMIT 1").fetchone()
        data = json.loads(text)
        data["logprobs"] = [-0.01, -5.0]
        conn.execute("UPDATE results SET result = ? WHERE key = ?", (json.dumps(data), key))
    engine, out = rerun(folder)
    assert out == answers and engine.stats.damaged == 1 and engine.stats.computed == 1


def test_an_implausible_entry_with_a_valid_checksum_is_recomputed(filled):
    """Written by a buggy writer with a correct checksum: log-probabilities above 0 are still refused."""
    from folkscope.engine.cache import _checksum

    folder, answers = filled
    with sqlite3.connect(folder / "results.sqlite") as conn:
        key, text = conn.execute("SELECT key, result FROM results LIMIT 1").fetchone()
        data = json.loads(text)
        data["logprobs"] = [0.7, -0.1]
        text = json.dumps(data)
        conn.execute("UPDATE results SET result = ?, checksum = ? WHERE key = ?", (text, _checksum(key, text), key))
    engine, out = rerun(folder)
    assert out == answers and engine.stats.damaged == 1 and engine.stats.computed == 1


def test_deleting_the_cache_during_a_run_is_noticed_and_the_answers_written_again(tmp_path, caplog):
    engine = Engine(FakeBackend(batch_tokens=400), cache=ResultCache(tmp_path), prompt_version="v1", progress=False)
    original = engine.cache.put_many
    calls = []

    def put_many(items):
        calls.append(1)
        if len(calls) == 3:  # mid-run, after two batches were saved
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(f"{engine.cache.path}{suffix}"):
                    os.remove(f"{engine.cache.path}{suffix}")
        return original(items)

    engine.cache.put_many = put_many
    answers = engine.score(REQS[:200])
    assert engine.cache.recreated == 1 and "deleted or replaced while this run wrote to it" in caplog.text
    engine.close()
    engine, out = Engine(FakeBackend(), cache=ResultCache(tmp_path), prompt_version="v1", progress=False), None
    out = engine.score(REQS[:200])
    assert out == answers and engine.stats.computed == 0  # nothing of this run was lost


def test_a_store_from_before_checksums_is_adopted_not_discarded(tmp_path):
    with sqlite3.connect(tmp_path / "results.sqlite") as conn:
        conn.execute(
            "CREATE TABLE results (key TEXT PRIMARY KEY, namespace TEXT NOT NULL, kind TEXT NOT NULL,"
            " result TEXT NOT NULL, created REAL NOT NULL)"
        )
        conn.execute("INSERT INTO results VALUES ('k', 'ns', 'score', ?, 0.0)", ('{"v": 1}',))
    with ResultCache(tmp_path) as cache:
        assert cache.get_many(["k"]) == {"k": {"v": 1}} and cache.damaged == 0
