"""Rows a damaged result store still yields, so a damaged cache is repaired rather than thrown away.

Kept apart from :mod:`folkscope.engine.cache` because it reads SQLite files
the store can no longer open normally (malformed pages, a file cut short)
row range by row range: recovery, not the store's everyday reads and writes.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["readable_rows"]


def readable_rows(path: Path) -> Iterator[tuple[Any, ...]]:
    """Every row of a damaged store that SQLite can still read, also from a file cut short.

    SQLite refuses a truncated file outright (its schema names pages past
    the end); a copy padded with empty pages to the size its header states
    lets it read every page that survived.
    """
    try:
        head = path.read_bytes()[:100] if path.stat().st_size >= 100 else b""
    except OSError:
        return
    rows = _rows_of(path)
    if rows is not None or len(head) < 100 or not head.startswith(b"SQLite format 3\0"):
        yield from rows or ()
        return
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    expected = page * int.from_bytes(head[28:32], "big")
    size = path.stat().st_size
    if not 0 < size < expected <= 64 * size:  # not a truncation (or a header claiming absurd sizes)
        return
    padded = path.with_name(path.name + ".padded")
    try:
        with open(path, "rb") as src, open(padded, "wb") as dst:
            shutil.copyfileobj(src, dst)
            dst.truncate(expected)  # extends with zero bytes: empty pages SQLite reads as damaged
        yield from _rows_of(padded) or ()
    finally:
        padded.unlink(missing_ok=True)


def _rows_of(path: Path, *, chunk: int = 256, give_up_after: int = 64) -> list[tuple[Any, ...]] | None:
    """The rows SQLite can still read from a store; None when not even its schema can be read.

    Rows are read by rowid range (the store is append-only, so rowids are
    dense), a range that fails row by row. When the last rowid cannot be
    read either (a truncated file loses the right end of the table), the
    scan stops after ``give_up_after`` ranges in a row yield nothing.
    """
    try:
        conn = sqlite3.connect(path, isolation_level=None)
    except sqlite3.Error:
        return None
    found: list[tuple[Any, ...]] = []
    try:
        try:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(results)")}
        except sqlite3.Error:
            return None  # header or schema unreadable
        if not columns:
            return found
        try:
            last: int | None = conn.execute("SELECT MAX(rowid) FROM results").fetchone()[0] or 0
        except sqlite3.Error:
            last = None
        optional = ", ".join(name if name in columns else "NULL" for name in ("checksum", "usage"))
        select = f"SELECT key, namespace, kind, result, created, {optional} FROM results"
        start, misses = 1, 0
        while (start <= last) if last is not None else (misses < give_up_after):
            try:
                rows = conn.execute(f"{select} WHERE rowid BETWEEN ? AND ?", (start, start + chunk - 1)).fetchall()
            except sqlite3.Error:
                rows = []
                for rowid in range(start, start + chunk):
                    try:
                        rows.extend(conn.execute(f"{select} WHERE rowid = ?", (rowid,)).fetchall())
                    except sqlite3.Error:
                        continue
            misses = 0 if rows else misses + 1
            found.extend(rows)
            start += chunk
    finally:
        conn.close()
    return found
