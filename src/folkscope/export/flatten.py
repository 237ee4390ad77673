"""A run's configuration and metrics as flat ``a/b`` keys: what a dataset column or a tracker's metric can hold.

``metrics.json`` and the config are nested mappings; trackers and tables
want one name per number. Nested mappings become ``parent/child`` keys;
lists (per-group records, per-task scores) are left to the run's tables,
which hold them row by row; booleans are not metrics. A NaN or infinite
number cannot be logged as a metric (W&B and MLflow refuse or mis-plot it),
so it is skipped, and counted, so a reader sees that something was left out
rather than a silently shorter list.

Examples
--------
>>> flat_metrics({"a": {"b": 1.5, "c": float("nan")}, "n": 3, "ok": True, "rows": [1, 2]})
({'a/b': 1.5, 'n': 3.0}, 1)
>>> flat_params({"task": {"name": "NISTIncome"}, "seed": 42, "variation": []})
{'task/name': 'NISTIncome', 'seed': 42, 'variation': '[]'}
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["flat_metrics", "flat_params"]

#: top-level blocks of metrics.json that are not measurements (the run's settings, logged as parameters)
_NOT_METRICS = ("config", "settings", "schema")


def _walk(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _walk(value, name + "/")
        else:
            yield name, value


def flat_metrics(metrics: Mapping[str, Any]) -> tuple[dict[str, float], int]:
    """Every finite number of ``metrics`` under its ``a/b`` key, and how many non-finite numbers were skipped."""
    out: dict[str, float] = {}
    skipped = 0
    for name, value in _walk({k: v for k, v in metrics.items() if k not in _NOT_METRICS}):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if math.isfinite(value):
            out[name] = float(value)
        else:
            skipped += 1
    return out, skipped


def flat_params(config: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration as ``a/b`` keys; scalars kept, lists and nulls as their JSON text (trackers take scalars)."""
    out: dict[str, Any] = {}
    for name, value in _walk(config):
        if isinstance(value, (str, int, float, bool)):
            out[name] = value
        else:
            out[name] = json.dumps(value, sort_keys=True, default=str)
    return out
