"""A full disk or a read-only cache is an error, not damage: one line, and every stored answer kept as it was.

Issue 28 (12): a full disk was taken for damage. Every stored answer was
moved to ``results.sqlite.damaged-...``, a 0-byte cache was left, a raw
``sqlite3.OperationalError`` traceback printed, and the next run recomputed
(on a web API: paid for) everything; a read-only cache that needed a write
did the same with a ``PermissionError``. The faults are injected where the
cache opens SQLite (:func:`folkscope.engine.cache._open`): a disk with no
room left is a connection whose ``max_page_count`` is the file's size, a
read-only file one opened ``mode=ro`` (as SQLite opens a file its user may
not write; tests may run as root, whom ``chmod`` does not stop).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from folkscope.cli.main import main
from folkscope.engine import Engine, ResultCache, ScoreRequest
from folkscope.engine import cache as cache_module
from folkscope.engine.backends.fake import FakeBackend
from folkscope.errors import BackendError

OLD = [
    ScoreRequest(f"Row {i}: a text long enough to fill pages of the store {i * 7919}. Answer:", (" A", " B"))
    for i in range(300)
]
NEW = [
    ScoreRequest(f"New row {i}: another text long enough to need more pages {i * 104729}. Answer:", (" A", " B"))
    for i in range(300)
]


def engine_on(folder: Path, **options) -> Engine:
    return Engine(
        FakeBackend(batch_tokens=2000, **options), cache=ResultCache(folder), prompt_version="v1", progress=False
    )


def stored(folder: Path) -> list[tuple]:
    """Every stored answer, byte for byte (read with a connection of the test's own)."""
    with sqlite3.connect(f"file:{folder / 'results.sqlite'}?mode=ro", uri=True) as conn:
        return conn.execute(
            "SELECT key, namespace, kind, result, created, checksum, usage FROM results ORDER BY key"
        ).fetchall()


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith("-shm"))


@pytest.fixture()
def filled(tmp_path):
    engine = engine_on(tmp_path)
    answers = engine.score(OLD)
    engine.close()
    return tmp_path, answers


def no_room_left(monkeypatch) -> None:
    """Every connection the cache opens from now on finds the disk full: the file may not grow by one page."""
    real = cache_module._open

    def full(path, **options):
        conn = real(path, **options)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {max(pages, 1)}")
        return conn

    monkeypatch.setattr(cache_module, "_open", full)


def read_only(monkeypatch) -> None:
    """Every connection the cache opens is read-only, as SQLite opens a file its user may not write."""
    real = cache_module._open
    monkeypatch.setattr(cache_module, "_open", lambda path, **options: real(path, **{**options, "read_only": True}))


def test_a_full_disk_stops_in_one_line_and_keeps_every_stored_answer(filled, monkeypatch):
    folder, answers = filled
    before, listing = stored(folder), files(folder)
    no_room_left(monkeypatch)
    engine = engine_on(folder)
    with pytest.raises(BackendError) as info:
        engine.score(OLD + NEW)
    message = str(info.value)
    assert "\n" not in message and str(folder / "results.sqlite") in message
    assert "disk is full" in message and "free space" in message and "--cache-dir" in message
    assert engine.stats.computed > 0  # it failed on a write, with answers computed, and said so
    engine.close()
    after = stored(folder)  # every stored answer byte-identical: nothing moved aside, nothing rewritten
    assert set(before) <= set(after) and len(after) < len(OLD) + len(NEW)
    assert files(folder) == listing and not list(folder.glob("*.damaged-*"))

    monkeypatch.undo()  # room again: the rerun reuses every stored answer and computes only the new ones
    again = engine_on(folder)
    out = again.score(OLD + NEW)
    assert out[: len(OLD)] == answers and again.stats.cached == len(OLD) and again.stats.computed == len(NEW)
    again.close()


def test_a_read_only_cache_serves_what_it_holds(filled, monkeypatch):
    folder, answers = filled
    before = stored(folder)
    read_only(monkeypatch)
    engine = engine_on(folder)
    assert engine.score(OLD) == answers and engine.stats.computed == 0
    engine.close()
    assert stored(folder) == before


