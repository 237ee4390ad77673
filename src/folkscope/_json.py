"""One JSON convention for every file folkscope writes and every hash it takes.

Two forms, each defined once:

- **Files a person or another part reads** (``config.json``, ``metrics.json``,
  ``manifest.json``, a command's printed summary): :func:`to_jsonable` turns
  numpy and pandas values into plain Python, NaN and missing values into
  ``null`` and infinities into ``"inf"``/``"-inf"`` (strict JSON has neither),
  and :func:`write_json` writes the result atomically, indented.
- **Hashes** (cache keys, config fingerprints, run-folder names):
  :func:`canonical_json` (sorted keys, no spaces, unicode kept, NaN refused)
  and :func:`fingerprint`, its SHA-256. The engine's cache keys are built on
  the same function, so the form must never change: a changed byte would
  orphan every stored answer.

This module sits below every layer (it imports no other folkscope module
except the atomic writer), so the engine, the runs layer and the parts share it.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import math
import sys
from collections.abc import Callable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from folkscope._io import atomic_write
from folkscope.errors import DataError

__all__: list[str] = []  # private helpers, re-exported where public (engine.canonical_json)


def to_jsonable(obj: Any) -> Any:
    """Plain JSON types: NaN/NA -> None, ±inf -> "inf"/"-inf", numpy -> Python, keys -> str, paths -> str.

    Anything else that JSON has no type for becomes its ``str``.

    Examples
    --------
    >>> to_jsonable({"a": np.float64("nan"), 1: [np.int64(2), float("inf")], "t": (1, 2)})
    {'a': None, '1': [2, 'inf'], 't': [1, 2]}
    """
    if isinstance(obj, Mapping):
        return {k if isinstance(k, str) else str(to_jsonable(k)): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in (sorted(obj, key=str) if isinstance(obj, (set, frozenset)) else obj)]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    pandas = sys.modules.get("pandas")  # only when loaded: a pandas value cannot exist otherwise
    if pandas is not None:
        if isinstance(obj, (pandas.Series, pandas.Index)):
            return [to_jsonable(v) for v in obj.tolist()]
        if obj is pandas.NA or obj is pandas.NaT:
            return None
    if isinstance(obj, np.generic):
        obj = obj.item()
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        return obj if math.isfinite(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, PathLike):
        return str(Path(obj))
    return str(obj)


def canonical_json(data: Any) -> str:
    """Deterministic JSON of plain data: sorted keys, no spaces, unicode kept, NaN refused.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": ["é", 2.5]})
    '{"a":["é",2.5],"b":1}'
    """
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def fingerprint(data: Any) -> str:
    """SHA-256 (hex) of :func:`canonical_json` of :func:`to_jsonable` of ``data``.

    Equal data give equal fingerprints whatever the key order, and numpy or
    path values hash as the plain values they stand for.

    Examples
    --------
    >>> fingerprint({"a": 1, "b": [1, 2]}) == fingerprint({"b": (1, 2), "a": np.int64(1)})
    True
    """
    return hashlib.sha256(canonical_json(to_jsonable(data)).encode("utf-8")).hexdigest()


def write_json(path: str | PathLike[str], data: Any) -> None:
    """Write :func:`to_jsonable` of ``data`` as indented strict JSON, atomically (write, then rename)."""
    text = json.dumps(to_jsonable(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))


def read_json(path: str | PathLike[str]) -> Any:
    """The JSON value stored in ``path`` (UTF-8)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


