"""The on-disk result store: append, reload, namespaces, damaged entries."""

from __future__ import annotations

import sqlite3

import pytest

from folkscope.engine.cache import ResultCache, default_cache_dir, entry_key, namespace_key
from folkscope.errors import BackendError


def test_put_and_get_round_trip(tmp_path):
    with ResultCache(tmp_path) as cache:
        assert (
            cache.put_many(
                [("k1", "ns", "score", {"logprobs": [-0.5]}), ("k2", "ns", "score", {"logprobs": [-1e-300]})]
            )
            == 2
        )
        assert cache.get_many(["k1", "k2", "k3"]) == {"k1": {"logprobs": [-0.5]}, "k2": {"logprobs": [-1e-300]}}
        assert cache.count() == 2 and cache.count("ns") == 2 and cache.count("other") == 0


def test_floats_survive_exactly(tmp_path):
    values = [0.1 + 0.2, -1.0 / 3.0, -7.450580596923828e-09, float("-inf")]
    with ResultCache(tmp_path) as cache:
        cache.put_many([("k", "ns", "score", {"v": values})])
    with ResultCache(tmp_path) as cache:  # reopened: another process would see the same
        assert cache.get_many(["k"])["k"]["v"] == values


def test_many_keys_are_chunked(tmp_path):
    with ResultCache(tmp_path) as cache:
        cache.put_many((f"k{i}", "ns", "score", {"i": i}) for i in range(1234))
        got = cache.get_many([f"k{i}" for i in range(1300)])
    assert len(got) == 1234 and got["k1000"] == {"i": 1000}


def test_unreadable_entry_is_treated_as_missing_and_replaced(tmp_path):
    with ResultCache(tmp_path) as cache:
        cache.put_many([("k", "ns", "score", {"ok": 1})])
    con = sqlite3.connect(tmp_path / "results.sqlite")
    con.execute("UPDATE results SET result = '{\"truncated' WHERE key = 'k'")
    con.commit()
    con.close()
    with ResultCache(tmp_path) as cache:
        assert cache.get_many(["k"]) == {}
        cache.put_many([("k", "ns", "score", {"ok": 2})])
        assert cache.get_many(["k"]) == {"k": {"ok": 2}}


def test_failed_transaction_writes_nothing(tmp_path):
    with ResultCache(tmp_path) as cache:
        with pytest.raises(TypeError):
            cache.put_many([("a", "ns", "score", {"x": 1}), ("b", "ns", "score", {"x": object()})])
        assert cache.count() == 0


def test_a_file_that_is_no_database_is_moved_aside_not_an_error(tmp_path, caplog):
    (tmp_path / "results.sqlite").write_bytes(b"this is not a database" * 100)
    with ResultCache(tmp_path) as cache:
        assert cache.count() == 0 and len(cache.salvaged) == 1
        aside, kept = cache.salvaged[0]
        assert kept == 0 and aside.read_bytes().startswith(b"this is not a database")  # kept for inspection
        cache.put_many([("k", "ns", "score", {"v": 1})])
        assert cache.get_many(["k"]) == {"k": {"v": 1}}
    assert "was damaged" in caplog.text and "moved the damaged one to" in caplog.text


def test_namespace_key_is_order_independent_and_sensitive():
    base = {"backend": {"model": {"name": "m", "revision": "r1"}, "dtype": "float32"}, "prompt_version": "v1"}
    same = {"prompt_version": "v1", "backend": {"dtype": "float32", "model": {"revision": "r1", "name": "m"}}}
    assert namespace_key(base) == namespace_key(same)
    assert namespace_key(base) != namespace_key({**base, "prompt_version": "v2"})
    assert entry_key("ns1", "req") != entry_key("ns2", "req")


def test_default_dir_is_under_folkscope_home(monkeypatch, tmp_path):
    monkeypatch.setenv("FOLKSCOPE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "engine-cache"


def test_process_killed_inside_a_write_leaves_only_whole_batches(tmp_path):
    """SIGKILL between INSERT and COMMIT: the torn batch is absent on reload, earlier batches intact."""
    import signal
    import subprocess
    import sys

    code = (
        "import os, signal, sys\n"
        "from folkscope.engine.cache import ResultCache\n"
        "cache = ResultCache(sys.argv[1])\n"
        "cache.put_many([('whole', 'ns', 'score', {'v': 1})])\n"
        "cache._conn.execute('BEGIN IMMEDIATE')\n"
        "cache._conn.executemany('INSERT INTO results (key, namespace, kind, result, created, checksum) VALUES (?, ?, ?, ?, ?, ?)', [(f'torn{i}', 'ns', 'score', '{}', 0.0, 'x') for i in range(500)])\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True)
    assert proc.returncode == -signal.SIGKILL
    assert any(p.name.startswith("results.sqlite") for p in tmp_path.iterdir())
    with ResultCache(tmp_path) as cache:
        assert cache.count() == 1
        assert cache.get_many(["whole", "torn0"]) == {"whole": {"v": 1}}
        cache.put_many([("after", "ns", "score", {"v": 2})])  # and the store stays writable
        assert cache.count() == 2


def test_a_store_locked_by_another_process_is_an_error_never_a_repair(tmp_path):
    """'database is locked' is a DatabaseError too: it must not move another process's live store aside."""
    with ResultCache(tmp_path) as holder, ResultCache(tmp_path, timeout=0.05) as other:
        holder.put_many([("k", "ns", "score", {"v": 1})])
        holder._conn.execute("BEGIN IMMEDIATE")  # another run mid-write
        with pytest.raises(BackendError, match="locked by another process"):
            other.put_many([("k2", "ns", "score", {"v": 2})])
        holder._conn.execute("COMMIT")
        assert not other.salvaged and other.get_many(["k"]) == {"k": {"v": 1}}
    assert sorted(p.name for p in tmp_path.iterdir() if "damaged" in p.name) == []