def test_a_read_only_cache_that_needs_a_write_stops_before_computing_anything(filled, monkeypatch):
    folder, _ = filled
    before, listing = stored(folder), files(folder)
    read_only(monkeypatch)
    engine = engine_on(folder)
    with pytest.raises(BackendError) as info:
        engine.score(OLD + NEW)
    message = str(info.value)
    assert "\n" not in message and str(folder / "results.sqlite") in message
    assert "may not be written" in message and "writable" in message and "--cache-dir" in message
    assert engine.backend.stats.requests == 0  # nothing was computed that could not be kept
    engine.close()
    assert stored(folder) == before and files(folder) == listing


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes whatever the modes say")
def test_a_folder_and_file_without_write_permission_stop_in_one_line(filled):
    folder, _ = filled
    before = stored(folder)
    modes = {p: p.stat().st_mode for p in (folder, *folder.iterdir())}
    try:
        for path in modes:
            path.chmod(0o500 if path.is_dir() else 0o400)
        engine = engine_on(folder)
        with pytest.raises(BackendError, match="cannot be written"):
            engine.score(OLD + NEW)
        assert engine.backend.stats.requests == 0
        engine.close()
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    assert stored(folder) == before


def test_a_damaged_cache_on_a_full_disk_is_put_back_as_it_was(filled, monkeypatch):
    """Salvaging damage needs room for the fresh copy: without it, the damaged file goes back untouched."""
    folder, answers = filled
    engine = engine_on(folder)
    engine.cache._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.close()
    path = folder / "results.sqlite"
    with open(path, "r+b") as fh:
        fh.seek(path.stat().st_size // 2)
        fh.write(np.random.default_rng(0).bytes(2048))
    damaged = path.read_bytes()
    real = cache_module._open

    def full_when_fresh(p, **options):  # the damaged file opens; a fresh one cannot get its first table page
        conn = real(p, **options)
        if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
            conn.execute("PRAGMA max_page_count = 1")
        return conn

    monkeypatch.setattr(cache_module, "_open", full_when_fresh)
    with pytest.raises(BackendError, match="disk is full") as info:
        engine_on(folder).score(OLD)
    assert "\n" not in str(info.value)
    assert path.read_bytes() == damaged and not list(folder.glob("*.damaged-*"))

    monkeypatch.undo()  # with room, the salvage of the same file goes as it always did
    engine = engine_on(folder)
    assert engine.score(OLD) == answers and engine.cache.salvaged and engine.stats.cached > len(OLD) // 2
    engine.close()


def test_a_folder_that_may_not_be_written_keeps_a_damaged_cache_where_it_is(filled, monkeypatch):
    """Moving a damaged file aside fails with EACCES in a read-only folder: one line, not a PermissionError traceback."""
    folder, _ = filled
    path = folder / "results.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(path, "r+b") as fh:
        fh.write(b"\x00" * 100)  # a broken header: salvage would move the file aside
    damaged = path.read_bytes()

    def denied(src, dst):
        raise PermissionError(errno.EACCES, "Permission denied", str(src))

    monkeypatch.setattr(cache_module.os, "replace", denied)
    with pytest.raises(BackendError, match="may not be written") as info:
        ResultCache(folder)
    assert "\n" not in str(info.value)
    assert path.read_bytes() == damaged


def test_the_command_line_says_a_full_disk_in_one_line_and_keeps_the_answers(tmp_path, monkeypatch, capsys):
    def run(fraction: str) -> int:
        argv = [
            "run",
            "--task",
            "NISTIncome",
            "--subsampling",
            fraction,
            "--model",
            "fake",
            "--inference-backend",
            "fake",
            "--results-dir",
            str(tmp_path / "results"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--n-bootstrap",
            "10",
            "--no-baselines",
        ]
        return main(argv)

    assert run("0.01") == 0
    capsys.readouterr()
    before = stored(tmp_path / "cache")
    no_room_left(monkeypatch)
    assert run("0.05") == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "OperationalError" not in err
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1 and "disk is full" in lines[0] and str(tmp_path / "cache" / "results.sqlite") in lines[0]
    # the answers stored before are there byte for byte (answers saved while there was room are kept too)
    assert set(before) <= set(stored(tmp_path / "cache")) and not list((tmp_path / "cache").glob("*.damaged-*"))