#: deeper than this, a file a person writes is refused (the readers and the hashes below recurse; no real file nests past 10)
MAX_DEPTH = 100
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_text(raw: bytes, what: str, *, error: Callable[[str], Exception] = DataError) -> str:
    """The text of a file a person wrote: UTF-8 (a byte-order mark is dropped), or UTF-16/32 when a byte-order mark says so.

    Anything else (Latin-1, UTF-16 without its mark, binary) is one line
    naming the file (``what``) and the first byte that is not UTF-8, with
    the fix, raised as ``error(message)``.

    Examples
    --------
    >>> decode_text(codecs.BOM_UTF8 + "é".encode(), "x"), decode_text("é".encode("utf-16"), "x")
    ('é', 'é')
    >>> decode_text('{"a": "café"}'.encode("latin-1"), "task file t.json")
    Traceback (most recent call last):
    ...
    folkscope.errors.DataError: task file t.json is not UTF-8 text (byte 10 is 0xe9); save the file as UTF-8
    """
    encoding = next((name for bom, name in _BOMS if raw.startswith(bom)), None)
    skip = len(codecs.BOM_UTF8) if encoding == "utf-8" else 0  # UTF-16/32 decoders read their mark themselves
    try:
        text = raw[skip:].decode(encoding or "utf-8")
    except UnicodeDecodeError as exc:
        kind = f"{encoding.upper()} text, as its byte-order mark says" if encoding else "UTF-8 text"
        at = skip + exc.start
        raise error(f"{what} is not {kind} (byte {at} is 0x{raw[at]:02x}); save the file as UTF-8") from None
    if encoding is None and "\x00" in text:
        raise error(
            f"{what} holds a NUL byte (byte {raw.index(0)}): UTF-16 without a byte-order mark, or not text at all; "
            "save the file as UTF-8"
        )
    return text


def read_text_file(path: str | PathLike[str], what: str, *, error: Callable[[str], Exception] = DataError) -> str:
    """The text of a file a person writes (:func:`decode_text`); a missing, unreadable or undecodable one is one clear line.

    ``what`` names the kind of file (``"task file"``); messages say it with the path.

    Examples
    --------
    >>> read_text_file("/nonexistent/tasks.json", "task file")
    Traceback (most recent call last):
    ...
    folkscope.errors.DataError: task file /nonexistent/tasks.json cannot be read: there is no such file
    """
    file = Path(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise error(f"{what} {file} cannot be read: there is no such file") from None
    except IsADirectoryError:
        raise error(f"{what} {file} cannot be read: it is a folder; name the file") from None
    except OSError as exc:
        raise error(f"{what} {file} cannot be read ({(exc.strerror or type(exc).__name__).lower()})") from None
    return decode_text(raw, f"{what} {file.name}", error=error)


def parse_data(text: str, what: str, *, error: Callable[[str], Exception] = DataError) -> Any:
    """The JSON value of ``text`` from a file a person writes (or one line of it); anything :func:`json.loads` or the
    readers after it cannot take is one line: a syntax error (line and column), a number of more than 4,300 digits,
    nesting deeper than :data:`MAX_DEPTH`.

    Examples
    --------
    >>> parse_data('{"a": [1, 2]}', "x")
    {'a': [1, 2]}
    >>> parse_data("[" * 5000, "template file t.json")
    Traceback (most recent call last):
    ...
    folkscope.errors.DataError: template file t.json is nested too deeply (over 100 levels of [ and {); no such file is written by hand
    """
    deep = f"{what} is nested too deeply (over {MAX_DEPTH} levels of [ and {{); no such file is written by hand"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{what} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise error(deep) from None
    except ValueError as exc:  # Python refuses to convert integers of more than 4,300 digits
        raise error(f"{what} is not valid JSON folkscope can read ({str(exc).split(':')[0].split(';')[0]})") from None
    if _depth_exceeds(value, MAX_DEPTH):
        raise error(deep)
    return value


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether lists and objects nest deeper than ``limit`` (iteratively: the point is to avoid deep recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


def read_data_file(path: str | PathLike[str], what: str, *, error: Callable[[str], Exception] = DataError) -> Any:
    """The JSON value of a file a person writes (a task file, prompt templates): whatever is wrong is one clear line.

    Missing, unreadable or a folder; not UTF-8 (UTF-16/32 with a byte-order
    mark are read); not JSON; nested past :data:`MAX_DEPTH`. Raised as
    ``error(message)`` (a :class:`DataError` unless the caller's part says
    its files are configuration).

    Examples
    --------
    >>> read_data_file("/nonexistent/tasks.json", "task file")
    Traceback (most recent call last):
    ...
    folkscope.errors.DataError: task file /nonexistent/tasks.json cannot be read: there is no such file
    """
    return parse_data(read_text_file(path, what, error=error), f"{what} {Path(path).name}", error=error)
