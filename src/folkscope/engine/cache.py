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

Damage
------
Every entry carries a checksum of its key and text. An entry whose text no
longer matches (bytes damaged on disk, a row edited by hand) or does not
decode is skipped, counted in :attr:`ResultCache.damaged`, and recomputed
and replaced by the caller. A damaged database file (malformed pages, a
truncated file, a broken header) is moved aside as
``results.sqlite.damaged-<time>``, every row that can still be read and
verified is copied into a fresh file, and one warning says how many were
kept: the cache never has to be deleted whole. A cache file deleted or
replaced while a run writes to it is noticed on the next write
(:attr:`ResultCache.recreated`), and the engine writes the answers it holds
again.

Errors that are not damage
--------------------------
A full disk (``SQLITE_FULL``, ``ENOSPC``) and a cache that may not be
written (``SQLITE_READONLY``, ``EACCES``, ``EROFS``: a read-only file,
folder or file system) say nothing about the answers stored: the cache is
left exactly as it is and :class:`~folkscope.errors.BackendError` says in
one line what happened, where, and the fix. A read-only cache still serves
what it holds; the engine asks :meth:`ResultCache.ensure_writable` before it
computes anything it would have to save, so no work is done that could not
be kept. A lock held by another process is waited for, then reported the
same way.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from folkscope.engine.requests import canonical_json
from folkscope.engine.salvage import readable_rows
from folkscope.errors import BackendError
from folkscope.paths import cache_home

__all__ = ["CACHE_SCHEMA", "ResultCache", "default_cache_dir", "entry_key", "namespace_key"]

log = logging.getLogger(__name__)

#: bump when the meaning of stored results changes
CACHE_SCHEMA = 1
_FILE = "results.sqlite"
_CHUNK = 500  # SQLite limits the number of bound parameters per statement
_COLUMNS = "key, namespace, kind, result, created, checksum, usage"


def _checksum(key: str, text: str) -> str:
    """What an entry's stored text must hash to: catches bytes damaged on disk and rows edited by hand."""
    return hashlib.sha256(f"{key}\0{text}".encode()).hexdigest()[:16]


#: SQLite's primary result codes that are not damage (an extended code carries its primary one in the low byte)
_SQLITE_PERM, _SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY, _SQLITE_FULL, _SQLITE_CANTOPEN = 3, 5, 6, 8, 13, 14
#: the file was moved or deleted under an open connection: the deleted-cache case, started anew, not a permission
_SQLITE_READONLY_DBMOVED = _SQLITE_READONLY | (4 << 8)


def _not_damage(exc: BaseException) -> str | None:
    """Why a cache operation failed when it is not damage: ``"busy"``, ``"full"`` or ``"denied"``; None for damage.

    A lock held by another process, a full disk and a write that is not
    permitted are never a reason to touch the file. SQLite's result code
    decides where there is one; an :class:`OSError` (moving files, creating
    the folder) by its errno.
    """
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return "full"
        return "denied" if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else None
    if not isinstance(exc, sqlite3.Error):
        return None
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:  # raised without a code: SQLite's own wording
        text = str(exc).lower()
        if "locked" in text or "busy" in text:
            return "busy"
        if "disk is full" in text:
            return "full"
        return "denied" if "readonly database" in text or "unable to open" in text else None
    primary = code & 0xFF
    if primary in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return "busy"
    if primary == _SQLITE_FULL:
        return "full"
    return (
        "denied"
        if primary in (_SQLITE_PERM, _SQLITE_READONLY, _SQLITE_CANTOPEN) and code != _SQLITE_READONLY_DBMOVED
        else None
    )


