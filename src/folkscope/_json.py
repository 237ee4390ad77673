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

import hashlib
import json
import math
import sys
from collections.abc import Mapping
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


def read_data_file(path: str | PathLike[str], what: str) -> Any:
    """The JSON value of a file a person writes (a task file, prompt templates): missing or broken is one clear line.

    Examples
    --------
    >>> read_data_file("/nonexistent/tasks.json", "task file")
    Traceback (most recent call last):
    ...
    folkscope.errors.DataError: no task file at /nonexistent/tasks.json
    """
    file = Path(path)
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"no {what} at {file}") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{what} {file.name} is not JSON ({exc.msg} at line {exc.lineno})") from None
