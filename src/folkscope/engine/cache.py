"""Append-only, crash-safe on-disk store of answered requests.

Every answered request is written as soon as its batch completes, in one
SQLite transaction per batch, in WAL mode. SQLite commits are atomic: a
process killed at any moment (``kill -9`` included) leaves either the whole
batch or none of it, so a torn last write is simply absent on reload and the
run recomputes it. Several processes may share one store (WAL allows
concurrent readers and serialises writers).

Keys
----
``entry = sha256(namespace + "\\0" + request_key(request))`` where the
namespace (:func:`namespace_key`) hashes everything that changes the numbers:
the model identity (name, revision, source), the backend name and settings
(dtype, device kind), the caller's prompt-format version and the store's
schema version. Two models never share entries, and bumping a prompt-format
version starts a fresh namespace.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from folkscope.engine.requests import canonical_json
from folkscope.errors import BackendError
from folkscope.paths import cache_home

__all__ = ["CACHE_SCHEMA", "ResultCache", "default_cache_dir", "entry_key", "namespace_key"]

#: bump when the meaning of stored results changes
CACHE_SCHEMA = 1
_FILE = "results.sqlite"
_CHUNK = 500  # SQLite limits the number of bound parameters per statement


def default_cache_dir() -> Path:
    """``paths.cache_home() / "engine-cache"``."""
    return cache_home() / "engine-cache"


def namespace_key(identity: Mapping[str, Any]) -> str:
    """Hash of what makes numbers differ: model identity, backend settings, prompt-format version.

    Examples
    --------
    >>> namespace_key({"model": {"name": "m", "revision": "1"}}) == namespace_key({"model": {"revision": "1", "name": "m"}})
    True
    """
    payload = canonical_json({"schema": CACHE_SCHEMA, **dict(identity)})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def entry_key(namespace: str, request_hash: str) -> str:
    """Key of one request's answer within a namespace."""
    return hashlib.sha256(f"{namespace}\0{request_hash}".encode()).hexdigest()


class ResultCache:
    """A SQLite-backed, append-only map from entry key to JSON result.

    Parameters
    ----------
    directory : str or Path, optional
        Folder holding ``results.sqlite``; created if missing. Default:
        :func:`default_cache_dir`.
    timeout : float, default 60
        Seconds to wait for another process's write lock.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp, ResultCache(tmp) as cache:
    ...     n = cache.put_many([("k1", "ns", "score", {"x": 1})])
    ...     cache.get_many(["k1", "k2"])
    {'k1': {'x': 1}}
    """

    def __init__(self, directory: str | Path | None = None, *, timeout: float = 60.0) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / _FILE
        try:
            self._conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable across process crashes in WAL mode; only a power cut can lose the last commits.
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS results ("
                " key TEXT PRIMARY KEY, namespace TEXT NOT NULL, kind TEXT NOT NULL,"
                " result TEXT NOT NULL, created REAL NOT NULL)"
            )
        except sqlite3.DatabaseError as exc:
            raise BackendError(
                f"the engine result cache {self.path} cannot be opened ({exc}); it may be corrupt or on a file "
                "system without locking. Delete it to start afresh, choose another cache_dir, or disable the cache "
                "(use_cache=False / --no-cache)"
            ) from exc

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Stored results for those keys that have one (decoded JSON)."""
        found: dict[str, Any] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = list(keys[start : start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(f"SELECT key, result FROM results WHERE key IN ({marks})", chunk).fetchall()
            for key, text in rows:
                try:
                    found[key] = json.loads(text)
                except ValueError:  # unreadable entry: leave it out, it is recomputed and replaced
                    continue
        return found

    def put_many(self, items: Iterable[tuple[str, str, str, Mapping[str, Any]]]) -> int:
        """Store ``(key, namespace, kind, result)`` items in one atomic transaction.

        Returns the number of items written.
        """
        now = time.time()
        rows = [(key, ns, kind, json.dumps(result, separators=(",", ":")), now) for key, ns, kind, result in items]
        if not rows:
            return 0
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)", rows)
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")
        return len(rows)

    def count(self, namespace: str | None = None) -> int:
        """Number of stored results, in one namespace or in all."""
        if namespace is None:
            return int(self._conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        return int(self._conn.execute("SELECT COUNT(*) FROM results WHERE namespace = ?", (namespace,)).fetchone()[0])

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ResultCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultCache({str(self.directory)!r})"