def _open(path: Path, *, timeout: float, read_only: bool = False) -> sqlite3.Connection:
    """A connection to the store (read-only when asked: a cache that may not be written still serves what it holds).

    The one place the cache opens SQLite, so fault-injection tests can make
    it full (``PRAGMA max_page_count``) or read-only.
    """
    target = f"file:{path}?mode=ro" if read_only else str(path)
    return sqlite3.connect(target, timeout=timeout, isolation_level=None, check_same_thread=False, uri=read_only)


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
        self.path = self.directory / _FILE
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BackendError(
                f"the engine result cache folder {self.directory} cannot be created ({exc.strerror or exc}); "
                "choose another --cache-dir (cache_dir), a folder you may write"
            ) from None
        self.timeout = timeout
        #: entries skipped because their checksum or JSON was bad (the caller recomputes them)
        self.damaged = 0
        #: times the file was found deleted or replaced during a run and started anew
        self.recreated = 0
        #: damaged database files moved aside, with the number of answers salvaged from each
        self.salvaged: list[tuple[Path, int]] = []
        #: why answers cannot be saved here (the cache was opened read-only), raised on the first write
        self._unwritable: BackendError | None = None
        self._write_checked = False
        try:
            self._connect()
        except sqlite3.DatabaseError as exc:
            cause = _not_damage(exc)
            if cause == "busy":
                raise self._locked(exc) from exc
            if cause is None:
                self._salvage(exc)
            else:  # a full disk or a file that may not be written: serve what it holds, refuse to write
                self._unwritable = self._stopped(cause, exc)
                try:
                    self._connect(read_only=True)
                except sqlite3.DatabaseError:
                    raise self._unwritable from exc

    # ------------------------------------------------------------------ opening and repair
    def _connect(self, *, read_only: bool = False) -> None:
        conn = _open(self.path, timeout=self.timeout, read_only=read_only)
        try:
            if read_only:
                columns = {row[1] for row in conn.execute("PRAGMA table_info(results)")}
                if not {"key", "result", "checksum", "usage"} <= columns:
                    raise sqlite3.OperationalError("attempt to write a readonly database (its table needs an update)")
                self._conn = conn
                self._inode = os.stat(self.path).st_ino
                return
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable across process crashes in WAL mode; only a power cut can lose the last commits.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS results ("
                " key TEXT PRIMARY KEY, namespace TEXT NOT NULL, kind TEXT NOT NULL,"
                " result TEXT NOT NULL, created REAL NOT NULL, checksum TEXT, usage TEXT)"
            )
            columns = {row[1] for row in conn.execute("PRAGMA table_info(results)")}
            if "checksum" not in columns:  # a store written before checksums: vouch for its rows once
                conn.execute("ALTER TABLE results ADD COLUMN checksum TEXT")
            if "usage" not in columns:  # a store written before usage was kept: its answers' cost is unknown
                conn.execute("ALTER TABLE results ADD COLUMN usage TEXT")
            legacy = conn.execute("SELECT key, result FROM results WHERE checksum IS NULL").fetchall()
            if legacy:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(
                    "UPDATE results SET checksum = ? WHERE key = ?", [(_checksum(k, t), k) for k, t in legacy]
                )
                conn.execute("COMMIT")
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._inode = os.stat(self.path).st_ino

    def _locked(self, exc: Exception) -> BackendError:
        return BackendError(
            f"the engine result cache {self.path} is locked by another process ({exc}); wait for it, or choose "
            "another cache_dir (--cache-dir)"
        )

    def _stopped(self, cause: str, exc: BaseException) -> BackendError:
        """The one-line error for a cache that cannot be written (``cause``: "full" or "denied"); the file stays as it is."""
        if cause == "busy":
            return self._locked(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
        why = getattr(exc, "strerror", None) or str(exc)
        if cause == "full":
            problem, fix = "the disk is full", f"free space on the disk of {self.directory}"
        else:
            problem, fix = "it may not be written here", f"make {self.directory} and the files in it writable"
        return BackendError(
            f"the engine result cache {self.path} cannot be written: {problem} ({why}); {fix}, or choose another "
            "--cache-dir (cache_dir); the answers it holds are kept as they are, and a rerun reuses them"
        )

    def _rollback(self) -> None:
        """End a failed transaction (SQLite has already rolled it back itself after a full disk)."""
        if self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def _salvage(self, exc: sqlite3.DatabaseError) -> None:
        """Move a damaged file aside, copy what is still readable and verified into a fresh one, and say so.

        If that cannot be done (a full disk, a folder that may not be
        written), the damaged file is put back as it was and the one-line
        error says why: a later run salvages it once there is room.
        """
        self._close_quietly()
        aside = self.path.with_name(f"{_FILE}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        moved: list[str] = []
        fresh = False
        try:
            for suffix in ("", "-wal", "-shm"):  # the WAL holds committed answers too: keep it with its database
                source = Path(f"{self.path}{suffix}")
                if source.exists():
                    os.replace(source, f"{aside}{suffix}")
                    moved.append(suffix)
            fresh = True
            self._connect()
            kept = 0
            rows = list(readable_rows(aside))
            good = [row for row in rows if row[5] is None or row[5] == _checksum(row[0], row[3])]
            if good:
                fixed = [(*row[:5], row[5] or _checksum(row[0], row[3]), row[6]) for row in good]
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    self._conn.executemany(
                        f"INSERT OR IGNORE INTO results ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", fixed
                    )
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._rollback()
                    raise
                kept = len(fixed)
        except (OSError, sqlite3.Error) as err:
            cause = _not_damage(err)
            if cause is None:
                raise
            self._put_back(aside, moved, fresh=fresh)
            raise self._stopped(cause, err) from err
        self.damaged += len(rows) - len(good)
        self.salvaged.append((aside, kept))
        log.warning(
            "the engine result cache %s was damaged (%s): kept the %d answers that could still be read and verified "
            "in a fresh file, moved the damaged one to %s; every other answer is recomputed as it is needed",
            self.path,
            exc,
            kept,
            aside,
        )

    def _close_quietly(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass

    def _put_back(self, aside: Path, moved: Sequence[str], *, fresh: bool) -> None:
        """Undo a salvage that could not finish: drop the fresh file (if one was begun), return the damaged one to its place."""
        self._close_quietly()
        try:
            for suffix in ("", "-wal", "-shm") if fresh else ():  # every original was moved before a fresh file began
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            for suffix in moved:
                os.replace(f"{aside}{suffix}", f"{self.path}{suffix}")
        except OSError as err:  # cannot even put it back: say where it is
            log.warning(
                "the damaged engine result cache is at %s (%s); move it back to %s to salvage it later",
                aside,
                err,
                self.path,
            )

    def _guarded(self, operation: str, run: Any) -> Any:
        """Run a database operation; on damage, salvage the file and run it once more on the fresh one.

        A lock, a full disk or a write that is not permitted is not damage:
        one-line :class:`BackendError`, the file untouched.
        """
        try:
            return run()
        except sqlite3.DatabaseError as exc:
            cause = _not_damage(exc)
            if cause is not None:
                raise self._stopped(cause, exc) from exc
            log.debug("result cache %s failed during %s: %s", self.path, operation, exc)
            self._salvage(exc)
            return run()

    def _file_replaced(self) -> bool:
        try:
            return os.stat(self.path).st_ino != self._inode
        except FileNotFoundError:
            return True

    # ------------------------------------------------------------------ reading and writing
    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Stored results for those keys that have one (decoded JSON); damaged entries are left out and counted."""
        return dict(self._guarded("a read", lambda: self._get_many(keys)))

    def _rows_for(self, columns: str, keys: Sequence[str], condition: str = "") -> Iterator[tuple[Any, ...]]:
        """``SELECT key, <columns>`` of the rows with those keys, in chunks SQLite's parameter limit allows."""
        for start in range(0, len(keys), _CHUNK):
            chunk = list(keys[start : start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            yield from self._conn.execute(
                f"SELECT key, {columns} FROM results WHERE {condition}key IN ({marks})", chunk
            ).fetchall()

    def _get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, text, checksum in self._rows_for("result, checksum", keys):
            if not isinstance(text, str) or checksum != _checksum(key, text):
                self.damaged += 1  # recomputed by the caller and replaced by its put_many
                continue
            try:
                found[key] = json.loads(text)
            except ValueError:
                self.damaged += 1
        return found

    def put_many(self, items: Iterable[tuple[Any, ...]]) -> int:
        """Store ``(key, namespace, kind, result)`` or ``(key, namespace, kind, result, usage)`` items in one atomic transaction.

        ``usage`` (a JSON-able mapping, e.g. :meth:`folkscope.engine.Usage.to_dict`)
        records what obtaining the answer was billed. Returns the number of
        items written. If the file was deleted or replaced since it was
        opened, a fresh one is started first (:attr:`recreated` counts it)
        and a warning says so.
        """
        now = time.time()
        rows = []
        for key, ns, kind, result, *rest in items:
            text = json.dumps(result, separators=(",", ":"))
            usage = json.dumps(rest[0], separators=(",", ":")) if rest and rest[0] is not None else None
            rows.append((key, ns, kind, text, now, _checksum(key, text), usage))
        if not rows:
            return 0
        if self._unwritable is not None:
            raise self._unwritable
        if self._file_replaced():
            self._conn.close()
            try:
                self._connect()
            except (OSError, sqlite3.Error) as exc:
                cause = _not_damage(exc)
                if cause is None:
                    raise
                raise self._stopped(cause, exc) from exc
            self.recreated += 1
            log.warning(
                "the engine result cache %s was deleted or replaced while this run wrote to it; a fresh one was started "
                "and this run's answers are written again (answers of earlier runs that were in it will be recomputed)",
                self.path,
            )

        def write() -> int:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(
                    f"INSERT OR REPLACE INTO results ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows
                )
                self._conn.execute("COMMIT")  # a full disk may show only here, when the WAL grows
            except BaseException:
                self._rollback()
                raise
            return len(rows)

        return int(self._guarded("a write", write))

    def ensure_writable(self) -> None:
        """Raise the one-line :class:`BackendError` now if answers could not be saved here, before any is computed.

        Opens a write transaction and changes nothing (a read-only file is
        refused at the first write, not at opening); checked once per cache.
        A full disk shows only when a write needs room: :meth:`put_many` stops
        then, the answers stored so far intact.
        """
        if self._unwritable is not None:
            raise self._unwritable
        if self._write_checked:
            return

        def probe() -> None:
            version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(f"PRAGMA user_version = {version}")
            finally:
                self._rollback()

        self._guarded("a write check", probe)
        self._write_checked = True

    def usage_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The recorded usage (decoded JSON) of those keys that have one; unreadable records are left out."""
        return dict(self._guarded("a read", lambda: self._usage_many(keys)))

    def _usage_many(self, keys: Sequence[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, text in self._rows_for("usage", keys, "usage IS NOT NULL AND "):
            try:
                found[key] = json.loads(text)
            except (TypeError, ValueError):
                continue
        return found

    def count(self, namespace: str | None = None) -> int:
        """Number of stored results, in one namespace or in all."""
        if namespace is None:
            return int(
                self._guarded("a count", lambda: self._conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
            )
        query = "SELECT COUNT(*) FROM results WHERE namespace = ?"
        return int(self._guarded("a count", lambda: self._conn.execute(query, (namespace,)).fetchone()[0]))

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ResultCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultCache({str(self.directory)!r})"
